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
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.exposure import retrieval
from warehouse.exposure.config import AuditConfig, resolve_audit_config
from warehouse.exposure.retrieval import RetrievalIndex, build_index
from warehouse.store.corpora import get_corpus, training_texts

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

    def add(self, rows: int, stats: dict[str, int] | None) -> None:
        """Account for one batch."""
        with self.lock:
            self.rows += rows
            if stats:
                self.postings_visited += stats.get("postings_visited", 0)
                self.postings_total += stats.get("postings_total", 0)
                self.candidates_verified += stats.get("candidates_verified", 0)

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
    index: RetrievalIndex,
    config: AuditConfig,
    *,
    threads: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    total: int = 0,
) -> SearchCounters:
    """Register `tame_source_nn`, `tame_target_nn`, `tame_pair_nn` and `tame_exposure` on `con`."""
    counters = SearchCounters()
    options = {
        "config": config.normalization,
        "mode": config.mode,
        "rare_grams": config.rare_grams,
        "shortlist": config.shortlist,
        "threads": threads,
    }

    def refs_of(array: Any) -> list[list[str]]:
        return [refs or [""] for refs in _texts(array)]

    def tick(n: int, stats: dict[str, int] | None) -> None:
        counters.add(n, stats)
        if progress is not None:
            progress(counters.rows, total)

    def source_nn(src: Any) -> pa.Array:
        out = retrieval.search_source(index, _texts(src), **options)
        tick(len(src), out.get("stats"))
        return pa.StructArray.from_arrays(
            [
                pa.array(out[k], t.type)
                for k, t in zip(("exposure", "nn", "exact"), _SOURCE, strict=True)
            ],
            fields=list(_SOURCE),
        )

    def target_nn(refs: Any) -> pa.Array:
        out = retrieval.search_target(index, refs_of(refs), **options)
        tick(len(refs), out.get("stats"))
        keys = ("exposure", "nn", "ref_idx", "exact")
        return pa.StructArray.from_arrays(
            [pa.array(out[k], t.type) for k, t in zip(keys, _TARGET, strict=True)],
            fields=list(_TARGET),
        )

    def everything(src: Any, refs: Any) -> dict[str, list[Any]]:
        out = retrieval.audit(index, _texts(src), refs_of(refs), **options)
        tick(len(src), out.get("stats"))
        return out

    def pair_nn(src: Any, refs: Any) -> pa.Array:
        out = everything(src, refs)
        return pa.StructArray.from_arrays(
            [
                pa.array(out["pair_exposure"], pa.float64()),
                pa.array(out["pair_nn"], pa.int64()),
                pa.array(out["pair_exact"], pa.bool_()),
            ],
            fields=list(_SOURCE),
        )

    def exposure(src: Any, refs: Any) -> pa.Array:
        out = everything(src, refs)
        return pa.StructArray.from_arrays(
            [pa.array(out[name], kind) for name, kind in _ALL_FIELDS], fields=list(_ALL)
        )

    for name, fn, params, struct in (
        ("tame_source_nn", source_nn, ["VARCHAR"], _SOURCE),
        ("tame_target_nn", target_nn, ["VARCHAR[]"], _TARGET),
        ("tame_pair_nn", pair_nn, ["VARCHAR", "VARCHAR[]"], _SOURCE),
        (EXPOSURE_FUNCTION, exposure, ["VARCHAR", "VARCHAR[]"], _ALL),
    ):
        with contextlib.suppress(duckdb.InvalidInputException):  # not registered yet
            con.remove_function(name)
        con.create_function(name, fn, params, _duckdb_type(struct), type="arrow")
    return counters


def register_training_corpus(
    con: duckdb.DuckDBPyConnection,
    train_name: str,
    config: AuditConfig | None = None,
    *,
    threads: int | None = None,
) -> SearchCounters:
    """Build the index of a registered training corpus and register the functions on `con`."""
    config = config or resolve_audit_config(con)
    sources, targets = training_texts(con, get_corpus(con, train_name, "train").corpus_id)
    index = build_index(sources, targets, config.orders, config.normalization, threads)
    return register_exposure_functions(con, index, config, threads=threads)
