"""The gate: one run judged against a pinned baseline (`regressions --run`, `ingest --gate`),
its baseline rules, exit codes (0 passed, 1 regressed, 2 usage) and its Markdown."""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import VOCABULARY, snapshot
from warehouse import UsageError, Warehouse
from warehouse.analysis.regressions import choose_baseline


def _report(tmp_path, name, quality, *, model="m", created, test="ds", seed=None):
    """A test report whose hypotheses keep each word of the (shared) references with
    probability `quality` (draws seeded by `seed`, else by the name)."""
    rng = random.Random(3)
    keep = random.Random(seed or name)
    entries = []
    for i in range(40):
        ref = " ".join(rng.choice(VOCABULARY) for _ in range(7))
        hyp = " ".join(w for w in ref.split() if keep.random() < quality)
        entries.append({"id": f"s{i}", "source": f"{test} {i}", "expected": ref, "predicted": hyp})
    doc = {"model_slug": model, "created_at": created, "dataset": {"id": test}}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({**doc, "entries": entries}))
    return path


def _ingest(run_cli, path, *args) -> tuple[str, object]:
    """Ingest one report (with any gate options): its run id and the CLI result."""
    result = run_cli("ingest", path, "--no-intervals", "--json", *args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)[0]["run_id"], result


def test_a_first_run_passes_with_a_note_unless_a_baseline_is_required(run_cli, tmp_path, db_path):
    first, _ = _ingest(run_cli, _report(tmp_path, "a", 0.9, created="2026-01-01T00:00:00Z"))
    passed = run_cli("regressions", "--run", first)
    assert passed.exit_code == 0 and "no baseline" in passed.stdout, passed.output
    doc = json.loads(run_cli("regressions", "--run", first, "--json").stdout)
    assert doc["gate"]["passed"] and doc["gate"]["baseline_run_id"] is None
    assert "no earlier run of model 'm'" in doc["gate"]["no_baseline"]
    before = snapshot(db_path)
    required = run_cli("regressions", "--run", first, "--require-baseline")
    assert required.exit_code == 2 and "no baseline for run" in required.output
    assert snapshot(db_path) == before


def test_the_gate_judges_only_its_run_against_the_pinned_baseline(run_cli, tmp_path):
    good, _ = _ingest(run_cli, _report(tmp_path, "good", 1.0, created="2026-01-01T00:00:00Z"))
    assert run_cli("runs", "tag", good, "baseline=main").exit_code == 0
    bad, _ = _ingest(run_cli, _report(tmp_path, "bad", 0.4, created="2026-01-02T00:00:00Z"))
    worse, _ = _ingest(run_cli, _report(tmp_path, "worse", 0.4, created="2026-01-03T00:00:00Z"))
    # Against the run before it, a second bad run looks fine; against the pinned one it fails.
    assert run_cli("regressions", "--run", worse).exit_code == 0
    pinned = run_cli("regressions", "--run", worse, "--against", "tag:baseline=main", "--json")
    assert pinned.exit_code == 1, pinned.output
    doc = json.loads(pinned.stdout)
    assert doc["gate"]["baseline_run_id"] == good and not doc["gate"]["passed"]
    # chrF++ alone is gated by default; BLEU's drop is reported as information.
    assert {r["metric_name"] for r in doc["regressions"]} == {"chrf_plus_plus"}
    assert doc["gate"]["verdict"]["policy"]["metrics"] == ["chrf_plus_plus"]
    both = run_cli("regressions", "--run", worse, "--against", "tag:baseline=main",
                   "--gate-metric", "chrf,bleu", "--json")  # fmt: skip
    assert {r["metric_name"] for r in json.loads(both.stdout)["regressions"]} == {
        "chrf_plus_plus",
        "bleu",
    }
    assert {r["run_id"] for r in doc["tested"]} == {worse}
    best = json.loads(run_cli("regressions", "--run", bad, "--against", "best", "--json").stdout)
    assert best["gate"]["baseline_run_id"] == good
    # Another model's regression does not fail this model's gate.
    other, _ = _ingest(
        run_cli, _report(tmp_path, "o1", 0.8, model="other", created="2026-01-04T00:00:00Z")
    )
    assert run_cli("regressions", "--run", other).exit_code == 0
    # (The scan of every model's history would have failed this job for m's regression.)
    assert run_cli("regressions", "--fail-on-regression").exit_code == 1


@pytest.mark.parametrize("method", ["sign", "paired-bs", "paired-ar"])
def test_the_gate_runs_the_paired_test_compare_runs(run_cli, tmp_path, method):
    old, _ = _ingest(run_cli, _report(tmp_path, "old", 1.0, created="2026-01-01T00:00:00Z"))
    new, _ = _ingest(run_cli, _report(tmp_path, "new", 0.5, created="2026-01-02T00:00:00Z"))
    args = ["--method", method, "--n-bootstrap", "300", "--json"]
    gate = json.loads(run_cli("regressions", "--run", new, *args).stdout)
    pair = json.loads(run_cli("significance", new, old, *args).stdout)
    assert gate["method"] == method
    assert [(r["metric_name"], r["p_value"]) for r in gate["tested"]] == [
        (r["metric_name"], r["p_value"]) for r in pair["significance"]
    ]


def test_baselines_are_chosen_by_their_rule(run_cli, tmp_path, db_path):
    a1, _ = _ingest(run_cli, _report(tmp_path, "a1", 0.5, created="2026-01-01T00:00:00Z"))
    a2, _ = _ingest(run_cli, _report(tmp_path, "a2", 0.95, created="2026-01-02T00:00:00Z"))
    a3, _ = _ingest(run_cli, _report(tmp_path, "a3", 0.8, created="2026-01-03T00:00:00Z"))
    elsewhere, _ = _ingest(
        run_cli, _report(tmp_path, "x", 0.9, created="2026-01-04T00:00:00Z", test="other")
    )
    assert run_cli("runs", "tag", a1, "pin=yes").exit_code == 0
    with Warehouse.open(db_path, access="read") as wh:
        con = wh.con
        assert choose_baseline(con, a3, "previous").run_id == a2
        assert choose_baseline(con, a2, "previous").run_id == a1
        assert choose_baseline(con, a3, "best").run_id == a2
        assert choose_baseline(con, a2, "best").run_id == a3
        assert choose_baseline(con, a3, "tag:pin=yes").run_id == a1
        missing = choose_baseline(con, a3, "tag:pin=no")
        assert missing.run_id is None and "tagged pin=no" in (missing.missing or "")
        assert choose_baseline(con, a3, a1[:8]).run_id == a1
        with pytest.raises(UsageError, match="itself"):
            choose_baseline(con, a3, a3)
        with pytest.raises(UsageError, match="is on test set"):
            choose_baseline(con, a3, elsewhere)
        with pytest.raises(UsageError, match="tag:KEY=VALUE"):
            choose_baseline(con, a3, "tag:pin")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--against", "best"], "add --run"),
        (["--require-baseline"], "add --run"),
        (["--run", "RUN", "--latest"], "--run judges one run"),
        (["--run", "RUN", "--model-slug", "m"], "--run judges one run"),
        (["--run", "nosuchrun"], "unknown run"),
        (["--run", "RUN", "--json", "--format", "markdown"], "two formats"),
    ],
)
def test_gate_usage_errors_exit_2_and_change_nothing(run_cli, tmp_path, db_path, args, message):
    run, _ = _ingest(run_cli, _report(tmp_path, "a", 0.9, created="2026-01-01T00:00:00Z"))
    before = snapshot(db_path)
    result = run_cli("regressions", *[run if a == "RUN" else a for a in args])
    assert result.exit_code == 2 and message in result.output, result.output
    assert snapshot(db_path) == before


def test_ingest_gate_stores_the_run_then_judges_it(run_cli, tmp_path):
    _ingest(run_cli, _report(tmp_path, "good", 1.0, created="2026-01-01T00:00:00Z"))
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier steps\n")
    bad, result = _ingest(
        run_cli,
        _report(tmp_path, "bad", 0.4, created="2026-01-02T00:00:00Z"),
        "--gate",
        "--against",
        "previous",
        "--gate-markdown",
        summary,
    )
    assert result.exit_code == 1
    doc = json.loads(result.stdout)[0]
    assert doc["action"] == "added" and doc["gate"]["gate"]["run_id"] == bad
    assert not doc["gate"]["gate"]["passed"]
    text = summary.read_text()
    assert text.startswith("# earlier steps\n") and "## tame-wh gate: ❌ regressed" in text
    fine = run_cli(
        "ingest",
        _report(tmp_path, "fine", 1.0, created="2026-01-03T00:00:00Z"),
        "--no-intervals",
        "--gate",
        "--against",
        bad,
    )
    assert fine.exit_code == 0 and "gate passed" in fine.stdout, fine.output
    assert run_cli("ingest", "x.json", "--against", "best").exit_code == 2


def test_a_drop_within_the_seed_noise_of_the_baselines_replicates_is_not_a_regression(
    run_cli, tmp_path, demo_db
):
    import random
    from pathlib import Path

    refs = Path(__file__).resolve().parents[2] / "warehouse" / "examples" / "test.es"
    lines = refs.read_text(encoding="utf-8").splitlines()

    def dropped(share: float, seed: int, name: str) -> Path:
        rng = random.Random(seed)
        path = tmp_path / name
        text = [" ".join(w for w in x.split() if rng.random() > share) or "x" for x in lines]
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
        return path

    def ingest(path: Path, *extra: str) -> str:
        done = run_cli("ingest", "--testset", "demo-test", "--hyp", path, "--model-slug",
                       "demo-large", "--condition", "zero-shot", "--json", *extra)  # fmt: skip
        assert done.exit_code == 0, done.output
        return json.loads(done.stdout)[0]["run_id"]

    # Three replicates of one configuration with a wide seed spread; the newest is the best.
    first = json.loads(run_cli("runs", "list", "--json").stdout)
    [original] = [r["run_id"] for r in first if r["model_slug"] == "demo-large"]
    ingest(dropped(0.4, 1, "r2.hyp"), "--replicate-of", original)
    ingest(dropped(0.05, 2, "r1.hyp"), "--replicate-of", original)
    middling = ingest(dropped(0.25, 3, "new.hyp"))
    report = json.loads(run_cli("regressions", "--run", middling, "--json").stdout)
    assert report["regressions"] == []
    assert {r["metric_name"] for r in report["within_seed_noise"]} >= {"chrf_plus_plus"}
    table = run_cli("regressions", "--run", middling)
    assert table.exit_code == 0 and "within the seed noise" in table.stderr
    awful = ingest(dropped(0.9, 4, "awful.hyp"))
    gate = run_cli("regressions", "--run", awful, "--against", middling, "--json")
    assert gate.exit_code == 1
    assert "chrf_plus_plus" in {r["metric_name"] for r in json.loads(gate.stdout)["regressions"]}


@pytest.mark.parametrize("lake", ["lake-dir"], indirect=True)  # one lake: the gate is SQL alike
def test_two_runners_on_one_lake_gate_each_job_as_a_team_expects(lake, tmp_path):
    def job(runner: str, name: str, quality: float, model: str, day: int, *extra: str) -> int:
        folder = tmp_path / runner
        folder.mkdir(exist_ok=True)
        report = _report(folder, name, quality, model=model, created=f"2026-02-0{day}T00:00:00Z")
        done = lake.run("ingest", report, "--no-intervals", "--gate", "--against",
                        "tag:baseline=main", *extra)  # fmt: skip
        assert done.exit_code in (0, 1, 2), done.output
        return done.exit_code

    assert job("runner1", "first", 0.9, "m", 1) == 2  # a new model: refused, nothing stored
    assert lake.sql("SELECT count(*) FROM runs") == [(0,)]
    # Its first run is let in on purpose: nothing to compare with, it passes with a note.
    assert job("runner1", "first", 0.9, "m", 1, "--allow-new-model") == 0
    first = lake.sql("SELECT run_id FROM runs WHERE model_slug = 'm'")[0][0]
    assert lake.run("runs", "tag", first, "baseline=main").exit_code == 0
    assert job("runner2", "other", 0.9, "other", 2, "--allow-new-model") == 0  # another model
    assert job("runner1", "bad", 0.4, "m", 3) == 1  # a drop against the pinned baseline
    assert job("runner2", "bad-again", 0.4, "m", 4) == 1  # still a drop: not judged by "bad"
    assert job("runner1", "good", 0.95, "m", 5) == 0  # back to the baseline's level
    assert lake.sql("SELECT count(*) FROM runs") == [(5,)]  # every run stored either way


def test_what_the_gate_needs_is_checked_before_the_run_is_stored(run_cli, tmp_path, db_path):
    _ingest(run_cli, _report(tmp_path, "good", 1.0, created="2026-01-01T00:00:00Z"))
    before = snapshot(db_path)
    report = _report(tmp_path, "next", 0.9, created="2026-01-02T00:00:00Z")
    for args, message in (
        (["--against", "nosuchrun"], "unknown run"),
        (["--against", "tag:nokey"], "expected tag:KEY=VALUE"),
        (["--gate-markdown", tmp_path], "--gate-markdown"),
        (["--gate-markdown", tmp_path / "no" / "such" / "dir.md"], "cannot write"),
    ):
        against = [] if "--against" in args else ["--against", "previous"]
        done = run_cli("ingest", report, "--no-intervals", "--gate", *against, *args)
        assert done.exit_code == 2, (args, done.output)
        assert message in done.output and "stored run" not in done.output, done.output
        assert snapshot(db_path) == before, args
    fresh = tmp_path / "fresh.duckdb"
    done = run_cli("ingest", report, "--no-intervals", "--gate", "--against", "abc123", db=fresh)
    assert done.exit_code == 2 and " yet" in done.output, done.output
    assert not fresh.exists()


def test_a_failure_after_the_commit_says_the_run_was_stored(run_cli, tmp_path, db_path):
    first = _report(tmp_path, "first", 1.0, created="2026-01-01T00:00:00Z")
    assert run_cli("ingest", first, "--no-intervals").exit_code == 0
    again = _report(tmp_path, "again", 0.98, created="2026-01-01T12:00:00Z")
    done = run_cli("ingest", again, "--no-intervals", "--gate", "--against", "tag:pinned=yes")
    assert done.exit_code == 5, done.output
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: stored run ") and "; then the gate could not judge it: " in line
    assert "no baseline for run" in line and "nothing was" not in line
    assert len(snapshot(db_path)["runs"]) == 2
    # The Markdown target opens (as /dev/full does) but its write fails: told after the commit.
    second = _report(tmp_path, "second", 0.97, created="2026-01-02T00:00:00Z")
    done = run_cli("ingest", second, "--no-intervals", "--gate", "--against", "previous",
                   "--gate-markdown", "/dev/full")  # fmt: skip
    assert done.exit_code == 5, done.output
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: stored run ") and "and judged it (gate " in line
    assert "then could not write the gate's Markdown to /dev/full (No space left on device)" in line
    assert "nothing was committed" not in done.output
    assert len(snapshot(db_path)["runs"]) == 3


def test_the_gates_needs_and_its_failures_after_the_commit_on_either_backend(warehouse, tmp_path):
    first = _report(tmp_path, "first", 1.0, created="2026-01-01T00:00:00Z")
    assert warehouse.run("ingest", first, "--no-intervals").exit_code == 0
    before = warehouse.tables()
    nxt = _report(tmp_path, "next", 0.9, created="2026-01-02T00:00:00Z")
    refused = warehouse.run("ingest", nxt, "--no-intervals", "--gate", "--against", "nosuchrun")
    assert refused.exit_code == 2 and "unknown run" in refused.output, refused.output
    assert warehouse.tables() == before
    full = warehouse.run("ingest", nxt, "--no-intervals", "--gate", "--against", "previous",
                         "--gate-markdown", "/dev/full")  # fmt: skip
    assert full.exit_code == 5, full.output
    [line] = [x for x in full.stderr.splitlines() if x.startswith("error: ")]
    assert line.startswith("error: stored run ") and "(No space left on device)" in line
    assert len(warehouse.tables()["runs"]) == 2


def test_every_vacuous_pass_is_refused_before_anything_is_written(
    run_cli, tmp_path, db_path, monkeypatch
):
    from click.testing import CliRunner

    from warehouse.cli.main import main

    good = _report(tmp_path, "good", 1.0, model="model-large", created="2026-01-01T00:00:00Z")
    assert run_cli("ingest", good, "--no-intervals").exit_code == 0
    before = snapshot(db_path)
    bad = _report(tmp_path, "bad", 0.4, model="model-lrage", created="2026-01-02T00:00:00Z")
    # No --against: "the previous run" would pass a second bad run.
    done = run_cli("ingest", bad, "--no-intervals", "--gate")
    assert done.exit_code == 2 and "--gate needs --against" in done.output
    # A misspelled model is a new model with no baseline: refused, with the stored one named.
    done = run_cli("ingest", bad, "--no-intervals", "--gate", "--against", "best")
    assert done.exit_code == 2, done.output
    assert "new model 'model-lrage' (did you mean 'model-large'?)" in done.output
    assert snapshot(db_path) == before
    # Under CI, no warehouse address (a fork's pull request: empty secrets), or one with no
    # warehouse behind it: refused, and no ./tame.duckdb appears.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("TAME_WH_DB", "")
    fork = CliRunner().invoke(main, ["ingest", str(bad), "--gate", "--against", "best"])
    assert fork.exit_code == 2 and "$TAME_WH_DB is empty or unset" in fork.output, fork.output
    missing = tmp_path / "nowhere.duckdb"
    gone = run_cli("ingest", bad, "--gate", "--against", "best", db=missing)
    assert gone.exit_code == 2 and "no warehouse at" in gone.output, gone.output
    assert not (tmp_path / "tame.duckdb").exists() and not missing.exists()
    # A new model let in on purpose passes with a note; its next run has a baseline.
    first = run_cli("ingest", bad, "--no-intervals", "--gate", "--against", "previous",
                    "--allow-new-model")  # fmt: skip
    assert first.exit_code == 0 and "no baseline" in first.stdout, first.output
    worse = _report(tmp_path, "worse", 0.2, model="model-lrage", created="2026-01-03T00:00:00Z")
    again = run_cli("ingest", worse, "--no-intervals", "--gate", "--against", "previous")
    assert again.exit_code == 1, again.output


def test_a_typo_of_a_stored_model_is_a_warning_without_the_gate(run_cli, tmp_path):
    good = _report(tmp_path, "good", 1.0, model="model-large", created="2026-01-01T00:00:00Z")
    assert run_cli("ingest", good, "--no-intervals").exit_code == 0
    typo = _report(tmp_path, "typo", 0.9, model="model-lrage", created="2026-01-02T00:00:00Z")
    done = run_cli("ingest", typo, "--no-intervals")
    assert done.exit_code == 0
    assert "model 'model-lrage' is new, and close to the stored 'model-large'" in done.stderr
