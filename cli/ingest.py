"""`tame-wh ingest`: store evaluated runs (called from CI after every evaluation)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import click

from warehouse import (
    AfterCommitError,
    IngestResult,
    RegressionReport,
    UsageError,
    Warehouse,
    WarehouseError,
)
from warehouse.cli.context import (
    MAX_LOCK_TIMEOUT,
    AppContext,
    finite,
    gate_options,
    json_option,
    language_options,
    metric_options,
    pass_app,
    plugin_metric_option,
    stored_interval_options,
)
from warehouse.cli.output import emit_json, say, status
from warehouse.cli.regressions import print_gate
from warehouse.frontend import (
    DB_ENV_VAR,
    DEFAULT_AGAINST,
    FOREIGN_FORMATS,
    TABLE_FORMATS,
    Columns,
    IngestRequest,
    MetricOptions,
    MissingWarehouseError,
    check_against,
    parse_metric_columns,
    parse_tags,
    regressions_markdown,
    warehouse_exists,
)

_file = click.Path(path_type=Path, dir_okay=False)


def _describe(result: IngestResult) -> str:
    """One line per run for people."""
    s = result.scores
    em = "n/a" if s["exact_match_rate"] is None else f"{s['exact_match_rate']:.3f}"
    ter = "n/a" if s["ter"] is None else f"{s['ter']:.2f}"
    verb = {"added": "ingested", "replaced": "replaced", "unchanged": "already ingested"}[
        result.action
    ]
    condition = f"/{result.condition}" if result.condition else ""
    made = " (new test set)" if result.test_set_created else ""
    return (
        f"{verb} run {result.run_id}  {result.model_slug}{condition} on {result.test_set}{made}: "
        f"{result.n_entries} entries, {result.n_errors} errors · BLEU {s['bleu']:.2f} · "
        f"chrF++ {s['chrf']:.2f} · TER {ter} · exact match {em}"
    )


@click.command()
@click.argument("reports", nargs=-1, type=_file)
@click.option(
    "--testset",
    default=None,
    help="Registered test set: the one --hyp answers, or the one JSON reports must match.",
)
@click.option("--hyp", type=_file, default=None, help="Hypotheses, one per test segment.")
@click.option("--model-slug", default=None, help="Model name (else taken from the run card).")
@click.option(
    "--tag",
    "tags",
    multiple=True,
    metavar="KEY=VALUE",
    help="Tag every run of this ingest (repeat), e.g. pr=123 to keep a pull request's runs off "
    "the main board (leaderboard --exclude-tag pr).",
)
@click.option("--condition", default=None, help="Condition label, e.g. zero-shot.")
@click.option(
    "--run-card",
    type=_file,
    default=None,
    help="Run card JSON with tokens, cost, latency, dataset, fingerprint, scores.",
)
@click.option(
    "--replace", is_flag=True, help="Overwrite a run that was ingested before (its tags are kept)."
)
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0, max=MAX_LOCK_TIMEOUT),
    callback=finite,
    default=None,
    help="Seconds to wait while another process writes the warehouse (default: the global one).",
)
@click.option(
    "--replicate-of",
    default=None,
    metavar="RUN",
    help="These runs repeat RUN's configuration (another seed): one replicate group.",
)
@stored_interval_options
@metric_options()
@click.option(
    "--gate",
    is_flag=True,
    help="Then judge each ingested run against its baseline (as `regressions --run`): "
    "exit 1 when one regressed.",
)
@click.option(
    "--against",
    default=None,
    metavar="previous|best|tag:KEY=VALUE|RUN",
    help="With --gate (required): the baseline, tag:KEY=VALUE (tag:baseline=main), a run, best "
    "or previous.",
)
@click.option(
    "--require-baseline",
    is_flag=True,
    help="With --gate: a run with no baseline fails (exit 5: the run stays stored); the "
    "default unless settings gate.require_baseline is 0.",
)
@click.option(
    "--allow-new-model",
    is_flag=True,
    help="With --gate: store a run of a model with no stored run and pass it with a note "
    "(without it such a run is refused: a misspelled slug would have no baseline).",
)
@gate_options
@click.option(
    "--gate-markdown",
    type=_file,
    default=None,
    metavar="PATH",
    help="With --gate: append the verdict as Markdown to PATH (e.g. $GITHUB_STEP_SUMMARY).",
)
@click.option(
    "--mqm",
    type=_file,
    default=None,
    metavar="FILE",
    help="Build the test set (--testset) and one run per system from an MQM file alone, and "
    "store its judgments (docs/human.md).",
)
@click.option(
    "--reference-system",
    default=None,
    metavar="SYSTEM",
    help="With --mqm: the human translation that serves as the reference.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="With --mqm: refuse a file that repeats an error line (default: keep it once, warn).",
)
@plugin_metric_option
@click.option(
    "--from",
    "from_format",
    type=click.Choice(FOREIGN_FORMATS),
    default=None,
    help="The files are another tool's output: a table (table, parquet, jsonl, csv, tsv, hf), "
    "COMET's --to_json file, or an lm-evaluation-harness sample log (docs/inputs.md).",
)
@click.option("--hyp-col", default=None, help="With --from TABLE: the column of hypotheses.")
@click.option(
    "--src-col", default=None, help="With --from: the source column (a.b reaches into records)."
)
@click.option("--ref-col", "ref_cols", multiple=True, help="With --from TABLE: a reference column.")
@click.option("--id-col", default=None, help="With --from TABLE: the column of segment ids.")
@click.option(
    "--metric-col",
    "metric_cols",
    multiple=True,
    metavar="NAME=COLUMN",
    help="With --from TABLE: a per-segment metric to keep; repeatable.",
)
@click.option(
    "--format",
    "table_format",
    type=click.Choice(TABLE_FORMATS),
    default=None,
    help="With --from table or hf: the file's format (default: from its name).",
)
@click.option(
    "--comet-model",
    default=None,
    help="With --from comet: the COMET model that scored the file (its scores' signature).",
)
@click.option(
    "--lm-eval-results",
    type=_file,
    default=None,
    help="With --from lm-eval: the harness's results JSON (model name, shots).",
)
@language_options("With --mqm: the test set's ")
@click.option(
    "--inputs-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="With --from comet: a folder the translation files COMET's printed output names may "
    "be in (besides the output's own).",
)
@json_option
@pass_app
def ingest(
    app: AppContext,
    reports: tuple[Path, ...],
    testset: str | None,
    hyp: Path | None,
    model_slug: str | None,
    tags: tuple[str, ...],
    condition: str | None,
    run_card: Path | None,
    replace: bool,
    lock_timeout: float | None,
    no_intervals: bool,
    replicate_of: str | None,
    n_bootstrap_ci: int | None,
    ci_alpha: float | None,
    seed: int | None,
    tokenize: str,
    lowercase: bool,
    chrf_word_order: str,
    no_ter: bool,
    gate: bool,
    against: str | None,
    require_baseline: bool,
    allow_new_model: bool,
    gate_metrics: tuple[str, ...],
    margins: tuple[str, ...],
    gate_correction: str | None,
    gate_markdown: Path | None,
    mqm: Path | None,
    reference_system: str | None,
    strict: bool,
    metrics: tuple[str, ...],
    from_format: str | None,
    hyp_col: str | None,
    src_col: str | None,
    ref_cols: tuple[str, ...],
    id_col: str | None,
    metric_cols: tuple[str, ...],
    table_format: str | None,
    comet_model: str | None,
    lm_eval_results: Path | None,
    inputs_dir: Path | None,
    src_lang: str | None,
    tgt_lang: str | None,
    as_json: bool,
) -> None:
    """Ingest runs: plain files (--testset --hyp) or test-report / run-card JSON files.

    Each JSON file given as an argument is its own run; its entries carry source, expected and
    predicted text, and its test set is created on the fly (shared by content) — or, with
    --testset, the entries must match that registered test set (aligned by entry id, else by
    source text). A run already stored is recognised before anything is scored. Everything else
    is scored before the warehouse is opened for writing; all runs are written in one
    transaction. Bootstrap confidence intervals (percentile method) are stored unless
    --no-intervals.
    """
    gate_setup = (against, require_baseline or None, allow_new_model or None, gate_markdown,
                  gate_correction, *gate_metrics, *margins)  # fmt: skip
    if not gate and any(v is not None for v in gate_setup):
        raise UsageError(
            "--against, --require-baseline, --allow-new-model, --gate-metric, --margin, "
            "--gate-correction and --gate-markdown set up the gate; add --gate"
        )
    if lock_timeout is not None:
        app.lock_timeout = lock_timeout
    options = MetricOptions(tokenize, lowercase, int(chrf_word_order), not no_ter)
    if strict and mqm is None:
        raise UsageError("--strict checks an MQM file's judgments: add --mqm")
    if mqm is not None or reference_system is not None:
        # The options as click parsed them (every one declared once, above).
        given = click.get_current_context().params
        _ingest_annotated(app, mqm, reference_system, testset, options, as_json, given)
        return
    if src_lang is not None or tgt_lang is not None:
        raise UsageError(
            "--src-lang and --tgt-lang label the test set --mqm creates; a registered test "
            "set's languages are set by `tame-wh testset add`"
        )
    if gate:
        _refuse_a_vacuous_gate(app, against)
    request = IngestRequest(
        reports=reports,
        testset=testset,
        hyp=hyp,
        model_slug=model_slug,
        tags=parse_tags(tags),
        condition=condition,
        run_card=run_card,
        options=options,
        replace=replace,
        intervals=not no_intervals,
        n_bootstrap=n_bootstrap_ci,
        alpha=ci_alpha,
        seed=seed,
        replicate_of=replicate_of,
        from_format=from_format,
        columns=Columns(hyp_col, src_col, ref_cols, id_col, parse_metric_columns(metric_cols)),
        table_format=table_format,
        comet_model=comet_model,
        lm_eval_results=lm_eval_results,
        inputs_dir=inputs_dir,
        metrics=metrics,
        known_models_only=gate and not allow_new_model,
    )
    against = against or DEFAULT_AGAINST
    policy = GateRequest(against, require_baseline, allow_new_model, gate_metrics, margins,
                         gate_correction)  # fmt: skip
    markdown = _before_the_write(app, against, gate_markdown) if gate else None
    try:
        results = Warehouse.ingest_batch(
            app.db, request, lock_timeout=app.lock_timeout, notify=say, progress=status
        )
    except BaseException:
        _discard(markdown)
        raise
    with _after_the_commit(results, markdown):
        gates = _gates(app, results, policy) if gate else {}
    if as_json:
        emit_json(
            [
                {**r.to_dict(), **({"gate": gates[r.run_id].to_dict()} if gate else {})}
                for r in results
            ]
        )
    else:
        for result in results:
            click.echo(_describe(result))
            for warning in result.warnings:
                say(f"warning: {result.run_id}: {warning}")
            if gate:
                print_gate(gates[result.run_id])
    if markdown is not None:
        with _after_the_commit(results, markdown, gates):
            markdown.write("".join(regressions_markdown(g) for g in gates.values()))
            markdown.close()
    if any(g.regressions for g in gates.values()):
        click.get_current_context().exit(1)


def _before_the_write(app: AppContext, against: str, gate_markdown: Path | None) -> IO[str] | None:
    """What the gate needs, resolved before anything is written: its baseline rule names a run
    that can exist, and the Markdown target is open for appending (returned)."""
    if against not in ("previous", "best") and not against.startswith("tag:"):
        try:
            with app.open("read") as wh:
                wh.check_against(against)
        except MissingWarehouseError:
            check_against(None, against)
    else:
        check_against(None, against)
    if gate_markdown is None:
        return None
    try:
        return gate_markdown.open("a", encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"--gate-markdown {gate_markdown}: cannot write ({exc.strerror or exc}); nothing was "
            "written"
        ) from None


def _discard(markdown: IO[str] | None) -> None:
    """Close the Markdown target unwritten."""
    if markdown is not None:
        with contextlib.suppress(OSError):
            markdown.close()


@contextlib.contextmanager
def _after_the_commit(
    results: list[IngestResult],
    markdown: IO[str] | None,
    gates: dict[str, RegressionReport] | None = None,
) -> Iterator[None]:
    """A failure once the runs are stored: said as "stored run X; then …" (exit 5), never as
    "nothing was written"."""
    try:
        yield
    except (WarehouseError, OSError) as exc:
        _discard(markdown)
        stored = "stored " + ", ".join(f"run {r.run_id}" for r in results)
        if gates:
            verdicts = {"regressed" if g.regressions else "passed" for g in gates.values()}
            stored += f" and judged it (gate {'/'.join(sorted(verdicts))})"
        if isinstance(exc, OSError):
            then = f"could not write the gate's Markdown to {markdown.name if markdown else '?'} "
            then += f"({exc.strerror or exc})"
        else:
            then = f"the gate could not judge it: {exc}"
        raise AfterCommitError(stored, then) from None


_NOT_WITH_MQM = ("reports", "hyp", "model_slug", "condition", "run_card", "replicate_of", "gate",
                 "from_format", "metrics", "comet_model", "lm_eval_results",
                 "inputs_dir", "tags")  # fmt: skip


def _ingest_annotated(
    app: AppContext,
    mqm: Path | None,
    reference_system: str | None,
    testset: str | None,
    options: MetricOptions,
    as_json: bool,
    given: dict[str, Any],
) -> None:
    """`ingest --mqm FILE --reference-system SYSTEM --testset NAME`."""
    if mqm is None or reference_system is None or testset is None:
        raise UsageError("--mqm needs --reference-system and --testset (the test set to create)")
    clashing = [f"--{n.replace('_', '-')}" for n in _NOT_WITH_MQM if given[n]]
    if clashing:
        raise UsageError(f"--mqm builds its runs from the file; drop {', '.join(clashing)}")
    with app.open("write") as wh, status("scoring the annotated systems"):
        done = wh.ingest_annotated(
            mqm, testset=testset, reference_system=reference_system, options=options,
            intervals=not given["no_intervals"], n_bootstrap=given["n_bootstrap_ci"],
            alpha=given["ci_alpha"], seed=given["seed"], replace=given["replace"],
            strict=given["strict"], src_lang=given["src_lang"], tgt_lang=given["tgt_lang"],
        )  # fmt: skip
    for warning in done.judgments.warnings:
        say(f"warning: {warning}")
    if as_json:
        emit_json({"test_set": done.test_set, "test_set_added": done.test_set_added,
                   "runs": [r.to_dict() for r in done.runs],
                   "judgments": done.judgments.to_dict()})  # fmt: skip
        return
    added = "created" if done.test_set_added else "reused"
    click.echo(f"test set {done.test_set} {added} (reference: {reference_system})")
    for result in done.runs:
        click.echo(_describe(result))
        for warning in result.warnings:
            say(f"warning: {result.run_id}: {warning}")
    j = done.judgments
    click.echo(
        f"{'added' if j.added else 'already stored:'} MQM set {j.set_id} {j.name!r}: "
        f"{j.n_judgments:,} judgments, {j.n_errors:,} errors on {len(j.runs)} runs "
        f"({', '.join(j.skipped)}'s judgments left out: it is the reference)"
    )


def _gates(
    app: AppContext, results: list[IngestResult], request: GateRequest
) -> dict[str, RegressionReport]:
    """The gate of each ingested run against its baseline, by run id: a run with no baseline
    fails unless the team's settings say otherwise (`gate.require_baseline` 0), or its model is
    new and --allow-new-model was given."""
    with app.open("read") as wh:
        required = request.require_baseline or wh.setting("gate.require_baseline", 1.0) != 0
        return {
            r.run_id: wh.gate(
                r.run_id,
                against=request.against,
                require_baseline=required and not (request.allow_new_model and r.new_model),
                metrics=request.metrics,
                margins=request.margins,
                correction=request.correction,
            )
            for r in results
        }


@dataclass(frozen=True)
class GateRequest:
    """What `ingest --gate` asks of the gate."""

    against: str
    require_baseline: bool
    allow_new_model: bool
    metrics: tuple[str, ...]
    margins: tuple[str, ...]
    correction: str | None


def _refuse_a_vacuous_gate(app: AppContext, against: str | None) -> None:
    """A gate that could only pass is refused before anything is written: no --against (the
    previous run is no baseline: a second bad run would pass), and under CI ($CI set) no
    warehouse address or one with no warehouse yet (a fresh file has no baseline)."""
    if against is None:
        raise UsageError(
            "--gate needs --against RULE: the baseline the team pins (tag:baseline=main, a run "
            "id, best, or previous); nothing was written"
        )
    if os.environ.get("CI", "").strip().lower() not in ("true", "1", "yes"):
        return
    if not app.db_given:
        raise UsageError(
            f"--gate under CI ($CI is set) with no warehouse address: ${DB_ENV_VAR} is empty or "
            "unset and --db is not given (a fork's pull request gets no secrets); a fresh "
            "./tame.duckdb has no baseline and would pass any run; nothing was written"
        )
    if not warehouse_exists(app.db):
        raise UsageError(
            f"--gate under CI ($CI is set): no warehouse at {app.db} yet, so nothing to gate "
            f"against (check ${DB_ENV_VAR}); nothing was written"
        )
