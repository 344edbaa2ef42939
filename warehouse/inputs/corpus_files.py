"""Corpus files: a training corpus or test set read from text files, validated and content-hashed,
before anything touches the warehouse."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from warehouse.basics import short_id
from warehouse.errors import InputError, UsageError
from warehouse.inputs.segment_meta import SegmentMeta, read_segment_meta
from warehouse.inputs.textio import check_aligned, read_jsonl, read_lines

_LANG = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$")


def name_problem(name: str) -> str | None:
    """Why a corpus or test-set name is unusable, or None: 1-200 printable characters without
    surrounding spaces."""
    if not name or name != name.strip() or len(name) > 200:
        shown = repr(name) if len(name) <= 60 else f"{name[:40]!r}… ({len(name):,} characters)"
        return f"invalid name {shown}: use 1-200 characters without surrounding spaces"
    if not name.isprintable():
        return f"invalid name {name[:60]!r}: control characters are not allowed"
    return None


def validate_name(name: str) -> str:
    """A corpus name: 1-200 printable characters without surrounding spaces."""
    problem = name_problem(name)
    if problem:
        raise UsageError(problem)
    return name


def normalize_lang(code: str) -> str:
    """A language tag in BCP 47's case conventions: `EN` → `en`, `es_es` → `es-ES`,
    `zh_hant_tw` → `zh-Hant-TW` (underscores become hyphens)."""
    parts = re.split(r"[-_]", code)
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            out.append(part.title())  # script
        elif (len(part) == 2 and part.isalpha()) or (len(part) == 3 and part.isdigit()):
            out.append(part.upper())  # region
        else:
            out.append(part.lower())
    return "-".join(out)


def validate_lang(code: str | None, option: str) -> str | None:
    """A language code such as `en`, `crk` or `pt-BR` (normalised by `normalize_lang`), or
    None."""
    if code is None:
        return None
    if not _LANG.match(code):
        raise UsageError(f"{option}: {code!r} is not a language code (e.g. en, crk, pt-BR)")
    return normalize_lang(code)


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
    # "parallel" (aligned pairs or a test set) or "text": documents or monolingual text, whose
    # one text serves as both sides of the training index (`read_text_corpus`).
    kind: str = "parallel"

    def __post_init__(self) -> None:
        if not self.sha256:
            self.sha256 = self._content_hash()

    @property
    def corpus_id(self) -> str:
        """The content id: the first 16 hex digits of the content hash."""
        return short_id(self.sha256)

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
        if self.kind != "parallel":  # the ids of parallel corpora stay what they were
            header["kind"] = self.kind
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


TEXT_FORMATS = ("lines", "jsonl")


def read_text_corpus(
    name: str, path: str | Path, lang: str | None = None, fmt: str | None = None
) -> CorpusData:
    """Read documents or monolingual text as a training corpus: one document per line
    (`lines`), or JSON Lines whose objects hold a string `text` (`jsonl`, the default for a
    .jsonl or .ndjson file, gzipped or not)."""
    validate_name(name)
    lang = validate_lang(lang, "--lang")
    plain = str(path).lower().removesuffix(".gz")
    fmt = fmt or ("jsonl" if plain.endswith((".jsonl", ".ndjson")) else "lines")
    if fmt not in TEXT_FORMATS:
        raise UsageError(f"--format: expected one of {', '.join(TEXT_FORMATS)}, got {fmt!r}")
    if fmt == "lines":
        docs = read_lines(path)
    else:
        docs = []
        for number, record in enumerate(read_jsonl(path), start=1):
            text = record.get("text")
            if not isinstance(text, str):
                raise InputError('expected a string field "text"', str(path), number)
            docs.append(text)
    files = {"text": {**_file_info(path), "format": fmt}}
    return CorpusData(name, "train", docs, [docs], lang, lang, None, files, kind="text")


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


def read_test_set_table(
    name: str,
    path: str | Path,
    *,
    src_col: str,
    ref_cols: Sequence[str],
    id_col: str | None = None,
    fmt: str | None = None,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
) -> CorpusData:
    """Read a test set from a table (Parquet, JSON Lines, CSV, TSV): a source column, one or more
    reference columns, optionally an id column; the same texts as plain files give the same
    test set."""
    from warehouse.inputs.tables import read_table

    validate_name(name)
    if not ref_cols:
        raise UsageError("a test set needs at least one reference column (--ref-col)")
    src_lang = validate_lang(src_lang, "--src-lang")
    tgt_lang = validate_lang(tgt_lang, "--tgt-lang")
    table = read_table(path, fmt)
    src = table.texts(src_col)
    refs = [table.texts(column) for column in ref_cols]
    meta = None
    if id_col is not None:
        n = len(src)
        meta = SegmentMeta(list(table.keys(id_col)), [None] * n, [None] * n, [None] * n)
    columns = {"src": src_col, "refs": list(ref_cols), **({"id": id_col} if id_col else {})}
    files: dict[str, Any] = {"table": {**_file_info(path), "columns": columns}}
    return CorpusData(name, "test", src, refs, src_lang, tgt_lang, meta, files)
