"""Training corpora and test sets: reading, content ids, bulk loading through Arrow, listing."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from warehouse import __version__
from warehouse.connection import transaction
from warehouse.errors import UsageError
from warehouse.segment_meta import SegmentMeta, read_segment_meta
from warehouse.textio import check_aligned, read_lines

Notify = Callable[[str], None]

ROLES = ("train", "test")
_LANG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$")
_ID_LENGTH = 16


def _silent(_message: str) -> None:
    """Default notifier: say nothing."""


def validate_name(name: str) -> str:
    """A corpus name: 1-200 printable characters without surrounding spaces."""
    if not name or name != name.strip() or len(name) > 200:
        raise UsageError(f"invalid name {name!r}: use 1-200 characters without surrounding spaces")
    if any(not ch.isprintable() for ch in name):
        raise UsageError(f"invalid name {name!r}: control characters are not allowed")
    return name


def validate_lang(code: str | None, option: str) -> str | None:
    """A language code such as `en`, `crk` or `pt-BR`, or None."""
    if code is None:
        return None
    if not _LANG.match(code):
        raise UsageError(f"{option}: {code!r} is not a language code (e.g. en, crk, pt-BR)")
    return code


@dataclass
class CorpusData:
    """A corpus read from files and validated, ready to be loaded; nothing touched the warehouse."""

    name: str
    role: str
    src: list[str]
    refs: list[list[str]]  # one list per reference stream, each aligned with src
    src_lang: str | None = None
    tgt_lang: str | None = None
    seg_meta: SegmentMeta | None = None
    files: dict[str, Any] = field(default_factory=dict)
    sha256: str = ""

    def __post_init__(self) -> None:
        if not self.sha256:
            self.sha256 = self._content_hash()

    @property
    def corpus_id(self) -> str:
        """The content id: the first 16 hex digits of the content hash."""
        return self.sha256[:_ID_LENGTH]

    @property
    def n_segments(self) -> int:
        """Number of segments (lines)."""
        return len(self.src)

    def _content_hash(self) -> str:
        """sha256 over role, languages, every text stream and the segment metadata."""
        header = {
            "format": 1,
            "role": self.role,
            "src_lang": self.src_lang,
            "tgt_lang": self.tgt_lang,
            "n_segments": len(self.src),
            "n_refs": len(self.refs),
        }
        digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode())
        for stream in (self.src, *self.refs):
            digest.update(hashlib.sha256("\n".join(stream).encode("utf-8")).digest())
        if self.seg_meta is not None:
            digest.update(hashlib.sha256(self.seg_meta.canonical().encode("utf-8")).digest())
        return digest.hexdigest()

    def to_arrow(self) -> pa.Table:
        """The segments as an Arrow table in the column order of the `segments` table."""
        n = len(self.src)
        k = len(self.refs)
        flat = pa.concat_arrays([pa.array(ref, pa.large_string()) for ref in self.refs])
        if k > 1:
            order = (np.arange(n)[:, None] + np.arange(k)[None, :] * n).ravel()
            flat = flat.take(pa.array(order))
        refs = pa.LargeListArray.from_arrays(
            pa.array(np.arange(0, n * k + 1, k, dtype=np.int64)), flat
        )
        meta = self.seg_meta
        return pa.table(
            {
                "seg_idx": pa.array(np.arange(n, dtype=np.int64)),
                "seg_key": pa.array(meta.keys if meta else [None] * n, pa.string()),
                "src": pa.array(self.src, pa.large_string()),
                "refs": refs,
                "difficulty": pa.array(meta.difficulty if meta else [None] * n, pa.int8()),
                "provenance": pa.array(meta.provenance if meta else [None] * n, pa.string()),
                "meta": pa.array(meta.extra if meta else [None] * n, pa.string()),
            }
        )


def _file_info(path: str | Path) -> dict[str, Any]:
    """Where a file came from, for the corpus metadata."""
    p = Path(path)
    return {"path": str(p.resolve()), "bytes": p.stat().st_size}


def read_training_corpus(
    name: str,
    src_path: str | Path,
    tgt_path: str | Path,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
) -> CorpusData:
    """Read and validate a parallel training corpus from two aligned text files."""
    validate_name(name)
    src_lang = validate_lang(src_lang, "--src-lang")
    tgt_lang = validate_lang(tgt_lang, "--tgt-lang")
    src = read_lines(src_path)
    tgt = read_lines(tgt_path)
    check_aligned({str(src_path): src, str(tgt_path): tgt})
    files = {"src": _file_info(src_path), "tgt": _file_info(tgt_path)}
    return CorpusData(name, "train", src, [tgt], src_lang, tgt_lang, None, files)


def read_test_set(
    name: str,
    src_path: str | Path,
    ref_paths: list[str | Path],
    segments_meta: str | Path | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
) -> CorpusData:
    """Read and validate a test set: sources, one or more references, optional segment metadata."""
    validate_name(name)
    if not ref_paths:
        raise UsageError("a test set needs at least one reference file (--ref)")
    src_lang = validate_lang(src_lang, "--src-lang")
    tgt_lang = validate_lang(tgt_lang, "--tgt-lang")
    src = read_lines(src_path)
    refs = [read_lines(path) for path in ref_paths]
    check_aligned({str(src_path): src, **{str(p): r for p, r in zip(ref_paths, refs, strict=True)}})
    meta = read_segment_meta(segments_meta, len(src)) if segments_meta is not None else None
    files: dict[str, Any] = {
        "src": _file_info(src_path),
        "refs": [_file_info(p) for p in ref_paths],
    }
    if segments_meta is not None:
        files["segments_meta"] = _file_info(segments_meta)
    return CorpusData(name, "test", src, refs, src_lang, tgt_lang, meta, files)


@dataclass(frozen=True)
class CorpusInfo:
    """One row of the `corpora` table."""

    corpus_id: str
    name: str
    role: str
    src_lang: str | None
    tgt_lang: str | None
    n_segments: int
    n_refs: int
    sha256: str
    added_at: str
    meta: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class AddResult:
    """What `add_corpus` did: `added`, `unchanged` or `replaced`."""

    action: str
    corpus: CorpusInfo
    removed_audits: int = 0
    removed_runs: int = 0
    replaced_corpus_id: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = asdict(self)
        out["corpus"] = self.corpus.to_dict()
        return out


_CORPUS_COLUMNS = (
    "corpus_id, name, role, src_lang, tgt_lang, n_segments, n_refs, sha256, "
    "strftime(added_at, '%Y-%m-%dT%H:%M:%SZ'), meta"
)


def _row_to_info(row: tuple[Any, ...]) -> CorpusInfo:
    """Build a CorpusInfo from a `_CORPUS_COLUMNS` row."""
    *head, meta = row
    return CorpusInfo(*head, meta=json.loads(meta) if meta else {})


def _find(con: duckdb.DuckDBPyConnection, column: str, value: str) -> CorpusInfo | None:
    """The corpus whose `column` (name or corpus_id) equals `value`."""
    assert column in ("name", "corpus_id")
    row = con.execute(
        f"SELECT {_CORPUS_COLUMNS} FROM corpora WHERE {column} = ?", [value]
    ).fetchone()
    return _row_to_info(row) if row else None


def _role_label(role: str) -> str:
    """Human name of a role."""
    return "training corpus" if role == "train" else "test set"


def count_dependents(con: duckdb.DuckDBPyConnection, corpus_id: str) -> tuple[int, int]:
    """Audits and runs that reference a corpus."""
    audits = con.execute(
        "SELECT count(*) FROM audits WHERE test_corpus_id = ? OR train_corpus_id = ?",
        [corpus_id, corpus_id],
    ).fetchone()
    runs = con.execute("SELECT count(*) FROM runs WHERE test_corpus_id = ?", [corpus_id]).fetchone()
    return (audits[0] if audits else 0, runs[0] if runs else 0)


def _remove_corpus(con: duckdb.DuckDBPyConnection, corpus_id: str) -> None:
    """Delete a corpus, its segments, and every audit and run that depends on it."""
    audit_ids = "SELECT audit_id FROM audits WHERE test_corpus_id = ? OR train_corpus_id = ?"
    run_ids = "SELECT run_id FROM runs WHERE test_corpus_id = ?"
    for table in ("exposures", "tm_segment_stats", "run_bin_sums"):
        con.execute(f"DELETE FROM {table} WHERE audit_id IN ({audit_ids})", [corpus_id] * 2)
    con.execute(
        "DELETE FROM audits WHERE test_corpus_id = ? OR train_corpus_id = ?", [corpus_id] * 2
    )
    for table in (
        "hypotheses",
        "segment_stats",
        "metric_values",
        "run_intervals",
        "run_sums",
        "run_bin_sums",
    ):
        con.execute(f"DELETE FROM {table} WHERE run_id IN ({run_ids})", [corpus_id])
    con.execute("DELETE FROM runs WHERE test_corpus_id = ?", [corpus_id])
    con.execute("DELETE FROM segments WHERE corpus_id = ?", [corpus_id])
    con.execute("DELETE FROM corpora WHERE corpus_id = ?", [corpus_id])


def add_corpus(
    con: duckdb.DuckDBPyConnection,
    data: CorpusData,
    *,
    replace: bool = False,
    notify: Notify = _silent,
) -> AddResult:
    """Register a corpus in one transaction; identical content is a no-op, new needs `replace`."""
    started = time.perf_counter()
    label = _role_label(data.role)
    with transaction(con):
        by_name = _find(con, "name", data.name)
        if by_name is not None and by_name.corpus_id == data.corpus_id:
            return AddResult("unchanged", by_name, seconds=time.perf_counter() - started)
        by_id = _find(con, "corpus_id", data.corpus_id)
        if by_id is not None:
            raise UsageError(
                f"the same content is already registered as {_role_label(by_id.role)} "
                f"{by_id.name!r} (id {by_id.corpus_id})"
            )
        removed = (0, 0)
        if by_name is not None:
            if by_name.role != data.role:
                raise UsageError(
                    f"{data.name!r} is already a {_role_label(by_name.role)}; "
                    f"choose another name for this {label}"
                )
            if not replace:
                raise UsageError(
                    f"{label} {data.name!r} already exists with different content "
                    f"(id {by_name.corpus_id}); pass --replace to overwrite it"
                )
            removed = count_dependents(con, by_name.corpus_id)
            notify(
                f"replacing {label} {data.name!r} (id {by_name.corpus_id}): removing "
                f"{removed[0]} dependent audit(s) and {removed[1]} run(s)"
            )
            _remove_corpus(con, by_name.corpus_id)
        add_corpus_row(con, data)
        info = _find(con, "corpus_id", data.corpus_id)
        assert info is not None
    return AddResult(
        "replaced" if by_name is not None else "added",
        info,
        removed_audits=removed[0],
        removed_runs=removed[1],
        replaced_corpus_id=by_name.corpus_id if by_name is not None else None,
        seconds=time.perf_counter() - started,
    )


def add_corpus_row(con: duckdb.DuckDBPyConnection, data: CorpusData) -> None:
    """Insert a new corpus row and bulk-load its segments from Arrow (no checks, no transaction)."""
    meta = {"files": data.files, "loaded_by": f"tame-wh {__version__}"}
    con.execute(
        "INSERT INTO corpora VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            data.corpus_id,
            data.name,
            data.role,
            data.src_lang,
            data.tgt_lang,
            data.n_segments,
            len(data.refs),
            sum(map(len, data.src)),
            data.sha256,
            datetime.now(timezone.utc).replace(tzinfo=None),
            json.dumps(meta, ensure_ascii=False),
        ],
    )
    arrow_segments = data.to_arrow()
    con.register("_tame_new_segments", arrow_segments)
    try:
        con.execute(
            "INSERT INTO segments SELECT ?, seg_idx, coalesce(seg_key, CAST(seg_idx AS VARCHAR)), "
            "src, refs, difficulty, provenance, meta FROM _tame_new_segments",
            [data.corpus_id],
        )
    finally:
        con.unregister("_tame_new_segments")


def list_corpora(con: duckdb.DuckDBPyConnection, role: str | None = None) -> list[CorpusInfo]:
    """Registered corpora, optionally of one role, oldest first."""
    if role is not None and role not in ROLES:
        raise UsageError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    rows = con.execute(
        f"SELECT {_CORPUS_COLUMNS} FROM corpora WHERE ? IS NULL OR role = ? "
        "ORDER BY added_at, name",
        [role, role],
    ).fetchall()
    return [_row_to_info(row) for row in rows]


def get_corpus(con: duckdb.DuckDBPyConnection, name: str, role: str | None = None) -> CorpusInfo:
    """The corpus called `name` (of `role` when given); unknown names raise UsageError."""
    info = _find(con, "name", name)
    if info is None or (role is not None and info.role != role):
        label = _role_label(role) if role else "corpus or test set"
        known = [c.name for c in list_corpora(con, role)]
        hint = f"; known: {', '.join(known)}" if known else "; none registered yet"
        raise UsageError(f"unknown {label} {name!r}{hint}")
    return info


def corpus_texts(
    con: duckdb.DuckDBPyConnection, corpus_id: str
) -> tuple[list[str], list[list[str]]]:
    """Sources and reference lists of a corpus in line order (training: one reference each)."""
    table = con.execute(
        "SELECT src, refs FROM segments WHERE corpus_id = ? ORDER BY seg_idx", [corpus_id]
    ).to_arrow_table()
    return table.column("src").to_pylist(), table.column("refs").to_pylist()


def training_texts(con: duckdb.DuckDBPyConnection, corpus_id: str) -> tuple[list[str], list[str]]:
    """Sources and targets of a training corpus in line order."""
    table = con.execute(
        "SELECT src, refs[1] AS tgt FROM segments WHERE corpus_id = ? ORDER BY seg_idx",
        [corpus_id],
    ).to_arrow_table()
    sources = table.column("src").to_pylist()
    targets = table.column("tgt").to_pylist()
    return sources, targets
