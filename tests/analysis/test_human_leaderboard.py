"""Human scores on the leaderboard: a column per scheme from each run's newest judgment set,
sortable, with intervals that resample the judged segments, in the table, JSON and Markdown."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.mqm import (
    ERRORS,
    SEGMENT_SCORES,
    SOURCES,
    SYSTEM_SCORES,
    copy_judged,
    mqm_lines,
    write_mqm,
)
from warehouse.stats.resample import percentile_interval, resample_indices


@pytest.fixture
def judged(run_cli, tmp_path, db_path):
    """A warehouse made by `ingest --mqm` from the small MQM file (a copy, tests/mqm.py)."""
    copy_judged(run_cli, tmp_path, db_path)
    return run_cli


def _board(run_cli, *args: str) -> list[dict]:
    done = run_cli("leaderboard", "--json", *args)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_the_mqm_column_sorts_lower_first_with_its_interval(judged):
    rows = _board(judged, "--sort", "mqm")
    assert [r["model_slug"] for r in rows] == ["A", "C", "B"]
    assert [r["human_mqm"] for r in rows] == pytest.approx([SYSTEM_SCORES[s] for s in "ACB"])
    assert all(r["human_esa"] is None and r["human_da_z"] is None for r in rows)
    scores = np.array([SEGMENT_SCORES[("C", k)] for k in SOURCES])
    draws = scores[resample_indices(4, 1000, 12345)].mean(axis=1)
    low, high = percentile_interval(draws, 0.05)
    c = rows[1]
    assert (c["human_mqm_ci_lower"], c["human_mqm_ci_upper"]) == pytest.approx((low, high))
    assert rows[0]["human_esa_ci_lower"] is None


def test_the_table_and_the_markdown_show_the_column(judged, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    table = judged("leaderboard")
    assert table.exit_code == 0 and "MQM" in table.output, table.output
    assert "4.250 [" in table.output
    markdown = judged("leaderboard", "--format", "markdown")
    assert "| MQM [CI] |" in markdown.output and "6.525 [" in markdown.output


def test_the_newest_set_of_a_scheme_fills_the_column(judged, tmp_path):
    fewer = [e for e in ERRORS if not (e[0] == "B" and e[3] is not None and e[5] == "Major")]
    fewer.append(("B", "13", "r1", None, "No-error", "No-error"))
    path = write_mqm(tmp_path / "newer.tsv", mqm_lines(fewer))
    done = judged("human", "add", path, "--testset", "t", "--skip-system", "ref")
    assert done.exit_code == 0, done.output
    b = next(r for r in _board(judged) if r["model_slug"] == "B")
    assert b["human_mqm"] == pytest.approx((1 + 0.1 + 0 + 0) / 4)


def test_runs_without_judgments_show_no_human_column(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    src = tmp_path / "s.txt"
    src.write_text("a b c\n", encoding="utf-8")
    assert run_cli("testset", "add", "plain", "--src", src, "--ref", src).exit_code == 0
    assert run_cli("ingest", "--testset", "plain", "--hyp", src, "--model-slug", "m").exit_code == 0
    [row] = _board(run_cli)
    assert row["human_mqm"] is None
    assert "MQM" not in run_cli("leaderboard").output


def test_tie_groups_on_the_human_score(judged, tmp_path):
    rows = _board(judged, "--clusters", "--sort", "mqm", "--n-bootstrap", "500")
    assert [r["model_slug"] for r in rows] == ["A", "C", "B"]
    assert all(r["cluster"] is not None and r["rank_range"] for r in rows)
    assert rows[0]["clustering"]["metric"] == "human_mqm"
    src = tmp_path / "p.txt"
    src.write_text("a b c\nd e f\n", encoding="utf-8")
    assert judged("testset", "add", "plain", "--src", src, "--ref", src).exit_code == 0
    for slug in ("m1", "m2"):
        assert (
            judged("ingest", "--testset", "plain", "--hyp", src, "--model-slug", slug).exit_code
            == 0
        )
    done = judged("leaderboard", "--clusters", "--sort", "mqm")
    assert done.exit_code == 2 and "has no MQM judgments" in done.output
    assert judged("leaderboard", "--clusters", "--sort", "mqm", "--testset", "t").exit_code == 0
