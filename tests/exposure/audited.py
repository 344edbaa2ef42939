"""A warehouse holding a synthetic corpus as `train` and `test`, and its audits, for the exposure
tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from tests.exposure.synthetic_corpus import Corpus
from warehouse.exposure.audit import run_audit
from warehouse.exposure.config import AuditConfig
from warehouse.exposure.execution import Execution
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.store.corpora import add_corpus
from warehouse.store.schema import open_warehouse


def loaded_warehouse(
    db_path: Path,
    write_lines: Callable[[str, list[str]], str],
    corpus: Corpus,
    train: tuple[list[str], list[str]] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A warehouse at `db_path` with `corpus` registered: its training pairs (or `train`) as
    `train`, its test set as `test`."""
    src, tgt = train or (corpus.train_src, corpus.train_tgt)
    con = open_warehouse(db_path)
    add_corpus(
        con,
        read_training_corpus("train", write_lines("tr.src", src), write_lines("tr.tgt", tgt)),
    )
    refs = [write_lines(f"te.ref{k}", s) for k, s in enumerate(corpus.refs_by_stream())]
    add_corpus(con, read_test_set("test", write_lines("te.src", corpus.test_src), refs))
    return con


def audited(
    con: duckdb.DuckDBPyConnection,
    columns: str,
    config: AuditConfig | None = None,
    **execution: Any,
) -> tuple[list[tuple[Any, ...]], dict[str, float], list[str]]:
    """Run (or rerun) the audit of `test` against `train` as `execution` says: its exposure rows
    (`columns`, in segment order), its timings and what it said."""
    said: list[str] = []
    how = Execution(**execution)
    result = run_audit(con, "train", "test", config, how, force=True, notify=said.append)
    rows = con.execute(
        f"SELECT {columns} FROM exposures WHERE audit_id = ? ORDER BY seg_idx",
        [result.audit_id],
    ).fetchall()
    return rows, result.timings, said
