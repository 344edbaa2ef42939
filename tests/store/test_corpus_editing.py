"""Test sets and training corpora can be deleted (with everything that depends on them, after
saying what and a confirmation) and renamed (ids, audits and runs stay); deleting runs from a
shared lake asks first."""

from __future__ import annotations

import json

from tests.conftest import snapshot


def test_a_test_set_is_deleted_with_its_runs_and_audits_after_a_confirmation(run_cli, demo_db):
    db_path = demo_db
    before = snapshot(db_path)
    dry = run_cli("testset", "delete", "demo-test", "--dry-run")
    assert dry.exit_code == 0 and "would delete test set 'demo-test'" in dry.stdout
    assert "1 audit(s) and 3 run(s)" in dry.stdout
    refused = run_cli("testset", "delete", "demo-test")  # no terminal, no --yes
    assert refused.exit_code == 2 and "pass --yes to confirm" in refused.stderr
    assert snapshot(db_path) == before
    done = run_cli("testset", "delete", "demo-test", "--yes", "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert doc["corpus"]["name"] == "demo-test" and len(doc["run_ids"]) == 3
    after = snapshot(db_path)
    for table in ("runs", "hypotheses", "segment_stats", "run_intervals", "audits", "exposures"):
        assert after[table] == [], table
    assert [r[1] for r in after["corpora"]] == ["demo-train"]
    assert json.loads(run_cli("leaderboard", "--json").stdout) == []


def test_a_training_corpus_is_deleted_with_its_audits_but_the_runs_stay(run_cli, demo_db):
    db_path = demo_db
    done = run_cli("corpus", "delete", "demo-train", "--yes")
    assert done.exit_code == 0, done.output
    assert "deleted training corpus 'demo-train'" in done.stdout and "0 run(s)" in done.stdout
    after = snapshot(db_path)
    assert after["audits"] == [] and len(after["runs"]) == 3
    assert run_cli("corpus", "delete", "demo-test", "--yes").exit_code == 2  # a test set


def test_renaming_keeps_ids_audits_and_runs(run_cli, demo_db):
    db_path = demo_db
    board = json.loads(run_cli("leaderboard", "--json").stdout)
    renamed = run_cli("testset", "rename", "demo-test", "dev-2026")
    assert renamed.exit_code == 0 and "renamed test set 'demo-test' to 'dev-2026'" in renamed.stdout
    again = json.loads(run_cli("leaderboard", "--json").stdout)
    assert [r["run_id"] for r in again] == [r["run_id"] for r in board]
    assert {r["test_set"] for r in again} == {"dev-2026"}
    assert {r["test_corpus_id"] for r in again} == {r["test_corpus_id"] for r in board}
    assert run_cli("corpus", "rename", "demo-train", "bible").exit_code == 0
    assert {r["train_corpus"] for r in json.loads(run_cli("leaderboard", "--json").stdout)} == {
        "bible"
    }
    before = snapshot(db_path)
    taken = run_cli("testset", "rename", "dev-2026", "bible")
    assert taken.exit_code == 2 and "is taken by training corpus" in taken.stderr
    bad = run_cli("testset", "rename", "dev-2026", " padded ")
    assert bad.exit_code == 2
    assert run_cli("testset", "rename", "nope", "x").exit_code == 2
    assert snapshot(db_path) == before


def test_deleting_runs_from_a_lake_asks_first(demo_lake):
    lake = demo_lake
    runs = [r[0] for r in lake.sql("SELECT run_id FROM runs ORDER BY run_id")]
    refused = lake.run("runs", "delete", runs[0])
    assert refused.exit_code == 2 and "pass --yes to confirm" in refused.output
    assert "from the shared lake" in refused.output
    assert len(lake.sql("SELECT run_id FROM runs")) == 3
    assert lake.run("runs", "delete", runs[0], "--dry-run").exit_code == 0
    assert lake.run("runs", "delete", runs[0], "--yes").exit_code == 0
    assert [r[0] for r in lake.sql("SELECT run_id FROM runs ORDER BY run_id")] == runs[1:]
