"""The metric registry: one vocabulary that the views, the CLI and sync agree with."""

from __future__ import annotations

import duckdb

from warehouse.inputs.runcard import COMPUTED_SCORES
from warehouse.metrics.registry import (
    BY_NAME,
    METRICS,
    SORT_KEYS,
    higher_is_better,
    label,
    on_percent_scale,
    synced_columns,
)
from warehouse.store.schema import ensure_schema


def _leaderboard_columns() -> set[str]:
    con = duckdb.connect(":memory:")
    ensure_schema(con)
    cursor = con.execute("SELECT * FROM leaderboard LIMIT 0")
    return {d[0] for d in cursor.description or []}


def test_every_registered_column_is_a_leaderboard_column():
    columns = _leaderboard_columns()
    missing = [m.column for m in METRICS if m.column and m.column not in columns]
    assert missing == []


def test_names_and_sort_keys_are_unique():
    assert len(BY_NAME) == len(METRICS)
    keys = [m.sort_key for m in METRICS if m.sort_key]
    assert len(keys) == len(set(keys))


def test_sort_keys_sort_by_each_metrics_direction():
    assert SORT_KEYS["ter"] == ("ter", False)
    assert SORT_KEYS["mqm"] == ("human_mqm", False) and SORT_KEYS["esa"] == ("human_esa", True)
    assert SORT_KEYS["bleu"] == ("corpus_bleu", True)
    assert SORT_KEYS["cost"] == ("cost_per_entry_usd", False)
    assert SORT_KEYS["gengap_bleu"] == ("gengap_bleu", False)
    assert SORT_KEYS["created"] == ("created_at", True)
    assert set(SORT_KEYS) == {
        "composite",
        "cost_adjusted",
        "chrf",
        "bleu",
        "ter",
        "exact_match",
        "cost",
        "latency",
        "gengap_bleu",
        "delta_tm_bleu",
        "mqm",
        "esa",
        "da",
        "created",
    }


def test_direction_of_registered_and_unregistered_metrics():
    assert not higher_is_better("ter") and not higher_is_better("hallucination_rate")
    assert not higher_is_better("plugin_metrics.safety.code_switching_rate")
    assert not higher_is_better("plugin_metrics.x.parse_error_rate")
    assert higher_is_better("chrf_plus_plus") and higher_is_better("plugin_metrics.fst.valid")


def test_labels_and_scales():
    assert label("chrf_plus_plus") == "chrF++" and label("my_metric") == "my_metric"
    assert on_percent_scale("bleu") and not on_percent_scale("exact_match_rate")


def test_synced_columns_leave_out_what_run_cards_lacks():
    synced = synced_columns()
    assert "cost_adjusted" not in synced and "composite_score" in synced
    assert len(synced) == len(set(synced)) == 43
    assert {"human_mqm", "human_esa", "human_da_z"} <= set(synced)


def test_computed_metrics_are_not_taken_from_run_cards():
    assert {"bleu", "chrf_plus_plus", "ter", "composite", "cost_adjusted"} <= COMPUTED_SCORES
    assert "comet_score" not in COMPUTED_SCORES
