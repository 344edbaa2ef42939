"""Replicate labels: which stored runs repeat one configuration (docs/statistics.md,
"Replicates"). A run's label is its `replicate` tag (`ingest --replicate-of RUN` sets it), else
its run card's `replicate` field, else — when its run card gives a `seed` — `(seed)`."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from warehouse.errors import UsageError
from warehouse.store.run_refs import resolve_run

REPLICATE_TAG = "replicate"
SEED_LABEL = "(seed)"

LABELLED_RUNS = """
SELECT r.run_id, r.model_slug, r.condition, r.test_corpus_id, c.name AS test_set,
       coalesce(t.value, json_extract_string(r.run_card, '$.replicate'),
                CASE WHEN json_extract(r.run_card, '$.seed') IS NOT NULL THEN ? END) AS label
FROM ingested_runs r
JOIN corpora c ON c.corpus_id = r.test_corpus_id
LEFT JOIN run_tags t ON t.run_id = r.run_id AND t.key = ?
"""


def replicate_label(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    """The replicate label of a stored run (None: not declared a replicate)."""
    row = con.execute(
        LABELLED_RUNS + "WHERE r.run_id = ?", [SEED_LABEL, REPLICATE_TAG, run_id]
    ).fetchone()
    return row[5] if row else None


def replicate_tags(
    con: duckdb.DuckDBPyConnection, of: str, configurations: Sequence[tuple[str, str | None, str]]
) -> tuple[str, dict[str, str]]:
    """The label new runs of `configurations` (model, condition, test corpus id) take as
    replicates of the stored run `of`, and the tag `of` itself needs (by run id; none when it
    is labelled already). A configuration unlike `of`'s is a usage error."""
    run_id = resolve_run(con, of)
    row = con.execute(
        "SELECT model_slug, condition, test_corpus_id FROM runs WHERE run_id = ?", [run_id]
    ).fetchone()
    assert row is not None
    for config in configurations:
        if tuple(config) != tuple(row):
            raise UsageError(
                f"--replicate-of {of}: run {run_id} is model {row[0]!r}, condition {row[1]!r} "
                f"on test set {row[2]}, this run model {config[0]!r}, condition {config[1]!r} on "
                f"{config[2]}: replicates repeat one configuration; nothing was ingested"
            )
    label = replicate_label(con, run_id)
    if label is not None:
        return label, {}
    return run_id, {run_id: run_id}
