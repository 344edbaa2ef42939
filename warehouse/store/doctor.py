"""Environment and warehouse diagnostics for `tame-wh doctor`."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from warehouse import __version__
from warehouse.errors import LockTimeoutError, WarehouseError
from warehouse.store.connection import connect
from warehouse.store.schema import code_schema_version, stored_schema_version


def _package_version(name: str) -> str | None:
    """Installed version of a distribution, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _native_status() -> dict[str, Any]:
    """Whether the native extension loads, and its version."""
    try:
        from warehouse.native import NATIVE_VERSION
    except WarehouseError as exc:
        return {"loads": False, "version": None, "error": str(exc)}
    return {"loads": True, "version": NATIVE_VERSION, "error": None}


def _cpu_threads() -> int:
    """CPU threads this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


DOCTOR_LOCK_TIMEOUT = 5.0


def _warehouse_status(db: Path, lock_timeout: float) -> dict[str, Any]:
    """Path, existence and schema version of the warehouse, opened read-only when it exists.
    A warehouse another process is writing is a state (`locked`), not a problem."""
    status: dict[str, Any] = {
        "path": str(db.resolve()),
        "exists": db.exists(),
        "schema_version": None,
        "code_schema_version": code_schema_version(),
        "locked": False,
        "error": None,
    }
    if not db.exists():
        return status
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


def diagnose(db: Path, lock_timeout: float = DOCTOR_LOCK_TIMEOUT) -> dict[str, Any]:
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
        "warehouse": _warehouse_status(db, lock_timeout),
    }


def healthy(report: dict[str, Any]) -> bool:
    """Whether the report shows a working installation (native module loads, warehouse usable)."""
    warehouse = report["warehouse"]
    return (
        bool(report["native"]["loads"])
        and warehouse["error"] is None
        and (
            warehouse["schema_version"] is None
            or warehouse["schema_version"] <= warehouse["code_schema_version"]
        )
    )
