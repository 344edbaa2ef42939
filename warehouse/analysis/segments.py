"""The segment table's columns, as JSON text built by DuckDB, in two parts: what a test set and
its audit give every run (id, source, references, the TM neighbour's source and target,
exposure, bin) and what each run adds (hypothesis, sentence chrF++, error flag). A dashboard
writes the first part once per test set and audit; a report file inlines both."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from warehouse.analysis.id_tables import id_table, registered

RUNS_PER_QUERY = 200
EMPTY_RUN_COLUMNS = '{"hyp":[],"chrf":[],"err":[]}'
_REF_JOINER = " \u2016 "  # between the references of a multi-reference segment


def segment_key(test_corpus_id: str, audit_id: str | None) -> str:
    """The name of a test set's (and audit's) shared segment columns."""
    return f"{test_corpus_id}-{audit_id or 'no-audit'}"


def shared_columns(
    con: duckdb.DuckDBPyConnection, test_corpus_id: str, audit_id: str | None
) -> str:
    """JSON of the segment table's columns a test set and its audit give every run."""
    # In segment order: seg (index), id, src, ref, and with an audit tm_src, tm_tgt, exposure
    # (source side) and bin (else those are null).
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
    """JSON of each run's own columns of the segment table, by run id."""
    # In segment order: hyp, chrf (sentence chrF++, 2 decimals), err (indices of errored
    # entries), and idx (the segment indices) unless they are simply 0..n-1.
    out: dict[str, str] = {}
    for start in range(0, len(run_ids), RUNS_PER_QUERY):  # bounded memory, same speed
        out.update(_run_columns(con, run_ids[start : start + RUNS_PER_QUERY]))
    return out


def _run_columns(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[str, str]:
    """`run_columns` of a batch of runs."""
    wanted = "WHERE run_id IN (SELECT run_id FROM _tame_segment_runs)"
    with registered(con, "_tame_segment_runs", id_table(run_id=list(run_ids))):
        # One ordered list per query: DuckDB builds each run's JSON text, Python only joins.
        hyps = con.execute(
            "SELECT run_id, to_json(list(hyp ORDER BY seg_idx))::VARCHAR, count(*), "
            "min(seg_idx), max(seg_idx), "
            "to_json(coalesce(list(seg_idx ORDER BY seg_idx) FILTER (WHERE error IS NOT NULL), "
            f"[]))::VARCHAR FROM hypotheses {wanted} GROUP BY run_id"
        ).fetchall()
        chrf = {
            run_id: (text, n)
            for run_id, text, n in con.execute(
                "SELECT run_id, to_json(list(round(chrf_sentence, 2) ORDER BY seg_idx))::VARCHAR, "
                f"count(*) FROM segment_stats {wanted} GROUP BY run_id"
            ).fetchall()
        }
        out = {}
        for run_id, hyp_json, n, first, last, errors in hyps:
            chrf_json, n_stats = chrf.get(run_id, ("null", -1))
            if n_stats != n:  # statistics missing for some entries: align them one by one
                out[run_id] = _aligned_columns(con, run_id)
                continue
            idx = "" if (first, last) == (0, n - 1) else f',"idx":{_indices(con, run_id)}'
            out[run_id] = f'{{"hyp":{hyp_json},"chrf":{chrf_json},"err":{errors}{idx}}}'
    return out


def _indices(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """JSON list of a run's segment indices, in order."""
    row = con.execute(
        "SELECT to_json(list(seg_idx ORDER BY seg_idx))::VARCHAR FROM hypotheses WHERE run_id = ?",
        [run_id],
    ).fetchone()
    return str(row[0]) if row else "[]"


def _aligned_columns(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """`run_columns` of one run whose statistics do not cover every entry."""
    row = con.execute(
        "SELECT to_json({'hyp': list(h.hyp ORDER BY h.seg_idx), "
        "'chrf': list(round(st.chrf_sentence, 2) ORDER BY h.seg_idx), "
        "'err': coalesce(list(h.seg_idx ORDER BY h.seg_idx) FILTER (WHERE h.error IS NOT NULL), "
        "[]), 'idx': list(h.seg_idx ORDER BY h.seg_idx)})::VARCHAR FROM hypotheses h "
        "LEFT JOIN segment_stats st ON st.run_id = h.run_id AND st.seg_idx = h.seg_idx "
        "WHERE h.run_id = ?",
        [run_id],
    ).fetchone()
    assert row is not None
    return str(row[0])
