"""Other tools' outputs as test reports: a table of outputs (Parquet, JSON Lines, CSV, TSV — a
Hugging Face dataset saved to disk), COMET's `comet-score --to_json` file, and the sample log
lm-evaluation-harness writes with `--log_samples`. Each becomes the warehouse's own test-report
document (docs/inputs.md, "Other tools' outputs"), so it is checked, aligned and scored like one;
the document keeps where it came from under `imported_from`."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from warehouse.errors import InputError, UsageError
from warehouse.inputs.runcard import load_json
from warehouse.inputs.tables import TABLE_FORMATS, Table, read_table
from warehouse.inputs.textio import decode_utf8, read_bytes, read_lines, split_lines

# `ingest --from KIND`: a table in a named format (`hf`: a saved dataset, format by suffix),
# COMET's JSON, or lm-evaluation-harness's sample log.
FOREIGN_FORMATS = ("table", *TABLE_FORMATS, "hf", "comet", "lm-eval")
# The per-entry metric COMET's scores are stored as (the leaderboard's `comet_score` column).
COMET_METRIC = "comet_score"


@dataclass(frozen=True)
class Columns:
    """Which columns of a table hold what (a dotted name reaches into nested records)."""

    hyp: str | None = None
    src: str | None = None
    refs: tuple[str, ...] = ()
    id: str | None = None
    metrics: tuple[tuple[str, str], ...] = ()  # (metric name, column)

    @property
    def given(self) -> bool:
        """Whether any column was named."""
        return bool(self.hyp or self.src or self.refs or self.id or self.metrics)


@dataclass(frozen=True)
class ForeignRun:
    """One run read from another tool's file, as a test-report document."""

    label: str
    document: dict[str, Any]
    model_hint: str | None = None  # a model slug the file suggests (its folder or system name)
    positions: bool = False  # entries carry no id or source: they answer the segments in order


def parse_metric_columns(pairs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """`NAME=COLUMN` options as (metric name, column) pairs."""
    out = []
    for pair in pairs:
        name, sep, column = pair.partition("=")
        if not sep or not name or not column:
            raise UsageError(f"--metric-col {pair!r}: expected NAME=COLUMN")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}", name):
            raise UsageError(f"--metric-col {pair!r}: a metric name is letters, digits, _.:-")
        out.append((_registered_name(name), column))
    return tuple(out)


def _registered_name(name: str) -> str:
    """A registered metric's name for one of its aliases (`comet` → `comet_score`, the
    leaderboard's COMET column); other names as given."""
    from warehouse.metrics.registry import METRICS

    return next((m.name for m in METRICS if name in m.aliases), name)


def read_foreign(
    path: str | Path,
    kind: str,
    *,
    columns: Columns | None = None,
    table_format: str | None = None,
    comet_model: str | None = None,
    lm_eval_results: str | Path | None = None,
    inputs_dir: str | Path | None = None,
) -> list[ForeignRun]:
    """The runs in another tool's file (`kind`: one of FOREIGN_FORMATS); files it names are read
    only beside it or under `inputs_dir`."""
    columns = columns or Columns()
    if kind not in FOREIGN_FORMATS:
        raise UsageError(f"--from: expected one of {', '.join(FOREIGN_FORMATS)}, got {kind!r}")
    if kind == "comet":
        if columns.given:
            raise UsageError("--from comet reads src, mt, ref and COMET; drop the column options")
        return comet_runs(path, comet_model, inputs_dir)
    if inputs_dir is not None:
        raise UsageError("--inputs-dir goes with --from comet (the files its printed form names)")
    if comet_model is not None:
        raise UsageError("--comet-model goes with --from comet")
    if kind == "lm-eval":
        return lm_eval_runs(path, columns, lm_eval_results)
    if lm_eval_results is not None:
        raise UsageError("--lm-eval-results goes with --from lm-eval")
    fmt = kind if kind in TABLE_FORMATS else table_format
    return [table_run(path, columns, fmt)]


# --- Tables --------------------------------------------------------------------------------


def table_run(path: str | Path, columns: Columns, fmt: str | None = None) -> ForeignRun:
    """A table with one row per segment: the hypothesis column, and the source, reference, id
    and metric columns that are named."""
    if columns.hyp is None:
        raise UsageError("a table of outputs needs --hyp-col (the column of hypotheses)")
    table = read_table(path, fmt)
    hyps = table.texts(columns.hyp)
    srcs = table.texts(columns.src) if columns.src else None
    refs = [table.texts(c) for c in columns.refs]
    keys = table.keys(columns.id) if columns.id else None
    metrics = [(name, table.numbers(column)) for name, column in columns.metrics]
    entries = []
    for i, hyp in enumerate(hyps):
        entry: dict[str, Any] = {"predicted": hyp}
        if keys is not None:
            entry["id"] = keys[i]
        if srcs is not None:
            entry["source"] = srcs[i]
        if refs:
            entry["expected"] = [r[i] for r in refs]
        for name, values in metrics:
            if values[i] is not None:
                entry[name] = values[i]
        entries.append(entry)
    imported = {"format": "table", "file": str(path), "columns": _columns_doc(columns)}
    document = {"dataset": {"id": _dataset_name(path)}, "entries": entries,
                "imported_from": imported}  # fmt: skip
    positional = keys is None and srcs is None
    return ForeignRun(str(path), document, positions=positional)


def _columns_doc(columns: Columns) -> dict[str, Any]:
    """The column mapping as stored with the run."""
    out: dict[str, Any] = {"hyp": columns.hyp}
    if columns.src:
        out["src"] = columns.src
    if columns.refs:
        out["refs"] = list(columns.refs)
    if columns.id:
        out["id"] = columns.id
    if columns.metrics:
        out["metrics"] = dict(columns.metrics)
    return out


def _dataset_name(path: str | Path) -> str:
    """A test set name from a file name (letters, digits and -_. only)."""
    stem = Path(path).name.split(".")[0]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.") or "imported"
    return name[:64]


# --- COMET ---------------------------------------------------------------------------------


def comet_runs(
    path: str | Path, model: str | None, inputs_dir: str | Path | None = None
) -> list[ForeignRun]:
    """COMET's output: the JSON of `comet-score … --to_json FILE` (one run per translation file
    it scored, each segment with its src, mt, ref when COMET had references, and its score
    under "COMET"), or what `comet-score` prints (`FILE<TAB>Segment I<TAB>score: X` lines)."""
    file = str(path)
    if not model:
        raise UsageError(
            "COMET's output does not name the model that scored it; give --comet-model "
            "(e.g. Unbabel/wmt22-comet-da): scores of different models are not comparable"
        )
    text = decode_utf8(read_bytes(path), file)
    if not text.lstrip().startswith("{"):
        return _comet_printed(text, path, model, inputs_dir)
    data = load_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError("expected COMET's JSON: an object of translation files", file)
    runs = []
    for system, segments in data.items():
        where = f"$[{json.dumps(system)}]"
        if not isinstance(segments, list) or not segments:
            raise InputError(f"{where}: expected a list of segments", file)
        entries = []
        for i, segment in enumerate(segments):
            at = f"{where}[{i}]"
            if not isinstance(segment, dict):
                raise InputError(f"{at}: expected an object with src, mt and COMET", file)
            entry: dict[str, Any] = {
                "id": str(i),
                "source": _text(segment, "src", at, file),
                "predicted": _text(segment, "mt", at, file),
                COMET_METRIC: _score(segment, at, file),
            }
            if "ref" in segment:
                entry["expected"] = _text(segment, "ref", at, file)
            entries.append(entry)
        imported = {"format": "comet", "file": file, "system": system, "comet_model": model}
        document = {
            "dataset": {"id": _dataset_name(path)},
            "entries": entries,
            "metric_signatures": {COMET_METRIC: f"comet|model:{model}"},
            "imported_from": imported,
        }
        runs.append(ForeignRun(f"{file} ({system})", document, model_hint=_system_slug(system)))
    return runs


_SEGMENT_LINE = re.compile(r"^(?P<file>.*)\tSegment (?P<i>\d+)\tscore: (?P<score>\S+)$")
_SYSTEM_LINE = re.compile(r"^(?P<file>.*)\tscore: (?P<score>\S+)$")


def _comet_printed(
    text: str, path: str | Path, model: str, inputs_dir: str | Path | None
) -> list[ForeignRun]:
    """What `comet-score` prints: per segment `FILE<TAB>Segment I<TAB>score: X` (4 decimals),
    per system `FILE<TAB>score: X`. The hypotheses are read from each FILE, found beside the
    output or under `inputs_dir` (nowhere else); the runs answer the registered test set's
    segments in order."""
    file = str(path)
    scores: dict[str, dict[int, float]] = {}
    for number, line in enumerate(split_lines(text), start=1):
        found = _SEGMENT_LINE.match(line)
        if found is None:
            if _SYSTEM_LINE.match(line) or not line.strip() or line.startswith("Predictions "):
                continue
            raise InputError(
                "not a line comet-score prints (FILE<TAB>Segment I<TAB>score: X)", file, number
            )
        try:
            value = float(found["score"])
        except ValueError:
            value = float("nan")
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"score {found['score']!r} is not a finite number", file, number)
        segments = scores.setdefault(found["file"], {})
        if int(found["i"]) in segments:
            raise InputError(f"segment {found['i']} of {found['file']} again", file, number)
        segments[int(found["i"])] = value
    if not scores:
        raise InputError("no segment scores (FILE<TAB>Segment I<TAB>score: X lines)", file)
    runs = []
    for system, segments in scores.items():
        hyp_path = _named_file(system, path, inputs_dir)
        hyps = read_lines(hyp_path)
        if sorted(segments) != list(range(len(hyps))):
            raise InputError(
                f"scores {len(segments)} segments of {system} but the file has {len(hyps)} lines",
                file,
            )
        entries = [{"predicted": h, COMET_METRIC: segments[i]} for i, h in enumerate(hyps)]
        imported = {"format": "comet", "file": file, "system": system, "comet_model": model,
                    "hypotheses": str(hyp_path)}  # fmt: skip
        document = {"entries": entries, "imported_from": imported,
                    "metric_signatures": {COMET_METRIC: f"comet|model:{model}"}}  # fmt: skip
        runs.append(ForeignRun(f"{file} ({system})", document, model_hint=_system_slug(system),
                               positions=True))  # fmt: skip
    return runs


def _named_file(name: str, output: str | Path, inputs_dir: str | Path | None) -> Path:
    """A file COMET's output names, beside that output or under `inputs_dir`: the output is
    often a pull request's, and whatever file it named would be stored as hypotheses."""
    roots = [Path(output).resolve().parent]
    if inputs_dir is not None:
        roots.append(Path(inputs_dir).resolve())
    given = Path(name)
    candidates = [given] if given.is_absolute() else [root / given for root in roots]
    outside = None
    for candidate in candidates:
        real = candidate.resolve()
        if not any(real.is_relative_to(root) for root in roots):
            outside = outside or real
        elif real.is_file():
            return real
    allowed = "beside it" + (" or under --inputs-dir" if inputs_dir is not None else "")
    if outside is not None and outside.exists():
        raise InputError(
            f"names {name!r}, which is {outside}, outside the folders tame-wh reads COMET's "
            f"files from ({allowed}; --inputs-dir DIR adds a folder)",
            str(output),
        )
    raise InputError(f"names {name!r}, and no such file is {allowed}", str(output))


def _text(record: dict[str, Any], key: str, at: str, file: str) -> str:
    """A text field of a record; missing or not text is an input error naming the path."""
    value = record.get(key)
    if not isinstance(value, str):
        got = "missing" if key not in record else f"not text ({type(value).__name__})"
        raise InputError(f"{at}.{key}: {got}", file)
    return value


def _score(segment: dict[str, Any], at: str, file: str) -> float:
    """A segment's COMET score: a finite number."""
    value = segment.get("COMET")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InputError(f"{at}.COMET: expected a number, got {json.dumps(value)[:40]}", file)
    if value in (float("inf"), float("-inf")):
        raise InputError(f"{at}.COMET: not finite", file)
    return float(value)


def _system_slug(system: str) -> str:
    """A model slug from a translation file's name (`out/sysA.de` → `sysA`)."""
    return _model_slug(Path(system).name.split(".")[0]) or "system"


def _model_slug(name: str) -> str:
    """A model slug from a model's name (`my-org/Llama-3.1-8B` → `my-org__Llama-3.1-8B`: the
    harness's own sanitising of path separators; other characters a slug cannot hold → `-`)."""
    return re.sub(r"[^A-Za-z0-9_.:-]+", "-", name.replace("/", "__")).strip("-.")


# --- lm-evaluation-harness -----------------------------------------------------------------

# `samples_<task>_<date>.jsonl`; a translation task names its pair, e.g. wmt16-de-en.
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[0-9.-]+)\.jsonl?$")
_PAIR = re.compile(r"(?:^|[-_])(?P<src>[a-z]{2,3})-(?P<tgt>[a-z]{2,3})$")


def lm_eval_runs(
    path: str | Path, columns: Columns, results: str | Path | None = None
) -> list[ForeignRun]:
    """A `--log_samples` file: one record per document with `doc`, `target` (the reference)
    and `filtered_resps` (the filtered response: the hypothesis); the source is the `doc` field
    of the task's source language (`doc.translation.<src>`, from the task's name) unless
    `--src-col` names another; numeric per-sample metrics are kept as `lm_eval.<name>`."""
    file = str(path)
    task = _task_name(path)
    records, lines = _samples(path)
    src_col = columns.src or _source_column(task, records[0], file)
    if columns.hyp or columns.refs or columns.id or columns.metrics:
        raise UsageError("--from lm-eval takes --src-col only (the rest is the log's own)")
    sources = Table(file, records, lines, list(records[0])).texts(src_col)
    entries: list[dict[str, Any]] = []
    for record, line, source in zip(records, lines, sources, strict=True):
        target = record.get("target")
        if not isinstance(target, str):
            raise InputError(f"target: expected text, got {type(target).__name__}", file, line)
        responses = record.get("filtered_resps")
        if isinstance(responses, list) and responses and isinstance(responses[0], list):
            responses = responses[0]  # one request's list of responses
        if not isinstance(responses, list) or not responses or not isinstance(responses[0], str):
            raise InputError("filtered_resps: expected a list holding the response", file, line)
        ours = _ours(record)
        if ours:  # a log tame-wh exported: its texts as stored, to give back the same run
            references = ours.get("references")
            entry: dict[str, Any] = {
                "id": str(ours.get("seg_id", record.get("doc_id", len(entries)))),
                "source": source,
                "expected": references if _all_text(references) else target,
                "predicted": responses[0],
            }
        else:  # the harness's own: its responses and targets carry stray white space
            entry = {
                "id": str(record.get("doc_id", len(entries))),
                "source": source,
                "expected": target.strip(),
                "predicted": responses[0].strip(),
            }
        if isinstance(ours.get("error"), str):  # a log tame-wh exported: the entry had failed
            entry["error"] = ours["error"]
        kept = {
            name: float(record[name])
            for name in record.get("metrics") or []
            if isinstance(name, str)
            and isinstance(record.get(name), (int, float))
            and not isinstance(record.get(name), bool)
        }
        if kept:
            entry["lm_eval"] = kept
        entries.append(entry)
    imported: dict[str, Any] = {"format": "lm-eval", "file": file, "task": task}
    document: dict[str, Any] = {"dataset": {"id": _dataset_name(task)}, "entries": entries,
                                "imported_from": imported}  # fmt: skip
    hint = Path(path).resolve().parent.name  # the harness names the folder after the model
    ours = _ours(records[0])
    if isinstance(ours.get("test_set"), str):  # the exported run's own test set, when stored
        document["dataset"]["id"] = ours["test_set"]
    if isinstance(ours.get("model_slug"), str):  # a log tame-wh exported names its run's
        hint = ours["model_slug"]
    if isinstance(ours.get("condition"), str):
        document["condition"] = ours["condition"]
    if results is not None:
        info = _results(results, task)
        imported["results"] = str(results)
        hint = info.get("model") or hint
        if info.get("condition"):
            document["condition"] = info["condition"]
    pair = _PAIR.search(task)
    if pair:
        document["dataset"]["language_pair"] = f"{pair['src']}-{pair['tgt']}"
    return [ForeignRun(file, document, model_hint=_model_slug(hint) if hint else None)]


def _all_text(value: Any) -> bool:
    """Whether `value` is a non-empty list of texts."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _ours(record: dict[str, Any]) -> dict[str, Any]:
    """The `tame_wh` object of a sample log tame-wh exported (empty in the harness's own)."""
    found = record.get("tame_wh")
    return found if isinstance(found, dict) else {}


def _task_name(path: str | Path) -> str:
    """The task a sample log belongs to, from its file name (else the file's stem)."""
    found = _SAMPLES.match(Path(path).name)
    return found["task"] if found else Path(path).name.split(".")[0]


def _samples(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """The log's records: JSON Lines (the harness since 0.4.3), or one JSON array (before)."""
    file = str(path)
    text = decode_utf8(read_bytes(path), file)
    if text.lstrip().startswith("["):
        records = load_json(path)
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise InputError("expected a list of sample objects", file)
        return records, list(range(1, len(records) + 1))
    table = read_table(path, "jsonl")
    return table.records, table.lines


def _source_column(task: str, record: dict[str, Any], file: str) -> str:
    """`doc.translation.<src>` for a translation task named with its pair (wmt16-de-en)."""
    pair = _PAIR.search(task)
    translation = (record.get("doc") or {}).get("translation")
    if pair and isinstance(translation, dict) and pair["src"] in translation:
        return f"doc.translation.{pair['src']}"
    fields = ", ".join(sorted((record.get("doc") or {}).keys())[:10]) or "none"
    raise UsageError(
        f"{file}: cannot tell which field of `doc` is the source of task {task!r} (doc fields: "
        f"{fields}); give --src-col, e.g. --src-col doc.text"
    )


def _results(path: str | Path, task: str) -> dict[str, str | None]:
    """The model name and the task's shots from the harness's `results_<date>.json`."""
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise InputError("expected the harness's results object", str(path))
    # The harness's own sanitised name (it names the output folder too), else the model name.
    model = doc.get("model_name_sanitized")
    if not isinstance(model, str) or not model:
        name = doc.get("model_name")
        model = name if isinstance(name, str) and name else None
    shots = (doc.get("n-shot") or {}).get(task) if isinstance(doc.get("n-shot"), dict) else None
    condition = f"{shots}-shot" if isinstance(shots, int) and not isinstance(shots, bool) else None
    return {"model": model, "condition": condition}
