"""Bootstrap confidence intervals: stored at ingest, in the leaderboard, removed with runs."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tests.conftest import VOCABULARY as _WORDS
from warehouse.ingest.prepare import prepare_from_document
from warehouse.ingest.write import write_runs
from warehouse.stats.intervals import load_intervals
from warehouse.stats.resample import BootstrapSettings, resample_indices
from warehouse.store.schema import open_warehouse

SETTINGS = BootstrapSettings(n_bootstrap=200, alpha=0.1, seed=7)


def _entries(n: int, seed: int = 1, **per_entry) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        ref = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 8)))
        hyp = ref if rng.random() < 0.4 else " ".join(w for w in ref.split() if rng.random() > 0.3)
        entry = {
            "id": f"e{i}",
            "source": f"source {i}",
            "expected": ref,
            "predicted": hyp,
            "difficulty": 1 + i % 3,
        }
        entry.update({k: v(i) for k, v in per_entry.items()})
        out.append(entry)
    return out


def _doc(tmp_path, entries, name="run.json", **extra):
    path = tmp_path / name
    doc = {"model_slug": "m", "dataset": {"id": "ds", "language_pair": "en-es"}, **extra}
    path.write_text(json.dumps({**doc, "entries": entries}))
    return path


@pytest.fixture
def con(db_path):
    connection = open_warehouse(db_path)
    yield connection
    connection.close()


def test_ingest_stores_whole_run_and_tier_intervals_with_their_settings(con, tmp_path):
    entries = _entries(45, comet=lambda i: 0.5 + (i % 7) / 20, fst_accepted=lambda i: i % 4 != 0)
    entries[3]["error"] = "timeout"
    run = prepare_from_document(_doc(tmp_path, entries), ci=SETTINGS)
    [result] = write_runs(con, [run])
    intervals = load_intervals(con, result.run_id)
    whole = {i.metric: i for i in intervals if i.scope == "all"}
    assert set(whole) == {
        "bleu",
        "chrf_plus_plus",
        "exact_match_rate",
        "comet_score",
        "fst_acceptance_rate",
        "composite",
    }
    tiers = {(i.metric, i.difficulty) for i in intervals if i.scope != "all"}
    assert tiers == {(m, d) for m in ("chrf_plus_plus", "exact_match_rate") for d in (1, 2, 3)}
    scores = run.scores()
    assert whole["bleu"].estimate == scores["bleu"]
    assert whole["chrf_plus_plus"].estimate == scores["chrf"]
    assert whole["exact_match_rate"].estimate == pytest.approx(scores["exact_match_rate"])
    for interval in intervals:
        assert interval.ci_lower <= interval.ci_upper
        assert (interval.n_bootstrap, interval.alpha, interval.seed) == (200, 0.1, 7)
    assert whole["exact_match_rate"].n == 45
    assert {i.n for i in intervals if i.difficulty == 1} == {15}
    board = con.execute(
        "SELECT chrf_ci_lower, chrf_ci_upper, exact_match_ci_lower, exact_match_ci_upper, "
        "composite_score, composite_ci_lower, ci_seed FROM leaderboard WHERE run_id = ?",
        [result.run_id],
    ).fetchone()
    assert board[:4] == (
        whole["chrf_plus_plus"].ci_lower,
        whole["chrf_plus_plus"].ci_upper,
        whole["exact_match_rate"].ci_lower,
        whole["exact_match_rate"].ci_upper,
    )
    assert board[4] == whole["composite"].estimate and board[5] == whole["composite"].ci_lower
    assert board[6] == 7
    assert sorted(i["metric"] + i["scope"] for i in result.intervals) == sorted(
        i.metric + i.scope for i in intervals
    )


def test_exact_match_interval_is_the_percentile_of_resampled_rates(con, tmp_path):
    entries = _entries(40, seed=3)
    entries[5]["error"] = "boom"
    run = prepare_from_document(_doc(tmp_path, entries), ci=SETTINGS)
    [result] = write_runs(con, [run])
    exact = np.array([np.nan if m is None else float(m) for m in run.stats.exact_match])
    rates = []
    for row in resample_indices(40, 200, seed=7):
        picked = exact[row]
        rates.append(np.nanmean(picked))
    lower, upper = np.quantile(rates, [0.05, 0.95])
    [interval] = [
        i
        for i in load_intervals(con, result.run_id)
        if i.metric == "exact_match_rate" and i.scope == "all"
    ]
    assert interval.ci_lower == pytest.approx(lower, abs=1e-12)
    assert interval.ci_upper == pytest.approx(upper, abs=1e-12)


def test_composite_interval_holds_run_level_inputs_fixed(con, tmp_path):
    path = _doc(tmp_path, _entries(40, seed=4), scores={"semantic_score": 0.8})
    [result] = write_runs(con, [prepare_from_document(path, ci=SETTINGS)])
    composite = next(i for i in load_intervals(con, result.run_id) if i.metric == "composite")
    chrf = next(
        i
        for i in load_intervals(con, result.run_id)
        if i.metric == "chrf_plus_plus" and i.scope == "all"
    )
    # profile B: chrF++ (0.25), semantic (0.25), exact match (0.10) present
    assert composite.ci_lower < composite.estimate < composite.ci_upper
    width = composite.ci_upper - composite.ci_lower
    assert width < (chrf.ci_upper - chrf.ci_lower) / 100  # the fixed semantic score damps it


def test_small_runs_warn_that_coverage_may_be_poor(con, tmp_path):
    [result] = write_runs(con, [prepare_from_document(_doc(tmp_path, _entries(12)), ci=SETTINGS)])
    assert any("only 12 segments" in w and "poor coverage" in w for w in result.warnings)
    assert any("difficulty tiers with fewer than 30" in w for w in result.warnings)


@pytest.mark.parametrize("flag", ["--no-intervals", "--no-ci"])
def test_runs_ingested_without_intervals_have_none_and_null_leaderboard_columns(
    run_cli, tmp_path, flag
):
    path = _doc(tmp_path, _entries(30))
    assert run_cli("ingest", path, flag).exit_code == 0  # --no-ci: the old spelling, hidden
    rows = json.loads(run_cli("query", "SELECT count(*) AS n FROM run_intervals", "--json").stdout)
    assert rows[0]["n"] == 0
    board = json.loads(run_cli("leaderboard", "--json").stdout)
    assert board[0]["chrf_ci_lower"] is None and board[0]["exact_match_ci_upper"] is None


def test_the_old_spelling_of_no_intervals_is_hidden_from_help(run_cli):
    shown = run_cli("ingest", "--help").stdout
    assert "--no-intervals" in shown and "--no-ci" not in shown


def test_cli_ingest_options_set_the_bootstrap_and_replace_rewrites_intervals(run_cli, tmp_path):
    path = _doc(tmp_path, _entries(30))
    first = run_cli("ingest", path, "--n-bootstrap-ci", "50", "--seed", "3", "--json")
    assert first.exit_code == 0, first.output
    [result] = json.loads(first.stdout)
    assert {i["n_bootstrap"] for i in result["intervals"]} == {50}
    assert {i["seed"] for i in result["intervals"]} == {3}
    again = run_cli("ingest", path, "--replace", "--seed", "4", "--json")
    assert again.exit_code == 0, again.output
    rows = json.loads(
        run_cli("query", "SELECT DISTINCT seed, n_bootstrap FROM run_intervals", "--json").output
    )
    assert rows == [{"seed": 4, "n_bootstrap": 1000}]
    board = run_cli("leaderboard")
    assert board.exit_code == 0 and " [" in board.output and "seed 4" in board.stderr


def test_replacing_the_test_set_removes_the_runs_intervals(run_cli, write_lines, tmp_path):
    src, ref = write_lines("src", ["a b", "c d"]), write_lines("ref", ["x y", "z w"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    hyp = write_lines("hyp", ["x y", "z"])
    assert run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--model-slug", "m").exit_code == 0
    count = "SELECT count(*) AS n FROM run_intervals"
    assert json.loads(run_cli("query", count, "--json").stdout)[0]["n"] > 0
    ref2 = write_lines("ref2", ["x y", "z v"])
    replaced = run_cli("testset", "add", "ts", "--src", src, "--ref", ref2, "--replace", "--yes")
    assert replaced.exit_code == 0, replaced.output
    assert json.loads(run_cli("query", count, "--json").stdout)[0]["n"] == 0


def _set_settings(db_path, **values: float) -> None:
    """Change `settings` rows (key with dots written as underscores: bootstrap_n)."""
    with open_warehouse(db_path) as con:
        for key, value in values.items():
            con.execute(
                "UPDATE settings SET value = ? WHERE key = ?", [value, key.replace("_", ".", 1)]
            )


def test_ingest_takes_bootstrap_defaults_from_the_warehouse_settings(run_cli, tmp_path, db_path):
    _set_settings(db_path, bootstrap_n=60, bootstrap_seed=9, bootstrap_alpha=0.1)
    path = _doc(tmp_path, _entries(30))
    result = run_cli("ingest", path, "--json")
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)
    assert {(i["n_bootstrap"], i["seed"], i["alpha"]) for i in run["intervals"]} == {(60, 9, 0.1)}
    again = run_cli("ingest", path, "--replace", "--seed", "4", "--json")
    assert again.exit_code == 0, again.output
    [run] = json.loads(again.stdout)
    assert {(i["n_bootstrap"], i["seed"]) for i in run["intervals"]} == {(60, 4)}


def test_a_bad_bootstrap_setting_is_a_clear_error_unless_the_option_overrides_it(
    run_cli, tmp_path, db_path
):
    _set_settings(db_path, bootstrap_n=2.5, bootstrap_alpha=0)
    path = _doc(tmp_path, _entries(30))
    result = run_cli("ingest", path)
    assert result.exit_code == 2
    assert "settings bootstrap.n must be a whole number of at least 1, got 2.5" in result.output
    rows = json.loads(run_cli("query", "SELECT count(*) AS n FROM runs", "--json").stdout)
    assert rows == [{"n": 0}]
    only_n = run_cli("ingest", path, "--n-bootstrap-ci", "40")
    assert only_n.exit_code == 2
    assert "settings bootstrap.alpha must be between 0 and 1 (exclusive), got 0" in only_n.output
    both = run_cli("ingest", path, "--n-bootstrap-ci", "40", "--ci-alpha", "0.1", "--json")
    assert both.exit_code == 0, both.output
    [run] = json.loads(both.stdout)
    assert {(i["n_bootstrap"], i["alpha"]) for i in run["intervals"]} == {(40, 0.1)}


def test_ingest_without_a_warehouse_uses_the_spec_defaults_and_creates_it_only_to_write(
    run_cli, tmp_path, new_db_path
):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert run_cli("ingest", bad).exit_code == 2
    assert not new_db_path.exists()
    [run] = json.loads(run_cli("ingest", _doc(tmp_path, _entries(30)), "--json").stdout)
    assert {(i["n_bootstrap"], i["seed"]) for i in run["intervals"]} == {(1000, 12345)}
