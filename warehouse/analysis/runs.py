"""Listing evaluated runs with their corpus scores (computed from summed statistics)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from warehouse.errors import UsageError
from warehouse.metrics.scores import bleu_from_stats, chrf_from_stats, ter_from_stats
from warehouse.store.corpora import get_corpus


@dataclass(frozen=True)
class RunSummary:
    """One run with its whole-run surface scores."""

    run_id: str
    model_slug: str
    condition: str | None
    test_set: str
    n_entries: int
    n_errors: int
    created_at: str
    ingested_at: str
    bleu: float
    chrf: float
    ter: float
    exact_match_rate: float | None
    length_ratio: float | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def list_runs(
    con: duckdb.DuckDBPyConnection, *, testset: str | None = None, model_slug: str | None = None
) -> list[RunSummary]:
    """Runs, oldest first, optionally of one test set and/or model."""
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    rows = con.execute(
        "SELECT run_id, model_slug, condition, test_set, n_entries, n_errors, "
        "strftime(created_at, '%Y-%m-%dT%H:%M:%SZ'), strftime(ingested_at, '%Y-%m-%dT%H:%M:%SZ'), "
        "bleu_stats, chrf_stats, ter_stats, exact_match_rate, length_ratio FROM run_summaries "
        "WHERE (? IS NULL OR test_set = ?) AND (? IS NULL OR model_slug = ?) "
        "ORDER BY created_at, run_id",
        [testset, testset, model_slug, model_slug],
    ).fetchall()
    return [
        RunSummary(
            run_id=row[0],
            model_slug=row[1],
            condition=row[2],
            test_set=row[3],
            n_entries=row[4],
            n_errors=row[5],
            created_at=row[6],
            ingested_at=row[7],
            bleu=bleu_from_stats(row[8]),
            chrf=chrf_from_stats(row[9]),
            ter=ter_from_stats(row[10]),
            exact_match_rate=row[11],
            length_ratio=row[12],
        )
        for row in rows
    ]


def resolve_run(con: duckdb.DuckDBPyConnection, ref: str) -> str:
    """The run id named by a full id or a unique prefix (at least 4 characters)."""
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
    if len(matches) > 1 and ref not in matches:
        raise UsageError(f"run id prefix {ref!r} is ambiguous: {', '.join(matches)}, ...")
    return ref if ref in matches else matches[0]
