"""Stored training indexes (docs/exposure.md, "Stored indexes"): the native index of a training
corpus kept in a file beside the warehouse and memory-mapped by later audits instead of rebuilt.

A file's key names everything its content depends on: the corpus content id, the normalisation,
the gram orders, the file format version, the Unicode version of the normalisation, tame-wh's
version and, for a shard, its rows. A file that cannot be used (truncated, corrupted, foreign,
another key) is never trusted: the index is rebuilt and the caller warned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import duckdb

from warehouse import __version__
from warehouse.basics import Notify, silent
from warehouse.errors import UsageError
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import LOCAL, Execution
from warehouse.exposure.index.memory import (
    index_budget,
    release_cached_blocks,
    shard_size,
)
from warehouse.exposure.index.retrieval import (
    RetrievalIndex,
    SearchIndex,
    index_of_normalized,
    normalized_utf8,
)
from warehouse.exposure.index.shards import ShardedIndex, ShardPart
from warehouse.native import native
from warehouse.sizes import size_text
from warehouse.store.corpora import (
    CorpusInfo,
    list_corpora,
    training_columns,
    training_text_bytes,
)
from warehouse.store.lake import LAKE_ALIAS, metadata_table
from warehouse.store.settings import read_settings

SUFFIX = ".index"
# The substring lens's suffix-array shards (`index.substring`) live in this subdirectory, each
# `<key>.sa` with its metadata beside it in `<key>.json`.
SUBSTRING_DIRECTORY = "substring"
SUBSTRING_SUFFIX = ".sa"
STORE_SETTING = "index.store"  # a settings row: 0 = never store indexes, 1 = store (default)
_KEY_LENGTH = 24
# <key>.index or <key>.r<shard rows>.<shard number>.index; temporary files start with a dot.
_NAME = re.compile(r"^([0-9a-f]{24})(?:\.r(\d+)\.(\d+))?\.index$")
_TEMPORARY = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")
IndexFileError = native.IndexFileError


def index_directory(con: duckdb.DuckDBPyConnection) -> Path | None:
    """Where the stored indexes of the open warehouse live: `<warehouse file>.indexes/` beside a
    warehouse file, `<data path>/tame-wh-indexes/` in a lake whose data path is a local
    directory; None otherwise (in memory, or a lake on object storage)."""
    # fetchall: a result left open (fetchone) would keep DuckDB from dropping functions later.
    rows = con.execute(
        "SELECT database_name, path, type FROM duckdb_databases() "
        "WHERE database_name = current_database()"
    ).fetchall()
    if len(rows) != 1:
        return None
    name, path, kind = rows[0]
    if kind == "duckdb" and path:
        return Path(path).with_name(Path(path).name + ".indexes")
    if kind == "ducklake" and name == LAKE_ALIAS:
        data = con.execute(
            f"SELECT value FROM {metadata_table(con, 'ducklake_metadata')} WHERE key = 'data_path'"
        ).fetchall()
        local = data[0][0] if data and data[0][0] and "://" not in data[0][0] else None
        return Path(local) / "tame-wh-indexes" if local else None
    return None


def storing_enabled(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether audits store the indexes they build (settings row `index.store`, default 1)."""
    return read_settings(con).get(STORE_SETTING, 1.0) != 0


def stores_indexes(con: duckdb.DuckDBPyConnection, execution: Execution) -> bool:
    """Whether an audit run as `execution` says stores the indexes it builds: as the execution
    asks, else as the `index.store` setting says."""
    if execution.store_index is not None:
        return execution.store_index
    return storing_enabled(con)


@dataclass(frozen=True)
class Shard:
    """One file of a stored index: rows `start <= i < stop` of the corpus (all of them when
    `number` is None), stored under `key`."""

    key: str
    start: int
    stop: int
    number: int | None = None
    count: int | None = None

    @property
    def file_name(self) -> str:
        """The file's name in the index directory."""
        return self.key + SUFFIX


def base_key(corpus_id: str, config: AuditConfig) -> str:
    """The key of the whole-corpus index of a training corpus under an audit configuration."""
    payload = {
        "corpus": corpus_id,
        "orders": sorted(set(config.orders)),
        "normalization": config.normalization.signature_part(),
        "unicode": unicodedata.unidata_version,
        "format": native.INDEX_FORMAT_VERSION,
        "tame_wh": __version__,
    }
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return digest[:_KEY_LENGTH]


def plan(train: CorpusInfo, config: AuditConfig, shard_rows: int | None = None) -> list[Shard]:
    """The files of the index of `train`: one, or shards of `shard_rows` consecutive rows."""
    base, n = base_key(train.corpus_id, config), train.n_segments
    if shard_rows is None:
        return [Shard(base, 0, n)]
    if shard_rows < 1:
        raise UsageError(f"--shard-rows must be at least 1, got {shard_rows}")
    count = max(1, -(-n // shard_rows))
    return [
        Shard(f"{base}.r{shard_rows}.{i}", i * shard_rows, min(n, (i + 1) * shard_rows), i, count)
        for i in range(count)
    ]


def stored_plans(
    directory: Path | None, train: CorpusInfo, config: AuditConfig
) -> list[int | None]:
    """The layouts of `train`'s index with files in `directory`: None (one file) first, then
    shard sizes, those with the most files present first (then the largest)."""
    if directory is None or not directory.is_dir():
        return []
    base = base_key(train.corpus_id, config)
    names = {p.name for p in directory.iterdir()}
    present: dict[int, int] = {}
    for name in names:
        m = _NAME.match(name)
        if m and m.group(1) == base and m.group(2):
            present[int(m.group(2))] = present.get(int(m.group(2)), 0) + 1
    sizes = sorted(present, key=lambda size: (-present[size], -size))
    return ([None] if base + SUFFIX in names else []) + list[int | None](sizes)


def shard_meta(
    train: CorpusInfo, config: AuditConfig, shard: Shard, shard_rows: int | None
) -> bytes:
    """The metadata stored with one file (what `index list` shows)."""
    return json.dumps(
        {
            "corpus_id": train.corpus_id,
            "corpus": train.name,
            "orders": sorted(set(config.orders)),
            "normalization": config.normalization.signature_part(),
            "rows": shard.stop - shard.start,
            "row_offset": shard.start,
            "total_rows": train.n_segments,
            "shard": shard.number,
            "shards": shard.count,
            "shard_rows": shard_rows,
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tame_wh": __version__,
        },
        sort_keys=True,
    ).encode()


def build_shard(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    shard: Shard,
    threads: int | None = None,
) -> RetrievalIndex:
    """Build the in-memory index of one shard's rows (the whole corpus for an unsharded plan)."""
    rows = None if shard.number is None else (shard.start, shard.stop)
    sources, targets = training_columns(con, train.corpus_id, rows)
    release_cached_blocks(con)
    # Each side's column is dropped once normalised, so neither is held while the index builds.
    count = len(sources)
    source_text = normalized_utf8(sources, config.normalization)
    del sources
    target_text = normalized_utf8(targets, config.normalization)
    del targets
    return index_of_normalized(source_text, target_text, count, config.orders, threads)


def save_shard(
    index: RetrievalIndex,
    directory: Path,
    train: CorpusInfo,
    config: AuditConfig,
    shard: Shard,
    shard_rows: int | None = None,
) -> int:
    """Store a built index as `shard`'s file (atomically); returns its size in bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = shard_meta(train, config, shard, shard_rows)
    return int(index.save(directory / shard.file_name, shard.key.encode(), meta))


class BackgroundSaves:
    """Index files written on their own threads while the audit searches (the native save and
    search both run without the interpreter lock); `wait` joins them."""

    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []
        self._errors: list[BaseException] = []

    def start(self, save: Callable[[], None]) -> None:
        """Run `save` on a thread of its own."""

        def run() -> None:
            try:
                save()
            except BaseException as exc:  # re-raised by `wait`
                self._errors.append(exc)

        thread = threading.Thread(target=run, name="tame-wh index save")
        thread.start()
        self._threads.append(thread)

    def wait(self, raise_errors: bool = True) -> None:
        """Wait for every save; re-raise the first unexpected error of one (unless the caller
        is already raising its own)."""
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        errors, self._errors = self._errors, []
        if errors and raise_errors:
            raise errors[0]


def load_shard(directory: Path, shard: Shard) -> RetrievalIndex:
    """The stored index of `shard` (IndexFileError when missing or unusable)."""
    return RetrievalIndex.load(directory / shard.file_name, shard.key.encode())


def _size(n: int) -> str:
    """Bytes for people."""
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 1024:,.0f} KiB"


def open_shard(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    shard: Shard,
    *,
    directory: Path | None,
    store: bool,
    shard_rows: int | None = None,
    threads: int | None = None,
    notify: Notify = silent,
    saves: BackgroundSaves | None = None,
) -> tuple[RetrievalIndex, bool]:
    """`shard`'s stored index, else a freshly built one (stored when `store`, on a thread of
    `saves` when given); also whether it was loaded. An unusable file is reported to `notify`
    and rebuilt."""
    path = directory / shard.file_name if directory is not None else None
    if path is not None and path.exists() and not path.is_file():
        # A FIFO or device would block or never end a read: it is no index, and is replaced.
        notify(f"warning: {path} is not a regular file; rebuilding the index")
    elif path is not None and path.exists():
        try:
            return load_shard(path.parent, shard), True
        except IndexFileError as exc:
            notify(f"warning: {exc}; rebuilding it")
    index = build_shard(con, train, config, shard, threads)
    if store and directory is not None:
        folder = directory

        def save() -> None:
            try:
                size = save_shard(index, folder, train, config, shard, shard_rows)
            except (IndexFileError, OSError) as exc:
                notify(f"warning: the training index could not be stored ({exc}); audits build it")
            else:
                notify(
                    f"stored the training index of {train.name!r} as {folder / shard.file_name} "
                    f"({_size(size)}); later audits load it instead of building it "
                    "(`tame-wh index drop` removes it)"
                )

        if saves is None:
            save()
        else:
            saves.start(save)
    return index, False


def open_training_index(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    execution: Execution = LOCAL,
    *,
    notify: Notify = silent,
    saves: BackgroundSaves | None = None,
) -> tuple[SearchIndex, bool]:
    """The index of `train` for an audit run as `execution` says, and whether it was loaded
    rather than built: the stored one when present (one file, else the shards of a sharded one;
    a missing or unusable file is rebuilt), else built, and stored unless the execution says not
    to (by default the `index.store` setting; on threads of `saves` when given, the caller waits
    for them); in shards of the execution's `shard_rows` when set. With a memory limit, see
    `open_within` (which stores each shard before building the next)."""
    directory = index_directory(con)
    store = stores_indexes(con, execution)
    threads, shard_rows = execution.threads, execution.shard_rows
    if execution.memory_limit is not None:
        return open_within(
            con,
            train,
            config,
            execution.memory_limit,
            directory=directory,
            store=store,
            threads=threads,
            notify=notify,
        )
    if shard_rows is None:
        layouts = stored_plans(directory, train, config)
        shard_rows = layouts[0] if layouts else None
    shards = plan(train, config, shard_rows)
    opened = [
        open_shard(
            con,
            train,
            config,
            shard,
            directory=directory,
            store=store,
            shard_rows=shard_rows,
            threads=threads,
            notify=notify,
            saves=saves,
        )
        for shard in shards
    ]
    loaded = all(was_loaded for _, was_loaded in opened)
    if shard_rows is None:
        return opened[0][0], loaded
    parts = [
        ShardPart(shard.start, shard.stop - shard.start, _opened(index), index)
        for shard, (index, _) in zip(shards, opened, strict=True)
    ]
    return ShardedIndex(parts), loaded


def _opened(index: RetrievalIndex) -> Callable[[], RetrievalIndex]:
    """An opener of an index already open."""
    return lambda: index


def _fits(directory: Path | None, shards: list[Shard], budget: int) -> bool:
    """Whether every file of `shards` is stored and no larger than `budget`."""
    if directory is None:
        return False
    paths = [directory / s.file_name for s in shards]
    return all(p.is_file() and p.stat().st_size <= budget for p in paths)


def open_within(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    memory_limit: int,
    *,
    directory: Path | None,
    store: bool,
    threads: int | None = None,
    notify: Notify = silent,
) -> tuple[SearchIndex, bool]:
    """The index of `train` for an audit that must stay within `memory_limit` bytes: a stored
    index (one file, or shards) whose files fit the budget; else shards small enough to build
    within it, built one after another and stored (without storing: in a temporary directory
    removed with the index). Shards are then searched one at a time, each mapped only while it
    is searched."""
    budget = index_budget(memory_limit)
    layouts = stored_plans(directory, train, config)
    if None in layouts and _fits(directory, plan(train, config), budget):
        [shard] = plan(train, config)
        return open_shard(
            con, train, config, shard, directory=directory, store=store, notify=notify
        )
    for size in layouts:
        if size is not None and _fits(directory, plan(train, config, size), budget):
            shard_rows: int = size
            break
    else:
        text = training_text_bytes(con, train.corpus_id)
        fit = shard_size(budget, train.n_segments, text)
        if fit.rows >= train.n_segments:  # the whole index fits
            [shard] = plan(train, config)
            return open_shard(
                con,
                train,
                config,
                shard,
                directory=directory,
                store=store,
                threads=threads,
                notify=notify,
            )
        shard_rows = fit.rows
        notify(
            f"--memory-limit {size_text(memory_limit)}: the index of {train.name!r} in shards of "
            f"{fit.rows:,} rows (each about {size_text(fit.index_bytes)}, "
            f"{size_text(fit.build_bytes)} to build)"
        )
    shards = plan(train, config, shard_rows)
    scratch = None
    if not store or directory is None:
        # Shards go to a temporary directory, removed with the index.
        scratch = tempfile.TemporaryDirectory(prefix="tame-wh-shards-")
        directory = Path(scratch.name)
    built = 0
    checksums = []
    for shard in shards:
        if scratch is None:
            index, loaded = open_shard(
                con,
                train,
                config,
                shard,
                directory=directory,
                store=True,
                shard_rows=shard_rows,
                threads=threads,
                notify=notify,
            )
            built += not loaded
        else:
            index = build_shard(con, train, config, shard, threads)
            save_shard(index, directory, train, config, shard, shard_rows)
        checksums.append(index.checksum())
        del index  # one shard in memory at a time
    parts = [
        ShardPart(shard.start, shard.stop - shard.start, partial(load_shard, directory, shard))
        for shard in shards
    ]
    sharded = ShardedIndex(parts, resident=False, keep=scratch, checksums=checksums)
    return sharded, scratch is None and built == 0


@dataclass(frozen=True)
class BuildResult:
    """What `build_stored_index` did."""

    corpus: str
    directory: str
    files: list[dict[str, Any]]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def build_stored_index(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    config: AuditConfig,
    *,
    shard_rows: int | None = None,
    threads: int | None = None,
    force: bool = False,
    progress: Notify = silent,
) -> BuildResult:
    """Build and store the index of `train` (every shard with `shard_rows`); files already
    stored and readable are kept unless `force`."""
    started = time.perf_counter()
    directory = index_directory(con)
    if directory is None:
        raise UsageError(
            "this warehouse has no file of its own: there is no place to store indexes"
        )
    files = []
    for shard in plan(train, config, shard_rows):
        path = directory / shard.file_name
        action = "built"
        if not force and path.exists():
            try:
                load_shard(directory, shard)
                action = "kept"
            except IndexFileError as exc:
                progress(f"warning: {exc}; rebuilding it")
        if action == "built":
            if shard.number is not None:
                progress(f"building shard {shard.number + 1} of {shard.count}")
            index = build_shard(con, train, config, shard, threads)
            try:
                save_shard(index, directory, train, config, shard, shard_rows)
            except (IndexFileError, OSError) as exc:
                raise UsageError(f"cannot store the index: {exc}") from None
            del index
        files.append(
            {
                "path": str(path),
                "key": shard.key,
                "action": action,
                "bytes": path.stat().st_size,
                "rows": shard.stop - shard.start,
                "row_offset": shard.start,
                "shard": shard.number,
            }
        )
    return BuildResult(train.name, str(directory), files, time.perf_counter() - started)


@dataclass(frozen=True)
class StoredIndex:
    """One file in the index directory, as `index list` shows it."""

    path: str
    key: str
    bytes: int
    corpus: str | None  # the registered corpus's name, None when it is not registered
    corpus_id: str | None
    rows: int | None
    row_offset: int | None
    shard: int | None
    shards: int | None
    created: str | None
    orders: list[int] | None
    normalization: str | None
    problem: str | None  # why the file cannot be used, None when it can
    lens: str = "grams"  # "grams" (the n-gram index) or "substring" (a suffix-array shard)
    side: str | None = None  # a suffix-array shard's side of the corpus

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _meta_problem(meta: dict[str, Any], corpora: dict[str, str]) -> str | None:
    """Why a stored file's metadata makes it unusable (its corpus is gone, or another version of
    tame-wh wrote it), or None."""
    if meta.get("corpus_id") not in corpora:
        return "its training corpus is no longer registered"
    if meta.get("tame_wh") != __version__:
        return f"written by tame-wh {meta.get('tame_wh')}"
    return None


def _entry(path: Path, corpora: dict[str, str], verify: bool) -> StoredIndex:
    """What the header of one file says, and whether it can be used (with `verify`, every
    checksum of the file is checked too; otherwise those of its header and metadata)."""
    try:
        info = native.stored_index_info(path)
        meta = json.loads(info["meta"])
        key = info["key"].decode()
    except (IndexFileError, ValueError, UnicodeDecodeError) as exc:
        return StoredIndex(
            str(path), path.name.removesuffix(SUFFIX), path.stat().st_size, None, None, None,
            None, None, None, None, None, None, str(exc),
        )  # fmt: skip
    problem = None
    if key + SUFFIX != path.name:
        problem = "its key does not match its file name"
    elif (problem := _meta_problem(meta, corpora)) is None and verify:
        try:
            RetrievalIndex.load(path, info["key"])
        except IndexFileError as exc:
            problem = str(exc)
    return StoredIndex(
        str(path),
        key,
        int(info["bytes"]),
        corpora.get(meta.get("corpus_id", "")),
        meta.get("corpus_id"),
        meta.get("rows"),
        meta.get("row_offset"),
        meta.get("shard"),
        meta.get("shards"),
        meta.get("created"),
        meta.get("orders"),
        meta.get("normalization"),
        problem,
    )


def _substring_entry(path: Path, corpora: dict[str, str], verify: bool) -> StoredIndex:
    """A suffix-array shard as `index list` shows it, from the metadata beside it."""
    key = path.name.removesuffix(SUBSTRING_SUFFIX)
    try:
        meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    start, stop = (meta.get("rows") or [None, None])[:2]
    problem = None
    if not meta:
        problem = "its metadata file is missing or unreadable"
    elif (problem := _meta_problem(meta, corpora)) is None and verify:
        try:
            native.SubstringIndex.open([path], [key.encode()])
        except IndexFileError as exc:
            problem = str(exc)
    return StoredIndex(
        str(path), key, path.stat().st_size, corpora.get(meta.get("corpus_id", "")),
        meta.get("corpus_id"), None if start is None else stop - start, start, None, None,
        meta.get("created"), None, meta.get("normalization"), problem, "substring",
        meta.get("side"),
    )  # fmt: skip


def _substring_files(directory: Path | None) -> Iterator[Path]:
    """The suffix-array shard files under `directory`, by name."""
    if directory is None or not (directory / SUBSTRING_DIRECTORY).is_dir():
        return
    for path in sorted((directory / SUBSTRING_DIRECTORY).iterdir()):
        if path.is_file() and path.name.endswith(SUBSTRING_SUFFIX):
            yield path


def _index_files(directory: Path | None) -> Iterator[Path]:
    """The index files in `directory`, by name."""
    if directory is None or not directory.is_dir():
        return
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name.endswith(SUFFIX) and not path.name.startswith("."):
            yield path


def list_stored_indexes(
    con: duckdb.DuckDBPyConnection, *, verify: bool = False
) -> list[StoredIndex]:
    """Every stored index file of the warehouse, with what its header says (`verify`: and
    whether all of it is intact)."""
    corpora = {c.corpus_id: c.name for c in list_corpora(con, "train")}
    directory = index_directory(con)
    return [_entry(path, corpora, verify) for path in _index_files(directory)] + [
        _substring_entry(path, corpora, verify) for path in _substring_files(directory)
    ]


def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def drop_stored_indexes(
    con: duckdb.DuckDBPyConnection,
    *,
    train: CorpusInfo | None = None,
    key: str | None = None,
    stale: bool = False,
    everything: bool = False,
) -> list[StoredIndex]:
    """Delete stored index files: those of corpus `train`, the file (or shard set) `key`, the
    stale ones (unusable when fully checked, or of a corpus no longer registered, with the
    temporary files of writers that died), or all of them. Returns what was deleted."""
    if not (train or key or stale or everything):
        raise UsageError("say what to drop: --train NAME, --key KEY, --stale or --all")
    dropped = []
    for entry in list_stored_indexes(con, verify=stale):
        chosen = (
            everything
            or (train is not None and entry.corpus_id == train.corpus_id)
            or (key is not None and (entry.key == key or entry.key.startswith(key + ".")))
            or (stale and entry.problem is not None)
        )
        if chosen:
            with contextlib.suppress(FileNotFoundError):
                Path(entry.path).unlink()
            if entry.lens == "substring":
                with contextlib.suppress(FileNotFoundError):
                    Path(entry.path).with_suffix(".json").unlink()
            dropped.append(entry)
    directory = index_directory(con)
    if (stale or everything) and directory is not None and directory.is_dir():
        for path in directory.iterdir():
            m = _TEMPORARY.match(path.name)
            if m and not _pid_alive(int(m.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
    return dropped
