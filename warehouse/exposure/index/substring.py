"""The substring lens's index (docs/exposure.md, "Substring lens"): suffix-array shards over a
training corpus's normalised texts, one set per side, stored beside the warehouse like the
n-gram index and reused by later audits.

A shard is a run of whole rows (documents). Shards are built one at a time, so an audit holds
at most one shard's build in memory (about 6 bytes per text byte) and then memory-maps the
stored files. A shard's key names everything its content depends on: the corpus content id,
the side, its rows, the normalisation, the file format, the Unicode version and tame-wh's
version; a file that cannot be used is rebuilt and the caller warned.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import numpy as np

from warehouse import __version__
from warehouse.basics import utc_now
from warehouse.errors import UsageError
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.exposure.index.memory import RESERVE, current_rss
from warehouse.exposure.index.retrieval import normalized_utf8
from warehouse.exposure.index.stored import (
    SUBSTRING_DIRECTORY,
    SUBSTRING_SUFFIX,
    index_directory,
    stores_indexes,
)
from warehouse.native import native
from warehouse.sizes import size_text
from warehouse.store.corpora import CorpusInfo, training_columns

if TYPE_CHECKING:
    from warehouse._native import LensBuffers

DEFAULT_SHARD_BYTES = 512 * 2**20  # text per shard: a build peaks near 6 bytes per text byte
MIN_SHARD_BYTES = 2**20
BUILD_PER_TEXT_BYTE = 7  # peak bytes of a shard's build per text byte (text, suffix array, copies)
SIDES = ("source", "target")


@dataclass(frozen=True)
class ShardPlan:
    """One shard: rows `start <= i < stop` of one side of the corpus, stored under `key`."""

    key: str
    side: str
    start: int
    stop: int

    @property
    def file_name(self) -> str:
        """The file's name in the substring index directory."""
        return self.key + SUBSTRING_SUFFIX


def index_side(train: CorpusInfo, side: str) -> str:
    """The side of the training corpus a test side is looked up in: a text corpus has one."""
    return "source" if train.kind == "text" else side


def shard_key(train: CorpusInfo, side: str, rows: tuple[int, int], config: AuditConfig) -> str:
    """The key of one shard of a side of the training corpus."""
    payload = {
        "corpus": train.corpus_id,
        "side": side,
        "rows": list(rows),
        "normalization": config.normalization.signature_part(),
        "unicode": unicodedata.unidata_version,
        "format": native.SUFFIX_FORMAT_VERSION,
        "tame_wh": __version__,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]


def shard_bytes_for(execution: Execution) -> int | None:
    """Text bytes per shard: what the memory limit allows, else the default (None: the caller
    chose rows per shard instead)."""
    if execution.shard_rows is not None:
        return None
    if execution.memory_limit is None:
        return DEFAULT_SHARD_BYTES
    room = execution.memory_limit - current_rss() - RESERVE
    fit = room // BUILD_PER_TEXT_BYTE
    if fit < MIN_SHARD_BYTES:
        raise UsageError(
            f"--memory-limit {size_text(execution.memory_limit)} leaves no room for a "
            f"suffix-array shard: give at least "
            f"{size_text(current_rss() + RESERVE + BUILD_PER_TEXT_BYTE * MIN_SHARD_BYTES)}"
        )
    return int(min(fit, DEFAULT_SHARD_BYTES))


_RANGES_SQL = """
SELECT min(seg_idx) AS start, max(seg_idx) + 1 AS stop
FROM (SELECT seg_idx,
             (sum(strlen(CASE WHEN $side = 'source' THEN src ELSE refs[1] END) + 1)
                 OVER (ORDER BY seg_idx) - 1) // $per AS part
      FROM segments WHERE corpus_id = $corpus)
GROUP BY part ORDER BY start
"""


def shard_rows(
    con: duckdb.DuckDBPyConnection, train: CorpusInfo, side: str, execution: Execution
) -> list[tuple[int, int]]:
    """The row ranges of a side's shards: `--shard-rows` rows each, else runs of rows holding
    about the shard size in text (a shard may pass it by at most one document)."""
    if train.n_segments == 0:
        return [(0, 0)]
    if execution.shard_rows is not None:
        step = execution.shard_rows
        return [(a, min(a + step, train.n_segments)) for a in range(0, train.n_segments, step)]
    per = shard_bytes_for(execution)
    rows = con.execute(_RANGES_SQL, {"side": side, "per": per, "corpus": train.corpus_id})
    return [(int(a), int(b)) for a, b in rows.fetchall()]


def plan(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    side: str,
    config: AuditConfig,
    execution: Execution,
) -> list[ShardPlan]:
    """The shards of one side of the training corpus, in corpus order."""
    side = index_side(train, side)
    return [
        ShardPlan(shard_key(train, side, rows, config), side, *rows)
        for rows in shard_rows(con, train, side, execution)
    ]


@contextlib.contextmanager
def _shard_directory(con: duckdb.DuckDBPyConnection, execution: Execution) -> Iterator[Path]:
    """Where shards are stored (beside the warehouse), or a temporary directory removed
    afterwards (an in-memory warehouse, a lake on object storage, storing turned off); a
    memory-mapped shard stays readable after its file is removed."""
    base = index_directory(con)
    if base is not None and stores_indexes(con, execution):
        directory = base / SUBSTRING_DIRECTORY
        directory.mkdir(parents=True, exist_ok=True)
        yield directory
    else:
        with tempfile.TemporaryDirectory(prefix="tame-wh-sa-") as tmp:
            yield Path(tmp)


def shard_texts(
    con: duckdb.DuckDBPyConnection, train: CorpusInfo, shard: ShardPlan, config: AuditConfig
) -> bytes:
    """A shard's rows of its side, normalised and newline-joined, as UTF-8."""
    sources, targets = training_columns(con, train.corpus_id, (shard.start, shard.stop))
    return normalized_utf8(sources if shard.side == "source" else targets, config.normalization)


def write_meta(path: Path, train: CorpusInfo, shard: ShardPlan, config: AuditConfig) -> None:
    """The metadata `index list` shows for a stored shard, in `<key>.json` beside it."""
    meta = {
        "corpus_id": train.corpus_id,
        "side": shard.side,
        "rows": [shard.start, shard.stop],
        "normalization": config.normalization.signature_part(),
        "created": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "tame_wh": __version__,
    }
    tmp = path.with_suffix(f".json.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(meta), encoding="utf-8")
    tmp.replace(path.with_suffix(".json"))


@dataclass
class OpenedSide:
    """A side's shards opened for the lens, and what opening them took."""

    index: native.SubstringIndex
    built: int
    loaded: int
    file_bytes: int


def open_side(
    con: duckdb.DuckDBPyConnection,
    train: CorpusInfo,
    side: str,
    config: AuditConfig,
    execution: Execution,
    *,
    notify: Callable[[str], None],
) -> OpenedSide:
    """The suffix-array shards of one side of the training corpus: loaded where stored and
    intact, else built (one at a time) and stored."""
    shards = plan(con, train, side, config, execution)
    keys = [s.key.encode() for s in shards]
    with _shard_directory(con, execution) as directory:
        paths = [directory / s.file_name for s in shards]
        if all(p.exists() for p in paths):
            # The usual case, every shard stored: each file is verified once, here.
            with contextlib.suppress(native.IndexFileError):
                index = native.SubstringIndex.open(paths, keys)
                return OpenedSide(index, 0, len(paths), sum(p.stat().st_size for p in paths))
        built = loaded = 0
        for shard, path, key in zip(shards, paths, keys, strict=True):
            if path.exists():
                try:
                    native.SubstringIndex.open([path], [key])
                    loaded += 1
                    continue
                except native.IndexFileError as exc:
                    notify(f"warning: rebuilding a stored suffix-array shard: {exc}")
            texts = shard_texts(con, train, shard, config)
            native.SubstringIndex.build_shard(
                texts, shard.stop - shard.start, path, key, threads=execution.threads
            )
            del texts
            write_meta(path, train, shard, config)
            built += 1
        index = native.SubstringIndex.open(paths, keys)
        return OpenedSide(index, built, loaded, sum(p.stat().st_size for p in paths))


@dataclass(frozen=True)
class LensColumns:
    """The lens of some texts as numpy int64 columns: characters, longest match, its start,
    the row and offset of its first occurrence (-1 when nothing is shared), whole-text
    occurrences, and per word order the n-grams found and in the text."""

    chars: np.ndarray
    longest: np.ndarray
    start: np.ndarray
    doc: np.ndarray
    offset: np.ndarray
    count: np.ndarray
    found: list[np.ndarray]
    total: list[np.ndarray]


def _int64(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.uint64).astype(np.int64)


def lens_columns(raw: LensBuffers) -> LensColumns:
    """`SubstringIndex.lens` buffers as columns."""
    n = len(raw["chars"]) // 8
    valid = np.unpackbits(np.frombuffer(raw["doc_valid"], np.uint8), bitorder="little")[:n]
    doc = np.where(valid == 1, np.frombuffer(raw["doc"], np.int64), -1)
    offset = np.where(valid == 1, np.frombuffer(raw["offset"], np.int64), -1)
    return LensColumns(
        _int64(raw["chars"]),
        _int64(raw["longest"]),
        _int64(raw["start"]),
        doc,
        offset,
        _int64(raw["count"]),
        [_int64(f) for f in raw["found"]],
        [_int64(t) for t in raw["total"]],
    )
