"""The corpora table: registering training corpora and test sets, finding and listing them,
reading their texts back."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from warehouse import __version__
from warehouse.basics import Notify, listing, silent, suggestion, utc_now
from warehouse.errors import UsageError
from warehouse.store.connection import transaction
from warehouse.store.purge import delete_corpus, dependents

if TYPE_CHECKING:  # read-only commands (leaderboard, report) need neither Arrow nor NumPy
    import pyarrow as pa

    from warehouse.inputs.corpus_files import CorpusData


ROLES = ("train", "test")


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

    @property
    def kind(self) -> str:
        """ "parallel", or "text" for documents and monolingual text (`corpus add --text`)."""
        return str(self.meta.get("kind", "parallel"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "kind": self.kind}


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
    corpus_id, name, role, src_lang, tgt_lang, n_segments, n_refs, sha256, added_at, meta = row
    return CorpusInfo(
        corpus_id,
        name,
        role,
        src_lang,
        tgt_lang,
        n_segments,
        n_refs,
        sha256,
        added_at,
        meta=json.loads(meta) if meta else {},
    )


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


@dataclass(frozen=True)
class Replacement:
    """What registering a corpus under a taken name would remove."""

    name: str
    role: str
    corpus_id: str
    audit_ids: list[str]
    run_ids: list[str]

    def describe(self) -> str:
        """One line for people."""
        return (
            f"--replace removes {_role_label(self.role)} {self.name!r} (id {self.corpus_id}), "
            f"its segments, {len(self.audit_ids)} audit(s) and {len(self.run_ids)} run(s)"
            + (f": runs {', '.join(self.run_ids[:10])}" if self.run_ids else "")
            + (", ..." if len(self.run_ids) > 10 else "")
        )


def replacement_plan(con: duckdb.DuckDBPyConnection, data: CorpusData) -> Replacement | None:
    """What `add_corpus(..., replace=True)` would remove, or None when it removes nothing."""
    by_name = _find(con, "name", data.name)
    if by_name is None or by_name.corpus_id == data.corpus_id or by_name.role != data.role:
        return None
    audit_ids, run_ids = dependents(con, by_name.corpus_id)
    return Replacement(by_name.name, by_name.role, by_name.corpus_id, audit_ids, run_ids)


def add_corpus(
    con: duckdb.DuckDBPyConnection,
    data: CorpusData,
    *,
    replace: bool = False,
    notify: Notify = silent,
    confirmed: Replacement | None = None,
) -> AddResult:
    """Register a corpus in one transaction; identical content is a no-op, new needs `replace`.

    With `confirmed` (the plan a user agreed to), a replacement that would now remove anything
    else is refused.
    """
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
        twin = _same_texts(con, data)
        if twin is not None and twin.name != data.name:
            _refuse_twin(data, twin, notify)
        removed = (0, 0)
        if by_name is not None:
            if by_name.role != data.role:
                raise UsageError(
                    f"{data.name!r} is already a {_role_label(by_name.role)}; "
                    f"choose another name for this {label}"
                )
            if not replace and twin is not None and _labels(twin) != _labels(data):
                raise UsageError(
                    f"{label} {data.name!r} already holds these texts, labelled "
                    f"{_labels(twin)}; the files are labelled {_labels(data)}: pass --replace "
                    "to relabel it (its runs and audits are removed)"
                )
            if not replace:
                raise UsageError(
                    f"{label} {data.name!r} already exists with different content "
                    f"(id {by_name.corpus_id}); pass --replace to overwrite it"
                )
            audit_ids, run_ids = dependents(con, by_name.corpus_id)
            if confirmed is not None and (
                confirmed.corpus_id,
                sorted(confirmed.audit_ids),
                sorted(confirmed.run_ids),
            ) != (by_name.corpus_id, sorted(audit_ids), sorted(run_ids)):
                raise UsageError(
                    f"{label} {data.name!r} or what depends on it changed since the replacement "
                    "was confirmed; nothing was replaced, run the command again"
                )
            removed = (len(audit_ids), len(run_ids))
            notify(
                f"replacing {label} {data.name!r} (id {by_name.corpus_id}): removing "
                f"{removed[0]} dependent audit(s) and {removed[1]} run(s)"
            )
            delete_corpus(con, by_name.corpus_id)
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


def _same_texts(con: duckdb.DuckDBPyConnection, data: CorpusData) -> CorpusInfo | None:
    """The stored test set with exactly these sources and references, whatever its name,
    languages and segment ids (a test set is its texts)."""
    if data.role != "test":
        return None
    candidates = con.execute(
        f"SELECT {_CORPUS_COLUMNS} FROM corpora WHERE role = 'test' AND n_segments = ? "
        "AND n_refs = ? ORDER BY added_at",
        [data.n_segments, len(data.refs)],
    ).fetchall()
    wanted = [list(r) for r in zip(*data.refs, strict=True)] if data.refs else [[]] * len(data.src)
    for row in candidates:
        info = _row_to_info(row)
        src, refs = corpus_texts(con, info.corpus_id)
        if src == data.src and [list(r or []) for r in refs] == wanted:
            return info
    return None


def _labels(corpus: CorpusInfo | CorpusData) -> str:
    """A corpus's language labels as `src→tgt` (`?` for a missing one)."""
    return f"{corpus.src_lang or '?'}→{corpus.tgt_lang or '?'}"


def _refuse_twin(data: CorpusData, twin: CorpusInfo, notify: Notify) -> None:
    """Refuse the texts of a stored test set under a second name: its runs would split across
    two boards. A label mismatch is said on its own line first."""
    labelled = (data.src_lang, data.tgt_lang) != (twin.src_lang, twin.tgt_lang)
    if labelled:
        notify(
            f"warning: the files are labelled {_labels(data)}, test set {twin.name!r} "
            f"{_labels(twin)}"
        )
    raise UsageError(
        f"the same sources and references are already test set {twin.name!r} (id "
        f"{twin.corpus_id}{', other language labels' if labelled else ''}); use that name, "
        f"or `tame-wh testset rename {twin.name} {data.name}`"
    )


def add_corpus_row(con: duckdb.DuckDBPyConnection, data: CorpusData) -> None:
    """Insert a new corpus row and bulk-load its segments from Arrow (no checks, no transaction)."""
    meta: dict[str, Any] = {"files": data.files, "loaded_by": f"tame-wh {__version__}"}
    if data.kind != "parallel":
        meta["kind"] = data.kind
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
            utc_now(),
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
        hint = f"; known: {listing(known)}" if known else "; none registered yet"
        raise UsageError(f"unknown {label} {name!r}{suggestion(name, known)}{hint}")
    return info


def corpus_texts(
    con: duckdb.DuckDBPyConnection, corpus_id: str
) -> tuple[list[str], list[list[str]]]:
    """Sources and reference lists of a corpus in line order (training: one reference each)."""
    table = con.execute(
        "SELECT src, refs FROM segments WHERE corpus_id = ? ORDER BY seg_idx", [corpus_id]
    ).to_arrow_table()
    return table.column("src").to_pylist(), table.column("refs").to_pylist()


def training_columns(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rows: tuple[int, int] | None = None
) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """Sources and targets of a training corpus in line order (only lines `start <= i < stop`
    when `rows` is given), as Arrow string columns: no Python string per line."""
    start, stop = rows if rows is not None else (0, None)
    # No ORDER BY: DuckDB would sort (and hold) every text to order lines that a scan returns
    # in insertion order, which is line order unless the table was rewritten; checked here.
    table = con.execute(
        "SELECT seg_idx, src, refs[1] AS tgt FROM segments WHERE corpus_id = ? AND seg_idx >= ? "
        "AND (? IS NULL OR seg_idx < ?)",
        [corpus_id, start, stop, stop],
    ).to_arrow_table()
    # In numpy: pyarrow.compute's first call imports pandas (about 0.4 s).
    order = table.column("seg_idx").to_numpy()
    if len(order) > 1 and not bool((order[1:] > order[:-1]).all()):
        table = table.take(np.argsort(order, kind="stable"))
    return table.column("src"), table.column("tgt")


def training_texts(
    con: duckdb.DuckDBPyConnection, corpus_id: str, rows: tuple[int, int] | None = None
) -> tuple[list[str], list[str]]:
    """Sources and targets of a training corpus in line order (only lines `start <= i < stop`
    when `rows` is given)."""
    sources, targets = training_columns(con, corpus_id, rows)
    return sources.to_pylist(), targets.to_pylist()


def training_lines(
    con: duckdb.DuckDBPyConnection, corpus_id: str, lines: range
) -> tuple[list[str], list[str]]:
    """Sources and targets of the evenly spaced `lines` of a training corpus, in line order.

    The filter is on the line number alone, so the texts of other lines are never read (a list
    of lines to join with would read every text)."""
    if lines.step <= 0:
        raise ValueError(f"lines must ascend, got {lines}")
    table = con.execute(
        "SELECT src, refs[1] AS tgt FROM segments WHERE corpus_id = ? "
        "AND seg_idx >= ? AND seg_idx < ? AND (seg_idx - ?) % ? = 0 ORDER BY seg_idx",
        [corpus_id, lines.start, lines.stop, lines.start, lines.step],
    ).to_arrow_table()
    return table.column("src").to_pylist(), table.column("tgt").to_pylist()


def longest_row(con: duckdb.DuckDBPyConnection, corpus_id: str) -> tuple[int, int, int]:
    """The training corpus's longest side of a row: (its line, characters, UTF-8 bytes)."""
    row = con.execute(
        "SELECT seg_idx, greatest(length(src), length(refs[1])), "
        "greatest(strlen(src), strlen(refs[1])) FROM segments WHERE corpus_id = ? "
        "ORDER BY 3 DESC, 1 LIMIT 1",
        [corpus_id],
    ).fetchone()
    return (int(row[0]), int(row[1] or 0), int(row[2] or 0)) if row else (0, 0, 0)


def training_text_bytes(con: duckdb.DuckDBPyConnection, corpus_id: str) -> int:
    """UTF-8 bytes of a training corpus's sources and targets together."""
    rows = con.execute(
        "SELECT coalesce(sum(strlen(src)) + sum(strlen(refs[1])), 0) FROM segments "
        "WHERE corpus_id = ?",
        [corpus_id],
    ).fetchall()
    return int(rows[0][0]) if rows else 0


@dataclass(frozen=True)
class CorpusDeletion:
    """A training corpus or test set removed (or, dry, to be removed) with what depends on it."""

    corpus: CorpusInfo
    audit_ids: list[str]
    run_ids: list[str]
    dry_run: bool

    def describe(self) -> str:
        """One line for people."""
        info = self.corpus
        verb = "would delete" if self.dry_run else "deleted"
        return (
            f"{verb} {_role_label(info.role)} {info.name!r} (id {info.corpus_id}), its "
            f"{info.n_segments} segments, {len(self.audit_ids)} audit(s) and "
            f"{len(self.run_ids)} run(s)"
            + (f": runs {', '.join(self.run_ids[:10])}" if self.run_ids else "")
            + (", ..." if len(self.run_ids) > 10 else "")
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "corpus": self.corpus.to_dict(),
            "audit_ids": self.audit_ids,
            "run_ids": self.run_ids,
            "dry_run": self.dry_run,
        }


def deletion_plan(con: duckdb.DuckDBPyConnection, name: str, role: str) -> CorpusDeletion:
    """What deleting the corpus `name` of `role` removes (nothing is changed)."""
    info = get_corpus(con, name, role)
    audit_ids, run_ids = dependents(con, info.corpus_id)
    return CorpusDeletion(info, audit_ids, run_ids, dry_run=True)


def delete_named_corpus(
    con: duckdb.DuckDBPyConnection,
    name: str,
    role: str,
    *,
    confirmed: CorpusDeletion | None = None,
) -> CorpusDeletion:
    """Delete the corpus `name` of `role`, its segments and every audit and run that depends on
    it, in one transaction; with `confirmed` (the plan a user agreed to), a deletion that would
    now remove anything else is refused."""
    with transaction(con):
        plan = deletion_plan(con, name, role)
        if confirmed is not None and (
            plan.corpus.corpus_id != confirmed.corpus.corpus_id
            or set(plan.audit_ids) != set(confirmed.audit_ids)
            or set(plan.run_ids) != set(confirmed.run_ids)
        ):
            raise UsageError(
                f"{_role_label(role)} {name!r} changed since the deletion was confirmed "
                "(another process wrote it); nothing was deleted, run the command again"
            )
        delete_corpus(con, plan.corpus.corpus_id)
    return CorpusDeletion(plan.corpus, plan.audit_ids, plan.run_ids, dry_run=False)


def rename_corpus(
    con: duckdb.DuckDBPyConnection, name: str, new_name: str, role: str
) -> CorpusInfo:
    """Give the corpus `name` of `role` the name `new_name` (its id, runs and audits stay)."""
    from warehouse.inputs.corpus_files import validate_name

    validate_name(new_name)
    with transaction(con):
        info = get_corpus(con, name, role)
        taken = _find(con, "name", new_name)
        if taken is not None:
            raise UsageError(
                f"the name {new_name!r} is taken by {_role_label(taken.role)} "
                f"(id {taken.corpus_id}); nothing was renamed"
            )
        con.execute("UPDATE corpora SET name = ? WHERE corpus_id = ?", [new_name, info.corpus_id])
    return get_corpus(con, new_name, role)
