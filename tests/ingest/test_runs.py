"""Ingesting runs: statistics stored, identity and idempotence, run cards, test reports, CI."""

from __future__ import annotations

import json

import duckdb
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from warehouse.analysis.runs import list_runs
from warehouse.ingest.prepare import prepare_from_document, prepare_from_files
from warehouse.ingest.write import write_runs
from warehouse.metrics.scores import bleu_from_stats, chrf_from_stats, ter_from_stats
from warehouse.store.schema import open_warehouse

SRC = ["the cat sat", "a dog ran", "hello world", "good night"]
REF1 = ["le chat assis", "un chien courait", "bonjour le monde", "bonne nuit"]
REF2 = ["le chat s'est assis", "un chien a couru", "salut le monde", "bonne nuit"]
HYP = ["le chat assis", "un chien court", "bonjour monde", ""]


@pytest.fixture
def testset(run_cli, write_lines):
    """A registered two-reference test set called `ts` with ids s1..s4."""
    meta = write_lines("meta.jsonl", [json.dumps({"id": f"s{i + 1}"}) for i in range(4)])
    result = run_cli(
        "testset",
        "add",
        "ts",
        "--src",
        write_lines("src", SRC),
        "--ref",
        write_lines("ref1", REF1),
        "--ref",
        write_lines("ref2", REF2),
        "--segments-meta",
        meta,
    )
    assert result.exit_code == 0, result.output
    return "ts"


def _report(entries, **extra):
    doc = {"model_slug": "m", "condition": "c", "dataset": {"id": "rep", "language_pair": "en-fr"}}
    doc.update(extra)
    doc["entries"] = entries
    return doc


def _entries(hyps=HYP):
    return [
        {"id": f"e{i}", "source": s, "expected": r, "predicted": h}
        for i, (s, r, h) in enumerate(zip(SRC, REF1, hyps, strict=True))
    ]


def test_plain_files_store_statistics_that_reproduce_sacrebleu(db_path, testset, write_lines):
    run = prepare_from_files(
        db_path, testset=testset, hyp_path=write_lines("h", HYP), model_slug="m"
    )
    con = open_warehouse(db_path)
    [result] = write_runs(con, [run])
    assert result.action == "added" and result.n_entries == 4
    sums = con.execute(
        "SELECT bleu_stats, chrf_stats, ter_stats FROM run_sums WHERE run_id = ?",
        [result.run_id],
    ).fetchone()
    streams = [REF1, REF2]
    assert bleu_from_stats(sums[0]) == BLEU(tokenize="13a").corpus_score(HYP, streams).score
    assert chrf_from_stats(sums[1]) == CHRF(word_order=2).corpus_score(HYP, streams).score
    assert ter_from_stats(sums[2]) == TER().corpus_score(HYP, streams).score
    assert result.scores["bleu"] == BLEU(tokenize="13a").corpus_score(HYP, streams).score
    settings = json.loads(
        con.execute(
            "SELECT metric_settings FROM runs WHERE run_id = ?", [result.run_id]
        ).fetchone()[0]
    )
    assert settings["signatures"]["bleu"].startswith("nrefs:2|")
    stored = con.execute("SELECT hyp FROM hypotheses ORDER BY seg_idx").fetchall()
    assert [h for (h,) in stored] == HYP


def test_ingesting_the_same_run_twice_is_a_no_op(db_path, testset, write_lines):
    hyp = write_lines("h", HYP)
    con = open_warehouse(db_path)
    first = write_runs(
        con, [prepare_from_files(db_path, testset=testset, hyp_path=hyp, model_slug="m")]
    )
    again = write_runs(
        con, [prepare_from_files(db_path, testset=testset, hyp_path=hyp, model_slug="m")]
    )
    assert again[0].action == "unchanged" and again[0].run_id == first[0].run_id
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM segment_stats").fetchone() == (4,)


def test_run_id_depends_on_model_condition_and_hypotheses(db_path, testset, write_lines):
    hyp = write_lines("h", HYP)
    other = write_lines("h2", ["x", "y", "z", "w"])
    ids = {
        prepare_from_files(db_path, testset=testset, hyp_path=h, model_slug=m, condition=c).run_id
        for h, m, c in [(hyp, "m", None), (hyp, "m2", None), (hyp, "m", "few"), (other, "m", None)]
    }
    assert len(ids) == 4


def test_replace_overwrites_a_run_with_its_new_run_card_and_keeps_its_tags(
    db_path, testset, write_lines, tmp_path
):
    hyp = write_lines("h", HYP)
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"model_slug": "m", "totals": {"total_cost_usd": 1.5}}))
    con = open_warehouse(db_path)
    write_runs(
        con,
        [
            prepare_from_files(
                db_path, testset=testset, hyp_path=hyp, model_slug=None, run_card_path=card
            )
        ],
    )
    card.write_text(json.dumps({"model_slug": "m", "totals": {"total_cost_usd": 2.5}}))
    changed = prepare_from_files(
        db_path, testset=testset, hyp_path=hyp, model_slug=None, run_card_path=card
    )
    [kept] = write_runs(con, [changed])
    assert kept.action == "unchanged" and any("--replace" in w for w in kept.warnings)
    assert con.execute("SELECT total_cost_usd FROM runs").fetchone() == (1.5,)
    con.execute("INSERT INTO run_tags VALUES (?, 'team', 'mt')", [kept.run_id])
    [replaced] = write_runs(con, [changed], replace=True)
    assert replaced.action == "replaced"
    assert con.execute("SELECT total_cost_usd FROM runs").fetchone() == (2.5,)
    # The team's tags stay with the replaced run.
    assert con.execute("SELECT run_id, key, value FROM run_tags").fetchall() == [
        (kept.run_id, "team", "mt")
    ]
    assert con.execute("SELECT count(*) FROM hypotheses").fetchone() == (4,)


def test_run_card_supplies_totals_latency_and_metrics(db_path, testset, write_lines, tmp_path):
    card = {
        "model_slug": "m",
        "condition": "zero-shot",
        "elapsed_seconds": 12.5,
        "dataset": {"id": "ts", "language_pair": "en-fr"},
        "fingerprint": {"hash": "abc"},
        "totals": {
            "prompt_tokens": 100,
            "completion_tokens": 40,
            "reasoning_tokens": 5,
            "cached_tokens": 10,
            "total_cost_usd": 0.25,
            "cost_per_entry_usd": 0.0625,
        },
        "scores": {
            "chrf_plus_plus": 99.0,
            "fst_acceptance_rate": 0.75,
            "comet_score": -0.1,
            "confidence_intervals": {"chrf_plus_plus": {"ci_lower": 1.0}},
        },
        "unknown_top_level": {"kept": True},
        "entries": [
            {
                "id": "s2",
                "latency_s": 0.5,
                "usage": {
                    "prompt_tokens": 25,
                    "completion_tokens_details": {"reasoning_tokens": 2},
                },
                "comet": 0.8,
                "plugin_metrics": {"fst": {"valid": True, "score": 0.5}},
                "note": "kept",
            },
            {"id": "s4", "error": "timeout"},
        ],
    }
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card))
    con = open_warehouse(db_path)
    [result] = write_runs(
        con,
        [
            prepare_from_files(
                db_path,
                testset=testset,
                hyp_path=write_lines("h", HYP),
                model_slug=None,
                run_card_path=path,
            )
        ],
    )
    assert (result.model_slug, result.condition, result.n_errors) == ("m", "zero-shot", 1)
    run = con.execute(
        "SELECT elapsed_seconds, prompt_tokens, completion_tokens, reasoning_tokens, "
        "cached_tokens, "
        "total_cost_usd, dataset_id, language_pair, fingerprint_hash, run_card FROM runs"
    ).fetchone()
    assert run[:9] == (12.5, 100, 40, 5, 10, 0.25, "ts", "en-fr", "abc")
    assert json.loads(run[9])["unknown_top_level"] == {"kept": True}
    hyps = con.execute(
        "SELECT seg_idx, latency_s, error, prompt_tokens, reasoning_tokens FROM hypotheses "
        "ORDER BY seg_idx"
    ).fetchall()
    assert hyps == [
        (0, None, None, None, None),
        (1, 0.5, None, 25, 2),
        (2, None, None, None, None),
        (3, None, "timeout", None, None),
    ]
    metrics = con.execute(
        "SELECT seg_idx, metric, value FROM metric_values ORDER BY seg_idx NULLS FIRST, metric"
    ).fetchall()
    assert metrics == [
        (None, "comet_score", -0.1),
        (None, "fst_acceptance_rate", 0.75),
        (1, "comet_score", 0.8),  # `comet` is COMET's registered metric, stored by its name
        (1, "plugin_metrics.fst.score", 0.5),
        (1, "plugin_metrics.fst.valid", 1.0),
    ]
    exact = con.execute("SELECT exact_match FROM segment_stats ORDER BY seg_idx").fetchall()
    assert [e for (e,) in exact] == [True, False, False, None]
    assert result.scores["exact_match_rate"] == 1 / 3


def test_test_report_creates_its_test_set_once_and_shares_it(db_path, tmp_path):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(_report(_entries())))
    b.write_text(json.dumps(_report(_entries(["x", "y", "z", "w"]), model_slug="other")))
    con = open_warehouse(db_path)
    results = write_runs(con, [prepare_from_document(a), prepare_from_document(b)])
    assert [r.test_set_created for r in results] == [True, False]
    assert {r.test_set for r in results} == {"rep"}
    info = con.execute("SELECT name, src_lang, tgt_lang, n_segments FROM corpora").fetchall()
    assert info == [("rep", "en", "fr", 4)]
    keys = con.execute("SELECT seg_key FROM segments ORDER BY seg_idx").fetchall()
    assert [k for (k,) in keys] == ["e0", "e1", "e2", "e3"]


def test_report_whose_dataset_name_is_taken_gets_a_suffixed_test_set(db_path, tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(_report(_entries())))
    changed = _entries()
    changed[0]["source"] = "a different source"
    second.write_text(json.dumps(_report(changed)))
    con = open_warehouse(db_path)
    results = write_runs(con, [prepare_from_document(first), prepare_from_document(second)])
    assert results[0].test_set == "rep"
    assert results[1].test_set.startswith("rep@") and results[1].test_set_created


def test_errored_entries_are_kept_flagged_and_excluded_from_exact_match(db_path, tmp_path):
    entries = _entries(["le chat assis", "un chien courait", "x", ""])
    entries[3]["predicted"] = None
    entries[3]["error"] = "rate limited"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_report(entries)))
    con = open_warehouse(db_path)
    [result] = write_runs(con, [prepare_from_document(path)])
    assert result.n_errors == 1
    assert result.scores["exact_match_rate"] == 2 / 3
    row = con.execute("SELECT hyp, error FROM hypotheses WHERE seg_idx = 3").fetchone()
    assert row == ("", "rate limited")
    [summary] = list_runs(con)
    assert summary.n_errors == 1 and summary.exact_match_rate == 2 / 3


def test_ci_metadata_is_captured_from_github_actions(db_path, testset, write_lines, monkeypatch):
    for key, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_SHA": "deadbeef",
        "GITHUB_REF_NAME": "main",
        "GITHUB_REPOSITORY": "org/repo",
        "GITHUB_RUN_ID": "42",
        "GITHUB_JOB": "eval",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("GITLAB_CI", raising=False)
    run = prepare_from_files(
        db_path, testset=testset, hyp_path=write_lines("h", HYP), model_slug="m"
    )
    con = open_warehouse(db_path)
    write_runs(con, [run])
    ci = json.loads(con.execute("SELECT ci FROM runs").fetchone()[0])
    assert ci == {
        "provider": "github-actions",
        "commit": "deadbeef",
        "branch": "main",
        "repository": "org/repo",
        "job": "eval",
        "run_id": "42",
        "url": "https://github.com/org/repo/actions/runs/42",
    }


def test_ci_metadata_is_captured_from_gitlab(monkeypatch):
    from warehouse.inputs.ci_env import ci_metadata

    env = {
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": "abc",
        "CI_COMMIT_REF_NAME": "dev",
        "CI_JOB_ID": "7",
        "CI_JOB_URL": "https://gitlab.example/job/7",
    }
    assert ci_metadata(env) == {
        "provider": "gitlab-ci",
        "commit": "abc",
        "branch": "dev",
        "run_id": "7",
        "url": "https://gitlab.example/job/7",
    }
    assert ci_metadata({}) is None


def test_cli_ingest_json_and_runs_list(run_cli, testset, write_lines, tmp_path, db_path):
    result = run_cli(
        "ingest",
        "--testset",
        testset,
        "--hyp",
        write_lines("h", HYP),
        "--model-slug",
        "m",
        "--json",
    )
    assert result.exit_code == 0, result.output
    [doc] = json.loads(result.stdout)
    assert doc["action"] == "added" and doc["test_set"] == "ts"
    report = tmp_path / "r.json"
    report.write_text(json.dumps(_report(_entries())))
    second = run_cli("ingest", str(report), str(report))
    assert second.exit_code == 0, second.output
    assert "ingested run" in second.output and "already ingested" in second.output
    listed = json.loads(run_cli("runs", "list", "--json").stdout)
    assert [r["test_set"] for r in listed] == ["ts", "rep"]
    only = json.loads(run_cli("runs", "list", "--testset", "rep", "--json").stdout)
    assert len(only) == 1 and only[0]["model_slug"] == "m"
    text = run_cli("runs", "list").output
    assert "chrF++" in text and doc["run_id"] in text
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
