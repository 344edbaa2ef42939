"""`tame-wh compare`, `significance` and `regressions` end to end."""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import VOCABULARY as _WORDS
from tests.conftest import snapshot
from warehouse.cli.output import ALPHA
from warehouse.store.schema import open_warehouse

SPEC_FIELDS = {
    "metric_name",
    "system_a_score",
    "system_b_score",
    "delta",
    "p_value",
    "n_bootstrap",
    "confidence_level",
    "significant",
    "winner",
    "ci_lower",
    "ci_upper",
    "seed",
    "mde",
}


def _report(tmp_path, name, quality, *, n=30, ids=None, created="2026-01-01T00:00:00Z", **extra):
    """A test report whose hypotheses keep each word with probability `quality`."""
    rng = random.Random(11)
    keep = random.Random(name)
    entries = []
    for i, key in enumerate(ids or [f"s{i}" for i in range(n)]):
        ref = " ".join(rng.choice(_WORDS) for _ in range(6))
        hyp = " ".join(w for w in ref.split() if keep.random() < quality)
        entries.append({"id": key, "source": f"src {i}", "expected": ref, "predicted": hyp})
    doc = {"model_slug": "m", "created_at": created, "dataset": {"id": "ds"}, **extra}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({**doc, "entries": entries}))
    return path


def test_compare_report_files_never_touches_the_warehouse(run_cli, tmp_path, new_db_path):
    good, bad = _report(tmp_path, "good", 1.0), _report(tmp_path, "bad", 0.5)
    result = run_cli("compare", good, bad, "--significance", "--n-bootstrap", "200", "--json")
    assert result.exit_code == 0, result.output
    assert not new_db_path.exists()
    doc = json.loads(result.stdout)
    assert doc["method"] == "sign" and doc["seed"] == 12345 and doc["n_bootstrap"] == 200
    assert [m["metric"] for m in doc["metrics"]][:4] == [
        "chrf_plus_plus",
        "bleu",
        "ter",
        "exact_match_rate",
    ]
    rows = {r["metric_name"]: r for r in doc["significance"]}
    assert set(rows) == {"chrf_plus_plus", "bleu", "ter", "exact_match_rate"}
    for row in doc["significance"]:
        assert set(row) == SPEC_FIELDS | {"run_a", "run_b"}
        assert row["winner"] == "A" and row["significant"]
    assert rows["exact_match_rate"]["system_a_score"] == 1.0


def test_significance_table_has_the_spec_columns_and_settings_header(run_cli, tmp_path):
    good, bad = _report(tmp_path, "good", 1.0), _report(tmp_path, "bad", 0.6)
    result = run_cli("significance", good, bad, "--n-bootstrap", "300", "--seed", "9")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert (
        "n = 300" in out and f"{ALPHA} = 0.05" in out and "seed = 9" in out and "sign test" in out
    )
    for column in ("metric", "Δ", "p-value", "Sig?"):
        assert column in out
    assert "**" in out


def test_identical_runs_compare_with_p_one(run_cli, tmp_path):
    path = _report(tmp_path, "same", 0.8)
    result = run_cli("significance", path, path, "--json", "--n-bootstrap", "100")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["significance"]
    assert {r["p_value"] for r in rows} == {1.0} and {r["winner"] for r in rows} == {None}


def test_three_runs_test_every_pair_keyed_by_run_ids(run_cli, tmp_path):
    paths = [_report(tmp_path, name, q) for name, q in (("x", 1.0), ("y", 0.7), ("z", 0.4))]
    result = run_cli("compare", *paths, "--significance", "--json", "--n-bootstrap", "100")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    ids = [r["run_id"] for r in doc["runs"]]
    pairs = [(p["run_a"], p["run_b"]) for p in doc["pairs"]]
    assert pairs == [(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])]
    assert {(r["run_a"], r["run_b"]) for r in doc["significance"]} == set(pairs)


def test_sacrebleu_methods_are_offered_with_their_estimates(run_cli, tmp_path):
    a, b = _report(tmp_path, "a", 0.9), _report(tmp_path, "b", 0.7)
    for method in ("paired-bs", "paired-ar"):
        result = run_cli("significance", a, b, "--method", method, "--n-bootstrap", "100", "--json")
        assert result.exit_code == 0, result.output
        doc = json.loads(result.stdout)
        assert doc["method"] == method
        estimates = doc["pairs"][0]["sacrebleu_estimates"]
        assert set(estimates["bleu"]["a"]) == {"score", "mean", "ci"}


def test_mismatched_ids_warn_with_the_dropped_counts(run_cli, tmp_path):
    a = _report(tmp_path, "a", 0.9, ids=[f"s{i}" for i in range(20)])
    b = _report(tmp_path, "b", 0.7, ids=[f"s{i}" for i in range(4, 26)])
    args = ("--n-bootstrap", "100", "--allow-different-testsets", "--json")
    result = run_cli("significance", a, b, *args)
    assert result.exit_code == 0, result.output
    assert "dropping 4 of A" in result.stderr and "and 6 of B" in result.stderr
    assert json.loads(result.stdout)["pairs"][0]["n_segments"] == 16


def test_no_common_ids_and_too_few_runs_are_usage_errors(run_cli, tmp_path, new_db_path):
    a = _report(tmp_path, "a", 0.9, ids=["a1", "a2"])
    b = _report(tmp_path, "b", 0.9, ids=["b1", "b2"])
    result = run_cli("compare", a, b, "--allow-different-testsets")
    assert result.exit_code == 2 and "no segment ids in common" in result.stderr
    assert run_cli("compare", a).exit_code == 2
    unknown = run_cli("compare", a, "nope")
    assert unknown.exit_code == 2 and "no warehouse at" in unknown.stderr  # run ids need one


def test_runs_are_named_by_id_prefix_from_the_warehouse(run_cli, tmp_path, db_path):
    a, b = _report(tmp_path, "a", 1.0), _report(tmp_path, "b", 0.5)
    ingested = json.loads(run_cli("ingest", a, b, "--no-intervals", "--json").stdout)
    ids = [r["run_id"] for r in ingested]
    before = snapshot(db_path)
    result = run_cli("compare", ids[0][:6], ids[1], "--significance", "--n-bootstrap", "100")
    assert result.exit_code == 0, result.output
    assert f"A = {ids[0]} (m)" in result.stdout and "on 30 common segments" in result.stdout
    assert snapshot(db_path) == before


def test_regressions_list_significant_drops_and_fail_when_asked(run_cli, tmp_path):
    old = _report(tmp_path, "old", 1.0, created="2026-01-01T00:00:00Z")
    new = _report(tmp_path, "new", 0.4, created="2026-02-01T00:00:00Z")
    fine = _report(tmp_path, "fine", 0.97, created="2026-03-01T00:00:00Z")
    assert run_cli("ingest", old, new, "--no-intervals").exit_code == 0
    found = run_cli("regressions", "--n-bootstrap", "200", "--json")
    assert found.exit_code == 0, found.output
    doc = json.loads(found.stdout)
    assert len(doc["checked"]) == 1
    assert {r["metric_name"] for r in doc["regressions"]} == {
        "chrf_plus_plus",
        "bleu",
        "ter",
        "exact_match_rate",
    }
    assert all(r["winner"] == "B" for r in doc["regressions"])
    # A drop is a lower score, except for TER, where lower is better.
    assert all((r["delta"] < 0) == (r["metric_name"] != "ter") for r in doc["regressions"])
    failing = run_cli("regressions", "--fail-on-regression", "--n-bootstrap", "200")
    assert failing.exit_code == 1 and "significant drops" in failing.stdout
    assert run_cli("ingest", fine, "--no-intervals").exit_code == 0
    latest = run_cli("regressions", "--latest", "--fail-on-regression", "--n-bootstrap", "200")
    assert latest.exit_code == 0 and "no significant regressions in 1" in latest.stdout
    everything = json.loads(run_cli("regressions", "--json", "--n-bootstrap", "200").stdout)
    assert len(everything["checked"]) == 2 and everything["regressions"]


def test_compare_and_regressions_take_bootstrap_defaults_from_the_warehouse_settings(
    run_cli, tmp_path, db_path
):
    old = _report(tmp_path, "old", 1.0, created="2026-01-01T00:00:00Z")
    new = _report(tmp_path, "new", 0.4, created="2026-02-01T00:00:00Z")
    ids = [
        r["run_id"]
        for r in json.loads(run_cli("ingest", old, new, "--no-intervals", "--json").stdout)
    ]
    with open_warehouse(db_path) as con:
        con.execute("UPDATE settings SET value = 70 WHERE key = 'bootstrap.n'")
        con.execute("UPDATE settings SET value = 5 WHERE key = 'bootstrap.seed'")
    doc = json.loads(run_cli("compare", *ids, "--significance", "--json").stdout)
    assert (doc["n_bootstrap"], doc["seed"]) == (70, 5)
    assert {(r["n_bootstrap"], r["seed"]) for r in doc["significance"]} == {(70, 5)}
    explicit = json.loads(run_cli("significance", *ids, "--seed", "8", "--json").stdout)
    assert (explicit["n_bootstrap"], explicit["seed"]) == (70, 8)
    found = run_cli("regressions")
    assert "n = 70" in found.stdout and "seed = 5" in found.stdout, found.output
    before = snapshot(db_path)
    files = json.loads(run_cli("compare", old, new, "--significance", "--json").stdout)
    assert (files["n_bootstrap"], files["seed"]) == (70, 5)
    assert snapshot(db_path) == before


@pytest.mark.parametrize("option", ["--testset", "--model-slug"])
def test_regressions_filter_by_test_set_and_model(run_cli, tmp_path, option):
    assert run_cli("ingest", _report(tmp_path, "one", 1.0), "--no-intervals").exit_code == 0
    if option == "--testset":
        unknown = run_cli("regressions", "--testset", "nope")
        assert unknown.exit_code == 2 and "unknown test set" in unknown.stderr
    else:
        none = run_cli("regressions", "--model-slug", "other")
        assert none.exit_code == 2 and "unknown model 'other'" in none.stderr, none.output


def test_reports_without_a_model_slug_are_named_after_their_file(run_cli, tmp_path):
    a = _report(tmp_path, "first", 0.9)
    doc = json.loads(a.read_text())
    del doc["model_slug"]
    a.write_text(json.dumps(doc))
    result = run_cli("compare", a, _report(tmp_path, "second", 0.8))
    assert result.exit_code == 0, result.output
    assert "(first)" in result.stdout


def test_compare_without_significance_prints_the_side_by_side_table(run_cli, tmp_path):
    paths = [_report(tmp_path, name, q) for name, q in (("x", 1.0), ("y", 0.5), ("z", 0.7))]
    result = run_cli("compare", *paths)
    assert result.exit_code == 0, result.output
    assert "Δ A-B" in result.stdout and "Δ A-C" in result.stdout
    assert "p-value" not in result.stdout
    doc = json.loads(run_cli("compare", *paths, "--json").stdout)
    assert "significance" not in doc
    chrf = doc["metrics"][0]
    assert chrf["metric"] == "chrf_plus_plus" and len(chrf["values"]) == 3
    assert chrf["deltas"][0] == pytest.approx(chrf["values"][0] - chrf["values"][1])


def test_report_files_compare_exactly_as_the_same_runs_once_stored(run_cli, tmp_path, db_path):
    good = _report(tmp_path, "good", 0.9, plugin_metrics_note="x")
    bad = _report(tmp_path, "bad", 0.6, ids=[f"s{i}" for i in reversed(range(30))])
    args = ("--significance", "--n-bootstrap", "300", "--method", "paired-bs", "--json")
    args = (*args, "--allow-different-testsets")
    from_files = json.loads(run_cli("compare", good, bad, *args).stdout)
    ingested = json.loads(run_cli("ingest", good, bad, "--no-intervals", "--json").stdout)
    stored = json.loads(run_cli("compare", *(r["run_id"] for r in ingested), *args).stdout)
    assert from_files["metrics"] == stored["metrics"]
    assert from_files["significance"] == stored["significance"]
    assert [r["run_id"] for r in from_files["runs"]] == [r["run_id"] for r in stored["runs"]]


def test_runs_on_different_test_sets_are_refused_by_name_unless_allowed(run_cli, tmp_path):
    test = _report(tmp_path, "on-test", 0.9, dataset={"id": "test"})
    doc = json.loads(test.read_text())
    doc["dataset"] = {"id": "dev"}
    for entry in doc["entries"]:  # the same ids "s0".."s29", other sentences
        entry["source"] = "dev " + entry["source"]
        entry["expected"] = entry["expected"] + " river"
    dev = tmp_path / "on-dev.json"
    dev.write_text(json.dumps(doc))
    refused = run_cli("significance", test, dev, "--n-bootstrap", "100")
    assert refused.exit_code == 2
    assert "different test sets" in refused.stderr
    assert "'test'" in refused.stderr and "'dev'" in refused.stderr
    assert "--allow-different-testsets" in refused.stderr
    allowed = run_cli(
        "significance", test, dev, "--n-bootstrap", "100", "--allow-different-testsets"
    )
    assert allowed.exit_code == 0, allowed.output
    assert "different test sets" in allowed.stderr


def test_paired_ar_runs_sacrebleus_10000_trials_by_default(run_cli, tmp_path):
    a, b = _report(tmp_path, "a", 0.9), _report(tmp_path, "b", 0.6)
    doc = json.loads(run_cli("significance", a, b, "--method", "paired-ar", "--json").stdout)
    assert doc["n_bootstrap"] == 10_000
    assert {r["n_bootstrap"] for r in doc["significance"]} == {10_000}
    explicit = run_cli(
        "significance", a, b, "--method", "paired-ar", "--n-bootstrap", "50", "--json"
    )
    assert json.loads(explicit.stdout)["n_bootstrap"] == 50


def test_a_regression_gate_that_compared_nothing_fails_and_says_why(run_cli, tmp_path, new_db_path):
    nothing = run_cli("regressions", "--latest", "--fail-on-regression")
    assert nothing.exit_code == 2 and "no warehouse at" in nothing.stderr
    assert run_cli("init").exit_code == 0
    empty = run_cli("regressions", "--latest", "--fail-on-regression")
    assert empty.exit_code == 2 and "no runs yet" in empty.stderr
    only = _report(tmp_path, "only", 0.9)
    assert run_cli("ingest", only, "--no-intervals").exit_code == 0
    single = run_cli("regressions", "--latest", "--fail-on-regression")
    assert single.exit_code == 2
    assert "made no comparison" in single.stderr and "single run" in single.stderr
    wrong_model = run_cli("regressions", "--model-slug", "nope", "--fail-on-regression")
    assert wrong_model.exit_code == 2 and "unknown model 'nope'" in wrong_model.stderr
    assert "known: m" in wrong_model.stderr
    without_gate = run_cli("regressions", "--latest")
    assert without_gate.exit_code == 0 and "no comparisons" in without_gate.stdout


def test_a_metric_direction_set_in_settings_decides_the_winner(run_cli, tmp_path, db_path):
    def with_copy_rate(name, rate):
        path = _report(tmp_path, name, 0.9)
        doc = json.loads(path.read_text())
        for entry in doc["entries"]:
            entry["copy_rate"] = rate
        path.write_text(json.dumps(doc))
        return path

    a, b = with_copy_rate("a", 0.9), with_copy_rate("b", 0.1)
    ids = [
        r["run_id"] for r in json.loads(run_cli("ingest", a, b, "--no-intervals", "--json").stdout)
    ]
    args = ("significance", *ids, "--n-bootstrap", "200", "--json")

    def winner():
        doc = json.loads(run_cli(*args).stdout)
        return next(r for r in doc["significance"] if r["metric_name"] == "copy_rate")["winner"]

    assert winner() == "A"  # unknown metrics: higher is better
    with open_warehouse(db_path) as con:
        con.execute("INSERT INTO settings VALUES ('direction.copy_rate', -1, 'lower is better')")
    assert winner() == "B"
    with open_warehouse(db_path) as con:
        con.execute("UPDATE settings SET value = 0 WHERE key = 'direction.copy_rate'")
    bad = run_cli(*args)
    assert bad.exit_code == 2 and "direction.copy_rate must be 1" in bad.stderr


def test_a_resample_count_from_settings_is_bounded_like_the_option(run_cli, tmp_path, db_path):
    a, b = _report(tmp_path, "a", 0.9), _report(tmp_path, "b", 0.6)
    ids = [
        r["run_id"] for r in json.loads(run_cli("ingest", a, b, "--no-intervals", "--json").stdout)
    ]
    with open_warehouse(db_path) as con:
        con.execute("UPDATE settings SET value = 1e9 WHERE key = 'bootstrap.n'")
    result = run_cli("significance", *ids)
    assert result.exit_code == 2 and "at most 100,000" in result.stderr


def test_differences_below_the_detectable_one_are_said(run_cli, demo_db):
    runs = ["demo-small/zero-shot", "demo-small/few-shot"]
    shown = run_cli("compare", *runs, "--significance")
    assert shown.exit_code == 0
    doc = json.loads(run_cli("compare", *runs, "--significance", "--json").stdout)
    below = [r for r in doc["significance"] if not r["significant"] and abs(r["delta"]) < r["mde"]]
    assert below  # TER's difference on 40 segments
    assert "is below the minimum detectable difference" in shown.stdout
    assert shown.stdout.count("cannot tell differences this small apart") == len(below)


def test_regressions_count_drops_too_small_for_the_test_set(run_cli, tmp_path):
    old = _report(tmp_path, "old", 0.9, created="2026-01-01T00:00:00Z")
    new = _report(tmp_path, "slightly", 0.88, created="2026-02-01T00:00:00Z")
    assert run_cli("ingest", old, new, "--no-intervals").exit_code == 0
    doc = json.loads(run_cli("regressions", "--json").stdout)
    assert doc["regressions"] == []
    drops = doc["undetectable_drops"]
    assert drops and all(not r["significant"] and abs(r["delta"]) < r["mde"] for r in drops)
    shown = run_cli("regressions")
    assert f"note: {len(drops)} drop(s) were not significant" in shown.stderr


def test_a_sign_test_result_significant_with_zero_in_its_interval_is_explained(run_cli, tmp_path):
    # BLEU: p = 0.03 (one tail), the 95% interval of Δ reaches above 0.
    a, b = _report(tmp_path, "a0", 0.8), _report(tmp_path, "b0", 0.8)
    doc = json.loads(run_cli("compare", a, b, "--significance", "--json").stdout)
    bleu = next(r for r in doc["significance"] if r["metric_name"] == "bleu")
    assert bleu["significant"] and bleu["ci_lower"] <= 0 <= bleu["ci_upper"]
    shown = run_cli("compare", a, b, "--significance").stdout
    assert "BLEU: significant and its interval contains 0: the sign test counts one tail" in shown
    others = [r for r in doc["significance"] if r["metric_name"] != "bleu"]
    assert (
        all(not (r["significant"] and r["ci_lower"] <= 0 <= r["ci_upper"]) for r in others)
        and shown.count("its interval contains 0") == 1
    )
