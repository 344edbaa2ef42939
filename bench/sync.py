"""Sync speed: 10,000 runs to Postgres with COPY + one upsert vs. row-by-row executemany.

Run: TAME_WH_TEST_PG_DSN=postgresql://postgres@127.0.0.1:PORT/postgres python bench/sync.py
(an admin DSN: two scratch databases are created and dropped). The warehouse is filled like
bench/analytics.py (synthetic statistics, one audit so run_bins has rows). Reference, measured in
the same run: the same payloads upserted row by row with psycopg's executemany.
Target (issue 7): 10,000 runs in under 10 s with the direct transport.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).parent))

from analytics import fill

from warehouse.store.schema import open_warehouse
from warehouse.sync.migrate import migrate
from warehouse.sync.postgres import (
    BIN_COLUMNS,
    CARD_COLUMNS,
    RunPayload,
    build_payloads,
    send_direct,
    sync_direct,
)


def _scratch_db(admin: str) -> str:
    """Create an empty database; return its DSN."""
    name = f"tame_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    info = psycopg.conninfo.conninfo_to_dict(admin)
    return psycopg.conninfo.make_conninfo(**{**info, "dbname": name})


def _drop(admin: str, dsn: str) -> None:
    """Drop a scratch database."""
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def row_by_row(dsn: str, payloads: list[RunPayload]) -> float:
    """Upsert every payload with executemany (one statement per row); seconds taken."""
    cards = ", ".join(CARD_COLUMNS)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in CARD_COLUMNS if c != "fingerprint_hash")
    bin_updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in BIN_COLUMNS[2:])
    started = time.perf_counter()
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO run_cards ({cards}) VALUES ({', '.join(['%s'] * len(CARD_COLUMNS))}) "
            f"ON CONFLICT (fingerprint_hash) DO UPDATE SET {updates}",
            [
                [json.dumps(p.card[c]) if c == "run_card" else p.card[c] for c in CARD_COLUMNS]
                for p in payloads
            ],
        )
        cur.executemany(
            f"INSERT INTO run_bins ({', '.join(BIN_COLUMNS)}) VALUES "
            f"({', '.join(['%s'] * len(BIN_COLUMNS))}) "
            f"ON CONFLICT (fingerprint_hash, bin) DO UPDATE SET {bin_updates}",
            [[b[c] for c in BIN_COLUMNS] for p in payloads for b in p.bins],
        )
    return time.perf_counter() - started


def copy_upsert(dsn: str, payloads: list[RunPayload]) -> float:
    """The direct transport alone (COPY into staging tables + one upsert); seconds taken."""
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn, conn.transaction():
        send_direct(conn, payloads)
    return time.perf_counter() - started


def main() -> None:
    """Fill the warehouse, sync it both ways into scratch databases, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--segments", type=int, default=20)
    args = parser.parse_args()
    admin = os.environ.get("TAME_WH_TEST_PG_DSN")
    if not admin:
        raise SystemExit("set TAME_WH_TEST_PG_DSN to an admin Postgres DSN")
    work = Path(tempfile.mkdtemp(prefix="tame-bench-sync-"))
    fast_dsn, slow_dsn, full_dsn = _scratch_db(admin), _scratch_db(admin), _scratch_db(admin)
    try:
        db = work / "wh.duckdb"
        fill(db, args.runs, args.segments)
        for dsn in (fast_dsn, slow_dsn, full_dsn):
            migrate(dsn)
        con = open_warehouse(db)
        started = time.perf_counter()
        payloads, _ = build_payloads(con)
        build = time.perf_counter() - started
        slow = row_by_row(slow_dsn, payloads)
        fast = copy_upsert(fast_dsn, payloads)
        report = sync_direct(con, full_dsn)
        resync = sync_direct(con, full_dsn)
        con.close()
        with psycopg.connect(full_dsn) as conn:
            synced = conn.execute("SELECT count(*) FROM run_cards").fetchone()[0]
        bins = sum(len(p.bins) for p in payloads)
        print(f"\n{args.runs:,} runs ({bins:,} bin rows); {synced:,} rows in the target")
        print(f"{'what':<50} {'seconds':>9} {'x ref':>8}")
        print("-" * 69)
        rows = [
            ("transport: row-by-row executemany (reference)", slow),
            ("transport: COPY + one upsert", fast),
            ("building payloads from the leaderboard view", build),
            ("tame-wh sync end to end (build + send + record)", report.seconds),
            ("re-sync, nothing changed", resync.seconds),
        ]
        for label, seconds in rows:
            print(f"{label:<50} {seconds:>9.2f} {seconds / slow:>8.3f}")
        verdict = "PASS" if report.seconds < 10 else "FAIL"
        print(
            f"\ntarget: 10,000 runs < 10 s end to end -> {report.seconds:.2f} s [{verdict}]; "
            f"transport {slow / fast:.1f}x faster than row by row"
        )
    finally:
        for dsn in (fast_dsn, slow_dsn, full_dsn):
            _drop(admin, dsn)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
