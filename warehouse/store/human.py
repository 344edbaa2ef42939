"""Human judgment sets stored: annotations attached to runs and segments, checked against the
stored hypotheses, written in one transaction (docs/human.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.basics import short_id, utc_now
from warehouse.errors import InputError, UsageError
from warehouse.inputs.human_files import NO_ERROR, Annotation, HumanFile
from warehouse.store.connection import transaction
from warehouse.store.corpora import get_corpus
from warehouse.store.purge import delete_human_sets


@dataclass(frozen=True)
class HumanSetResult:
    """What `add_human_set` did: the set, whether it was new, and what it holds."""

    set_id: str
    name: str
    test_set: str
    scheme: str
    added: bool
    n_judgments: int
    n_errors: int
    runs: dict[str, str]  # system → run id
    skipped: list[str] = field(default_factory=list)
    replaced: str | None = None
    warnings: list[str] = field(default_factory=list)  # what reading the file noticed

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "set_id": self.set_id,
            "name": self.name,
            "test_set": self.test_set,
            "scheme": self.scheme,
            "added": self.added,
            "n_judgments": self.n_judgments,
            "n_errors": self.n_errors,
            "runs": self.runs,
            "skipped_systems": self.skipped,
            "replaced": self.replaced,
            "warnings": self.warnings,
        }


def parse_system_map(pairs: Sequence[str]) -> dict[str, str]:
    """`SYSTEM=RUN` pairs (RUN a model slug or a run id) as a dict."""
    found: dict[str, str] = {}
    for pair in pairs:
        system, sep, run = pair.partition("=")
        if not sep or not system.strip() or not run.strip():
            raise UsageError(f"--system-map: expected SYSTEM=RUN, got {pair!r}")
        found[system.strip()] = run.strip()
    return found


def _first_difference(a: str, b: str) -> int:
    """Index of the first character where two texts differ."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _resolve_runs(
    con: duckdb.DuckDBPyConnection,
    human: HumanFile,
    corpus_id: str,
    test_set: str,
    system_map: Mapping[str, str],
    skip: Sequence[str],
) -> dict[str, str]:
    """Each judged system's run on the test set: by model slug (or `system_map` to a slug or a
    run id); an unknown or ambiguous system is refused naming the line that first names it."""
    rows = con.execute(  # a slug names a run as ingested; a re-scored run is named by its id
        "SELECT run_id, model_slug, run_id IN (SELECT run_id FROM run_rescores) FROM runs "
        "WHERE test_corpus_id = ? ORDER BY run_id",
        [corpus_id],
    ).fetchall()
    first_line: dict[str, int] = {}
    for a in human.annotations:
        first_line.setdefault(a.system, a.line)
    unknown_skips = sorted(set(skip) - set(first_line))
    if unknown_skips:
        raise UsageError(f"--skip-system: {', '.join(unknown_skips)} not in {human.path}")
    unused = sorted(set(system_map) - set(first_line))
    if unused:
        raise UsageError(f"--system-map: {', '.join(unused)} not in {human.path}")
    runs: dict[str, str] = {}
    for system, line in sorted(first_line.items()):
        if system in skip:
            continue
        wanted = system_map.get(system, system)
        matches = [
            r for r, slug, rescored in rows if r == wanted or (slug == wanted and not rescored)
        ]
        if len(matches) != 1:
            slugs = sorted({slug for _r, slug, _d in rows})
            problem = (
                f"system {system!r} has no run on test set {test_set!r}"
                if not matches
                else f"system {system!r} names {len(matches)} runs on test set {test_set!r} "
                f"({', '.join(matches)})"
            )
            hint = f"; runs there: {', '.join(slugs)}" if slugs else "; it has no runs"
            raise InputError(
                f"{problem}{hint} (--system-map {system}=RUN, or --skip-system {system})",
                human.path,
                line,
            )
        runs[system] = matches[0]
    return runs


def _judgments(human: HumanFile) -> dict[tuple[str, str, str], list[Annotation]]:
    """Annotations grouped by (system, segment, rater): one judgment each."""
    grouped: dict[tuple[str, str, str], list[Annotation]] = {}
    for a in human.annotations:
        grouped.setdefault((a.system, a.seg_key, a.rater), []).append(a)
    return grouped


@dataclass
class _Tables:
    judgments: dict[str, list[Any]]
    errors: dict[str, list[Any]]


def _build_rows(
    con: duckdb.DuckDBPyConnection,
    human: HumanFile,
    corpus_id: str,
    test_set: str,
    runs: Mapping[str, str],
    set_id: str,
    seg_id_base: int | None = None,
) -> _Tables:
    """The judgment and error rows, each judgment's segment found by id (else by source text;
    with `seg_id_base`, id k is line k - base) and its target checked against the stored
    hypothesis."""
    segments = con.execute(
        "SELECT seg_key, seg_idx, src FROM segments WHERE corpus_id = ? ORDER BY seg_idx",
        [corpus_id],
    ).fetchall()
    if seg_id_base is None:
        by_key = {key: (idx, src) for key, idx, src in segments}
        _refuse_an_id_offset(human, by_key, [src for _k, _i, src in segments], test_set)
    else:
        by_key = {str(idx + seg_id_base): (idx, src) for _key, idx, src in segments}
    by_source: dict[str, int | None] = {}
    for _key, idx, src in segments:
        by_source[src] = None if src in by_source else idx
    hyps = {
        (run, idx): hyp
        for run, idx, hyp in con.execute(
            "SELECT run_id, seg_idx, hyp FROM hypotheses WHERE run_id IN (SELECT unnest(?))",
            [sorted(set(runs.values()))],
        ).fetchall()
    }
    weights = {
        severity
        for (severity,) in con.execute("SELECT DISTINCT severity FROM mqm_weights").fetchall()
    }
    judgments: dict[str, list[Any]] = {
        k: [] for k in ("run_id", "seg_idx", "rater", "score", "line")
    }
    errors: dict[str, list[Any]] = {
        k: []
        for k in ("run_id", "seg_idx", "rater", "error_idx", "category", "severity", "span_start",
                  "span_end", "source_span_start", "source_span_end", "comment", "line")
    }  # fmt: skip
    for (system, key, rater), group in _judgments(human).items():
        run = runs.get(system)
        if run is None:  # a skipped system
            continue
        first = group[0]
        where = (human.path, first.line)
        idx = _segment(by_key, by_source, first, test_set, where)
        stored = hyps.get((run, idx))
        for a in group:
            if a.target is not None and stored is not None and a.target != stored:
                at = _first_difference(a.target, stored)
                raise InputError(
                    f"the target of {system} on segment {key} differs from run {run}'s stored "
                    f"hypothesis at character {at + 1} ({a.target[at : at + 20]!r} vs "
                    f"{stored[at : at + 20]!r}); wrong test set or system?",
                    human.path,
                    a.line,
                )
        scores = {a.score for a in group if a.score is not None}
        if len(scores) > 1:
            raise InputError(f"rater {rater} gives {system} on segment {key} two scores", *where)
        judgments["run_id"].append(run)
        judgments["seg_idx"].append(idx)
        judgments["rater"].append(rater)
        judgments["score"].append(scores.pop() if scores else None)
        judgments["line"].append(first.line)
        n = 0
        for a in group:
            if a.category is None or a.severity is None or a.severity == NO_ERROR:
                continue
            if human.scheme == "mqm" and a.severity.strip().lower() not in weights:
                raise InputError(
                    f"severity {a.severity!r} has no MQM weight (known: "
                    f"{', '.join(sorted(weights))}; add a row to mqm_weights)",
                    human.path,
                    a.line,
                )
            span = a.span or (None, None)
            source_span = a.source_span or (None, None)
            for column, value in zip(
                errors,
                (run, idx, rater, n, a.category, a.severity, *span, *source_span, a.comment,
                 a.line),
                strict=True,
            ):  # fmt: skip
                errors[column].append(value)
            n += 1
    if not judgments["run_id"]:
        raise InputError("no judgment of a run stored on this test set", human.path)
    judgments["set_id"] = [set_id] * len(judgments["run_id"])
    errors["set_id"] = [set_id] * len(errors["run_id"])
    return _Tables(judgments, errors)


def _refuse_an_id_offset(
    human: HumanFile, by_key: Mapping[str, tuple[int, str]], sources: Sequence[str], test_set: str
) -> None:
    """Refuse a file whose ids are the test set's line numbers shifted by a constant (the
    public WMT MQM files count from 1, a test set from plain files from 0), naming the fix."""
    judged = [a for a in human.annotations if a.source is not None and a.seg_key.isdigit()]
    # Ids the test set lacks are found by their source text; only ids that name another
    # segment are wrong.
    if not any(a.seg_key in by_key and by_key[a.seg_key][1] != a.source for a in judged):
        return
    first = judged[0]
    if first.source not in sources:
        return
    offset = int(first.seg_key) - sources.index(first.source)
    if offset == 0 or not all(
        0 <= int(a.seg_key) - offset < len(sources) and sources[int(a.seg_key) - offset] == a.source
        for a in judged
    ):
        return
    raise InputError(
        f"the file's seg_ids are the line numbers of test set {test_set!r} plus {offset}: every "
        f"judged source equals the segment at seg_id - {offset}; add --seg-id-base {offset}, or "
        "register the test set with --segments-meta carrying these ids",
        human.path,
        first.line,
    )


def _segment(
    by_key: Mapping[str, tuple[int, str]],
    by_source: Mapping[str, int | None],
    a: Annotation,
    test_set: str,
    where: tuple[str, int],
) -> int:
    """The segment an annotation judges: by its id, else by its source text."""
    found = by_key.get(a.seg_key)
    if found is not None:
        idx, src = found
        if a.source is not None and a.source != src:
            at = _first_difference(a.source, src)
            raise InputError(
                f"the source of segment {a.seg_key} differs from test set {test_set!r}'s at "
                f"character {at + 1}; wrong test set?",
                *where,
            )
        return idx
    if a.source is not None and by_source.get(a.source) is not None:
        return int(by_source[a.source])  # type: ignore[arg-type]
    raise InputError(
        f"segment {a.seg_key} is not in test set {test_set!r} (no segment has that id"
        f"{' or that source text' if a.source is not None else ''})",
        *where,
    )


def set_fingerprint(
    human: HumanFile, corpus_id: str, runs: Mapping[str, str], seg_id_base: int | None = None
) -> str:
    """The set's id: the file's content, name, scheme and format, the test set, the runs (and
    the id base, when one maps the file's ids)."""
    header: dict[str, Any] = {
        "sha256": human.sha256,
        "name": human.name,
        "scheme": human.scheme,
        "format": human.format,
        "test": corpus_id,
        "runs": dict(sorted(runs.items())),
    }
    if seg_id_base is not None:
        header["seg_id_base"] = seg_id_base
    return short_id(hashlib.sha256(json.dumps(header, sort_keys=True).encode()).hexdigest())


def add_human_set(
    con: duckdb.DuckDBPyConnection,
    human: HumanFile,
    test_set: str,
    *,
    system_map: Mapping[str, str] | None = None,
    skip: Sequence[str] = (),
    replace: bool = False,
    in_transaction: bool = False,
    seg_id_base: int | None = None,
) -> HumanSetResult:
    """Store a judgment file on a test set's runs in one transaction (`in_transaction`: inside
    the caller's). The same file again is a no-op; another file of the same name is refused
    unless `replace`. With `seg_id_base`, the file's id k judges line k - base."""
    corpus = get_corpus(con, test_set, "test")
    runs = _resolve_runs(con, human, corpus.corpus_id, test_set, system_map or {}, skip)
    set_id = set_fingerprint(human, corpus.corpus_id, runs, seg_id_base)
    existing = con.execute(
        "SELECT set_id, n_judgments, n_errors FROM human_sets WHERE test_corpus_id = ? "
        "AND name = ?",
        [corpus.corpus_id, human.name],
    ).fetchone()
    skipped = sorted(skip)
    if existing is not None and existing[0] == set_id:
        return HumanSetResult(set_id, human.name, test_set, human.scheme, False, int(existing[1]),
                              int(existing[2]), runs, skipped,
                              warnings=list(human.warnings))  # fmt: skip
    if existing is not None and not replace:
        raise UsageError(
            f"test set {test_set!r} already has a judgment set named {human.name!r} (set "
            f"{existing[0]}, other content); --replace replaces it, --name gives another name"
        )
    tables = _build_rows(con, human, corpus.corpus_id, test_set, runs, set_id, seg_id_base)
    n_judgments, n_errors = len(tables.judgments["run_id"]), len(tables.errors["run_id"])
    meta = {"file": human.path, "size": human.size, "systems": runs, "skipped": skipped}
    if seg_id_base is not None:
        meta["seg_id_base"] = seg_id_base

    def write() -> None:
        if existing is not None:
            delete_human_sets(con, [str(existing[0])])
        con.execute(
            "INSERT INTO human_sets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [set_id, human.name, corpus.corpus_id, human.scheme, human.format, human.sha256,
             n_judgments, n_errors, utc_now(), json.dumps(meta)],
        )  # fmt: skip
        _insert(con, "human_judgments", tables.judgments,
                ("set_id", "run_id", "seg_idx", "rater", "score", "line"))  # fmt: skip
        _insert(con, "human_errors", tables.errors,
                ("set_id", "run_id", "seg_idx", "rater", "error_idx", "category", "severity",
                 "span_start", "span_end", "source_span_start", "source_span_end", "comment",
                 "line"))  # fmt: skip

    if in_transaction:
        write()
    else:
        with transaction(con):
            write()
    replaced = str(existing[0]) if existing is not None else None
    return HumanSetResult(set_id, human.name, test_set, human.scheme, True, n_judgments, n_errors,
                          runs, skipped, replaced, list(human.warnings))  # fmt: skip


def _insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Mapping[str, list[Any]],
    order: Sequence[str],
) -> None:
    """Insert column lists into `table` in `order` through one Arrow scan."""
    if not columns[order[0]]:
        return
    rows = pa.table({name: columns[name] for name in order})
    con.register("_tame_human_rows", rows)
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM _tame_human_rows")
    finally:
        con.unregister("_tame_human_rows")


def list_human_sets(
    con: duckdb.DuckDBPyConnection, test_set: str | None = None
) -> list[dict[str, Any]]:
    """Stored judgment sets (of one test set when given), oldest first."""
    if test_set is not None:
        get_corpus(con, test_set, "test")  # an unknown name is a usage error, not "no sets"
    cursor = con.execute(
        "SELECT s.set_id, s.name, c.name AS test_set, s.scheme, s.format, s.n_judgments, "
        "s.n_errors, s.added_at FROM human_sets s JOIN corpora c ON c.corpus_id = s.test_corpus_id "
        "WHERE ? IS NULL OR c.name = ? ORDER BY s.added_at, s.name",
        [test_set, test_set],
    )
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
