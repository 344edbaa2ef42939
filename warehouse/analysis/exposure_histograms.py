"""The exposure chart's rows per audit: segment counts in equal bins of [0, 1] per side, and
the audit's far and near thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from warehouse.analysis.id_tables import id_table, registered

HISTOGRAM_BINS = 20


def exposure_histograms(
    con: duckdb.DuckDBPyConnection, audit_ids: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Rows of the exposure chart by audit id: bin counts and thresholds per side."""
    # `kind` bin: segment counts in 20 equal bins of [0, 1] per side searched; `kind`
    # threshold: the audit's far and near thresholds, on each of those sides.
    if not audit_ids:
        return {}
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in audit_ids}
    with registered(con, "_tame_histogram_audits", id_table(audit_id=list(audit_ids))):
        counts = con.execute(
            "WITH sides AS ("
            "  SELECT audit_id, 'source' AS side, source_exposure AS x FROM exposures "
            "  UNION ALL SELECT audit_id, 'target', target_exposure FROM exposures "
            "  UNION ALL SELECT audit_id, 'pair', pair_exposure FROM exposures) "
            f"SELECT audit_id, side, least(floor(x * {HISTOGRAM_BINS}), {HISTOGRAM_BINS - 1}) "
            "AS b, count(*) FROM sides "
            "WHERE audit_id IN (SELECT audit_id FROM _tame_histogram_audits) "
            "AND x IS NOT NULL "  # a side the audit did not search
            "GROUP BY ALL ORDER BY audit_id, side, b"
        ).fetchall()
        thresholds = con.execute(
            "SELECT audit_id, far_threshold, near_threshold FROM audits "
            "WHERE audit_id IN (SELECT audit_id FROM _tame_histogram_audits)"
        ).fetchall()
    searched: dict[str, set[str]] = {a: set() for a in audit_ids}
    for audit_id, side, b, n in counts:
        searched[audit_id].add(side)
        out[audit_id].append(
            {
                "side": side,
                "kind": "bin",
                "lo": b / HISTOGRAM_BINS,
                "hi": (b + 1) / HISTOGRAM_BINS,
                "n": n,
            }
        )
    for audit_id, far, near in thresholds:
        for side in ("source", "target", "pair"):
            if side not in searched[audit_id]:
                continue
            out[audit_id].append(
                {"side": side, "kind": "threshold", "value": far, "label": f"far {far:.2f}"}
            )
            out[audit_id].append(
                {"side": side, "kind": "threshold", "value": near, "label": f"near {near:.2f}"}
            )
    return out
