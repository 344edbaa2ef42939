"""A digest of everything stored that a page built from the warehouse can show: equal digests
mean equal pages, so a rebuild can stop before reading anything else (`tame-wh dashboard`).

Rows of the small tables are hashed whole. The large per-segment tables are left out: their rows
belong to a content-addressed parent (a corpus, a run, an audit, a judgment set) hashed here, and
change only with it."""

from __future__ import annotations

import hashlib

import duckdb

# Tables whose every row is hashed: ids, timestamps, settings, tags, sums and intervals.
HASHED_TABLES = (
    "audits",
    "composite_weights",
    "corpora",
    "human_sets",
    "languages",
    "mqm_weights",
    "quality_tiers",
    "run_bin_sums",
    "run_clusters",
    "run_intervals",
    "run_rescores",
    "run_sums",
    "run_tags",
    "run_warnings",
    "runs",
    "schema_version",
    "settings",
)
# The per-segment tables and the parent whose id fixes their rows.
PARENT_OF = {
    "segments": "corpora",
    "hypotheses": "runs",
    "segment_stats": "runs",
    "metric_values": "runs",
    "exposures": "audits",
    "tm_segment_stats": "audits",
    "substring_lens": "audits",
    "human_judgments": "human_sets",
    "human_errors": "human_sets",
}
# Tables no page shows: the mirror's bookkeeping.
NOT_SHOWN = ("sync_state",)


def content_state(con: duckdb.DuckDBPyConnection) -> str:
    """The digest (hex) of the rows of HASHED_TABLES: their counts and an order-free hash."""
    digest = hashlib.sha256()
    for table in HASHED_TABLES:
        # An order-free digest: the count, and the xor and sum of the rows' hashes.
        count, xor, total = con.execute(
            f"SELECT count(*), bit_xor(hash(t)), sum(hash(t)::HUGEINT) FROM {table} t"
        ).fetchone() or (0, None, None)
        digest.update(f"{table}:{count}:{xor}:{total};".encode())
    return digest.hexdigest()
