"""A run named on the command line: a full id, a unique id prefix, or a model slug (or
`slug/condition`) that names exactly one run."""

from __future__ import annotations

import duckdb

from warehouse.basics import listing, suggestion
from warehouse.errors import UsageError
from warehouse.store.corpora import get_corpus


def _by_slug(
    con: duckdb.DuckDBPyConnection, ref: str, testset: str | None
) -> list[tuple[str, str | None, str]]:
    """Runs as ingested (id, condition, test set) whose model slug is `ref`, or whose
    `slug/condition` is `ref`, on the test set `testset` when given (a re-scored run is named
    by its id)."""
    slug, _, condition = ref.partition("/")
    rows = con.execute(
        "SELECT r.run_id, r.condition, c.name FROM ingested_runs r "
        "JOIN corpora c ON c.corpus_id = r.test_corpus_id "
        "WHERE ((r.model_slug = ? AND (? = '' OR r.condition = ?)) OR r.model_slug = ?) "
        "AND (? IS NULL OR c.name = ?) ORDER BY r.created_at, r.run_id",
        [slug, condition, condition, ref, testset, testset],
    ).fetchall()
    return [(run_id, condition, test_set) for run_id, condition, test_set in rows]


def _ambiguous(ref: str, found: list[tuple[str, str | None, str]], testset: str | None) -> str:
    """Why `ref` names several runs, and the forms that would name one."""
    conditions = sorted({c or "(none)" for _, c, _ in found})
    test_sets = sorted({t for _, _, t in found})
    ids = ", ".join(r for r, _, _ in found[:5]) + (", ..." if len(found) > 5 else "")
    ways = []
    if "/" not in ref and len(conditions) > 1:
        ways.append(f"MODEL/CONDITION (conditions: {', '.join(conditions)})")
    if testset is None and len(test_sets) > 1:
        ways.append(f"--testset NAME (test sets: {', '.join(test_sets)})")
    ways.append("a run id")
    return f"{ref!r} names {len(found)} runs ({ids}); give " + ", or ".join(ways)


def resolve_run(con: duckdb.DuckDBPyConnection, ref: str, testset: str | None = None) -> str:
    """The run named by a full id, a model slug (or `slug/condition`) that names exactly one run
    (on the test set `testset` when given), or a unique id prefix of at least 4 characters."""
    if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [ref]).fetchone():
        return ref
    if testset is not None:
        get_corpus(con, testset, "test")  # an unknown name is refused with the names it may mean
    by_slug = _by_slug(con, ref, testset)
    if len(by_slug) == 1:
        return by_slug[0][0]
    if len(by_slug) > 1:
        raise UsageError(_ambiguous(ref, by_slug, testset))
    if len(ref) < 4:
        raise UsageError(f"run id prefix {ref!r} is too short (give at least 4 characters)")
    matches = [
        r
        for (r,) in con.execute(
            "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 3", [ref]
        ).fetchall()
    ]
    if not matches:
        on = f" on test set {testset!r}" if testset is not None else ""
        raise UsageError(
            f"unknown run {ref!r}{on}{suggestion(ref, _run_names(con, ref, testset))} "
            "(see `tame-wh runs list`)"
        )
    if len(matches) > 1:
        raise UsageError(f"run id prefix {ref!r} is ambiguous: {', '.join(matches)}, ...")
    return matches[0]


def known_model(con: duckdb.DuckDBPyConnection, slug: str | None) -> None:
    """Refuse a model filter no stored run has, naming the stored slugs it may mean (a filter
    that matches nothing would otherwise look like a model with no runs)."""
    if slug is None or con.execute("SELECT 1 FROM runs WHERE model_slug = ?", [slug]).fetchone():
        return
    known = sorted(s for (s,) in con.execute("SELECT DISTINCT model_slug FROM runs").fetchall())
    raise UsageError(
        f"unknown model {slug!r}{suggestion(slug, known)}; "
        + (f"known: {listing(known)}" if known else "no runs stored yet")
    )


def _run_names(con: duckdb.DuckDBPyConnection, ref: str, testset: str | None) -> set[str]:
    """What a misspelled run name may have meant: model slugs, `slug/condition` forms and run
    ids cut to the length of `ref` (a prefix with a typo)."""
    rows = con.execute(
        "SELECT r.run_id, r.model_slug, r.condition FROM ingested_runs r "
        "JOIN corpora c ON c.corpus_id = r.test_corpus_id WHERE ? IS NULL OR c.name = ?",
        [testset, testset],
    ).fetchall()
    names: set[str] = set()
    for run_id, slug, condition in rows:
        names.add(slug)
        if condition:
            names.add(f"{slug}/{condition}")
        if len(ref) >= 8:  # shorter cuts of ids are too many to tell a typo from a guess
            names.add(run_id[: len(ref)])
    return names
