"""Run cards and test reports (docs/inputs.md): parsed and type-checked, unknown fields kept."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from warehouse.errors import InputError
from warehouse.inputs.corpus_files import name_problem
from warehouse.inputs.json_checks import (
    MAX_JSON_BYTES,
    JsonPath,
    describe,
    field_count,
    field_number,
    field_str,
    flatten_numbers,
    label_problem,
    loads_checked,
    optional_count,
    optional_number,
    optional_object,
    optional_str,
    required_str,
)
from warehouse.inputs.segment_meta import parse_difficulty, parse_key, parse_provenance
from warehouse.inputs.textio import decode_utf8, read_bytes
from warehouse.metrics.registry import METRICS

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")

# Run-card scores the warehouse computes itself (from text, stats or other columns): they stay in
# the stored JSON but are not copied to `metric_values`, so views never mix claimed and computed.
# A registered metric's other names in reports (`comet` → `comet_score`): stored under its own
# name, so that its leaderboard column, intervals and sync find it.
REGISTERED_NAMES = {alias: m.name for m in METRICS for alias in m.aliases}

COMPUTED_SCORES = frozenset({m.name for m in METRICS if m.computed}) | {
    # counts, labels and breakdowns the warehouse derives itself
    "exact_matches",
    "quality_tier",
    "confidence_intervals",
    "confidence_intervals_by_tier",
    "by_difficulty",
    "by_provenance",
    "total",
    "evaluated",
    "errors",
}

# Entry fields with a fixed meaning; every other numeric field is a per-entry metric.
ENTRY_FIELDS = frozenset(
    {
        "id",
        "source",
        "expected",
        "predicted",
        "exact_match",
        "error",
        "latency_s",
        "difficulty",
        "provenance",
        "usage",
        "plugin_metrics",
    }
)


@dataclass
class EntryInput:
    """One entry of a run card or test report."""

    key: str | None
    source: str | None
    refs: list[str] | None
    hyp: str | None
    error: str | None
    latency_s: float | None
    tokens: dict[str, int | None]
    difficulty: int | None
    provenance: str | None
    extra_meta: dict[str, Any]
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class RunDocument:
    """A parsed run card or test report."""

    file: str
    doc: dict[str, Any]
    model_slug: str | None
    condition: str | None
    created_at: datetime | None
    dataset_id: str | None
    language_pair: str | None
    fingerprint_hash: str | None
    elapsed_seconds: float | None
    tokens: dict[str, int | None]
    total_cost_usd: float | None
    run_metrics: dict[str, float]
    entries: list[EntryInput] | None


def load_json(path: str | Path) -> Any:
    """Parse a JSON file (a regular file of at most MAX_JSON_BYTES); syntax errors name the line
    and column, bad numbers and too deep nesting the JSON path."""
    name = str(path)
    text = decode_utf8(read_bytes(path, limit=MAX_JSON_BYTES), name)
    if not text.strip():
        raise InputError("empty file (expected a JSON object)", name)
    document = loads_checked(text, JsonPath(name))
    if _SURROGATE_ESCAPE.search(text) is None:
        # A lone surrogate can only come from a \u escape of one: none in the text.
        return document
    try:
        json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        # A \uD800-\uDFFF escape without its other half decodes to no character at all.
        found = _LONE_SURROGATE.search(text)
        line = text.count("\n", 0, found.start()) + 1 if found else None
        problem = "a \\u escape is half of a surrogate pair (not a character)"
        raise InputError(problem, name, line) from None
    return document


# Any \u escape of a surrogate (U+D800-U+DFFF), paired or not.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# A high-surrogate escape not followed by a low one, or a low one not preceded by a high one.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _timestamp(value: Any, where: JsonPath) -> datetime | None:
    """An ISO 8601 timestamp (stored as naive UTC)."""
    text = optional_str(value, where)
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise where.fail(f"must be an ISO 8601 timestamp, got {text!r}") from None
    if parsed.tzinfo is not None:
        try:
            parsed = parsed.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:
            raise where.fail(f"{text!r} is out of range in UTC (years 1-9999)") from None
    return parsed


# OpenAI-style nested counts: field -> (block, key within the block).
_TOKEN_DETAILS = {
    "reasoning_tokens": ("completion_tokens_details", "reasoning_tokens"),
    "cached_tokens": ("prompt_tokens_details", "cached_tokens"),
}


def _tokens(usage: dict[str, Any], where: JsonPath) -> dict[str, int | None]:
    """Token counts of a usage or totals block (OpenAI-style `*_details` accepted)."""
    counts = {name: field_count(usage, name, where) for name in TOKEN_FIELDS}
    for name, (block, key) in _TOKEN_DETAILS.items():
        if counts[name] is None and isinstance(usage.get(block), dict):
            counts[name] = optional_count(usage[block].get(key), where / block / key)
    return counts


def _refs(value: Any, where: JsonPath) -> list[str] | None:
    """`expected`: one reference string or a non-empty list of them."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise where.fail(f"must be a string or a list of strings, got {describe(value)}")


def _entry(raw: Any, where: JsonPath) -> EntryInput:
    """Parse one entry."""
    if not isinstance(raw, dict):
        raise where.fail(f"must be an object, got {describe(raw)}")
    error_value = raw.get("error")
    if error_value in (None, False, ""):
        error = None
    elif error_value is True:
        error = "error"
    elif isinstance(error_value, str):
        error = error_value
    else:
        error = json.dumps(error_value, ensure_ascii=False)
    line = (where.file, None)
    try:
        key = parse_key(raw.get("id"), line)  # type: ignore[arg-type]
        difficulty = parse_difficulty(raw.get("difficulty"), line)  # type: ignore[arg-type]
        provenance = parse_provenance(raw.get("provenance"), line)  # type: ignore[arg-type]
    except InputError as exc:
        raise where.fail(exc.problem) from None
    metrics: dict[str, float] = {}
    for name, value in raw.items():
        if name not in ENTRY_FIELDS:
            registered = REGISTERED_NAMES.get(str(name), str(name))
            metrics.update(flatten_numbers(value, registered, where / name))
    if "plugin_metrics" in raw:
        plugins = optional_object(raw["plugin_metrics"], where / "plugin_metrics")
        metrics.update(flatten_numbers(plugins, "plugin_metrics", where / "plugin_metrics"))
    extra = {
        k: v for k, v in raw.items() if k not in ENTRY_FIELDS and not isinstance(v, (int, float))
    }
    expected = raw.get("expected")
    usage = raw.get("usage")
    return EntryInput(
        key=key,
        source=field_str(raw, "source", where),
        refs=[expected] if type(expected) is str else _refs(expected, where / "expected"),
        hyp=field_str(raw, "predicted", where),
        error=error,
        latency_s=field_number(raw, "latency_s", where, non_negative=True),
        tokens=_tokens(
            usage if type(usage) is dict else optional_object(usage, where / "usage"),
            where / "usage",
        ),
        difficulty=difficulty,
        provenance=provenance,
        extra_meta=extra,
        metrics=metrics,
    )


def _label(value: str | None, where: JsonPath, what: str) -> None:
    """Refuse labels with control characters or of unusable length."""
    problem = None if value is None else label_problem(value, what)
    if problem:
        raise where.fail(problem)


def parse_run_document(doc: Any, file: str) -> RunDocument:
    """Type-check a run card / test report already parsed from JSON."""
    root = JsonPath(file)
    if not isinstance(doc, dict):
        raise root.fail(f"must be a JSON object, got {describe(doc)}")
    dataset = optional_object(doc.get("dataset"), root / "dataset")
    fingerprint = optional_object(doc.get("fingerprint"), root / "fingerprint")
    totals = optional_object(doc.get("totals"), root / "totals")
    scores = optional_object(doc.get("scores"), root / "scores")
    slug = doc.get("model_slug")
    if slug is not None:
        _label(required_str(slug, root / "model_slug"), root / "model_slug", "model_slug")
    _label(optional_str(doc.get("condition"), root / "condition"), root / "condition", "condition")
    dataset_id = optional_str(dataset.get("id"), root / "dataset" / "id")
    if dataset_id is not None:
        # It names the test set created on the fly: the same rules as any name.
        problem = name_problem(dataset_id)
        if problem:
            raise (root / "dataset" / "id").fail(problem)
    run_metrics: dict[str, float] = {}
    for name, value in scores.items():
        if name not in COMPUTED_SCORES:
            registered = REGISTERED_NAMES.get(name, name)
            run_metrics.update(flatten_numbers(value, registered, root / "scores" / name))
    if "plugin_metrics" in doc:
        plugins = optional_object(doc["plugin_metrics"], root / "plugin_metrics")
        run_metrics.update(flatten_numbers(plugins, "plugin_metrics", root / "plugin_metrics"))
    for name, value in totals.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            optional_number(value, root / "totals" / name, non_negative=True)
    entries: list[EntryInput] | None = None
    if "entries" in doc:
        raw_entries = doc["entries"]
        if not isinstance(raw_entries, list):
            raise (root / "entries").fail(f"must be a list, got {describe(raw_entries)}")
        at = root / "entries"
        entries = [_entry(raw, at / i) for i, raw in enumerate(raw_entries)]
    return RunDocument(
        file=file,
        doc=doc,
        model_slug=None if slug is None else required_str(slug, root / "model_slug"),
        condition=optional_str(doc.get("condition"), root / "condition"),
        created_at=_timestamp(doc.get("created_at", doc.get("timestamp")), root / "created_at"),
        dataset_id=dataset_id,
        language_pair=optional_str(
            dataset.get("language_pair"), root / "dataset" / "language_pair"
        ),
        fingerprint_hash=optional_str(fingerprint.get("hash"), root / "fingerprint" / "hash"),
        elapsed_seconds=optional_number(
            doc.get("elapsed_seconds"), root / "elapsed_seconds", non_negative=True
        ),
        tokens=_tokens(totals, root / "totals"),
        total_cost_usd=optional_number(
            totals.get("total_cost_usd"), root / "totals" / "total_cost_usd", non_negative=True
        ),
        run_metrics=run_metrics,
        entries=entries,
    )


def read_run_document(path: str | Path) -> RunDocument:
    """Read and type-check a run card or test report file."""
    return parse_run_document(load_json(path), str(path))
