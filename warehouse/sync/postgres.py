"""Mirroring the leaderboard to Supabase/Postgres (docs/supabase.md): payloads, state, COPY.

Only scores leave the warehouse. The run card is sent through an allow-list (`public_run_card`):
numbers and booleans wherever they are, the identity fields (model slug, condition, dataset id and
language pair, fingerprint, created_at) and the ids of entries — never any other text of the run
card (prompts, sources, references, hypotheses, messages, keys in a config block). No training or
test text is read. A run whose values Postgres cannot hold (a number beyond `real`, a NUL
character, a non-finite number in its JSON) is skipped and reported by id; the others are sent.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import psycopg
import pyarrow as pa

from warehouse.analysis.bins import runs_bin_intervals
from warehouse.basics import first_line, rows_as_dicts
from warehouse.errors import RemoteError, UsageError
from warehouse.metrics.registry import BLEU, CHRF, METRICS, synced_columns
from warehouse.stats.resample import bootstrap_settings
from warehouse.store.connection import transaction
from warehouse.store.resources import migration_files
from warehouse.sync.dsn import connect_pg, redact_dsn, target_label
from warehouse.sync.migrate import LEDGER

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
    "audit_measure",
    "tie_metric",
    "tie_method",
    "tie_correction",
)
REAL_COLUMNS = synced_columns()
# Stored tie groups (migration 006): the run's cluster and rank range on its test set's board.
INT_COLUMNS = ("tie_cluster", "tie_best_rank", "tie_worst_rank", "tie_n_runs")
# JSON columns: the public run card, and the metric plugins' scores with their signatures
# (migration 008).
JSON_COLUMNS = ("run_card", "plugin_metrics")
CARD_COLUMNS = (*TEXT_COLUMNS, *REAL_COLUMNS, *INT_COLUMNS, *JSON_COLUMNS, "content_hash")
# Per-bin intervals on run_bins (migration 007), computed for the runs a sync sends: the
# system's chrF++ and BLEU and system - TM chrF++ (docs/statistics.md, "Intervals per bin").
BIN_INTERVAL_COLUMNS = (
    "chrf_ci_lower",
    "chrf_ci_upper",
    "bleu_ci_lower",
    "bleu_ci_upper",
    "delta_chrf_ci_lower",
    "delta_chrf_ci_upper",
)
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
    *BIN_INTERVAL_COLUMNS,
)

# The run card's text that may leave the warehouse, by path: identity fields only.
_IDENTITY_TEXT: dict[str, tuple[str, ...]] = {
    "model_slug": (),
    "condition": (),
    "created_at": (),
    "dataset": ("id", "language_pair"),
    "fingerprint": ("hash",),
}
# Keys of kept numbers are metric names: short identifiers, never free text.
_METRIC_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+/-]{0,99}$")
# Postgres `real`: larger magnitudes are refused ("out of range"); smaller than the least
# subnormal ones underflow to an error too, so they are sent as 0.
REAL_MAX = 3.4028234663852886e38
REAL_TINY = 1.401298464324817e-45
_DROP = object()


def _numbers_only(value: Any) -> Any:
    """Numbers and booleans of a JSON value (objects and lists keep only those, under
    identifier-like keys); `_DROP` when nothing is left."""
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, dict):
        kept = {
            k: inner
            for k, v in value.items()
            if isinstance(k, str)
            and _METRIC_KEY.match(k)
            and (inner := _numbers_only(v)) is not _DROP
        }
        return kept if kept else _DROP
    if isinstance(value, list):
        items = [inner for v in value if (inner := _numbers_only(v)) is not _DROP]
        return items if items else _DROP
    return _DROP


def _public_entry(entry: Any) -> Any:
    """An entry's id, its numbers and whether it errored; no text."""
    if not isinstance(entry, dict):
        return _numbers_only(entry)
    out = _numbers_only({k: v for k, v in entry.items() if k not in ("id", "error")})
    out = {} if out is _DROP else out
    if isinstance(entry.get("id"), (str, int)) and not isinstance(entry.get("id"), bool):
        out = {"id": entry["id"], **out}
    if entry.get("error") not in (None, False, ""):
        out["error"] = True
    return out


def public_run_card(card: dict[str, Any]) -> dict[str, Any]:
    """The run card as it may leave the warehouse: an allow-list of numbers, identity fields and
    per-entry ids (see the module docstring); every other string is dropped."""
    out: dict[str, Any] = {}
    for key, value in card.items():
        if key == "entries" and isinstance(value, list):
            out[key] = [_public_entry(e) for e in value]
            continue
        if key in _IDENTITY_TEXT and isinstance(value, str):
            out[key] = value
            continue
        kept = _numbers_only({key: value})
        if kept is not _DROP:
            out.update(kept)
        names = _IDENTITY_TEXT.get(key, ())
        if names and isinstance(value, dict):
            texts = {n: value[n] for n in names if isinstance(value.get(n), str)}
            if texts:
                out[key] = {**out.get(key, {}), **texts}
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


@dataclass
class SkippedRun:
    """A run that cannot be sent, and why."""

    run_id: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form."""
        return {"run_id": self.run_id, "reason": self.reason}


@dataclass
class PayloadSet:
    """Every run's payload, warnings about hidden runs, and runs that cannot be sent."""

    payloads: list[RunPayload]
    warnings: list[str]
    skipped: list[SkippedRun]


class _Unsendable(ValueError):
    """A value of a run that Postgres cannot hold."""


def _number(value: Any) -> float | None:
    """A JSON-safe float (NaN/inf never leave the warehouse as numbers)."""
    if value is None:
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _real(value: Any, column: str) -> float | None:
    """A value for a Postgres `real` column: NaN/inf as NULL, underflow as 0; a finite value
    beyond the range of `real` cannot be sent."""
    number = _number(value)
    if number is None:
        return None
    if abs(number) > REAL_MAX:
        raise _Unsendable(f"{column} = {number:g} is beyond the range of Postgres real")
    return 0.0 if abs(number) < REAL_TINY else number


def _text(value: Any, column: str) -> str | None:
    """A value for a Postgres text column (which cannot hold NUL characters)."""
    if value is None:
        return None
    text = str(value)
    if "\x00" in text:
        raise _Unsendable(f"{column} holds a NUL character, which Postgres text cannot hold")
    return text


def _has_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character in any key or string."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def _check_json(card: dict[str, Any]) -> None:
    """The public run card must be JSON Postgres accepts: finite numbers, no NUL characters."""
    try:
        json.dumps(card, allow_nan=False)
    except ValueError:
        raise _Unsendable("the run card holds a non-finite number (NaN or Infinity)") from None
    if _has_nul(card):
        raise _Unsendable("the run card holds a NUL character, which Postgres jsonb cannot hold")


def _run_payload(
    row: dict[str, Any],
    fingerprint: str,
    bins: list[dict[str, Any]],
    plugins: dict[str, dict[str, Any]] | None = None,
) -> RunPayload:
    """One run's payload, every value checked against its Postgres column type."""
    card: dict[str, Any] = {c: _text(row.get(c), c) for c in TEXT_COLUMNS}
    card.update({c: _real(row.get(c), c) for c in REAL_COLUMNS})
    card.update({c: None if row.get(c) is None else int(row[c]) for c in INT_COLUMNS})
    card["run_card"] = public_run_card(json.loads(row["_run_card"] or "{}"))
    _check_json(card["run_card"])
    card["plugin_metrics"] = plugins or None
    _check_json(card["plugin_metrics"] or {})
    checked = []
    for b in bins:
        one = {"fingerprint_hash": fingerprint, "bin": b["bin"], "audit_id": b["audit_id"]}
        one["n_segments"] = b["n_segments"]
        one.update({c: _real(b.get(c), f"run_bins.{c}") for c in BIN_COLUMNS[4:]})
        checked.append(one)
    digest = hashlib.sha256(
        json.dumps([card, checked], sort_keys=True, default=str).encode()
    ).hexdigest()
    card["content_hash"] = digest
    return RunPayload(row["run_id"], card, checked)


def collect_payloads(con: duckdb.DuckDBPyConnection) -> PayloadSet:
    """Payloads of every run, warnings about runs hidden by a newer run's fingerprint, and the
    runs that cannot be sent (with the reason)."""
    cursor = con.execute(
        "SELECT l.*, r.run_card AS _run_card FROM leaderboard l JOIN runs r USING (run_id) "
        "ORDER BY r.ingested_at DESC, l.run_id"
    )
    rows = rows_as_dicts(cursor)
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
                **dict(zip(BIN_COLUMNS[4 : 4 + len(reals)], reals, strict=True)),
            }
        )
    plugins = _plugin_scores(con)
    result = PayloadSet([], [], [])
    seen: dict[str, str] = {}
    for row in rows:
        fingerprint = row["fingerprint_hash"]
        if fingerprint in seen:
            result.warnings.append(
                f"run {row['run_id']} shares fingerprint {fingerprint!r} with the newer run "
                f"{seen[fingerprint]}; only the newer one is synced"
            )
            continue
        seen[fingerprint] = row["run_id"]
        try:
            payload = _run_payload(row, fingerprint, bins_by_run.get(row["run_id"], []),
                                   plugins.get(row["run_id"]))  # fmt: skip
        except (_Unsendable, ValueError, TypeError, OverflowError, RecursionError) as exc:
            result.skipped.append(SkippedRun(row["run_id"], str(exc) or type(exc).__name__))
            continue
        result.payloads.append(payload)
    return result


def _plugin_scores(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, dict[str, Any]]]:
    """Each run's scores of metrics without a run_cards column — metric plugins' and those its
    file carried (`plugin_metrics`, per-entry extras) under identifier-like names — with the
    signatures of metric plugins, by run and metric (a per-entry metric's score is the mean of
    its segments')."""
    columns = set(REAL_COLUMNS) | {m.name for m in METRICS if m.column}
    signed: dict[str, dict[str, str]] = {}
    for run_id, text in con.execute(
        "SELECT run_id, metric_settings FROM runs WHERE run_id IN "
        "(SELECT DISTINCT run_id FROM metric_values)"
    ).fetchall():
        signed[run_id] = json.loads(text or "{}").get("signatures") or {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for run_id, metric, value in con.execute(
        "SELECT run_id, metric, value FROM run_metric_values ORDER BY run_id, metric"
    ).fetchall():
        if metric in columns or not _METRIC_KEY.match(metric):
            continue  # only identifier-like names leave the warehouse, as in the run card
        signature = signed.get(run_id, {}).get(metric)
        out.setdefault(run_id, {})[metric] = {
            "value": _number(value),
            # Only what tame-wh wrote from an installed plugin: a file's declared text stays.
            "signature": signature if "|plugin-version:" in str(signature) else None,
        }
    return out


def build_payloads(con: duckdb.DuckDBPyConnection) -> tuple[list[RunPayload], list[str]]:
    """Payloads of every run that can be sent, and warnings (hidden and unsendable runs)."""
    found = collect_payloads(con)
    skipped = [f"run {s.run_id} cannot be synced: {s.reason}" for s in found.skipped]
    return found.payloads, found.warnings + skipped


def pending_payloads(
    con: duckdb.DuckDBPyConnection, target: str, payloads: Sequence[RunPayload], *, full: bool
) -> list[RunPayload]:
    """Payloads new or changed since the last successful sync to `target` (all with `full`)."""
    if full:
        pending = list(payloads)
    else:
        sent = dict(
            con.execute(
                "SELECT run_id, content_hash FROM sync_state WHERE target = ?", [target]
            ).fetchall()
        )
        pending = [p for p in payloads if sent.get(p.run_id) != p.content_hash]
    attach_bin_intervals(con, pending)
    return pending


_BIN_INTERVALS = {
    "chrf_ci_lower": (CHRF, "system", 0),
    "chrf_ci_upper": (CHRF, "system", 1),
    "bleu_ci_lower": (BLEU, "system", 0),
    "bleu_ci_upper": (BLEU, "system", 1),
    "delta_chrf_ci_lower": (CHRF, "delta", 0),
    "delta_chrf_ci_upper": (CHRF, "delta", 1),
}


def attach_bin_intervals(con: duckdb.DuckDBPyConnection, payloads: Sequence[RunPayload]) -> None:
    """Fill the interval columns of the payloads' per-bin rows (the `all` row keeps NULL: the
    run's whole intervals are on run_cards), at the warehouse's bootstrap settings. Computed
    only for the runs being sent; the content hash leaves them out."""
    audit_of = {p.run_id: p.bins[0]["audit_id"] for p in payloads if p.bins}
    if not audit_of:
        return
    found = runs_bin_intervals(con, audit_of, bootstrap_settings(con))
    for payload in payloads:
        intervals = found.get(payload.run_id)
        if intervals is None:
            continue
        for row in payload.bins:
            per_bin = intervals.bins.get(row["bin"], {})
            for column, (metric, side, end) in _BIN_INTERVALS.items():
                pair = per_bin.get(metric, {}).get(side)
                row[column] = None if pair is None else _real(pair[end], f"run_bins.{column}")


def record_synced(
    con: duckdb.DuckDBPyConnection, target: str, payloads: Sequence[RunPayload]
) -> None:
    """Remember what was sent (one bulk write: the runs' earlier rows for this target replaced;
    a delete then an insert, which a lake allows, where it has no upsert)."""
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
            con.execute(
                "DELETE FROM sync_state WHERE target = ? AND run_id IN "
                "(SELECT run_id FROM _tame_synced)",
                [target],
            )
            con.execute("INSERT INTO sync_state SELECT * FROM _tame_synced")
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
    skipped: list[SkippedRun] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = dict(self.__dict__)
        out["skipped"] = [s.to_dict() for s in self.skipped]
        return out


def plan_sync(
    con: duckdb.DuckDBPyConnection, target: str, transport: str, *, full: bool, dry_run: bool
) -> tuple[SyncReport, list[RunPayload]]:
    """The runs a sync to `target` sends (every run with `full`, else the new and changed
    ones), and the sync's report counting them as sent."""
    found = collect_payloads(con)
    pending = pending_payloads(con, target, found.payloads, full=full)
    report = SyncReport(
        target,
        transport,
        len(found.payloads) + len(found.skipped),
        len(pending),
        sum(len(p.bins) for p in pending),
        len(found.payloads) - len(pending),
        dry_run,
        warnings=found.warnings,
        skipped=list(found.skipped),
    )
    return report, pending


def _require_migrations(conn: psycopg.Connection, target: str) -> None:
    """Refuse targets that lack some of this version's migrations."""
    try:
        exists = conn.execute("SELECT to_regclass(%s)", [LEDGER]).fetchone()
        applied = set()
        if exists and exists[0]:
            applied = {name for (name,) in conn.execute(f"SELECT name FROM {LEDGER}").fetchall()}
    except psycopg.errors.InsufficientPrivilege:
        raise RemoteError(
            f"{target}: this role may not read the migration ledger {LEDGER}; sync as the role "
            "that ran `tame-wh migrate`, or as service_role"
        ) from None
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


def _cell(column: str, value: Any) -> Any:
    """A card value as COPY sends it: JSON columns as JSON text (absent: NULL)."""
    if column in JSON_COLUMNS:
        return None if value is None else json.dumps(value)
    return value


def _create_staging(conn: psycopg.Connection) -> None:
    """Temporary staging tables shaped like the targets, dropped at commit."""
    conn.execute(
        f"CREATE TEMP TABLE _tame_cards ON COMMIT DROP AS "
        f"SELECT {', '.join(CARD_COLUMNS)} FROM run_cards WITH NO DATA"
    )
    conn.execute(
        f"CREATE TEMP TABLE _tame_bins ON COMMIT DROP AS "
        f"SELECT {', '.join(BIN_COLUMNS)} FROM run_bins WITH NO DATA"
    )


def _copy_and_upsert(conn: psycopg.Connection, payloads: Sequence[RunPayload]) -> int:
    """COPY payloads into the (empty) staging tables, upsert them, delete stale bin rows."""
    n_bins = 0
    with conn.cursor() as cur:
        with cur.copy(f"COPY _tame_cards ({', '.join(CARD_COLUMNS)}) FROM STDIN") as copy:
            for p in payloads:
                copy.write_row([_cell(c, p.card[c]) for c in CARD_COLUMNS])
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


def send_direct(conn: psycopg.Connection, payloads: Sequence[RunPayload]) -> int:
    """COPY the payloads into staging tables and upsert them, all in the current transaction."""
    _create_staging(conn)
    return _copy_and_upsert(conn, payloads)


def send_direct_each(
    conn: psycopg.Connection, payloads: Sequence[RunPayload], secrets_of: str
) -> tuple[list[RunPayload], list[SkippedRun]]:
    """Send run by run, each under its own savepoint in the current transaction: a run the
    target refuses is rolled back alone and reported; the others are sent."""
    _create_staging(conn)
    sent: list[RunPayload] = []
    skipped: list[SkippedRun] = []
    for payload in payloads:
        try:
            with conn.transaction():
                conn.execute("TRUNCATE _tame_cards, _tame_bins")
                _copy_and_upsert(conn, [payload])
        except (psycopg.errors.DataError, psycopg.errors.IntegrityError) as exc:
            message = redact_dsn(first_line(exc), secrets_of)
            skipped.append(SkippedRun(payload.run_id, f"the target refused it: {message}"))
            continue
        sent.append(payload)
    return sent, skipped


def sync_direct(
    con: duckdb.DuckDBPyConnection,
    dsn: str,
    *,
    full: bool = False,
    dry_run: bool = False,
) -> SyncReport:
    """Sync every new or changed run to Postgres in one transaction (COPY + upsert). Runs that
    cannot be sent are skipped and listed in the report; the others are sent."""
    started = time.perf_counter()
    target = target_label(dsn)
    # Connected first, even when nothing changed: wrong credentials or an unmigrated target are
    # told at once (not after the runs are read, and not on the day a run changes).
    conn = None if dry_run else connect_pg(dsn, autocommit=True)
    sent: list[RunPayload] = []
    try:
        if conn is not None:
            _require_migrations(conn, target)
        report, pending = plan_sync(con, target, "postgres", full=full, dry_run=dry_run)
        if conn is None or not pending:
            report.seconds = time.perf_counter() - started
            return report
        try:
            try:
                with conn.transaction():  # the only transaction: the connection autocommits
                    send_direct(conn, pending)
                sent = list(pending)
            except (psycopg.errors.DataError, psycopg.errors.IntegrityError):
                # Some run holds a value the target refuses: find it, send the others.
                with conn.transaction():
                    sent, refused = send_direct_each(conn, pending, dsn)
                report.skipped.extend(refused)
        except psycopg.Error as exc:
            message = first_line(exc)
            raise RemoteError(
                f"sync to {target} failed and was rolled back: {redact_dsn(message, dsn)}"
            ) from None
    finally:
        if conn is not None:
            conn.close()
    report.sent_runs = len(sent)
    report.sent_bins = sum(len(p.bins) for p in sent)
    if sent:
        record_synced(con, target, sent)
    report.seconds = time.perf_counter() - started
    return report
