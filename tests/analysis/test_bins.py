"""A report's intervals per exposure bin and for GenGap, computed on demand from the stored run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from warehouse import Warehouse
from warehouse.analysis.bins import run_bin_intervals
from warehouse.stats.resample import BootstrapSettings


@pytest.fixture
def demo(demo_db):
    return demo_db


def test_the_report_carries_bin_and_gengap_intervals_around_its_estimates(run_cli, demo):
    doc = json.loads(run_cli("report", "demo-large", "--json").stdout)
    found = doc["bin_intervals"]
    assert (found["n_bootstrap"], found["alpha"], found["seed"]) == (1000, 0.05, 12345)
    point = {b["bin"]: b for b in doc["bins"]}
    for name, metrics in found["bins"].items():
        assert point[name]["n_segments"] > 0
        for metric, key in (("bleu", "bleu"), ("chrf_plus_plus", "chrf_plus_plus")):
            low, high = metrics[metric]["system"]
            assert low <= high
            if point[name]["n_segments"] > 2:
                assert low - 1e-9 <= point[name][key] <= high + 1e-9
            delta = metrics[metric]["delta"]
            tm_low, tm_high = metrics[metric]["tm"]
            assert delta[0] <= delta[1] and tm_low <= tm_high
    gap = found["gengap"]["bleu"]
    assert gap["system"][0] <= doc["gengap"]["gengap_bleu"] <= gap["system"][1]
    assert gap["tm"][0] <= doc["gengap"]["tm_gengap_bleu"] <= gap["tm"][1]
    assert 0 <= gap["p_exceeds"] <= 1 and gap["exceeds_tm"] == (gap["p_exceeds"] < 0.05)
    shown = run_cli("report", "demo-large")
    assert "GenGap 95% CI" in shown.stdout and "system - TM" in shown.stdout


def test_bin_intervals_are_reproducible_and_follow_the_seed(demo):
    with Warehouse.open(demo, access="read") as wh:
        doc = wh.report("demo-small/zero-shot")
        run_id, audit_id = doc["run"]["run_id"], doc["exposure"]["audit_id"]
        first = run_bin_intervals(wh.con, run_id, audit_id, BootstrapSettings(500, 0.1, 4))
        again = run_bin_intervals(wh.con, run_id, audit_id, BootstrapSettings(500, 0.1, 4))
        other = run_bin_intervals(wh.con, run_id, audit_id, BootstrapSettings(500, 0.1, 5))
    assert first is not None and other is not None
    assert first.to_dict() == again.to_dict() != other.to_dict()
    near = np.array(first.to_dict()["bins"]["near"]["chrf_plus_plus"]["system"])
    assert np.all(np.isfinite(near))


def test_a_run_without_an_audit_has_no_bin_intervals(run_cli, tmp_path):
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "warehouse" / "examples"
    add = run_cli(
        "testset", "add", "t", "--src", examples / "test.en", "--ref", examples / "test.es"
    )
    assert add.exit_code == 0
    ingest = run_cli(
        "ingest",
        "--testset",
        "t",
        "--hyp",
        examples / "demo-large.zero-shot.hyp",
        "--model-slug",
        "m",
        "--json",
    )
    assert ingest.exit_code == 0, ingest.stderr
    assert json.loads(run_cli("report", "m", "--json").stdout)["bin_intervals"] is None


def test_leaderboard_by_bin_ranks_by_the_bins_chrf_with_the_reports_intervals(run_cli, demo):
    done = run_cli("leaderboard", "--bin", "near", "--json")
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    scores = [r["bin"]["chrf_plus_plus"] for r in rows]
    assert scores == sorted(scores, reverse=True) and len(rows) == 3
    for row in rows:
        doc = json.loads(run_cli("report", row["run_id"], "--json").stdout)
        near = doc["bin_intervals"]["bins"]["near"]["chrf_plus_plus"]
        assert row["bin"]["chrf_ci"] == near["system"]
        assert row["bin"]["delta_tm_chrf_ci"] == near["delta"]
        assert (
            row["bin"]["gengap_chrf_ci"]
            == doc["bin_intervals"]["gengap"]["chrf_plus_plus"]["system"]
        )
        [near_row] = [b for b in doc["bins"] if b["bin"] == "near"]
        assert row["bin"]["chrf_plus_plus"] == pytest.approx(near_row["chrf_plus_plus"])
        assert row["bin"]["n_segments"] == near_row["n_segments"]
    limited = json.loads(run_cli("leaderboard", "--bin", "near", "--limit", "1", "--json").stdout)
    assert [r["run_id"] for r in limited] == [rows[0]["run_id"]]
    table = run_cli("leaderboard", "--bin", "near")
    assert "bin near" in table.stdout and "segments resampled within their bin" in table.stderr
    markdown = run_cli("leaderboard", "--bin", "near", "--format", "markdown").stdout
    assert "## tame-wh leaderboard, bin near" in markdown and "| GenGap chrF++ [CI] |" in markdown


def test_leaderboard_by_bin_refuses_other_rankings(run_cli, demo):
    for extra in (("--sort", "bleu"), ("--clusters",), ("--replicates",)):
        done = run_cli("leaderboard", "--bin", "far", *extra)
        assert done.exit_code == 2 and "--bin ranks by the bin's chrF++" in done.output
