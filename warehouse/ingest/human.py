"""A warehouse from an annotation file alone (`ingest --mqm`): the test set from the judged
sources and one human translation as reference, one run per other system from the judged
targets, and the judgments on those runs, all in one transaction (docs/human.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from warehouse.errors import InputError, UsageError
from warehouse.ingest.prepare import RegisteredTestSet, prepare_from_texts
from warehouse.ingest.runs import IngestResult, PreparedRun
from warehouse.ingest.write import write_runs
from warehouse.inputs.corpus_files import CorpusData, validate_name
from warehouse.inputs.human_files import HumanFile
from warehouse.inputs.segment_meta import SegmentMeta
from warehouse.metrics.options import DEFAULT_OPTIONS, MetricOptions
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.human import HumanSetResult, add_human_set


@dataclass(frozen=True)
class AnnotatedIngest:
    """What `ingest --mqm` stored: the test set, the runs and the judgment set."""

    test_set: str
    test_set_added: bool
    runs: list[IngestResult]
    judgments: HumanSetResult


def _segment_order(keys: Sequence[str]) -> list[str]:
    """Segment ids in numeric order when all are integers, else in order of appearance."""
    unique = list(dict.fromkeys(keys))
    if all(k.lstrip("-").isdigit() for k in unique):
        return sorted(unique, key=int)
    return unique


def _texts(
    human: HumanFile,
) -> tuple[list[str], dict[str, str], dict[str, str | None], dict[str, dict[str, str]]]:
    """Segment ids in order, each segment's source and document, each system's target per
    segment; a segment whose source (or a system's target) differs between lines is refused."""
    sources: dict[str, str] = {}
    docs: dict[str, str | None] = {}
    targets: dict[str, dict[str, str]] = {}
    for a in human.annotations:
        if a.source is None or a.target is None:
            raise InputError("the line gives no source or target text", human.path, a.line)
        seen = sources.setdefault(a.seg_key, a.source)
        if seen != a.source:
            raise InputError(f"segment {a.seg_key}'s source differs from an earlier line's",
                             human.path, a.line)  # fmt: skip
        docs.setdefault(a.seg_key, a.doc)
        target = targets.setdefault(a.system, {}).setdefault(a.seg_key, a.target)
        if target != a.target:
            raise InputError(f"{a.system}'s target of segment {a.seg_key} differs from an "
                             "earlier line's", human.path, a.line)  # fmt: skip
    return _segment_order([a.seg_key for a in human.annotations]), sources, docs, targets


def prepare_annotated(
    human: HumanFile,
    *,
    testset: str,
    reference_system: str,
    src_lang: str | None = None,
    tgt_lang: str | None = None,
    ci: BootstrapSettings | None = None,
    options: MetricOptions = DEFAULT_OPTIONS,
) -> tuple[CorpusData, list[PreparedRun]]:
    """The test set and the runs an annotation file holds (nothing is written)."""
    validate_name(testset)
    order, sources, docs, targets = _texts(human)
    if reference_system not in targets:
        raise UsageError(
            f"--reference-system: {reference_system!r} is not a system of {human.path} "
            f"(systems: {', '.join(sorted(targets))})"
        )
    first_line: dict[str, int] = {}
    for a in human.annotations:
        first_line.setdefault(a.system, a.line)
    for system, by_seg in sorted(targets.items()):
        missing = [k for k in order if k not in by_seg]
        if missing:
            raise InputError(
                f"system {system} has no judged target for segment {missing[0]} "
                f"({len(missing)} of {len(order)} missing): every system needs every segment",
                human.path,
                first_line[system],
            )
    reference = targets[reference_system]
    meta = SegmentMeta(
        keys=list(order),
        difficulty=[None] * len(order),
        provenance=[None] * len(order),
        extra=[json.dumps({"doc": docs[k]}) if docs[k] else None for k in order],
    )
    data = CorpusData(
        name=testset,
        role="test",
        src=[sources[k] for k in order],
        refs=[[reference[k] for k in order]],
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        seg_meta=meta,
        files={"annotations": human.path, "reference_system": reference_system},
    )
    test = RegisteredTestSet(
        corpus_id=data.corpus_id,
        name=testset,
        keys=list(order),
        sources=data.src,
        refs=[[reference[k]] for k in order],
        difficulty=[None] * len(order),
        src_lang=src_lang,
        tgt_lang=tgt_lang,
    )
    runs = [
        prepare_from_texts(test, [by_seg[k] for k in order], label=f"{human.path} ({system})",
                           model_slug=system, ci=ci, options=options, new_test_set=data)
        for system, by_seg in sorted(targets.items())
        if system != reference_system
    ]  # fmt: skip
    return data, runs


def ingest_annotated(
    con: duckdb.DuckDBPyConnection,
    human: HumanFile,
    data: CorpusData,
    runs: Sequence[PreparedRun],
    *,
    reference_system: str,
    replace: bool = False,
) -> AnnotatedIngest:
    """Write the test set, the runs and the judgments of `prepare_annotated` in one transaction;
    a stored test set of the same name must hold the same segments."""
    row = con.execute("SELECT corpus_id FROM corpora WHERE name = ?", [data.name]).fetchone()
    if row is not None and row[0] != data.corpus_id:
        raise UsageError(
            f"a corpus or test set named {data.name!r} already exists with other segments; "
            "choose another --testset"
        )
    found: list[HumanSetResult] = []

    def judgments(con: duckdb.DuckDBPyConnection) -> None:
        found.append(add_human_set(con, human, data.name, skip=[reference_system],
                                   replace=replace, in_transaction=True))  # fmt: skip

    results = write_runs(con, runs, replace=replace, then=judgments)
    return AnnotatedIngest(data.name, row is None, results, found[0])
