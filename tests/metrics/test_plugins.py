"""Metric plugins: an installed package (tests/metrics/plugin_v1, a distribution with its
`tame_wh.metrics` entry points, found by importlib.metadata on the path) contributes `word_f1`;
`ingest --metric` and `rescore --metric` store its per-segment values and signature; the
leaderboard ranks by it and marks scores of another plugin version."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import snapshot
from tests.metrics.plugin_install import HOSTILE, V1, V2, install_test_plugin
from warehouse.metrics.plugins import installed_plugins

HERE = Path(__file__).parent
DATA = HERE.parent / "inputs" / "data"


def _install(monkeypatch, folder: Path) -> None:
    install_test_plugin(monkeypatch, folder)


@pytest.fixture(autouse=True)
def _forget_plugins():
    yield
    installed_plugins.cache_clear()


def _json(result):
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _word_f1(hyp: str, ref: str) -> float:
    h, r = set(hyp.lower().split()), set(ref.lower().split())
    common = len(h & r)
    return 0.0 if not common else 2 * common / (len(h) + len(r))


@pytest.fixture
def testset(run_cli):
    _json(run_cli("testset", "add", "wmt", "--src", DATA / "src.de", "--ref", DATA / "ref.en",
                  "--json"))  # fmt: skip
    return "wmt"


def test_ingest_stores_the_plugins_values_and_signature(run_cli, testset, monkeypatch):
    _install(monkeypatch, V1)
    [run] = _json(run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysA.en",
                          "--model-slug", "a", "--metric", "word_f1", "--json"))  # fmt: skip
    values = _json(run_cli("query", "SELECT seg_idx, value FROM metric_values WHERE metric = "
                           "'word_f1' ORDER BY seg_idx", "--json"))  # fmt: skip
    hyps = (DATA / "sysA.en").read_text(encoding="utf-8").splitlines()
    refs = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    assert [v["value"] for v in values] == pytest.approx(
        [_word_f1(h, r) for h, r in zip(hyps, refs, strict=True)]
    )
    shown = _json(run_cli("runs", "show", run["run_id"], "--json"))
    assert shown["signatures"]["word_f1"].startswith("word_f1|plugin-version:1.0|model:none|")
    assert "package:tame-wh-word-f1" in shown["signatures"]["word_f1"]


def test_rescore_with_a_plugin_is_the_run_a_fresh_ingest_with_it_stores(
    run_cli, testset, monkeypatch
):
    _install(monkeypatch, V1)
    [plain] = _json(run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysB.en",
                            "--model-slug", "b", "--json"))  # fmt: skip
    [derived] = _json(run_cli("rescore", "b", "--metric", "word_f1", "--json"))
    assert derived["action"] == "added" and derived["source_run_id"] == plain["run_id"]
    assert derived["scores"] == plain["scores"]  # the statistics' options are the run's own
    [fresh] = _json(run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysB.en",
                            "--model-slug", "b", "--metric", "word_f1", "--json"))  # fmt: skip
    assert (fresh["action"], fresh["run_id"]) == ("unchanged", derived["run_id"])
    assert [r["run_id"] for r in _json(run_cli("leaderboard", "--json"))] == [plain["run_id"]]
    # Asked for the default options, each output is listed once: as ingested, no plugin.
    board = _json(run_cli("leaderboard", "--tokenize", "13a", "--json"))
    assert [r["run_id"] for r in board] == [plain["run_id"]]
    board = _json(run_cli("leaderboard", "--metric", "word_f1", "--json"))
    assert [r["run_id"] for r in board] == [derived["run_id"]]


def test_the_leaderboard_ranks_by_the_plugin_and_marks_another_version(
    run_cli, testset, monkeypatch
):
    _install(monkeypatch, V1)
    for system in ("sysA", "sysB"):
        run_cli("ingest", "--testset", testset, "--hyp", DATA / f"{system}.en", "--model-slug",
                system, "--metric", "word_f1")  # fmt: skip
    board = _json(run_cli("leaderboard", "--metric", "word_f1", "--json"))
    means = [r["plugin_metrics"]["word_f1"] for r in board]
    assert [r["model_slug"] for r in board] == ["sysA", "sysB"] and means == sorted(means)[::-1]
    assert all(r["signature_differs"] == [] for r in board)
    table = run_cli("leaderboard", "--metric", "word_f1", "--wide")
    assert "word_f1" in table.output.splitlines()[1]
    comment = run_cli("leaderboard", "--metric", "word_f1", "--format", "markdown").stdout
    header = next(line for line in comment.splitlines() if line.startswith("| #"))
    assert header.rstrip(" |").endswith("word\\_f1")  # Markdown-escaped
    assert f"{means[0]:.4f}" in comment
    # Version 2.0 scores a third run: its scores are not comparable with version 1.0's.
    _install(monkeypatch, V2)
    run_cli("ingest", "--testset", testset, "--hyp", DATA / "ref.en", "--model-slug", "human",
            "--metric", "word_f1")  # fmt: skip
    board = {r["model_slug"]: r for r in _json(run_cli("leaderboard", "--metric", "word_f1",
                                                        "--json"))}  # fmt: skip
    assert board["human"]["signature_differs"] == ["word_f1"]
    assert board["sysA"]["signature_differs"] == []
    assert "plugin-version:2.0" in board["human"]["metric_signatures"]["word_f1"]
    done = run_cli("compare", "sysA", "human", "--json")
    assert done.exit_code == 0, done.output
    compared = json.loads(done.stdout)
    [warning] = [w for w in compared["warnings"] if "word_f1" in w]
    assert warning.startswith("word_f1 is not comparable across these runs:")
    assert "plugin-version:1.0" in warning and "plugin-version:2.0" in warning


def test_paired_tests_take_the_plugins_metric_in_its_direction(run_cli, testset, monkeypatch):
    _install(monkeypatch, V1)
    for system in ("sysA", "sysB"):
        run_cli("ingest", "--testset", testset, "--hyp", DATA / f"{system}.en", "--model-slug",
                system, "--metric", "word_f1", "--metric", "word_miss",
                "--no-intervals")  # fmt: skip
    done = run_cli("compare", "sysA", "sysB", "--significance", "--n-bootstrap", "200", "--json")
    assert done.exit_code == 0, done.output
    results = {r["metric_name"]: r for r in json.loads(done.stdout)["significance"]}
    # A scores higher on word_f1 and lower on word_miss: better on both, by each direction.
    assert results["word_f1"]["delta"] > 0 > results["word_miss"]["delta"]
    assert results["word_f1"]["winner"] == results["word_miss"]["winner"] == "A"
    board = _json(run_cli("leaderboard", "--metric", "word_miss", "--json"))
    assert [r["model_slug"] for r in board] == ["sysA", "sysB"]  # lowest first
    done = run_cli("leaderboard", "--metric", "word_miss", "--clusters", "--store",
                   "--n-bootstrap", "200", "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    clustered = json.loads(done.stdout)
    assert [r["cluster"] for r in clustered] == [1, 2]  # A significantly better on word_miss
    stored = _json(run_cli("query", "SELECT metric, signature FROM run_clusters", "--json"))
    assert {r["metric"] for r in stored} == {"word_miss"}
    assert all("plugin-version:1.0" in r["signature"] for r in stored)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("no_such_metric", "no installed package provides it"),
        ("broken_metric", "returned 5 scores for 6 segments"),
    ],
)
def test_a_missing_or_broken_plugin_is_refused_and_changes_nothing(
    run_cli, db_path, testset, monkeypatch, metric, message
):
    _install(monkeypatch, V1)
    before = snapshot(db_path)
    done = run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysA.en", "--model-slug",
                   "a", "--metric", metric)  # fmt: skip
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert snapshot(db_path) == before


def test_an_installed_plugin_is_found_by_a_fresh_process(tmp_path):
    db = tmp_path / "wh.duckdb"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(V1), str(HERE.parents[1])])}

    def cli(*args):
        argv = [sys.executable, "-m", "warehouse.cli", "--db", str(db), *map(str, args)]
        return subprocess.run(argv, env=env, capture_output=True, text=True, check=True)

    cli("testset", "add", "wmt", "--src", DATA / "src.de", "--ref", DATA / "ref.en")
    cli("ingest", "--testset", "wmt", "--hyp", DATA / "sysA.en", "--model-slug", "a", "--metric",
        "word_f1", "--no-intervals")  # fmt: skip
    [row] = json.loads(cli("leaderboard", "--metric", "word_f1", "--json").stdout)
    assert row["plugin_metrics"]["word_f1"] > 0.5


def test_a_metric_a_report_carried_is_ranked_like_a_plugins(run_cli, tmp_path):
    src = (DATA / "src.de").read_text(encoding="utf-8").splitlines()
    ref = (DATA / "ref.en").read_text(encoding="utf-8").splitlines()
    for slug, score in (("low", 0.2), ("high", 0.9)):
        entries = [{"source": s, "expected": r, "predicted": r, "plugin_metrics": {"lex": score}}
                   for s, r in zip(src, ref, strict=True)]  # fmt: skip
        path = tmp_path / f"{slug}.json"
        path.write_text(json.dumps({"model_slug": slug, "entries": entries}), encoding="utf-8")
        assert run_cli("ingest", path, "--no-intervals").exit_code == 0
    board = _json(run_cli("leaderboard", "--metric", "plugin_metrics.lex", "--json"))
    assert [(r["model_slug"], r["plugin_metrics"]["plugin_metrics.lex"]) for r in board] == [
        ("high", pytest.approx(0.9)), ("low", pytest.approx(0.2))
    ]  # fmt: skip


# --- Plugins that misbehave (tests/metrics/plugin_hostile) ---


@pytest.mark.parametrize(
    ("metric", "exit_code", "message"),
    [
        ("exiting_metric", 2, "called sys.exit(0) while scoring; nothing was stored"),
        ("exiting_loader", 2, "called sys.exit(3) while loading; nothing was stored"),
        ("interrupting_metric", 130, "interrupted"),
        ("leaky_metric", 2, "failed while scoring: RuntimeError: could not reach"),
    ],
)
def test_a_plugin_that_exits_interrupts_or_fails_is_an_error_and_changes_nothing(
    run_cli, db_path, testset, monkeypatch, metric, exit_code, message
):
    _install(monkeypatch, HOSTILE)
    secret = "s3cr3t-plugin-canary-77"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    before = snapshot(db_path)
    done = run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysA.en", "--model-slug",
                   "a", "--metric", metric)  # fmt: skip
    assert done.exit_code == exit_code, done.output
    assert message in done.output
    assert secret not in done.output
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert snapshot(db_path) == before
    if metric == "leaky_metric":
        assert "with key ***" in done.output


def test_a_plugin_that_never_returns_ends_at_the_timeout_setting(
    run_cli, db_path, testset, monkeypatch
):
    _install(monkeypatch, HOSTILE)
    import duckdb

    con = duckdb.connect(str(db_path))
    con.execute("UPDATE settings SET value = 1 WHERE key = 'plugin.timeout_seconds'")
    con.close()
    before = snapshot(db_path)
    started = time.monotonic()
    done = run_cli("ingest", "--testset", testset, "--hyp", DATA / "sysA.en", "--model-slug",
                   "a", "--metric", "hanging_metric")  # fmt: skip
    assert time.monotonic() - started < 10
    assert done.exit_code == 2, done.output
    assert "did not finish scoring within 1 s (settings plugin.timeout_seconds)" in done.output
    assert snapshot(db_path) == before


def test_ctrl_c_stops_a_plugin_that_never_returns(db_path, testset, tmp_path):
    marker = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HOSTILE), str(HERE.parents[1])]),
           "TAME_WH_TEST_PLUGIN_STARTED": str(marker)}  # fmt: skip
    argv = [sys.executable, "-m", "warehouse.cli", "--db", str(db_path), "ingest", "--testset",
            testset, "--hyp", str(DATA / "sysA.en"), "--model-slug", "a", "--metric",
            "hanging_metric"]  # fmt: skip
    before = snapshot(db_path)
    child = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if marker.exists():
                break
            time.sleep(0.05)
        assert marker.exists(), "the plugin never started"
        child.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _, stderr = child.communicate(timeout=20)
    finally:
        child.kill()
    assert time.monotonic() - stopped < 5
    assert child.returncode == 130, stderr
    assert "interrupted; nothing was committed" in stderr
    assert snapshot(db_path) == before
