"""A training index split into shards of consecutive rows, searched shard by shard and merged
exactly (docs/exposure.md, "Shards").

Exposure is a maximum over training rows, so the best row of the corpus is the best of the
shards' best rows. Merging compares the kernel's exact ratios (`num / den`), never floats:
exact flags first, then the higher exposure, then the lower row (and so, for the target, the
reference that reached it). Shards are merged in row order, so on a tie the earlier shard's row,
the lower one, stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from warehouse.exposure.config import SearchSettings
from warehouse.native import RetrievalIndex

if TYPE_CHECKING:
    from warehouse._native import AuditBuffers, SearchStats, SourceSearch, TargetSearch

Side = dict[str, npt.NDArray[Any]]
_SIDES = ("source", "target", "pair")
_BITMAPS = ("nn_valid", "exact", "ref_idx_valid")
_DTYPES = {
    "exposure": np.float64,
    "num": np.uint64,
    "den": np.uint64,
    "nn": np.int64,
    "ref_idx": np.int32,
}


def unpack_side(raw: Any, n: int) -> Side:
    """One side's buffers (`HitBuffers`, `TargetHitBuffers`) as numpy arrays of `n` values."""
    out: Side = {}
    for name, value in raw.items():
        if name in _BITMAPS:
            bits = np.unpackbits(np.frombuffer(value, np.uint8), bitorder="little")
            out[name] = bits[:n].astype(bool)
        elif name in _DTYPES:
            out[name] = np.frombuffer(value, _DTYPES[name]).copy()
    return out


def pack_side(side: Side) -> dict[str, bytes]:
    """Numpy arrays back into the native buffer layout (bitmaps LSB first)."""
    return {
        name: np.packbits(values, bitorder="little").tobytes()
        if name in _BITMAPS
        else values.tobytes()
        for name, values in side.items()
    }


def shift_rows(side: Side, offset: int) -> Side:
    """A shard's rows as corpus rows: `offset` added to every nearest-neighbour row."""
    side["nn"] = np.where(side["nn_valid"], side["nn"] + offset, 0)
    return side


def merge_side(best: Side, later: Side) -> Side:
    """`best` (from earlier rows) with the hits of `later` (later rows) that beat it: an exact
    match beats any non-exact hit; between non-exact hits the higher exposure wins, a tie
    keeps the earlier, lower row."""
    higher = later["num"] * best["den"] > best["num"] * later["den"]
    wins = (later["exact"] & ~best["exact"]) | (~later["exact"] & ~best["exact"] & higher)
    for name, values in best.items():
        values[wins] = later[name][wins]
    return best


def _add_stats(total: dict[str, int], stats: SearchStats) -> None:
    """Sum one shard's work counters into `total`."""
    for name, value in stats.items():
        total[name] = total.get(name, 0) + int(value)  # type: ignore[call-overload]


@dataclass
class ShardPart:
    """One shard: its first corpus row, its row count, and how to open its index."""

    offset: int
    rows: int
    open: Callable[[], RetrievalIndex]
    index: RetrievalIndex | None = field(default=None, repr=False)


class ShardedIndex:
    """Shards of one training index, searched one after another; the results equal those of the
    unsharded index (exact mode). With `resident`, each shard's index stays open after its first
    use; otherwise it is opened for each batch and released afterwards, so only one shard is in
    memory at a time."""

    def __init__(
        self,
        parts: Sequence[ShardPart],
        *,
        resident: bool = True,
        keep: object = None,
        checksums: Sequence[int] | None = None,
    ) -> None:
        if not parts:
            raise ValueError("a sharded index needs at least one shard")
        self.parts = sorted(parts, key=lambda p: p.offset)
        self.resident = resident
        self.keep = keep  # what the shards need alive (e.g. their temporary directory)
        # Each shard's checksum in row order: given when the shards were opened one at a
        # time, else taken from each shard on first use.
        self._checksums = list(checksums) if checksums is not None else None

    def checksums(self) -> list[int]:
        """Each shard's index checksum, in row order."""
        if self._checksums is None:
            self._checksums = [index.checksum() for _, index in self._each()]
        return list(self._checksums)

    @property
    def n_docs(self) -> int:
        """Number of training rows, all shards together."""
        return sum(p.rows for p in self.parts)

    def _each(self) -> Any:
        """Each shard's row offset and index, in row order (each shard's checksum noted on the
        way, so that shards opened one at a time are not opened again for it)."""
        seen: list[int] = []
        for part in self.parts:
            index = part.index or part.open()
            if self.resident:
                part.index = index
            if self._checksums is None:
                seen.append(index.checksum())
            yield part.offset, index
            del index
        if self._checksums is None:
            self._checksums = seen

    def _merged(
        self, call: Callable[[RetrievalIndex], Any], n: int, sides: Sequence[str] | None
    ) -> dict[str, Any]:
        """`call` on every shard, merged side by side (`sides` None: the result is one side)."""
        merged: dict[str, Side] = {}
        stats: dict[str, int] = {}
        for offset, index in self._each():
            raw = call(index)
            del index  # the next shard is opened only once this one is released
            _add_stats(stats, raw["stats"])
            for name in sides or ("",):
                side = shift_rows(unpack_side(raw[name] if name else raw, n), offset)
                merged[name] = merge_side(merged[name], side) if name in merged else side
        if sides is None:
            return {**pack_side(merged[""]), "stats": stats}
        return {**{name: pack_side(merged[name]) for name in sides}, "stats": stats}

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """Source, target and pair exposure of each test segment over every shard."""
        out = self._merged(
            lambda ix: ix.audit(sources, refs, search, threads),
            len(sources),
            _SIDES,
        )
        return out  # type: ignore[return-value]

    def search_source(
        self,
        queries: Sequence[str],
        search: SearchSettings,
        threads: int | None = None,
    ) -> SourceSearch:
        """Source exposure of each query over every shard."""
        out = self._merged(
            lambda ix: ix.search_source(queries, search, threads),
            len(queries),
            None,
        )
        return out  # type: ignore[return-value]

    def search_target(
        self,
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> TargetSearch:
        """Target exposure of each query's references over every shard."""
        out = self._merged(
            lambda ix: ix.search_target(refs, search, threads),
            len(refs),
            None,
        )
        return out  # type: ignore[return-value]


class AnsweredAhead:
    """A `SearchIndex` that answers one known test set: every segment is audited in a single
    pass over `index` (one opening of each shard, however the test set is batched), and each
    batch is then looked up, by text, in those answers."""

    def __init__(
        self,
        index: Any,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> None:
        self.index = index
        n = len(sources)
        raw = index.audit(sources, refs, search, threads)
        self._sides = {name: unpack_side(raw[name], n) for name in _SIDES}
        self._stats: dict[str, int] = dict(raw["stats"])  # counted once, with the first batch
        self._segment = {
            (s, tuple(r)): i for i, (s, r) in enumerate(zip(sources, refs, strict=True))
        }
        self._source = {s: i for i, s in reversed(list(enumerate(sources)))}
        self._target = {tuple(r): i for i, r in reversed(list(enumerate(refs)))}

    def checksums(self) -> list[int]:
        """The checksums of the index that gave the answers."""
        return list(self.index.checksums())

    def _picked(self, at: list[int], sides: Sequence[str]) -> dict[str, Any]:
        rows = np.asarray(at, dtype=np.int64)
        out: dict[str, Any] = {
            name: pack_side({k: v[rows] for k, v in self._sides[name].items()}) for name in sides
        }
        out["stats"] = self._stats
        self._stats = dict.fromkeys(self._stats, 0)
        return out

    def _rows(self, found: dict[Any, int], keys: list[Any]) -> list[int]:
        missing = [k for k in keys if k not in found]
        if missing:
            raise ValueError(f"{len(missing)} texts were not among those answered ahead")
        return [found[k] for k in keys]

    def audit(
        self,
        sources: Sequence[str],
        refs: Sequence[Sequence[str]],
        search: SearchSettings,
        threads: int | None = None,
    ) -> AuditBuffers:
        """The answers of these segments (normalised texts, among those answered ahead)."""
        keys = [(s, tuple(r)) for s, r in zip(sources, refs, strict=True)]
        return self._picked(self._rows(self._segment, keys), _SIDES)  # type: ignore[return-value]

    def search_source(
        self, queries: Sequence[str], search: SearchSettings, threads: int | None = None
    ) -> SourceSearch:
        """The source side of these queries' answers."""
        out = self._picked(self._rows(self._source, list(queries)), ("source",))
        return {**out["source"], "stats": out["stats"]}  # type: ignore[typeddict-item]

    def search_target(
        self, refs: Sequence[Sequence[str]], search: SearchSettings, threads: int | None = None
    ) -> TargetSearch:
        """The target side of these references' answers."""
        out = self._picked(self._rows(self._target, [tuple(r) for r in refs]), ("target",))
        return {**out["target"], "stats": out["stats"]}  # type: ignore[typeddict-item]
