"""Audits on a Ray cluster (`audit --executor ray`, docs/exposure.md "On a Ray cluster"): one
task per shard of the training index; the driver merges the shards' results exactly.

A task loads its shard's stored index when the file is there (same machine, or a shared file
system), else builds it from the shard's rows, which the driver puts in Ray's object store, and
stores it when asked. Results come back as Arrow tables. Ray retries a task whose worker died
(`max_retries`); a task is a pure function of its shard and queries, so a retry gives the same
result. Ray is an optional dependency (`pip install 'tame-wh[ray]'`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.basics import Notify, first_line, silent
from warehouse.errors import RemoteError, UsageError
from warehouse.exposure.config import AuditConfig, SearchSettings
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.retrieval import SidesFromAudit, build_index
from warehouse.exposure.index.shards import merge_side, pack_side, shift_rows, unpack_side
from warehouse.exposure.index.stored import (
    IndexFileError,
    Shard,
    index_directory,
    plan,
    shard_meta,
    stored_plans,
    stores_indexes,
)
from warehouse.exposure.normalize import NormalizationConfig
from warehouse.native import RetrievalIndex
from warehouse.store.corpora import CorpusInfo, training_texts

if TYPE_CHECKING:
    from warehouse._native import AuditBuffers


INSTALL_HINT = "pip install 'tame-wh[ray]'"
ADDRESS_ENV = "RAY_ADDRESS"
MAX_RETRIES = 3  # attempts after a worker is lost
CONNECT_TIMEOUT = 5.0  # seconds to reach the cluster's address
_SIDES = ("source", "target", "pair")


def _ray() -> Any:
    """The `ray` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}"
        ) from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    """HOST and PORT of a `HOST:PORT` or `ray://HOST:PORT` address."""
    rest = address.removeprefix("ray://")
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray-address: expected HOST:PORT, got {address!r}")
    return host.strip("[]"), int(port)


def connect(address: str | None) -> Any:
    """Connect this process to the Ray cluster at `address` (default `$RAY_ADDRESS`); an address
    nothing answers at is a one-line error."""
    address = address or os.environ.get(ADDRESS_ENV) or None
    if address is None:
        raise UsageError(f"--executor ray: give --ray-address HOST:PORT or set ${ADDRESS_ENV}")
    ray = _ray()
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise UsageError(
            f"Ray cluster at {address} cannot be reached ({exc.strerror or exc}); "
            "nothing was written"
        ) from None
    if not ray.is_initialized():
        try:
            ray.init(
                address=address,
                logging_level="ERROR",
                log_to_driver=False,
                namespace="tame-wh",
            )
        except (ConnectionError, RuntimeError) as exc:
            raise UsageError(
                f"Ray cluster at {address}: cannot connect ({first_line(exc)}); nothing was written"
            ) from None
    return ray


def _side_columns(raw: Any, n: int, offset: int) -> dict[str, pa.Array]:
    """One side's buffers as Arrow columns, rows shifted to corpus rows."""
    side = shift_rows(unpack_side(raw, n), offset)
    return {name: pa.array(values) for name, values in side.items()}


def _table(raw: AuditBuffers, n: int, offset: int) -> pa.Table:
    """A shard's audit as one Arrow table: `<side>_<column>` per side; its first row and the
    counters as metadata."""
    columns: dict[str, pa.Array] = {}
    for side in _SIDES:
        for name, values in _side_columns(raw[side], n, offset).items():  # type: ignore[literal-required]
            columns[f"{side}_{name}"] = values
    metadata = {k: str(int(v)) for k, v in raw["stats"].items()}  # type: ignore[call-overload]
    return pa.table(columns).replace_schema_metadata({**metadata, "offset": str(offset)})


def _sides(table: pa.Table) -> dict[str, dict[str, np.ndarray]]:
    """An audit table's columns back as numpy arrays per side."""
    out: dict[str, dict[str, np.ndarray]] = {side: {} for side in _SIDES}
    for name in table.column_names:
        side, _, column = name.partition("_")
        out[side][column] = table.column(name).to_numpy(zero_copy_only=False).copy()
    return out


def shard_audit(
    task: dict[str, Any],
    rows: list[Any],
    queries: tuple[list[str], list[list[str]]],
) -> tuple[pa.Table, str | None, int]:
    """The audit of one shard (a Ray task) as an Arrow table, what went wrong with its stored
    index, if anything, and the index's checksum. The shard's stored index is used when it
    loads; otherwise the index is built from the rows (`rows`: their object reference, fetched
    only then) and stored when the task says so."""
    import ray

    index = None
    problem = None
    path = Path(task["path"]) if task["path"] else None
    if path is not None and path.is_file():
        try:
            index = RetrievalIndex.load(path, task["key"].encode())
        except IndexFileError as exc:
            problem = f"{exc}; rebuilt on the cluster"
    if index is None:
        table = ray.get(rows[0])
        index = build_index(
            table.column("src").to_pylist(),
            table.column("tgt").to_pylist(),
            task["orders"],
            NormalizationConfig(**task["normalization"]),
            task["threads"],
        )
        del table
        if path is not None and task["store"]:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                index.save(path, task["key"].encode(), task["meta"])
            except (IndexFileError, OSError) as exc:
                problem = f"the shard index could not be stored ({exc})"
    sources, refs = queries
    raw = index.audit(sources, refs, SearchSettings(**task["search"]), task["threads"])
    return _table(raw, len(sources), task["offset"]), problem, index.checksum()


@dataclass
class ClusterShard:
    """One shard as the cluster sees it: the task's description and its rows in the object
    store."""

    shard: Shard
    task: dict[str, Any]
    rows_ref: Any = field(default=None, repr=False)


class ClusterIndex(SidesFromAudit):
    """A training index searched on a Ray cluster, one task per shard; results equal the local
    audit's (exact mode)."""

    def __init__(self, ray: Any, shards: Sequence[ClusterShard], notify: Notify = silent) -> None:
        self.ray = ray
        self.shards = list(shards)
        self.notify = notify
        self.remote = ray.remote(max_retries=MAX_RETRIES)(shard_audit)
        self._checksums: dict[int, int] = {}  # by shard offset, as the tasks report them

    def checksums(self) -> list[int]:
        """Each shard's index checksum in row order, as its task reported it (every shard
        reports once the audit's search ran)."""
        return [self._checksums[o] for o in sorted(self._checksums)]

    def _run(
        self, settings: dict[str, Any], queries: tuple[list[str], list[list[str]]]
    ) -> dict[str, Any]:
        """Every shard's audit on the cluster, merged."""
        ray = self.ray
        queries_ref = ray.put(queries)
        pending = {
            self.remote.remote({**part.task, **settings}, [part.rows_ref], queries_ref): part
            for part in self.shards
        }
        tables: list[pa.Table] = []
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            part = pending.pop(ready[0])
            try:
                table, problem, checksum = ray.get(ready[0])
            except Exception as exc:  # a task that still failed after its retries
                raise RemoteError(
                    f"the Ray task of shard {part.shard.number} failed: {first_line(exc)}"
                ) from None
            if problem:
                self.notify(f"warning: {problem}")
            self._checksums[part.shard.start] = checksum
            tables.append(table)
            self.notify(f"shard {len(tables)} of {len(self.shards)} done on the cluster")
        return _merge_tables(tables)

    @staticmethod
    def _settings(search: SearchSettings, threads: int | None) -> dict[str, Any]:
        """The search settings every task gets."""
        return {"search": asdict(search), "threads": threads}

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair exposure of each test segment over every shard."""
        queries = (list(sources), [list(r) for r in refs])
        out = self._run(self._settings(search, threads), queries)
        return out  # type: ignore[return-value]


def _merge_tables(tables: list[pa.Table]) -> dict[str, Any]:
    """The shards' tables merged in row order into the native buffer layout, counters summed."""
    tables = sorted(tables, key=lambda t: int(t.schema.metadata[b"offset"]))
    merged: dict[str, Any] = {}
    stats: dict[str, int] = {}
    for table in tables:
        for key, value in (table.schema.metadata or {}).items():
            if key != b"offset":
                stats[key.decode()] = stats.get(key.decode(), 0) + int(value)
        for side, arrays in _sides(table).items():
            merged[side] = merge_side(merged[side], arrays) if side in merged else arrays
    return {**{side: pack_side(merged[side]) for side in _SIDES}, "stats": stats}


def open_on_cluster(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    execution: Execution,
    *,
    notify: Notify = silent,
) -> tuple[ClusterIndex, bool]:
    """The index of `train` on the Ray cluster at the execution's `ray_address` (default
    `$RAY_ADDRESS`), and whether every shard is stored (so no task builds): the stored sharded
    layout when there is one, else shards of the execution's `shard_rows`, else one shard per
    CPU of the cluster."""
    ray = connect(execution.ray_address)
    directory = index_directory(con)
    store = stores_indexes(con, execution)
    shard_rows = execution.shard_rows
    layouts = [size for size in stored_plans(directory, train, config) if size is not None]
    if shard_rows is None:
        if layouts:
            shard_rows = layouts[0]
        else:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            shard_rows = max(1, -(-train.n_segments // cpus))
    shards = plan(train, config, shard_rows)
    stored_all = directory is not None and all((directory / s.file_name).is_file() for s in shards)
    parts = []
    for shard in shards:
        path = directory / shard.file_name if directory is not None else None
        task = {
            "offset": shard.start,
            "key": shard.key,
            "path": str(path) if path is not None else None,
            "store": bool(store and path is not None),
            "meta": shard_meta(train, config, shard, shard_rows),
            "orders": list(config.orders),
            "normalization": {
                "punctuation": config.normalization.punctuation,
                "strip_diacritics": config.normalization.strip_diacritics,
                "casefold": config.normalization.casefold,
            },
        }

        # Every shard's rows go to the object store before the audit starts: a task that cannot
        # use a stored index (none, damaged, or not on its machine) builds from them.
        src, tgt = training_texts(con, train.corpus_id, (shard.start, shard.stop))
        rows = pa.table({"src": pa.array(src, pa.string()), "tgt": pa.array(tgt, pa.string())})
        del src, tgt
        parts.append(ClusterShard(shard, task, ray.put(rows)))
    notify(
        f"auditing on the Ray cluster: {len(shards)} shard(s) of {shard_rows:,} rows, "
        f"{'stored' if stored_all else 'built on the cluster where not stored'}"
    )
    return ClusterIndex(ray, parts, notify), stored_all
