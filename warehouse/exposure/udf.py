"""The Rust retrieval engine as DuckDB scalar functions bound to a built index.

Register on any connection, then use the functions in plain SQL:

    from warehouse.exposure.udf import register_training_corpus
    register_training_corpus(con, "my-train")          # builds the index, registers functions
    con.sql("SELECT src, tame_source_nn(src) FROM my_table")

Functions (all vectorised over Arrow batches; normalisation is applied to their input):
`tame_source_nn(src VARCHAR)` → STRUCT(exposure DOUBLE, nn BIGINT, exact BOOLEAN);
`tame_target_nn(refs VARCHAR[])` → STRUCT(exposure DOUBLE, nn BIGINT, ref_idx INTEGER,
exact BOOLEAN); `tame_pair_nn(src VARCHAR, refs VARCHAR[])` → STRUCT(exposure DOUBLE, nn BIGINT,
exact BOOLEAN); `tame_exposure(src VARCHAR, refs VARCHAR[])` → all sides in one struct.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from duckdb.func import PythonUDFType

from warehouse.exposure.config import AuditConfig, AuditOptions
from warehouse.exposure.index import retrieval
from warehouse.exposure.index.retrieval import Exposures, SearchIndex, build_index
from warehouse.store.corpora import get_corpus, training_columns

if TYPE_CHECKING:
    from warehouse._native import SearchStats

EXPOSURE_FUNCTION = "tame_exposure"

_SOURCE = pa.struct([("exposure", pa.float64()), ("nn", pa.int64()), ("exact", pa.bool_())])
_TARGET = pa.struct(
    [("exposure", pa.float64()), ("nn", pa.int64()), ("ref_idx", pa.int32()), ("exact", pa.bool_())]
)
_ALL_FIELDS = [
    ("source_exposure", pa.float64()),
    ("source_nn", pa.int64()),
    ("source_exact", pa.bool_()),
    ("target_exposure", pa.float64()),
    ("target_nn", pa.int64()),
    ("target_ref_idx", pa.int32()),
    ("target_exact", pa.bool_()),
    ("pair_exposure", pa.float64()),
    ("pair_nn", pa.int64()),
    ("pair_exact", pa.bool_()),
]
_ALL = pa.struct(_ALL_FIELDS)


def _duckdb_type(struct: pa.StructType) -> str:
    """DuckDB spelling of an Arrow struct type."""
    names = {
        pa.float64(): "DOUBLE",
        pa.int64(): "BIGINT",
        pa.int32(): "INTEGER",
        pa.bool_(): "BOOLEAN",
    }
    return "STRUCT(" + ", ".join(f"{f.name} {names[f.type]}" for f in struct) + ")"


@dataclass
class SearchCounters:
    """Rows searched and postings visited, summed over every call of the registered functions."""

    rows: int = 0
    postings_visited: int = 0
    postings_total: int = 0
    candidates_verified: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rows: int, stats: SearchStats) -> None:
        """Account for one batch."""
        with self.lock:
            self.rows += rows
            self.postings_visited += stats["postings_visited"]
            self.postings_total += stats["postings_total"]
            self.candidates_verified += stats["candidates_verified"]

    def postings(self) -> dict[str, int]:
        """JSON-ready counters."""
        return {
            "visited": self.postings_visited,
            "total": self.postings_total,
            "candidates_verified": self.candidates_verified,
        }


def _texts(array: Any) -> list[Any]:
    """Python values of an Arrow (chunked) array."""
    return array.to_pylist()


def register_exposure_functions(
    con: duckdb.DuckDBPyConnection,
    index: SearchIndex,
    config: AuditConfig,
    *,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    total: int = 0,
) -> SearchCounters:
    """Register `tame_source_nn`, `tame_target_nn`, `tame_pair_nn` and `tame_exposure` on `con`."""
    counters = SearchCounters()
    # The trailing arguments of every search: normalisation, search settings and threads.
    settings = (config.normalization, config.search, threads)

    def refs_of(array: Any) -> list[list[str]]:
        return [refs or [""] for refs in _texts(array)]

    def tick(n: int, stats: SearchStats) -> None:
        counters.add(n, stats)
        if progress is not None:
            progress(counters.rows, total)

    def source_nn(src: Any) -> pa.Array:
        out = retrieval.source_exposures(index, _texts(src), *settings)
        tick(len(src), out.stats)
        return pa.StructArray.from_arrays(
            [out.columns[f.name] for f in _SOURCE], fields=list(_SOURCE)
        )

    def target_nn(refs: Any) -> pa.Array:
        out = retrieval.target_exposures(index, refs_of(refs), *settings)
        tick(len(refs), out.stats)
        return pa.StructArray.from_arrays(
            [out.columns[f.name] for f in _TARGET], fields=list(_TARGET)
        )

    def everything(src: Any, refs: Any) -> Exposures:
        out = retrieval.audit_exposures(index, _texts(src), refs_of(refs), *settings)
        tick(len(src), out.stats)
        return out

    def pair_nn(src: Any, refs: Any) -> pa.Array:
        columns = everything(src, refs).columns
        return pa.StructArray.from_arrays(
            [columns["pair_exposure"], columns["pair_nn"], columns["pair_exact"]],
            fields=list(_SOURCE),
        )

    def exposure(src: Any, refs: Any) -> pa.Array:
        columns = everything(src, refs).columns
        return pa.StructArray.from_arrays(
            [columns[name] for name, _ in _ALL_FIELDS], fields=list(_ALL)
        )

    # (name, function, parameter types, result struct)
    functions: list[tuple[str, Callable[..., pa.Array], list[Any], pa.StructType]] = [
        ("tame_source_nn", source_nn, ["VARCHAR"], _SOURCE),
        ("tame_target_nn", target_nn, ["VARCHAR[]"], _TARGET),
        ("tame_pair_nn", pair_nn, ["VARCHAR", "VARCHAR[]"], _SOURCE),
        (EXPOSURE_FUNCTION, exposure, ["VARCHAR", "VARCHAR[]"], _ALL),
    ]
    for name, fn, params, struct in functions:
        with contextlib.suppress(duckdb.InvalidInputException):  # not registered yet
            con.remove_function(name)
        con.create_function(name, fn, params, _duckdb_type(struct), type=PythonUDFType.ARROW)
    return counters


def register_training_corpus(
    con: duckdb.DuckDBPyConnection,
    train_name: str,
    config: AuditConfig | None = None,
    *,
    threads: int | None = None,
) -> SearchCounters:
    """Build the index of a registered training corpus and register the functions on `con`."""
    config = config or AuditOptions().resolve(con, train_name=train_name)
    sources, targets = training_columns(con, get_corpus(con, train_name, "train").corpus_id)
    index = build_index(sources, targets, config.orders, config.normalization, threads)
    return register_exposure_functions(con, index, config, threads=threads)
