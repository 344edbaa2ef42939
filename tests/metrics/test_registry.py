"""The metric registry: one vocabulary that the views, the CLI and sync agree with."""

from __future__ import annotations

import json

import duckdb
import pytest

from warehouse.inputs.runcard import COMPUTED_SCORES
from warehouse.metrics.registry import (
    BY_NAME,
    METRICS,
    SORT_KEYS,
    format_score,
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


def test_one_number_format_per_metric():
    # 0-100 scores with 2 decimals, rates and MQM with 3, COMET and the composite with 4.
    assert format_score("bleu", 23.00759366291968) == "23.01"
    assert format_score("ter", 6.6006600660066) == "6.60"
    assert format_score("exact_match_rate", 0.575) == "0.575"
    assert format_score("human_mqm", 2.40512) == "2.405"
    assert format_score("human_esa", 71.234) == "71.23"
    assert format_score("comet_score", 0.84512) == "0.8451"
    assert format_score("word_f1", 0.5) == "0.5000"  # a plugin's metric the registry lacks
    assert format_score("bleu", None) == "n/a"


def test_runs_list_and_show_print_each_score_in_its_format(run_cli, demo_db):
    listed = run_cli("runs", "list", "--wide", db=demo_db).stdout
    assert " 83.62 " in listed and " 6.60 " in listed and " 0.575 " in listed, listed
    shown = run_cli("runs", "show", "demo-large", db=demo_db).stdout
    fields = dict(line.split(None, 1) for line in shown.splitlines() if len(line.split()) == 2)
    assert (fields["bleu"], fields["ter"], fields["length_ratio"]) == ("83.62", "6.60", "0.966")
    full = json.loads(run_cli("runs", "show", "demo-large", "--json", db=demo_db).stdout)
    assert full["bleu"] == pytest.approx(83.61634639661473, abs=1e-12)  # JSON: full precision
