"""Applying the numbered Postgres migrations in `migrations/` to a Supabase/Postgres database."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import psycopg

from warehouse.basics import first_line
from warehouse.errors import RemoteError, UsageError
from warehouse.store.resources import NumberedSql, migration_files
from warehouse.sync.dsn import connect_pg, redact_dsn, target_label

LEDGER = "tame_wh_migrations"
_LOCK_KEY = 0x74616D65  # advisory lock id ("tame"): one migrate at a time per database


def checksum(text: str) -> str:
    """sha256 of a migration file's text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class MigrationReport:
    """What `migrate` found and did."""

    target: str
    applied_before: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    applied_now: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return dict(self.__dict__)


# Created with the table, in the same transaction: whatever the database's default privileges
# grant on new tables (Supabase grants anon and authenticated ALL), the client roles can
# neither read nor write the ledger. Migration 004 makes the same revocation for ledgers created
# before it.
_CREATE_LEDGER = f"""
CREATE TABLE IF NOT EXISTS {LEDGER} (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE {LEDGER} ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON TABLE {LEDGER} FROM PUBLIC;
DO $$
DECLARE
    client text;
BEGIN
    FOREACH client IN ARRAY ARRAY['anon', 'authenticated'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = client) THEN
            EXECUTE format('REVOKE ALL ON TABLE {LEDGER} FROM %I', client);
        END IF;
    END LOOP;
END
$$;
"""


def _ledger(conn: psycopg.Connection) -> dict[str, str]:
    """Applied migrations (name → checksum), creating the ledger table on first use."""
    exists = conn.execute("SELECT to_regclass(%s)", [LEDGER]).fetchone()
    if not (exists and exists[0]):
        with conn.transaction():
            conn.execute(_CREATE_LEDGER)
    return dict(conn.execute(f"SELECT name, checksum FROM {LEDGER}").fetchall())


def _check_history(applied: dict[str, str], files: list[NumberedSql]) -> list[NumberedSql]:
    """Pending migrations; refuse changed or unknown applied ones."""
    known = {f.name: f for f in files}
    for name, digest in sorted(applied.items()):
        if name not in known:
            raise UsageError(
                f"the database has migration {name} applied, which this tame-wh does not know; "
                "upgrade tame-wh"
            )
        if checksum(known[name].text) != digest:
            raise UsageError(
                f"migration {name} changed after it was applied (checksum {digest[:12]}… in the "
                f"database, {checksum(known[name].text)[:12]}… now); never edit an applied "
                "migration, add a new numbered one"
            )
    return [f for f in files if f.name not in applied]


def migrate(dsn: str, *, dry_run: bool = False) -> MigrationReport:
    """Apply pending migrations in order, each in its own transaction, recorded in the ledger."""
    files = migration_files()
    report = MigrationReport(target=target_label(dsn), dry_run=dry_run)
    conn = connect_pg(dsn, autocommit=True)
    try:
        _apply(conn, dsn, files, report)
    except psycopg.Error as exc:  # the lock or the ledger: e.g. a role that may not read it
        message = first_line(exc)
        raise RemoteError(
            f"migrate on {report.target} failed: {redact_dsn(message, dsn)}"
        ) from None
    finally:
        conn.close()
    return report


def _apply(
    conn: psycopg.Connection, dsn: str, files: list[NumberedSql], report: MigrationReport
) -> None:
    """Under the advisory lock: read the ledger, check history, apply what is pending."""
    conn.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
    try:
        applied = _ledger(conn)
        pending = _check_history(applied, files)
        report.applied_before = sorted(applied)
        report.pending = [f.name for f in pending]
        if report.dry_run:
            return
        for migration in pending:
            try:
                with conn.transaction():
                    conn.execute(migration.text)
                    conn.execute(
                        f"INSERT INTO {LEDGER} (name, checksum) VALUES (%s, %s)",
                        [migration.name, checksum(migration.text)],
                    )
            except psycopg.Error as exc:
                message = first_line(exc)
                raise RemoteError(
                    f"migration {migration.name} failed and was rolled back: "
                    f"{redact_dsn(message, dsn)}"
                ) from None
            report.applied_now.append(migration.name)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])
