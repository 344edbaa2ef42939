"""Per-segment data for pages: the segment table's columns and the exposure histograms.

The table's columns come in two parts, both JSON text built by DuckDB: what a test set and its
audit give every run (id, source, references, the TM neighbour's source and target, exposure,
bin) and what each run adds (hypothesis, sentence chrF++, error flag). A dashboard writes the
first part once per test set and audit; a report file inlines both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

from warehouse.html.documents import registered

HISTOGRAM_BINS = 20
_REF_JOINER = " \u2016 "  # between the references of a multi-reference segment


def shared_columns(
    con: duckdb.DuckDBPyConnection, test_corpus_id: str, audit_id: str | None
) -> str:
    """JSON of the test set's and audit's columns, in segment order: seg (index), id, src, ref,
    and with an audit tm_src, tm_tgt, exposure (source side) and bin (else those are null)."""
    row = con.execute(
        "SELECT to_json({"
        "'seg': list(s.seg_idx ORDER BY s.seg_idx), "
        "'id': list(s.seg_key ORDER BY s.seg_idx), "
        "'src': list(s.src ORDER BY s.seg_idx), "
        f"'ref': list(array_to_string(s.refs, '{_REF_JOINER}') ORDER BY s.seg_idx), "
        "'tm_src': CASE WHEN $audit IS NULL THEN NULL "
        "  ELSE list(t.src ORDER BY s.seg_idx) END, "
        "'tm_tgt': CASE WHEN $audit IS NULL THEN NULL "
        "  ELSE list(t.refs[1] ORDER BY s.seg_idx) END, "
        "'exposure': CASE WHEN $audit IS NULL THEN NULL "
        "  ELSE list(round(e.source_exposure, 4) ORDER BY s.seg_idx) END, "
        "'bin': CASE WHEN $audit IS NULL THEN NULL ELSE list(e.bin ORDER BY s.seg_idx) END"
        "})::VARCHAR FROM segments s "
        "LEFT JOIN exposures e ON e.audit_id = $audit AND e.seg_idx = s.seg_idx "
        "LEFT JOIN audits a ON a.audit_id = $audit "
        "LEFT JOIN segments t ON t.corpus_id = a.train_corpus_id AND t.seg_idx = e.tm_hyp_idx "
        "WHERE s.corpus_id = $test",
        {"audit": audit_id, "test": test_corpus_id},
    ).fetchone()
    assert row is not None
    return str(row[0])


def run_columns(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, str]:
    """JSON of each run's own columns by run id: idx (segment index), hyp, chrf (sentence
    chrF++, 2 decimals), err (whether the entry errored)."""
    if not run_ids:
        return {}
    ids = pa.table({"run_id": pa.array(list(run_ids), pa.string())})
    with registered(con, "_tame_html_segment_runs", ids):
        rows = con.execute(
            "WITH entries AS ("
            "  SELECT h.run_id, list({'i': h.seg_idx, 'h': h.hyp, "
            "    'c': round(st.chrf_sentence, 2), 'e': h.error IS NOT NULL} ORDER BY h.seg_idx) "
            "  AS l "
            "  FROM hypotheses h "
            "  LEFT JOIN segment_stats st ON st.run_id = h.run_id AND st.seg_idx = h.seg_idx "
            "  WHERE h.run_id IN (SELECT run_id FROM _tame_html_segment_runs) "
            "  GROUP BY h.run_id) "
            "SELECT run_id, to_json({'idx': list_transform(l, x -> x.i), "
            "'hyp': list_transform(l, x -> x.h), 'chrf': list_transform(l, x -> x.c), "
            "'err': list_transform(l, x -> x.e)})::VARCHAR FROM entries"
        ).fetchall()
    return {run_id: text for run_id, text in rows}


def exposure_histograms(
    con: duckdb.DuckDBPyConnection, audit_ids: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Rows of the exposure chart per audit: segment counts in 20 equal bins of [0, 1] per side
    (`kind` bin) and the audit's far and near thresholds on every side (`kind` threshold)."""
    if not audit_ids:
        return {}
    out: dict[str, list[dict[str, Any]]] = {a: [] for a in audit_ids}
    ids = pa.table({"audit_id": pa.array(list(audit_ids), pa.string())})
    with registered(con, "_tame_html_audit_ids", ids):
        counts = con.execute(
            "WITH sides AS ("
            "  SELECT audit_id, 'source' AS side, source_exposure AS x FROM exposures "
            "  UNION ALL SELECT audit_id, 'target', target_exposure FROM exposures "
            "  UNION ALL SELECT audit_id, 'pair', pair_exposure FROM exposures) "
            f"SELECT audit_id, side, least(floor(x * {HISTOGRAM_BINS}), {HISTOGRAM_BINS - 1}) "
            "AS b, count(*) FROM sides "
            "WHERE audit_id IN (SELECT audit_id FROM _tame_html_audit_ids) "
            "GROUP BY ALL ORDER BY audit_id, side, b"
        ).fetchall()
        thresholds = con.execute(
            "SELECT audit_id, far_threshold, near_threshold FROM audits "
            "WHERE audit_id IN (SELECT audit_id FROM _tame_html_audit_ids)"
        ).fetchall()
    for audit_id, side, b, n in counts:
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
            out[audit_id].append(
                {"side": side, "kind": "threshold", "value": far, "label": f"far {far:.2f}"}
            )
            out[audit_id].append(
                {"side": side, "kind": "threshold", "value": near, "label": f"near {near:.2f}"}
            )
    return out
