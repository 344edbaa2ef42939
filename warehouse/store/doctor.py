"""Environment and warehouse diagnostics for `tame-wh doctor`."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

from warehouse import __version__
from warehouse.basics import first_line, redact
from warehouse.errors import LockTimeoutError, UsageError, WarehouseError
from warehouse.store.address import Address, LakeAddress
from warehouse.store.connection import close_connection, connect, duckdb_threads_setting
from warehouse.store.holders import lock_holder
from warehouse.store.lake import (
    catalog_connection,
    catalog_exposures,
    catalog_state,
    check_data_path,
    connection_config,
    prepare,
    probe_storage,
    s3_settings,
)
from warehouse.store.lake_dialect import violations
from warehouse.store.schema import code_schema_version, stored_schema_version


def _package_version(name: str) -> str | None:
    """Installed version of a distribution, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _native_status() -> dict[str, Any]:
    """Whether the native extension loads, its version and the search kernel this CPU runs."""
    try:
        from warehouse.native import NATIVE_VERSION, native
    except WarehouseError as exc:
        return {"loads": False, "version": None, "search_kernel": None, "error": str(exc)}
    return {
        "loads": True,
        "version": NATIVE_VERSION,
        "search_kernel": native.search_kernel(),
        "error": None,
    }


def _duckdb_threads() -> int | None:
    """DuckDB's worker threads per connection as `$TAME_WH_DUCKDB_THREADS` sets them (None: one
    per core, or a value the warehouse check reports as wrong)."""
    try:
        return duckdb_threads_setting()
    except UsageError:
        return None


def _cpu_threads() -> int:
    """CPU threads this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


DOCTOR_LOCK_TIMEOUT = 5.0


def _lake_status(db: LakeAddress) -> dict[str, Any]:
    """A lake's catalog (reachable, format version), data path and storage (reachable), its
    latest snapshot, and the constraints the application keeps (each must hold)."""
    import duckdb

    status: dict[str, Any] = {
        "path": str(db),
        "backend": "ducklake",
        "exists": False,
        "schema_version": None,
        "code_schema_version": code_schema_version(),
        "locked": False,
        "error": None,
        "catalog_reachable": False,
        "format_version": None,
        "data_path": db.data_path,
        "storage": None
        if db.data_path is None
        else s3_settings().describe()
        if db.is_s3
        else "directory",
        "storage_reachable": None,
        "latest_snapshot": None,
        "constraint_violations": [],
        "catalog_schema": None,
        "catalog_exposed": [],
    }
    try:
        pg = catalog_connection(db)
    except WarehouseError as exc:
        status["error"] = str(exc)
        return status
    status["catalog_reachable"] = True
    try:
        state = catalog_state(pg)
        if state.exists:
            status["catalog_schema"] = state.schema
            status["catalog_exposed"] = catalog_exposures(pg, state.schema)
    finally:
        pg.close()
    status["exists"] = state.exists
    status["format_version"] = state.format_version
    if not state.exists:
        return status

    try:
        address = check_data_path(db, state)
        status["data_path"] = address.data_path
        # The catalog's data path, when none was given: say what it is, not a guess.
        status["storage"] = s3_settings().describe() if address.is_s3 else "directory"
        probe = duckdb.connect(":memory:", config=connection_config(None, address))
        try:
            prepare(probe, address)
            probe_storage(probe, address, create=False)
        finally:
            probe.close()
        status["storage_reachable"] = True
        con = connect(address, read_only=True)
        try:
            status["schema_version"] = stored_schema_version(con)
            row = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('tame')").fetchone()
            status["latest_snapshot"] = row[0] if row else None
            status["constraint_violations"] = violations(con)
        finally:
            close_connection(con)
    except WarehouseError as exc:
        if status["storage_reachable"] is None:
            status["storage_reachable"] = False
        status["error"] = str(exc)
    except duckdb.Error as exc:
        status["error"] = redact(first_line(exc))
    return status


def _warehouse_status(db: Address, lock_timeout: float) -> dict[str, Any]:
    """Path, existence and schema version of the warehouse, opened read-only when it exists.
    A warehouse another process is writing is a state (`locked`), not a problem."""
    if isinstance(db, LakeAddress):
        return _lake_status(db)
    status: dict[str, Any] = {
        "path": str(db.resolve()),
        "backend": "duckdb-file",
        "exists": db.exists(),
        "schema_version": None,
        "code_schema_version": code_schema_version(),
        "locked": False,
        "lock_holder": None,
        "error": None,
    }
    if not db.exists():
        return status
    holder = lock_holder(db)
    status["lock_holder"] = holder.to_dict() if holder is not None else None
    try:
        con = connect(db, read_only=True, lock_timeout=lock_timeout)
        try:
            status["schema_version"] = stored_schema_version(con)
        finally:
            con.close()
    except LockTimeoutError:
        status["locked"] = True
    except WarehouseError as exc:
        status["error"] = str(exc)
    return status


def diagnose(db: Address, lock_timeout: float = DOCTOR_LOCK_TIMEOUT) -> dict[str, Any]:
    """Versions, CPU threads, native-module health and the warehouse's schema version (waiting
    at most `lock_timeout` seconds for a process that is writing it)."""
    import duckdb

    return {
        "tame_wh": __version__,
        "native": _native_status(),
        "duckdb": duckdb.__version__,
        "sacrebleu": _package_version("sacrebleu"),
        "pyarrow": _package_version("pyarrow"),
        "numpy": _package_version("numpy"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_threads": _cpu_threads(),
        "duckdb_threads": _duckdb_threads(),
        "warehouse": _warehouse_status(db, lock_timeout),
    }


def catalog_privileges_text(warehouse: dict[str, Any]) -> str:
    """The doctor's line on who may reach a lake's catalog tables."""
    exposed = warehouse.get("catalog_exposed") or []
    schema = warehouse.get("catalog_schema") or "n/a"
    if not exposed:
        return f"private (schema {schema}; no privileges for PUBLIC, anon or authenticated)"
    shown = "; ".join(exposed[:3]) + (f"; {len(exposed) - 3} more" if len(exposed) > 3 else "")
    return (
        f"OPEN in schema {schema} ({shown}): run `tame-wh init` to move the catalog into its "
        "own schema and revoke them"
    )


def healthy(report: dict[str, Any]) -> bool:
    """Whether the report shows a working installation (native module loads, warehouse usable)."""
    warehouse = report["warehouse"]
    return (
        bool(report["native"]["loads"])
        and warehouse["error"] is None
        and not warehouse.get("constraint_violations")
        and not warehouse.get("catalog_exposed")
        and (
            warehouse["schema_version"] is None
            or warehouse["schema_version"] <= warehouse["code_schema_version"]
        )
    )
