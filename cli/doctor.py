"""`tame-wh doctor`: versions, CPU threads, native module and warehouse health."""

from __future__ import annotations

from typing import Any

import click

from warehouse import Warehouse
from warehouse.cli.context import AppContext, json_option, pass_app
from warehouse.cli.output import emit_json, print_fields
from warehouse.frontend import DOCTOR_LOCK_TIMEOUT, catalog_privileges_text, healthy


@click.command()
@json_option
@pass_app
def doctor(app: AppContext, as_json: bool) -> None:
    """Check the installation and the warehouse; exits 3 when something is broken."""
    report = Warehouse.diagnose(app.db, lock_timeout=min(app.lock_timeout, DOCTOR_LOCK_TIMEOUT))
    ok = healthy(report)
    if as_json:
        emit_json({**report, "ok": ok})
    else:
        native = report["native"]
        wh = report["warehouse"]
        if not wh["exists"]:
            schema = (
                f"not created yet (created on first use; code schema {wh['code_schema_version']})"
            )
        elif wh["locked"]:
            schema = "not read: locked by another process (it is writing the warehouse)"
        elif wh["error"]:
            schema = f"unusable: {wh['error']}"
        else:
            schema = f"{wh['schema_version']} (code schema {wh['code_schema_version']})"
        lake = []
        if wh.get("backend") == "ducklake":
            storage = wh["storage_reachable"]
            lake = [
                ("backend", "DuckLake lake (catalog in PostgreSQL)"),
                ("catalog", "reachable" if wh["catalog_reachable"] else "NOT reachable"),
                ("catalog privileges", catalog_privileges_text(wh) if wh["exists"] else "n/a"),
                ("lake format version", wh["format_version"] or "n/a"),
                ("data path", wh["data_path"] or "n/a"),
                (
                    "storage",
                    f"{wh['storage'] or 'n/a'}: "
                    + {True: "reachable", False: "NOT reachable", None: "not checked"}[storage],
                ),
                ("latest snapshot", wh["latest_snapshot"] if wh["exists"] else "n/a"),
                (
                    "constraints",
                    "hold"
                    if not wh["constraint_violations"]
                    else "; ".join(wh["constraint_violations"]),
                ),
            ]
        print_fields(
            [
                ("tame-wh", report["tame_wh"]),
                (
                    "native module",
                    f"{native['version']} (loads)"
                    if native["loads"]
                    else f"does not load: {native['error']}",
                ),
                ("duckdb", report["duckdb"]),
                ("sacrebleu", report["sacrebleu"]),
                ("pyarrow", report["pyarrow"]),
                ("numpy", report["numpy"]),
                ("python", report["python"]),
                ("platform", report["platform"]),
                ("cpu threads", report["cpu_threads"]),
                (
                    "duckdb threads",
                    f"{report['duckdb_threads']} ($TAME_WH_DUCKDB_THREADS)"
                    if report["duckdb_threads"]
                    else "one per core",
                ),
                ("search kernel", native["search_kernel"] or "n/a"),
                ("warehouse", wh["path"]),
                *lake,
                ("schema version", schema),
                *_holder_field(wh),
                ("status", "ok" if ok else "PROBLEMS FOUND"),
            ]
        )
    if not ok:
        raise click.exceptions.Exit(3)


def _holder_field(wh: dict[str, Any]) -> list[tuple[str, str]]:
    """The process that holds the warehouse file, when one does: a reader blocks every writer."""
    holder = wh.get("lock_holder")
    if not holder:
        return []
    name = f" ({holder['process']})" if holder["process"] else ""
    if holder["mode"] == "reading":
        text = (
            f"process {holder['pid']}{name} holds the file open for reading: writers (ingest, "
            "audit, ...) wait for it until their --lock-timeout; a dashboard or BI tool should "
            "read an export or a lake, not hold the file"
        )
    else:
        text = f"process {holder['pid']}{name} is writing the warehouse"
    return [("held by", text)]
