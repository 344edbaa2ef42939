"""Mirroring the leaderboard to Supabase/Postgres (SPEC §9): payloads, incremental state, COPY.

Only denormalised scores and the run card leave the warehouse: the run card is sent without the
text of its entries (sources, references, hypotheses), and no training or test text is read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import psycopg
import pyarrow as pa

from warehouse.errors import RemoteError, UsageError
from warehouse.metrics.registry import synced_columns
from warehouse.store.connection import transaction
from warehouse.store.resources import migration_files
from warehouse.sync.dsn import connect_pg, dsn_password, redact, target_label
from warehouse.sync.migrate import LEDGER

Notify = Callable[[str], None]

# run_cards columns filled from the leaderboard view column of the same name (after migrations
# 001-003). Missing in the view (e.g. CI columns before intervals exist) → NULL.
TEXT_COLUMNS = (
    "fingerprint_hash",
    "model_slug",
    "condition",
    "dataset_id",
    "language_pair",
    "quality_tier",
    "audit_id",
)
REAL_COLUMNS = synced_columns()
CARD_COLUMNS = (*TEXT_COLUMNS, *REAL_COLUMNS, "run_card", "content_hash")
BIN_COLUMNS = (
    "fingerprint_hash",
    "bin",
    "audit_id",
    "n_segments",
    "share",
    "mean_source_exposure",
    "bleu",
    "chrf_plus_plus",
    "tm_bleu",
    "tm_chrf_plus_plus",
    "delta_bleu",
    "delta_chrf_plus_plus",
)
# Entry fields that hold text of the test set or the system; never synced.
_PRIVATE_ENTRY_FIELDS = frozenset(
    {
        "source",
        "expected",
        "predicted",
        "reference",
        "references",
        "hypothesis",
        "src",
        "ref",
        "hyp",
        "output",
        "input",
    }
)


def public_run_card(card: dict[str, Any]) -> dict[str, Any]:
    """The run card without the text of its entries."""
    out = dict(card)
    if isinstance(out.get("entries"), list):
        out["entries"] = [
            {k: v for k, v in e.items() if k not in _PRIVATE_ENTRY_FIELDS}
            if isinstance(e, dict)
            else e
            for e in out["entries"]
        ]
    return out


@dataclass
class RunPayload:
    """One run as sent: its run_cards row and its run_bins rows."""

    run_id: str
    card: dict[str, Any]
    bins: list[dict[str, Any]]

    @property
    def fingerprint(self) -> str:
        """The upsert key."""
        return str(self.card["fingerprint_hash"])

    @property
    def content_hash(self) -> str:
        """Hash of everything sent; unchanged runs are not resent."""
        return str(self.card["content_hash"])


def _number(value: Any) -> float | None:
    """A JSON-safe float (NaN/inf never leave the warehouse as numbers)."""
    if value is None:
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def build_payloads(con: duckdb.DuckDBPyConnection) -> tuple[list[RunPayload], list[str]]:
    """Payloads of every run, and warnings about runs hidden by a newer run's fingerprint."""
    cursor = con.execute(
        "SELECT l.*, r.run_card AS _run_card FROM leaderboard l JOIN runs r USING (run_id) "
        "ORDER BY r.ingested_at DESC, l.run_id"
    )
    names = [d[0] for d in cursor.description or []]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    bins_by_run: dict[str, list[dict[str, Any]]] = {}
    bin_cursor = con.execute(
        "SELECT b.run_id, b.bin, b.audit_id, b.n_segments, b.share, b.mean_source_exposure, "
        "b.bleu, b.chrf_plus_plus, b.tm_bleu, b.tm_chrf_plus_plus, b.delta_bleu, "
        "b.delta_chrf_plus_plus FROM run_bins b ORDER BY b.run_id, b.bin_order"
    )
    # Only the bins of the audit the leaderboard row uses (read above, not recomputed here).
    chosen_audit = {row["run_id"]: row["audit_id"] for row in rows}
    for bin_row in bin_cursor.fetchall():
        run_id, bin_name, audit_id, n, *reals = bin_row
        if chosen_audit.get(run_id) != audit_id:
            continue
        bins_by_run.setdefault(run_id, []).append(
            {
                "bin": bin_name,
                "audit_id": audit_id,
                "n_segments": int(n),
                **dict(zip(BIN_COLUMNS[4:], map(_number, reals), strict=True)),
            }
        )
    payloads: list[RunPayload] = []
    seen: dict[str, str] = {}
    warnings: list[str] = []
    for row in rows:
        fingerprint = row["fingerprint_hash"]
        if fingerprint in seen:
            warnings.append(
                f"run {row['run_id']} shares fingerprint {fingerprint!r} with the newer run "
                f"{seen[fingerprint]}; only the newer one is synced"
            )
            continue
        seen[fingerprint] = row["run_id"]
        card: dict[str, Any] = {c: row.get(c) for c in TEXT_COLUMNS}
        card.update({c: _number(row.get(c)) for c in REAL_COLUMNS})
        card["run_card"] = public_run_card(json.loads(row["_run_card"]))
        bins = [{"fingerprint_hash": fingerprint, **b} for b in bins_by_run.get(row["run_id"], [])]
        digest = hashlib.sha256(
            json.dumps([card, bins], sort_keys=True, default=str).encode()
        ).hexdigest()
        card["content_hash"] = digest
        payloads.append(RunPayload(row["run_id"], card, bins))
    return payloads, warnings


def pending_payloads(
    con: duckdb.DuckDBPyConnection, target: str, payloads: Sequence[RunPayload], *, full: bool
) -> list[RunPayload]:
    """Payloads new or changed since the last successful sync to `target` (all with `full`)."""
    if full:
        return list(payloads)
    sent = dict(
        con.execute(
            "SELECT run_id, content_hash FROM sync_state WHERE target = ?", [target]
        ).fetchall()
    )
    return [p for p in payloads if sent.get(p.run_id) != p.content_hash]


def record_synced(
    con: duckdb.DuckDBPyConnection, target: str, payloads: Sequence[RunPayload]
) -> None:
    """Remember what was sent (one bulk write)."""
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    table = pa.table(
        {
            "target": pa.array([target] * len(payloads), pa.string()),
            "run_id": pa.array([p.run_id for p in payloads], pa.string()),
            "fingerprint_hash": pa.array([p.fingerprint for p in payloads], pa.string()),
            "content_hash": pa.array([p.content_hash for p in payloads], pa.string()),
            "synced_at": pa.array([now] * len(payloads), pa.timestamp("us")),
        }
    )
    with transaction(con):
        con.register("_tame_synced", table)
        try:
            con.execute("INSERT OR REPLACE INTO sync_state SELECT * FROM _tame_synced")
        finally:
            con.unregister("_tame_synced")


@dataclass
class SyncReport:
    """What a sync did (or, with --dry-run, would do)."""

    target: str
    transport: str
    total_runs: int
    sent_runs: int
    sent_bins: int
    unchanged_runs: int
    dry_run: bool
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def _require_migrations(conn: psycopg.Connection) -> None:
    """Refuse targets that lack some of this version's migrations."""
    exists = conn.execute("SELECT to_regclass(%s)", [LEDGER]).fetchone()
    applied = set()
    if exists and exists[0]:
        applied = {name for (name,) in conn.execute(f"SELECT name FROM {LEDGER}").fetchall()}
    missing = [f.name for f in migration_files() if f.name not in applied]
    if missing:
        raise UsageError(
            f"the target lacks migrations {', '.join(missing)}; run `tame-wh migrate` first"
        )


def _upsert_sql(table: str, staging: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """INSERT … SELECT … ON CONFLICT DO UPDATE that touches a row only when its content changed."""
    cols = ", ".join(columns)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
    changed = " OR ".join(
        f"{table}.{c} IS DISTINCT FROM EXCLUDED.{c}" for c in columns if c not in key
    )
    return (
        f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {staging} "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}, synced_at = now() "
        f"WHERE {changed}"
    )


def send_direct(conn: psycopg.Connection, payloads: Sequence[RunPayload]) -> int:
    """COPY the payloads into staging tables and upsert them, all in the current transaction."""
    conn.execute(
        f"CREATE TEMP TABLE _tame_cards ON COMMIT DROP AS "
        f"SELECT {', '.join(CARD_COLUMNS)} FROM run_cards WITH NO DATA"
    )
    conn.execute(
        f"CREATE TEMP TABLE _tame_bins ON COMMIT DROP AS "
        f"SELECT {', '.join(BIN_COLUMNS)} FROM run_bins WITH NO DATA"
    )
    n_bins = 0
    with conn.cursor() as cur:
        with cur.copy(f"COPY _tame_cards ({', '.join(CARD_COLUMNS)}) FROM STDIN") as copy:
            for p in payloads:
                copy.write_row(
                    [json.dumps(p.card[c]) if c == "run_card" else p.card[c] for c in CARD_COLUMNS]
                )
        with cur.copy(f"COPY _tame_bins ({', '.join(BIN_COLUMNS)}) FROM STDIN") as copy:
            for p in payloads:
                for b in p.bins:
                    copy.write_row([b[c] for c in BIN_COLUMNS])
                    n_bins += 1
        cur.execute("ANALYZE _tame_cards")
        cur.execute("ANALYZE _tame_bins")
        cur.execute(_upsert_sql("run_cards", "_tame_cards", CARD_COLUMNS, ["fingerprint_hash"]))
        cur.execute(
            "DELETE FROM run_bins b USING _tame_cards c WHERE b.fingerprint_hash = "
            "c.fingerprint_hash AND NOT EXISTS (SELECT 1 FROM _tame_bins n WHERE "
            "n.fingerprint_hash = b.fingerprint_hash AND n.bin = b.bin)"
        )
        cur.execute(_upsert_sql("run_bins", "_tame_bins", BIN_COLUMNS, ["fingerprint_hash", "bin"]))
    return n_bins


def sync_direct(
    con: duckdb.DuckDBPyConnection,
    dsn: str,
    *,
    full: bool = False,
    dry_run: bool = False,
) -> SyncReport:
    """Sync every new or changed run to Postgres in one transaction (COPY + upsert)."""
    started = time.perf_counter()
    target = target_label(dsn)
    payloads, warnings = build_payloads(con)
    pending = pending_payloads(con, target, payloads, full=full)
    report = SyncReport(
        target,
        "postgres",
        len(payloads),
        len(pending),
        sum(len(p.bins) for p in pending),
        len(payloads) - len(pending),
        dry_run,
        warnings=warnings,
    )
    if dry_run or not pending:
        report.seconds = time.perf_counter() - started
        return report
    conn = connect_pg(dsn, autocommit=True)  # the explicit transaction below is the only one
    try:
        _require_migrations(conn)
        try:
            with conn.transaction():
                send_direct(conn, pending)
        except psycopg.Error as exc:
            message = str(exc).strip().splitlines()[0]
            raise RemoteError(
                f"sync to {target} failed and was rolled back: "
                f"{redact(message, [dsn_password(dsn)])}"
            ) from None
    finally:
        conn.close()
    record_synced(con, target, pending)
    report.seconds = time.perf_counter() - started
    return report
