"""Stored runs as records other tools read (`tame-wh export`, docs/cli.md): one record per run
and segment with its text, its per-segment scores, its ingested per-entry metrics and its
exposure, as JSON Lines, Parquet or TSV — or as lm-evaluation-harness sample logs, one per run."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.errors import UsageError
from warehouse.inputs.tables import EXPORT_COLUMNS as EXPORT_COLUMNS  # re-exported
from warehouse.inputs.tables import tsv_escaped
from warehouse.store.corpora import get_corpus
from warehouse.store.run_refs import resolve_run

EXPORT_FORMATS = ("jsonl", "parquet", "tsv", "lm-eval")

# One record per run and segment. Sentence BLEU and TER are the corpus formulas on the segment's
# statistics, chrF++ sacrebleu's sentence score (docs/metrics.md); exposure from the audit the
# leaderboard uses for the run (docs/exposure.md).
_RECORDS = """
WITH wanted AS (SELECT unnest(?) AS run_id),
chosen AS (
    SELECT run_id, audit_id FROM leaderboard_for(NULL)
    WHERE run_id IN (SELECT run_id FROM wanted)
),
entry AS (
    SELECT run_id, seg_idx, map(list(metric ORDER BY metric), list(value ORDER BY metric)) AS m
    FROM metric_values
    WHERE seg_idx IS NOT NULL AND run_id IN (SELECT run_id FROM wanted)
    GROUP BY run_id, seg_idx
)
SELECT r.run_id, r.model_slug, r.condition, c.name AS test_set, h.seg_idx, s.seg_key AS seg_id,
       s.src AS source, s.refs AS "references", h.hyp AS hypothesis, h.error,
       bleu_score(st.bleu_stats) AS bleu, st.chrf_sentence AS chrf_plus_plus,
       ter_score(st.ter_stats) AS ter, st.exact_match,
       coalesce(e.m, MAP {}::MAP(VARCHAR, DOUBLE)) AS metrics,
       ch.audit_id, x.source_exposure, x.target_exposure, x.pair_exposure, x.bin
FROM wanted w
JOIN runs r USING (run_id)
JOIN corpora c ON c.corpus_id = r.test_corpus_id
JOIN hypotheses h ON h.run_id = r.run_id
JOIN segments s ON s.corpus_id = r.test_corpus_id AND s.seg_idx = h.seg_idx
LEFT JOIN segment_stats st ON st.run_id = h.run_id AND st.seg_idx = h.seg_idx
LEFT JOIN entry e ON e.run_id = h.run_id AND e.seg_idx = h.seg_idx
LEFT JOIN chosen ch ON ch.run_id = r.run_id
LEFT JOIN exposures x ON x.audit_id = ch.audit_id AND x.seg_idx = h.seg_idx
ORDER BY r.model_slug, r.condition NULLS FIRST, r.run_id, h.seg_idx
"""


@dataclass(frozen=True)
class ExportResult:
    """What `export` wrote: the file (None: standard output), the runs and the records."""

    path: str | None
    format: str
    run_ids: list[str]
    records: int
    files: list[str] | None = None  # lm-eval: the sample log of each run

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {"path": self.path, "format": self.format,
                               "run_ids": self.run_ids, "records": self.records}  # fmt: skip
        if self.files is not None:
            out["files"] = self.files
        return out


def export_run_ids(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str], testset: str | None
) -> list[str]:
    """The runs to export: those named (ids, prefixes, slugs; on `testset` when given), or
    every run of `testset`."""
    if not runs and testset is None:
        raise UsageError("name the runs to export, or --testset NAME for all of its runs")
    if runs:
        return list(dict.fromkeys(resolve_run(con, ref, testset) for ref in runs))
    if testset is not None:
        corpus = get_corpus(con, testset, "test")
        found = [
            r for (r,) in con.execute(
                "SELECT run_id FROM ingested_runs WHERE test_corpus_id = ? ORDER BY run_id",
                [corpus.corpus_id],
            ).fetchall()
        ]  # fmt: skip
        if not found:
            raise UsageError(f"test set {testset!r} has no runs to export")
    return found


def export_table(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> pa.Table:
    """The records of the runs as an Arrow table (EXPORT_COLUMNS)."""
    return con.execute(_RECORDS, [list(run_ids)]).to_arrow_table()


def _records(table: pa.Table) -> list[dict[str, Any]]:
    """The records as Python values, the metrics map as a dict."""
    rows = table.to_pylist()
    for row in rows:
        row["metrics"] = dict(row["metrics"] or [])
    return rows


def _tsv_cell(value: Any) -> str:
    """A TSV cell: text with tabs, newlines and backslashes escaped; lists and maps as JSON."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return tsv_escaped(str(value))


def write_export(table: pa.Table, fmt: str, path: str | Path | None) -> bytes | None:
    """Write the records to `path` in `fmt`; with no path, return the bytes (JSON Lines, TSV)."""
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"--format: expected one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")
    if fmt == "lm-eval":
        raise UsageError("--format lm-eval writes a folder per model: use write_lm_eval")
    if fmt == "parquet":
        if path is None:
            raise UsageError("--format parquet writes a file: give --out PATH")
        pq.write_table(table, str(path))
        return None
    rows = _records(table)
    if fmt == "jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        lines = ["\t".join(table.column_names)]
        lines += ["\t".join(_tsv_cell(row[c]) for c in table.column_names) for row in rows]
        text = "\n".join(lines) + "\n"
    data = text.encode("utf-8")
    if path is None:
        return data
    Path(path).write_bytes(data)
    return None


def _sha256(text: str) -> str:
    """Hex sha256 of a text (the harness's doc, prompt and target hashes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lm_eval_task(test_set: str, src_lang: str | None, tgt_lang: str | None) -> str:
    """The task name of a test set's sample log: `<test set>-<src>-<tgt>` when both languages
    are known (as the harness names translation tasks), else the test set's name."""
    return f"{test_set}-{src_lang}-{tgt_lang}" if src_lang and tgt_lang else test_set


def write_lm_eval(con: duckdb.DuckDBPyConnection, table: pa.Table, folder: str | Path) -> list[str]:
    """Each run's records as lm-evaluation-harness writes a translation task's `--log_samples`
    output: `FOLDER/<model slug>/samples_<task>_<created at>.jsonl`, one record per segment
    (`doc` with the source and the first reference under `translation`, `target`,
    `filtered_resps`, the `bleu`/`chrf`/`ter` reference-prediction pairs, the hashes), plus the
    warehouse's own `tame_wh` object (run, model, condition, error, per-segment scores); the
    files written (every name is checked before the first is written)."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {folder}: --format lm-eval writes a folder; this is a file")
    by_run = _by_run(_records(table))
    plan: dict[Path, tuple[str, str, str]] = {}
    for run_id, records in by_run.items():
        head = con.execute(
            "SELECT strftime(r.created_at, '%Y-%m-%dT%H-%M-%S.%f'), c.src_lang, c.tgt_lang "
            "FROM runs r JOIN corpora c ON c.corpus_id = r.test_corpus_id WHERE r.run_id = ?",
            [run_id],
        ).fetchone()
        assert head is not None
        created, src_lang, tgt_lang = head
        task = lm_eval_task(records[0]["test_set"], src_lang, tgt_lang)
        path = out / _folder_name(records[0]["model_slug"]) / f"samples_{task}_{created}.jsonl"
        if path in plan:
            raise UsageError(
                f"runs {plan[path][0]} and {run_id} would both be written to {path} (same "
                "model, test set and time of creation): export them one at a time"
            )
        plan[path] = (run_id, src_lang or "src", tgt_lang or "tgt")
    for path, (run_id, src_key, tgt_key) in plan.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(_sample(r, src_key, tgt_key), ensure_ascii=False)
                 for r in by_run[run_id]]  # fmt: skip
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [str(path) for path in plan]


def _folder_name(model_slug: str) -> str:
    """A model slug as a folder name, as the harness sanitises model names (`/` → `__`)."""
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", model_slug.replace("/", "__"))
    return name if name.strip(".") else "_"


def _by_run(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The records grouped by run, in their order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        out.setdefault(record["run_id"], []).append(record)
    return out


def _sample(record: dict[str, Any], src_key: str, tgt_key: str) -> dict[str, Any]:
    """One segment as a harness sample record."""
    reference = (record["references"] or [""])[0]
    hypothesis = record["hypothesis"]
    doc = {"id": record["seg_id"], "translation": {src_key: record["source"], tgt_key: reference}}
    pair = [reference, hypothesis]
    return {
        "doc_id": record["seg_idx"],
        "doc": doc,
        "target": reference,
        "arguments": {},
        "resps": [[hypothesis]],
        "filtered_resps": [hypothesis],
        "filter": "none",
        "metrics": ["bleu", "chrf", "ter"],
        "doc_hash": _sha256(json.dumps(doc, ensure_ascii=False, sort_keys=True)),
        "prompt_hash": _sha256(record["source"]),
        "target_hash": _sha256(reference),
        "bleu": pair,
        "chrf": pair,
        "ter": pair,
        "tame_wh": {
            "run_id": record["run_id"],
            "model_slug": record["model_slug"],
            "condition": record["condition"],
            # What `ingest --from lm-eval` needs to give back the same run: the test set, the
            # segment's id and every reference.
            "test_set": record["test_set"],
            "seg_id": record["seg_id"],
            "references": record["references"],
            "error": record["error"],
            "sentence_bleu": record["bleu"],
            "sentence_chrf_plus_plus": record["chrf_plus_plus"],
            "sentence_ter": record["ter"],
            "metrics": record["metrics"],
        },
    }
