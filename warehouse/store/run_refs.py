"""A run named on the command line: a full id, a unique id prefix, or a model slug (or
`slug/condition`) that names exactly one run."""

from __future__ import annotations

import duckdb

from warehouse.errors import UsageError


def _by_slug(con: duckdb.DuckDBPyConnection, ref: str) -> list[str]:
    """Runs whose model slug is `ref`, or whose `slug/condition` is `ref`."""
    slug, _, condition = ref.partition("/")
    rows = con.execute(
        "SELECT run_id FROM runs WHERE (model_slug = ? AND (? = '' OR condition = ?)) "
        "OR model_slug = ? ORDER BY created_at, run_id",
        [slug, condition, condition, ref],
    ).fetchall()
    return list(dict.fromkeys(r for (r,) in rows))


def resolve_run(con: duckdb.DuckDBPyConnection, ref: str) -> str:
    """The run named by a full id, a model slug (or `slug/condition`) that names exactly one run,
    or a unique id prefix of at least 4 characters."""
    if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [ref]).fetchone():
        return ref
    by_slug = _by_slug(con, ref)
    if len(by_slug) == 1:
        return by_slug[0]
    if len(by_slug) > 1:
        raise UsageError(
            f"{ref!r} names {len(by_slug)} runs ({', '.join(by_slug[:5])}"
            f"{', ...' if len(by_slug) > 5 else ''}); give a run id or MODEL/CONDITION"
        )
    if len(ref) < 4:
        raise UsageError(f"run id prefix {ref!r} is too short (give at least 4 characters)")
    matches = [
        r
        for (r,) in con.execute(
            "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 3", [ref]
        ).fetchall()
    ]
    if not matches:
        raise UsageError(f"unknown run {ref!r} (see `tame-wh runs list`)")
    if len(matches) > 1:
        raise UsageError(f"run id prefix {ref!r} is ambiguous: {', '.join(matches)}, ...")
    return matches[0]
