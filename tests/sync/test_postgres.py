"""The Supabase/Postgres side on a real Postgres: migrations, direct and REST sync, RLS, secrets."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psycopg
import pytest

from tests.sync.postgrest_stub import PostgrestStub
from warehouse.errors import RemoteError, UsageError
from warehouse.store.resources import NumberedSql, migration_files
from warehouse.store.schema import open_warehouse
from warehouse.sync import migrate as migrate_module
from warehouse.sync.migrate import migrate
from warehouse.sync.postgres import CARD_COLUMNS, REAL_COLUMNS, TEXT_COLUMNS, sync_direct
from warehouse.sync.rest import sync_rest

KEY = "test-service-role.key.sekrit"


@pytest.fixture
def demo(demo_template, db_path):
    shutil.copyfile(demo_template, db_path)
    return db_path


def _cards(dsn):
    with psycopg.connect(dsn) as conn:
        cur = conn.execute("SELECT * FROM run_cards ORDER BY fingerprint_hash")
        names = [d.name for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def test_migrate_applies_in_order_and_twice_is_a_no_op(pg_dsn):
    first = migrate(pg_dsn)
    assert first.applied_now == [f.name for f in migration_files()]
    second = migrate(pg_dsn)
    assert second.applied_now == [] and second.pending == []
    with psycopg.connect(pg_dsn) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM tame_wh_migrations ORDER BY name")]
        assert names == [f.name for f in migration_files()]
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'run_cards_leaderboard_idx'"
        ).fetchone()
        assert "(dataset_id, chrf_plus_plus)" in index[0]


def test_dry_run_plans_without_applying(pg_dsn, run_cli):
    result = run_cli("migrate", "--dsn", pg_dsn, "--dry-run", "--json")
    doc = json.loads(result.stdout)
    assert doc["pending"] == [f.name for f in migration_files()] and doc["applied_now"] == []
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT to_regclass('run_cards')").fetchone() == (None,)


def test_changed_migration_is_refused(pg_dsn, monkeypatch):
    migrate(pg_dsn)
    files = migration_files()
    edited = [
        NumberedSql(f.number, f.name, f.text + "\n-- edited\n") if f.number == 1 else f
        for f in files
    ]
    monkeypatch.setattr(migrate_module, "migration_files", lambda: edited)
    with pytest.raises(UsageError, match=r"001_create_run_cards\.sql changed after it was applied"):
        migrate(pg_dsn)


def test_sync_then_resync_sends_nothing_and_keeps_synced_at(pg_dsn, demo):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    first = sync_direct(con, pg_dsn)
    assert (first.sent_runs, first.unchanged_runs) == (3, 0)
    before = {c["fingerprint_hash"]: c["synced_at"] for c in _cards(pg_dsn)}
    again = sync_direct(con, pg_dsn)
    assert (again.sent_runs, again.unchanged_runs) == (0, 3)
    full = sync_direct(con, pg_dsn, full=True)
    assert full.sent_runs == 3
    after = {c["fingerprint_hash"]: c["synced_at"] for c in _cards(pg_dsn)}
    assert after == before and len(after) == 3


def test_synced_columns_equal_the_duckdb_leaderboard(pg_dsn, demo):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    sync_direct(con, pg_dsn)
    cursor = con.execute("SELECT * FROM leaderboard")
    names = [d[0] for d in cursor.description]
    board = {
        r["fingerprint_hash"]: r
        for r in (dict(zip(names, row, strict=True)) for row in cursor.fetchall())
    }
    cards = _cards(pg_dsn)
    assert {c["fingerprint_hash"] for c in cards} == set(board)
    for card in cards:
        row = board[card["fingerprint_hash"]]
        for column in REAL_COLUMNS:
            ours, theirs = row.get(column), card[column]
            if ours is None:
                assert theirs is None, column
            else:
                assert math.isclose(theirs, ours, rel_tol=1e-6, abs_tol=1e-6), column
        for column in TEXT_COLUMNS:
            assert card[column] == row[column], column
        assert card["audit_measure"] == "jaccard"  # the demo's audit


def test_raw_text_never_leaves_the_warehouse(pg_dsn, demo):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    sync_direct(con, pg_dsn)
    texts = {s for (s,) in con.execute("SELECT src FROM segments").fetchall()}
    texts |= {r[0] for (r,) in con.execute("SELECT refs FROM segments").fetchall()}
    texts |= {h for (h,) in con.execute("SELECT hyp FROM hypotheses WHERE hyp <> ''").fetchall()}
    with psycopg.connect(pg_dsn) as conn:
        dump = json.dumps([list(map(str, r)) for r in conn.execute("SELECT * FROM run_cards")])
        dump += json.dumps([list(map(str, r)) for r in conn.execute("SELECT * FROM run_bins")])
    leaked = [t for t in texts if len(t) > 12 and t in dump]
    assert leaked == []


def test_replaced_run_is_updated_on_the_next_sync(pg_dsn, run_cli, write_lines, tmp_path):
    src = write_lines("s", ["one two", "three four"])
    ref = write_lines("r", ["uno dos", "tres cuatro"])
    hyp = write_lines("h", ["uno dos", "tres"])
    assert run_cli("testset", "add", "ts", "--src", src, "--ref", ref).exit_code == 0
    card = tmp_path / "card.json"
    card.write_text(
        json.dumps(
            {"model_slug": "m", "fingerprint": {"hash": "fp-1"}, "totals": {"total_cost_usd": 1.0}}
        )
    )
    assert run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--run-card", card).exit_code == 0
    assert run_cli("migrate", "--dsn", pg_dsn).exit_code == 0
    assert run_cli("sync", "--dsn", pg_dsn).exit_code == 0
    [before] = _cards(pg_dsn)
    card.write_text(
        json.dumps(
            {"model_slug": "m", "fingerprint": {"hash": "fp-1"}, "totals": {"total_cost_usd": 2.0}}
        )
    )
    replaced = run_cli("ingest", "--testset", "ts", "--hyp", hyp, "--run-card", card, "--replace")
    assert replaced.exit_code == 0
    result = run_cli("sync", "--dsn", pg_dsn, "--json")
    assert json.loads(result.stdout)["sent_runs"] == 1
    [after] = _cards(pg_dsn)
    assert after["total_cost_usd"] == 2.0 and after["synced_at"] > before["synced_at"]
    assert after["id"] == before["id"]


def test_sync_killed_mid_transaction_leaves_no_partial_rows(pg_dsn, demo):
    migrate(pg_dsn)
    blocker = psycopg.connect(pg_dsn)
    blocker.execute("LOCK TABLE run_bins IN ACCESS EXCLUSIVE MODE")  # sync waits after run_cards
    env = {**os.environ, "TAME_WH_PG_DSN": pg_dsn}
    proc = subprocess.Popen(
        [sys.executable, "-m", "warehouse.cli", "--db", str(demo), "sync"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        with psycopg.connect(pg_dsn, autocommit=True) as watcher:
            while time.monotonic() < deadline:
                waiting = watcher.execute(
                    "SELECT count(*) FROM pg_locks WHERE relation = 'run_bins'::regclass "
                    "AND NOT granted"
                ).fetchone()[0]
                if waiting:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("sync never reached run_bins")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        blocker.rollback()
        blocker.close()
    assert _cards(pg_dsn) == []
    con = duckdb.connect(str(demo), read_only=True)
    assert con.execute("SELECT count(*) FROM sync_state").fetchone() == (0,)


def test_row_level_security_lets_anon_read_but_not_write(pg_dsn, demo):
    migrate(pg_dsn)
    sync_direct(open_warehouse(demo), pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("SET ROLE anon")
        assert conn.execute("SELECT count(*) FROM run_cards").fetchone() == (3,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO run_cards (fingerprint_hash, run_card) VALUES ('x', '{}')")
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("SET ROLE anon")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM run_bins")


def test_secrets_never_appear_in_output(pg_dsn, demo, run_cli, monkeypatch):
    info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
    secret = "Sup3rS3cretPassw0rd"
    with_password = psycopg.conninfo.make_conninfo(**{**info, "password": secret})
    ok = run_cli("migrate", "--dsn", with_password)
    synced = run_cli("sync", "--dsn", with_password)
    broken = run_cli(
        "sync", "--dsn", with_password.replace(str(info.get("port", 5432)), "1"), "--full"
    )
    assert ok.exit_code == 0 and synced.exit_code == 0 and broken.exit_code == RemoteError.exit_code
    url_form = f"postgresql://nobody:{secret}@127.0.0.1:1/none"
    refused = run_cli("migrate", "--dsn", url_form)
    assert refused.exit_code == RemoteError.exit_code == 4
    monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", KEY)
    monkeypatch.setattr("warehouse.sync.rest.MAX_ATTEMPTS", 1)  # no backoff against a dead port
    rest = run_cli("sync", "--supabase-url", "http://127.0.0.1:1", "--full")
    assert rest.exit_code == RemoteError.exit_code
    for result in (ok, synced, broken, refused, rest):
        assert secret not in result.output and secret not in (result.stderr or "")
        assert KEY not in result.output and KEY not in (result.stderr or "")


def test_rest_sync_upserts_in_batches_and_resyncs_nothing(pg_dsn, demo, monkeypatch):
    migrate(pg_dsn)
    monkeypatch.setattr("warehouse.sync.rest.MAX_ROWS", 2)
    con = open_warehouse(demo)
    with PostgrestStub(pg_dsn, KEY) as stub:
        report = sync_rest(con, stub.url, KEY, sleep=lambda _s: None)
        card_posts = [r for r in stub.requests if "/run_cards" in r["path"]]
        assert report.sent_runs == 3 and len(card_posts) == 2
        assert len(_cards(pg_dsn)) == 3
        before = len(stub.requests)
        again = sync_rest(con, stub.url, KEY, sleep=lambda _s: None)
        assert again.sent_runs == 0 and again.unchanged_runs == 3
        assert len(stub.requests) == before


def test_rest_sync_retries_429_and_5xx(pg_dsn, demo):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    waits: list[float] = []
    with PostgrestStub(pg_dsn, KEY) as stub:
        stub.scripted = [429, 503, 500]
        report = sync_rest(con, stub.url, KEY, sleep=waits.append)
    assert report.sent_runs == 3 and len(waits) == 3
    assert len(_cards(pg_dsn)) == 3


def test_rest_sync_4xx_is_a_clear_error_and_marks_nothing(pg_dsn, demo, monkeypatch):
    migrate(pg_dsn)
    monkeypatch.setattr("warehouse.sync.rest.MAX_ROWS", 2)
    con = open_warehouse(demo)
    with PostgrestStub(pg_dsn, KEY) as stub:
        first = sync_rest(con, stub.url, KEY, sleep=lambda _s: None, full=True)
        assert first.sent_runs == 3
    with PostgrestStub(pg_dsn, "another-key") as stub, pytest.raises(RemoteError) as info:
        sync_rest(con, stub.url, KEY, sleep=lambda _s: None, full=True)
    assert "HTTP 401" in str(info.value) and KEY not in str(info.value)


def test_rest_sync_failing_midway_marks_only_sent_batches(pg_dsn, demo, monkeypatch):
    migrate(pg_dsn)
    monkeypatch.setattr("warehouse.sync.rest.MAX_ROWS", 2)
    con = open_warehouse(demo)
    with PostgrestStub(pg_dsn, KEY) as stub:
        original = stub.handle
        state = {"card_posts": 0, "failing": True}

        def fail_second_batch(path, headers, body, method="POST"):
            if "/run_cards" in path:
                state["card_posts"] += 1
                if state["failing"] and state["card_posts"] > 1:
                    return 400, {"message": "bad row", "code": "PGRST"}
            return original(path, headers, body, method)

        stub.handle = fail_second_batch
        with pytest.raises(RemoteError, match="HTTP 400"):
            sync_rest(con, stub.url, KEY, sleep=lambda _s: None)
        marked = con.execute("SELECT count(*) FROM sync_state").fetchone()[0]
        assert marked == 2 and len(_cards(pg_dsn)) == 2
        state["failing"] = False
        resumed = sync_rest(con, stub.url, KEY, sleep=lambda _s: None)
    assert resumed.sent_runs == 1 and len(_cards(pg_dsn)) == 3


def _bin_rows(dsn):
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT count(*) FROM run_bins").fetchone()[0]


@pytest.mark.parametrize("transport", ["direct", "rest"])
def test_bins_of_a_removed_audit_are_deleted_on_the_next_sync(
    pg_dsn, demo, run_cli, write_lines, transport, monkeypatch
):
    migrate(pg_dsn)
    monkeypatch.setattr("warehouse.sync.rest.DELETE_FINGERPRINTS", 2)  # 3 runs: two requests

    def sync() -> None:
        con = open_warehouse(demo)
        try:
            if transport == "direct":
                sync_direct(con, pg_dsn)
            else:
                with PostgrestStub(pg_dsn, KEY) as stub:
                    sync_rest(con, stub.url, KEY, sleep=lambda _s: None)
                    deletes = [r for r in stub.requests if r["method"] == "DELETE"]
                    assert len(deletes) == 2 and all(len(r["path"]) < 2000 for r in deletes)
        finally:
            con.close()

    sync()
    assert _bin_rows(pg_dsn) == 15  # three runs, five bins each
    # Replacing the training corpus removes the audit: the runs now have no bins.
    src, tgt = write_lines("s", ["a b", "c d"]), write_lines("t", ["x y", "z w"])
    replaced = run_cli(
        "corpus", "add", "demo-train", "--src", src, "--tgt", tgt, "--replace", "--yes"
    )
    assert replaced.exit_code == 0, replaced.output
    sync()
    assert _bin_rows(pg_dsn) == 0 and len(_cards(pg_dsn)) == 3
    assert run_cli("audit", "--train", "demo-train", "--testset", "demo-test").exit_code == 0
    sync()
    assert _bin_rows(pg_dsn) == 15


def test_sync_requires_migrations(pg_dsn, demo):
    with pytest.raises(UsageError, match="run `tame-wh migrate` first"):
        sync_direct(open_warehouse(demo), pg_dsn)


def test_card_columns_exist_in_the_migrated_table(pg_dsn):
    migrate(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        columns = {
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'run_cards'"
            )
        }
    assert set(CARD_COLUMNS) <= columns


def test_sync_tells_of_an_unreachable_or_unmigrated_target_before_reading_any_run(
    pg_dsn, demo_db, monkeypatch
):
    from warehouse.sync import postgres as sync_module

    def never(_con):
        raise AssertionError("the runs were read before the target was checked")

    monkeypatch.setattr(sync_module, "collect_payloads", never)
    con = open_warehouse(demo_db)
    try:
        with pytest.raises(RemoteError, match=r"cannot connect|connection"):
            sync_direct(con, "host=127.0.0.1 port=1 dbname=x user=nobody connect_timeout=2")
        with pytest.raises(UsageError, match=r"lacks migrations"):
            sync_direct(con, pg_dsn)  # a database `migrate` has not prepared
    finally:
        con.close()


def test_sync_checks_its_credentials_even_when_nothing_changed(pg_dsn, run_cli, demo_db):
    import uuid

    role = f"tame_sync_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = "
            "'tame_password_login') THEN CREATE ROLE tame_password_login NOLOGIN; END IF; END $$"
        )
        conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD 'right-pw-123' "
                     "IN ROLE tame_password_login")  # fmt: skip
    try:
        info = psycopg.conninfo.conninfo_to_dict(pg_dsn)
        right = psycopg.conninfo.make_conninfo(**{**info, "user": role, "password": "right-pw-123"})
        wrong = psycopg.conninfo.make_conninfo(**{**info, "user": role, "password": "wrong-pw"})
        try:
            psycopg.connect(wrong).close()
        except psycopg.OperationalError:
            pass
        else:
            if os.environ.get("CI"):
                pytest.fail("the test cluster does not check passwords (+tame_password_login)")
            pytest.skip("the test cluster does not check passwords")
        assert run_cli("migrate", "--dsn", right).exit_code == 0
        first = run_cli("sync", "--dsn", right, "--json")
        assert first.exit_code == 0 and json.loads(first.stdout)["sent_runs"] == 3
        unchanged = run_cli("sync", "--dsn", right, "--json")
        assert unchanged.exit_code == 0 and json.loads(unchanged.stdout)["sent_runs"] == 0
        refused = run_cli("sync", "--dsn", wrong)
        assert refused.exit_code in (2, 4), refused.output
        assert "password authentication failed" in refused.stderr
        assert "wrong-pw" not in refused.output
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role} CASCADE")
            conn.execute(f"DROP ROLE IF EXISTS {role}")


def test_human_scores_reach_run_cards(pg_dsn, run_cli, db_path, tmp_path):
    from tests.mqm import SYSTEM_SCORES, write_mqm

    done = run_cli("ingest", "--mqm", write_mqm(tmp_path / "mqm.tsv"), "--reference-system", "ref",
                   "--testset", "t")  # fmt: skip
    assert done.exit_code == 0, done.output
    migrate(pg_dsn)
    con = open_warehouse(db_path)
    assert sync_direct(con, pg_dsn).sent_runs == 3
    slugs = {c["model_slug"]: c for c in _cards(pg_dsn)}
    for system in "ABC":
        assert slugs[system]["human_mqm"] == pytest.approx(SYSTEM_SCORES[system], rel=1e-6)
        assert slugs[system]["human_esa"] is None and slugs[system]["human_da_z"] is None


def test_stored_tie_groups_reach_run_cards(pg_dsn, demo, run_cli):
    formed = run_cli("leaderboard", "--clusters", "--store", "--json", db=demo)
    assert formed.exit_code == 0, formed.output
    by_run = {r["run_id"]: r for r in json.loads(formed.stdout)}
    migrate(pg_dsn)
    con = open_warehouse(demo)
    sync_direct(con, pg_dsn)
    board = dict(con.execute("SELECT fingerprint_hash, run_id FROM leaderboard").fetchall())
    for card in _cards(pg_dsn):
        row = by_run[board[card["fingerprint_hash"]]]
        assert card["tie_cluster"] == row["cluster"]
        assert [card["tie_best_rank"], card["tie_worst_rank"]] == row["rank_range"]
        assert (card["tie_metric"], card["tie_n_runs"]) == ("chrf_plus_plus", 3)


def test_per_bin_intervals_reach_run_bins(pg_dsn, demo, run_cli):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    sync_direct(con, pg_dsn)
    fingerprints = dict(con.execute("SELECT fingerprint_hash, run_id FROM leaderboard").fetchall())
    con.close()
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute(
            "SELECT fingerprint_hash, bin, chrf_ci_lower, chrf_ci_upper, bleu_ci_lower, "
            "delta_chrf_ci_upper FROM run_bins"
        ).fetchall()
    assert rows
    docs = {
        fingerprint: json.loads(run_cli("report", run_id, "--json", db=demo).stdout)
        for fingerprint, run_id in fingerprints.items()
    }  # one report per run, its bins read below
    for fingerprint, bin_name, chrf_lo, chrf_hi, bleu_lo, delta_hi in rows:
        doc = docs[fingerprint]
        if bin_name == "all":
            assert (chrf_lo, chrf_hi, bleu_lo, delta_hi) == (None, None, None, None)
            continue
        found = doc["bin_intervals"]["bins"][bin_name]
        assert chrf_lo == pytest.approx(found["chrf_plus_plus"]["system"][0], rel=1e-6)
        assert chrf_hi == pytest.approx(found["chrf_plus_plus"]["system"][1], rel=1e-6)
        assert bleu_lo == pytest.approx(found["bleu"]["system"][0], rel=1e-6, abs=1e-6)
        assert delta_hi == pytest.approx(found["chrf_plus_plus"]["delta"][1], rel=1e-6)


def test_metric_plugin_scores_reach_run_cards_with_their_signature(
    pg_dsn, run_cli, db_path, monkeypatch
):
    from tests.metrics.plugin_install import install_test_plugin

    install_test_plugin(monkeypatch)
    data = Path(__file__).parents[1] / "inputs" / "data"
    run_cli("testset", "add", "wmt", "--src", data / "src.de", "--ref", data / "ref.en")
    done = run_cli("ingest", "--testset", "wmt", "--hyp", data / "sysA.en", "--model-slug", "a",
                   "--metric", "word_f1", "--no-intervals")  # fmt: skip
    assert done.exit_code == 0, done.output
    run_cli(
        "ingest",
        "--testset",
        "wmt",
        "--hyp",
        data / "sysB.en",
        "--model-slug",
        "b",
        "--no-intervals",
    )
    migrate(pg_dsn)
    con = open_warehouse(db_path)
    assert sync_direct(con, pg_dsn).sent_runs == 2
    mean = con.execute("SELECT value FROM run_metric_values WHERE metric = 'word_f1'").fetchone()[0]
    cards = {c["model_slug"]: c for c in _cards(pg_dsn)}
    plugin = cards["a"]["plugin_metrics"]["word_f1"]
    assert plugin["value"] == pytest.approx(mean, rel=1e-12)
    assert plugin["signature"].startswith("word_f1|plugin-version:1.0|")
    assert cards["b"]["plugin_metrics"] is None


def test_metrics_a_report_carried_reach_run_cards(pg_dsn, demo):
    migrate(pg_dsn)
    con = open_warehouse(demo)
    sync_direct(con, pg_dsn)
    expected = con.execute(
        "SELECT l.fingerprint_hash, m.value FROM run_metric_values m JOIN leaderboard l "
        "USING (run_id) WHERE m.metric = 'plugin_metrics.demo_lexicon.coverage'"
    ).fetchall()
    cards = {c["fingerprint_hash"]: c for c in _cards(pg_dsn)}
    assert expected  # the demo's test report carries one
    for fingerprint, value in expected:
        found = cards[fingerprint]["plugin_metrics"]["plugin_metrics.demo_lexicon.coverage"]
        assert found == {"value": pytest.approx(value), "signature": None}
