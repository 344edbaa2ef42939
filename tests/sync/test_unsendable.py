"""One bad run never blocks every later sync: a run whose stored values Postgres cannot hold
(written before ingest validated them, or by hand) is named and skipped; the others are sent,
and `sync` exits 2."""

from __future__ import annotations

import shutil

import duckdb
import psycopg
import pytest

from tests.sync.postgrest_stub import PostgrestStub
from warehouse.store.schema import open_warehouse
from warehouse.sync import postgres as postgres_module
from warehouse.sync.migrate import migrate
from warehouse.sync.postgres import sync_direct

KEY = "stub-service-role-key"

# (what, SQL that spoils the first run in the warehouse, a phrase of the reason)
SPOILERS = [
    (
        "Infinity in the stored run card",
        'UPDATE runs SET run_card = \'{"model_slug": "m", "tags": [Infinity]}\' '
        "WHERE run_id = $run",
        "non-finite",
    ),
    (
        "NaN in a stored score block",
        'UPDATE runs SET run_card = \'{"scores": {"x": NaN}}\' WHERE run_id = $run',
        "non-finite",
    ),
    ("total_cost_usd 1e300", "UPDATE runs SET total_cost_usd = 1e300 WHERE run_id = $run", "real"),
    (
        "latency 1e308",
        "UPDATE run_sums SET avg_latency_seconds = 1e308 WHERE run_id = $run",
        "real",
    ),
    ("elapsed 1e39", "UPDATE runs SET elapsed_seconds = 1e39 WHERE run_id = $run", "real"),
    (
        "NUL in the model slug",
        "UPDATE runs SET model_slug = 'bad' || chr(0) || 'slug' WHERE run_id = $run",
        "NUL",
    ),
    (
        "NUL in an entry id",
        'UPDATE runs SET run_card = \'{"entries": [{"id": "a\\u0000b"}]}\' WHERE run_id = $run',
        "NUL",
    ),
]


def _spoil(db, sql: str) -> str:
    """Apply a spoiler to the first run (by id); return that run's id."""
    con = duckdb.connect(str(db))
    try:
        (run_id,) = con.execute("SELECT min(run_id) FROM runs").fetchone()
        con.execute(sql.replace("$run", "?"), [run_id])
    finally:
        con.close()
    return run_id


def _fingerprints(dsn):
    with psycopg.connect(dsn) as conn:
        return {r[0] for r in conn.execute("SELECT fingerprint_hash FROM run_cards")}


@pytest.mark.parametrize("pg_dsn", ["supabase-defaults"], indirect=True)  # one kind suffices
@pytest.mark.parametrize("transport", ["direct", "rest"])
@pytest.mark.parametrize(("what", "sql", "reason"), SPOILERS, ids=[s[0] for s in SPOILERS])
def test_a_run_postgres_cannot_hold_is_named_and_skipped(
    pg_dsn, demo_template, db_path, run_cli, monkeypatch, transport, what, sql, reason
):
    shutil.copyfile(demo_template, db_path)
    bad = _spoil(db_path, sql)
    migrate(pg_dsn)
    with PostgrestStub(pg_dsn, KEY) as stub:
        monkeypatch.setenv("SUPABASE_SERVICE_ROLE_KEY", KEY)
        target = ["--dsn", pg_dsn] if transport == "direct" else ["--supabase-url", stub.url]
        first = run_cli("sync", *target)
        again = run_cli("sync", *target)
    for result in (first, again):
        assert result.exit_code == 2, (what, result.output)
        assert f"run {bad} was not synced" in result.stderr and reason in result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith("error: 1 run(s) could not")
    assert "sent 2 of 3 runs" in first.output
    assert "sent 0 of 3 runs" in again.output and "2 unchanged" in again.output
    assert len(_fingerprints(pg_dsn)) == 2
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        synced = {r[0] for r in con.execute("SELECT run_id FROM sync_state").fetchall()}
    finally:
        con.close()
    assert len(synced) == 2 and bad not in synced


def test_a_run_the_target_refuses_is_found_and_skipped(pg_dsn, demo_template, db_path, monkeypatch):
    # A value no check foresaw (here: a bin name outside the target's CHECK constraint) makes
    # the bulk upsert fail; the runs are then sent one by one and only the culprit is skipped.
    shutil.copyfile(demo_template, db_path)
    migrate(pg_dsn)
    original = postgres_module._run_payload
    spoiled: list[str] = []

    def spoil_first(*args, **kwargs):
        payload = original(*args, **kwargs)
        if not spoiled:
            spoiled.append(payload.run_id)
            payload.bins[0]["bin"] = "bogus"
        return payload

    monkeypatch.setattr(postgres_module, "_run_payload", spoil_first)
    con = open_warehouse(db_path)
    try:
        report = sync_direct(con, pg_dsn)
    finally:
        con.close()
    assert report.sent_runs == 2 and [s.run_id for s in report.skipped] == spoiled
    assert "the target refused it" in report.skipped[0].reason
    assert len(_fingerprints(pg_dsn)) == 2
