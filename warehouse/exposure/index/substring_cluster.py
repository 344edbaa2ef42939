"""The substring lens on a Ray cluster (`audit --measure substring --executor ray`,
docs/exposure.md "Substring lens"): one task per suffix-array shard opens the shard where it is
stored (same machine, or a shared file system), else builds it from the shard's texts, which
the driver puts in Ray's object store, and stores it when asked; it then looks every test text
up in its shard. The driver merges the shards' answers exactly, as `SubstringIndex.lens` merges
shards in one process: the longest match (ties to the earliest start, then the first shard),
whole-segment counts summed, word n-grams found in any shard.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import duckdb
import numpy as np

from warehouse.basics import first_line
from warehouse.errors import RemoteError
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.cluster import MAX_RETRIES, connect
from warehouse.exposure.index.stored import (
    SUBSTRING_DIRECTORY,
    index_directory,
    stores_indexes,
)
from warehouse.exposure.index.substring import (
    LensColumns,
    ShardPlan,
    lens_columns,
    plan,
    shard_texts,
    write_meta,
)
from warehouse.native import native
from warehouse.store.corpora import CorpusInfo

if TYPE_CHECKING:
    from warehouse._native import LensHitBuffers


def shard_lens(task: dict[str, Any], texts: list[Any], queries: bytes) -> dict[str, Any]:
    """One shard's answers to every query (a Ray task): its columns with the n-gram hits, its
    checksum and file size, whether it was built, and what went wrong with a stored file."""
    import ray

    problem = None
    key = task["key"].encode()
    with tempfile.TemporaryDirectory(prefix="tame-wh-sa-task-") as tmp:
        path = Path(task["path"]) if task["path"] else Path(tmp) / "shard.sa"
        built = True
        if task["path"] and path.is_file():
            try:
                index = native.SubstringIndex.open([path], [key])
                built = False
            except native.IndexFileError as exc:
                problem = f"{exc}; rebuilt on the cluster"
        if built:
            if not task["store"]:
                path = Path(tmp) / "shard.sa"
            path.parent.mkdir(parents=True, exist_ok=True)
            native.SubstringIndex.build_shard(
                ray.get(texts[0]), task["rows"], path, key, task["threads"]
            )
            index = native.SubstringIndex.open([path], [key])
        raw = cast(
            "LensHitBuffers",
            index.lens(queries, task["queries"], task["orders"], task["threads"], hits=True),
        )
        return {
            "columns": lens_columns(raw),
            "hits": [np.frombuffer(h, np.uint8).astype(bool) for h in raw["hits"]],
            "checksum": index.checksums[0],
            "bytes": path.stat().st_size,
            "built": built,
            "problem": problem,
        }


def merge_answers(answers: list[tuple[int, dict[str, Any]]]) -> LensColumns:
    """The shards' answers (each with the documents before its shard, in corpus order) merged
    into the lens of the whole corpus."""
    first = answers[0][1]["columns"]
    n = len(first.chars)
    longest = np.zeros(n, np.int64)
    start = np.zeros(n, np.int64)
    doc = np.full(n, -1, np.int64)
    offset = np.full(n, -1, np.int64)
    count = np.zeros(n, np.int64)
    hits = [np.zeros_like(h) for h in answers[0][1]["hits"]]
    for base, answer in answers:
        cols: LensColumns = answer["columns"]
        seen = cols.doc >= 0
        better = seen & (
            (doc < 0)
            | (cols.longest > longest)
            | ((cols.longest == longest) & (cols.start < start))
        )
        longest = np.where(better, cols.longest, longest)
        start = np.where(better, cols.start, start)
        doc = np.where(better, cols.doc + base, doc)
        offset = np.where(better, cols.offset, offset)
        count += cols.count
        for k, h in enumerate(answer["hits"]):
            hits[k] |= h
    found = [
        np.bincount(np.repeat(np.arange(n), total), weights=h, minlength=n).astype(np.int64)
        for h, total in zip(hits, first.total, strict=True)
    ]
    return LensColumns(first.chars, longest, start, doc, offset, count, found, first.total)


@dataclass
class ClusterSide:
    """A side's lens computed on the cluster, and what its shards took."""

    columns: LensColumns
    checksums: list[int]
    built: int
    loaded: int
    file_bytes: int


def lens_on_cluster(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    side: str,
    config: AuditConfig,
    execution: Execution,
    queries: tuple[bytes, int],
    orders: list[int],
    *,
    notify: Callable[[str], None],
) -> ClusterSide:
    """The lens of `queries` (normalised, newline-joined, and their count) over one side of the
    training corpus, one Ray task per shard."""
    ray = connect(execution.ray_address)
    shards: list[ShardPlan] = plan(con, train, side, config, execution)
    base = index_directory(con)
    store = stores_indexes(con, execution)
    directory = base / SUBSTRING_DIRECTORY if base is not None else None
    remote = ray.remote(max_retries=MAX_RETRIES)(shard_lens)
    queries_ref = ray.put(queries[0])
    pending = {}
    for shard in shards:
        path = directory / shard.file_name if directory is not None else None
        stored = path is not None and path.is_file()
        # A shard not stored where the driver sees it goes to the object store: its task builds.
        texts = None if stored else ray.put(shard_texts(con, train, shard, config))
        task = {
            "key": shard.key,
            "path": str(path) if path is not None else None,
            "store": bool(store and path is not None),
            "rows": shard.stop - shard.start,
            "queries": queries[1],
            "orders": orders,
            "threads": execution.threads,
        }
        pending[remote.remote(task, [texts], queries_ref)] = shard
    notify(f"substring lens on the Ray cluster: {len(shards)} shard(s) of the {side} side")
    answers: dict[int, dict[str, Any]] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        shard = pending.pop(ready[0])
        try:
            answer = ray.get(ready[0])
        except Exception as exc:  # a task that still failed after its retries
            raise RemoteError(
                f"the Ray task of suffix-array shard rows {shard.start}-{shard.stop} failed: "
                f"{first_line(exc)}"
            ) from None
        if answer["problem"]:
            notify(f"warning: {answer['problem']}")
        if answer["built"] and directory is not None and store:
            write_meta(directory / shard.file_name, train, shard, config)
        answers[shard.start] = answer
    ordered = [(s.start, answers[s.start]) for s in shards]
    return ClusterSide(
        merge_answers(ordered),
        [a["checksum"] for _, a in ordered],
        sum(a["built"] for _, a in ordered),
        sum(not a["built"] for _, a in ordered),
        sum(a["bytes"] for _, a in ordered),
    )
