"""`tame-wh report`: a stable document with quality, exposure, bins, composite, cost and speed."""

from __future__ import annotations

import json

import pytest

from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.report import build_report, build_reports
from warehouse.store.connection import connect


@pytest.fixture
def demo(demo_db):
    return demo_db


def _top_run(run_cli):
    return json.loads(run_cli("leaderboard", "--json").stdout)[0]


def test_report_json_carries_every_section(run_cli, demo):
    top = _top_run(run_cli)
    doc = json.loads(run_cli("report", top["run_id"][:6], "--json").stdout)
    assert doc["format"] == 1
    assert set(doc) == {
        "format",
        "run",
        "quality",
        "metrics",
        "exposure",
        "bins",
        "gengap",
        "bin_intervals",
        "composite",
        "cost",
        "speed",
        "breakdowns",
        "intervals",
        "warnings",
        "signatures",
        "tie_group",
        "human",
    }
    assert doc["tie_group"] is None  # no stored tie groups (leaderboard --clusters --store)
    assert doc["human"] == {"mqm": None, "esa": None, "da_z": None}
    chrf = next(
        i for i in doc["intervals"] if i["metric"] == "chrf_plus_plus" and i["scope"] == "all"
    )
    assert chrf["ci_lower"] == pytest.approx(top["chrf_ci_lower"])
    assert chrf["ci_lower"] <= doc["quality"]["chrf_plus_plus"] <= chrf["ci_upper"]
    assert chrf["seed"] == 12345 and chrf["n_bootstrap"] == 1000
    assert doc["run"]["run_id"] == top["run_id"]
    assert doc["quality"]["bleu"] == pytest.approx(top["corpus_bleu"])
    assert doc["quality"]["tm_bleu"] == pytest.approx(top["tm_bleu"])
    assert doc["quality"]["delta_tm_bleu"] == pytest.approx(top["delta_tm_bleu"])
    assert [b["bin"] for b in doc["bins"]] == ["all", "source_exact", "near", "medium", "far"]
    assert doc["gengap"]["gengap_bleu"] == pytest.approx(top["gengap_bleu"])
    assert doc["composite"]["composite"] == pytest.approx(top["composite_score"])
    weights = [i["effective_weight"] for i in doc["composite"]["inputs"]]
    assert sum(weights) == pytest.approx(1.0)
    assert doc["exposure"]["mode"] == "exact" and doc["exposure"]["signature"].startswith("tame")
    assert doc["signatures"]["bleu"].startswith("nrefs:1|")
    assert {b["dimension"] for b in doc["breakdowns"]} == {"difficulty", "provenance"}
    assert any("TM BLEU" in w for w in doc["warnings"])


def test_report_text_names_sections(run_cli, demo):
    top = _top_run(run_cli)
    result = run_cli("report", top["run_id"])
    assert result.exit_code == 0
    for fragment in (
        "quality",
        "bins",
        "GenGap",
        "composite",
        "PairLeak",
        "signature",
        "bootstrap intervals",
    ):
        assert fragment in result.output


def test_report_without_audit_says_how_to_get_one(run_cli, write_lines):
    src = write_lines("s", ["one", "two"])
    ref = write_lines("r", ["uno", "dos"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", ref).exit_code == 0
    ingested = json.loads(
        run_cli("ingest", "--testset", "t", "--hyp", ref, "--model-slug", "m", "--json").output
    )[0]
    doc = json.loads(run_cli("report", ingested["run_id"], "--json").stdout)
    assert doc["exposure"] is None and doc["bins"] == []
    assert any("tame-wh audit" in w for w in doc["warnings"])


def test_unknown_ambiguous_and_short_run_ids_are_errors(run_cli, demo):
    assert run_cli("report", "ffffffff").exit_code == 2
    short = run_cli("report", "ab")
    assert short.exit_code == 2 and "too short" in short.stderr
    unknown_train = run_cli("report", _top_run(run_cli)["run_id"], "--train", "nope")
    assert unknown_train.exit_code == 2 and "unknown training corpus" in unknown_train.stderr


def test_many_runs_at_once_get_each_runs_report(run_cli, demo, write_lines):
    src = write_lines("s", ["one", "two"])
    ref = write_lines("r", ["uno", "dos"])
    assert run_cli("testset", "add", "t", "--src", src, "--ref", ref).exit_code == 0
    assert run_cli("ingest", "--testset", "t", "--hyp", ref, "--model-slug", "m").exit_code == 0
    con = connect(demo, read_only=True)
    try:
        board = leaderboard(con)
        docs = build_reports(con, board)
        assert list(docs) == [row["run_id"] for row in board] and len(docs) == 4
        for row in board:  # with the demo's audit, and the new test set's none
            assert docs[row["run_id"]] == build_report(con, row["run_id"])
        assert sum(doc["exposure"] is None for doc in docs.values()) == 1
        # Bin intervals for the audited runs (none without an audit).
        assert sum(doc["bin_intervals"] is None for doc in docs.values()) == 1
        assert build_reports(con, []) == {}
    finally:
        con.close()


def test_an_audit_given_by_train_is_named_so(run_cli, demo):
    top = _top_run(run_cli)
    given = json.loads(run_cli("report", top["run_id"], "--train", "demo-train", "--json").stdout)
    default = json.loads(run_cli("report", top["run_id"], "--json").stdout)
    assert given["exposure"]["train_rule"] == "given (--train)"
    assert default["exposure"]["train_rule"].startswith("exposure columns use")
    assert {**given, "exposure": None} == {**default, "exposure": None}
