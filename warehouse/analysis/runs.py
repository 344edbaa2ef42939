"""Evaluated runs: naming them (id, prefix or model slug), listing, showing, tagging, deleting."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb

from warehouse.errors import UsageError
from warehouse.metrics.scores import bleu_from_stats, chrf_from_stats, ter_or_none
from warehouse.store.connection import transaction
from warehouse.store.corpora import get_corpus
from warehouse.store.purge import RUN_TABLES, delete_runs
from warehouse.store.run_refs import known_model
from warehouse.store.run_refs import resolve_run as resolve_run  # re-exported

_TAG_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_MAX_TAG_VALUE = 500


@dataclass(frozen=True)
class RunSummary:
    """One run with its whole-run surface scores and tags."""

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
    ter: float | None  # None when the run was ingested without TER
    exact_match_rate: float | None
    length_ratio: float | None
    tags: dict[str, str] = field(default_factory=dict)
    rescored_from: str | None = None  # the stored run `tame-wh rescore` derived it from

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass(frozen=True)
class RunFilter:
    """Which runs a board shows: those with every tag of `tags` and none of `exclude` ((key,
    value) pairs, a None value for any value of the key)."""

    tags: Mapping[str, str] = field(default_factory=dict)
    exclude: tuple[tuple[str, str | None], ...] = ()

    def key(self) -> str:
        """A stable text of the filter (what a dashboard build records)."""
        return json.dumps([sorted(self.tags.items()), sorted(self.exclude, key=str)])


def parse_tag_filters(items: Sequence[str]) -> list[tuple[str, str | None]]:
    """`KEY` (any value) or `KEY=VALUE` strings as (key, value or None) pairs."""
    found: list[tuple[str, str | None]] = []
    for item in items:
        if "=" in item:
            found += list(parse_tags([item]).items())
        elif _TAG_KEY.match(item):
            found.append((item, None))
        else:
            raise UsageError(
                f"--exclude-tag {item!r}: expected KEY or KEY=VALUE with a key of 1-64 letters, "
                "digits or _.:-"
            )
    return found


def parse_tags(pairs: Sequence[str]) -> dict[str, str]:
    """`KEY=VALUE` strings as a dict; keys are 1-64 of letters, digits and `_.:-`."""
    tags: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not _TAG_KEY.match(key):
            raise UsageError(
                f"tag {pair!r}: expected KEY=VALUE with a key of 1-64 letters, digits or _.:-"
            )
        if len(value) > _MAX_TAG_VALUE or any(not ch.isprintable() for ch in value):
            raise UsageError(
                f"tag {key!r}: values are at most {_MAX_TAG_VALUE} printable characters"
            )
        tags[key] = value
    return tags


def list_runs(
    con: duckdb.DuckDBPyConnection,
    *,
    testset: str | None = None,
    model_slug: str | None = None,
    tags: dict[str, str] | None = None,
    run_id: str | None = None,
) -> list[RunSummary]:
    """Runs, oldest first, optionally of one test set and/or model, carrying every tag, or the
    one run `run_id`."""
    if testset is not None:
        get_corpus(con, testset, "test")  # unknown names are usage errors
    known_model(con, model_slug)
    wanted = tags or {}
    rows = con.execute(
        "SELECT s.run_id, model_slug, condition, test_set, n_entries, n_errors, "
        "strftime(created_at, '%Y-%m-%dT%H:%M:%SZ'), strftime(ingested_at, '%Y-%m-%dT%H:%M:%SZ'), "
        "bleu_stats, chrf_stats, ter_stats, exact_match_rate, length_ratio, "
        "(SELECT map(list(key ORDER BY key), list(value ORDER BY key)) FROM run_tags t "
        " WHERE t.run_id = s.run_id), rescored_from FROM run_summaries s "
        "WHERE (? IS NULL OR test_set = ?) AND (? IS NULL OR model_slug = ?) "
        "AND (? IS NULL OR s.run_id = ?) "
        "AND (SELECT count(*) FROM run_tags t JOIN (SELECT unnest(?) AS k, unnest(?) AS v) w "
        "     ON t.key = w.k AND t.value = w.v WHERE t.run_id = s.run_id) = ? "
        "ORDER BY created_at, s.run_id",
        [
            testset,
            testset,
            model_slug,
            model_slug,
            run_id,
            run_id,
            list(wanted),
            list(wanted.values()),
            len(wanted),
        ],
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
            ter=ter_or_none(row[10]),
            exact_match_rate=row[11],
            length_ratio=row[12],
            tags=dict(row[13] or {}),
            rescored_from=row[14],
        )
        for row in rows
    ]


def show_run(
    con: duckdb.DuckDBPyConnection, ref: str, testset: str | None = None
) -> dict[str, Any]:
    """One run's identity, counts, scores, tags, stored warnings, CI metadata and signatures
    (the run named on the test set `testset` when given)."""
    run_id = resolve_run(con, ref, testset)
    [summary] = list_runs(con, run_id=run_id)
    row = con.execute(
        "SELECT test_corpus_id, dataset_id, language_pair, fingerprint_hash, elapsed_seconds, "
        "total_cost_usd, ci, metric_settings FROM runs WHERE run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None
    corpus_id, dataset_id, pair, fingerprint, elapsed, cost, ci, settings = row
    return {
        **summary.to_dict(),
        "test_corpus_id": corpus_id,
        "dataset_id": dataset_id,
        "language_pair": pair,
        "fingerprint_hash": fingerprint,
        "elapsed_seconds": elapsed,
        "total_cost_usd": cost,
        "ci": json.loads(ci) if ci else None,
        "signatures": json.loads(settings or "{}").get("signatures", {}),
        "warnings": run_warnings(con, run_id),
    }


def run_warnings(con: duckdb.DuckDBPyConnection, run_id: str) -> list[str]:
    """The warnings stored when the run was ingested, in the order they were found."""
    rows = con.execute(
        "SELECT message FROM run_warnings WHERE run_id = ? ORDER BY seq", [run_id]
    ).fetchall()
    return [m for (m,) in rows]


def tag_run(
    con: duckdb.DuckDBPyConnection,
    ref: str,
    tags: dict[str, str],
    remove: Sequence[str] = (),
) -> tuple[str, dict[str, str]]:
    """Set (or replace) tags on a run and remove others; returns the run id and its tags."""
    run_id = resolve_run(con, ref)
    with transaction(con):
        for key in [*tags, *remove]:
            con.execute("DELETE FROM run_tags WHERE run_id = ? AND key = ?", [run_id, key])
        for key, value in tags.items():
            con.execute("INSERT INTO run_tags VALUES (?, ?, ?)", [run_id, key, value])
    rows = con.execute(
        "SELECT key, value FROM run_tags WHERE run_id = ? ORDER BY key", [run_id]
    ).fetchall()
    return run_id, dict(rows)


@dataclass(frozen=True)
class Deletion:
    """What deleting runs removes (or, in a dry run, would remove): rows per table."""

    run_ids: list[str]
    rows: dict[str, int]
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def delete_runs_by_ref(
    con: duckdb.DuckDBPyConnection, refs: Sequence[str], *, dry_run: bool = False
) -> Deletion:
    """Delete the named runs and everything stored for them, in one transaction."""
    run_ids = list(dict.fromkeys(resolve_run(con, ref) for ref in refs))
    counts: dict[str, int] = {}
    for table in RUN_TABLES:
        row = con.execute(
            f"SELECT count(*) FROM {table} WHERE run_id IN (SELECT unnest(?))", [run_ids]
        ).fetchone()
        counts[table] = int(row[0]) if row else 0
    if not dry_run:
        with transaction(con):
            delete_runs(con, run_ids)
    return Deletion(run_ids, counts, dry_run)
