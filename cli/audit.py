"""`tame-wh audit` and `tame-wh tm-baseline`: exposure of a test set to a training corpus."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from warehouse import AuditOptions, AuditResult, Execution, NormalizationConfig, UsageError
from warehouse.cli.context import INT32_MAX, INT64_MAX, AppContext, json_option, pass_app
from warehouse.cli.output import (
    OPTIONS,
    PROGRESS_EVERY,
    emit_json,
    print_lenses,
    print_table,
    progress,
    say,
    status,
)
from warehouse.frontend import (
    DEFAULT_ORDERS,
    DEFAULT_RARE_GRAMS,
    DEFAULT_SHORTLIST,
    EXECUTORS,
    MEASURES,
    MODES,
    SIDES,
    TM_ZERO_POLICIES,
    binned_side,
    parse_size,
)


def _orders(text: str) -> tuple[int, ...]:
    """`3,4,5` → (3, 4, 5)."""
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise UsageError(
            f"--orders: expected comma-separated whole numbers, got {text!r}"
        ) from None


def _thresholds(text: str) -> tuple[float, float, float]:
    """`0.70,0.85,0.95` → three floats."""
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"--leak: expected three comma-separated numbers, got {text!r}") from None
    if len(values) != 3:
        raise UsageError(f"--leak: expected three thresholds, got {len(values)}")
    return values[0], values[1], values[2]


# The options that define a training index (its gram orders and normalisation).
INDEX_OPTIONS = [
    click.option(
        "--orders",
        default=",".join(map(str, DEFAULT_ORDERS)),
        show_default=True,
        help="Character n-gram orders.",
    ),
    click.option(
        "--normalize-punctuation",
        is_flag=True,
        help="Map curly quotes, dashes and NBSP to ASCII.",
    ),
    click.option("--strip-diacritics", is_flag=True, help="Drop combining marks."),
    click.option("--casefold", is_flag=True, help="Compare case-insensitively."),
]


def index_options(opts: dict[str, Any]) -> AuditOptions:
    """The gram orders and normalisation the index options describe."""
    return AuditOptions(orders=_orders(opts["orders"]), normalization=_normalization(opts))


def _normalization(opts: dict[str, Any]) -> NormalizationConfig:
    """The normalisation the options describe."""
    return NormalizationConfig(
        punctuation=opts["normalize_punctuation"],
        strip_diacritics=opts["strip_diacritics"],
        casefold=opts["casefold"],
    )


def _config_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options shared by `audit` and `tm-baseline` that define an audit."""
    options = [
        click.option("--train", "train", required=True, help="Training corpus name."),
        click.option("--testset", required=True, help="Test set name."),
        click.option(
            "--mode",
            type=click.Choice(MODES),
            default="exact",
            show_default=True,
            help="exact = true maximum; fast = approximate.",
        ),
        click.option(
            "--measure",
            type=click.Choice(MEASURES),
            default=None,
            help="jaccard = shared / all grams of both; containment = shared / the test text's "
            "grams (default: containment for --text corpora, else jaccard); substring = the "
            "longest stretch shared verbatim, from a suffix array.",
        ),
        click.option(
            "--side",
            type=click.Choice(SIDES),
            default=None,
            help="Which side of the test set to search: the sources, the references (bins by "
            "their exposure; no TM baseline) or both (default: both; for a --text corpus, the "
            "side in its language).",
        ),
        *INDEX_OPTIONS,
        click.option(
            "--near",
            type=float,
            default=None,
            help="Near-bin threshold (default: settings bin.near, 0.70).",
        ),
        click.option(
            "--far",
            type=float,
            default=None,
            help="Far-bin threshold (default: settings bin.far, 0.30).",
        ),
        click.option(
            "--leak", default=None, help="Three share thresholds (default: 0.70,0.85,0.95)."
        ),
        click.option(
            "--tm-zero-policy",
            type=click.Choice(TM_ZERO_POLICIES),
            default="empty",
            show_default=True,
            help="TM hypothesis when no training row shares a gram.",
        ),
        click.option(
            "--rare-grams",
            type=click.IntRange(min=1, max=INT32_MAX),
            default=DEFAULT_RARE_GRAMS,
            show_default=True,
            help="fast mode: rarest query grams used for candidates.",
        ),
        click.option(
            "--shortlist",
            type=click.IntRange(min=1, max=INT32_MAX),
            default=DEFAULT_SHORTLIST,
            show_default=True,
            help="fast mode: candidates reranked exactly.",
        ),
        click.option(
            "--validate-sample",
            type=click.IntRange(min=0, max=INT32_MAX),
            default=0,
            help="fast mode: rerun N sampled segments exactly and store agreement.",
        ),
        click.option(
            "--threads",
            type=click.IntRange(min=1, max=os.cpu_count() or 1),
            default=None,
            help="Worker threads (default: all cores; at most this machine's CPU threads).",
        ),
        click.option(
            "--executor",
            type=click.Choice(EXECUTORS),
            default="local",
            show_default=True,
            help="Where the search runs: this process, or one task per shard on a Ray cluster.",
        ),
        click.option(
            "--ray-address",
            metavar="HOST:PORT",
            default=None,
            help="The Ray cluster of --executor ray (default: $RAY_ADDRESS).",
        ),
        click.option(
            "--shard-rows",
            type=click.IntRange(min=1, max=INT64_MAX),
            default=None,
            help="Search the index in shards of N rows (default: as stored; on Ray, one per CPU).",
        ),
        click.option(
            "--memory-limit",
            metavar="SIZE",
            default=None,
            help="Keep the audit within SIZE of memory (e.g. 4GiB): the index in shards that fit.",
        ),
        click.option(
            "--no-store-index",
            is_flag=True,
            help="Do not store a training index this audit builds (a stored one is still used).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _audit_options(opts: dict[str, Any]) -> AuditOptions:
    """The audit configuration the command-line options choose (unset ones: the settings')."""
    return AuditOptions(
        near=opts["near"],
        far=opts["far"],
        leak=_thresholds(opts["leak"]) if opts["leak"] is not None else None,
        orders=_orders(opts["orders"]),
        normalization=_normalization(opts),
        mode=opts["mode"],
        rare_grams=opts["rare_grams"],
        shortlist=opts["shortlist"],
        validate_sample=opts["validate_sample"],
        measure=opts["measure"],
        tm_zero_policy=opts["tm_zero_policy"],
        side=opts["side"],
    )


def _execution(opts: dict[str, Any]) -> Execution:
    """How the command-line options ask the search to run."""
    return Execution(
        threads=opts["threads"],
        memory_limit=parse_size(opts["memory_limit"]) if opts["memory_limit"] is not None else None,
        shard_rows=opts["shard_rows"],
        executor=opts["executor"],
        ray_address=opts["ray_address"],
        store_index=False if opts["no_store_index"] else None,
    )


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    """Search progress on stderr: a bar on a terminal, else a line every few seconds (none with
    --quiet)."""
    console = Console(stderr=True)
    if not enabled or OPTIONS.quiet:
        yield None
        return
    if not console.is_terminal:
        last = [time.monotonic()]

        def line(done: int, total: int) -> None:
            if time.monotonic() - last[0] >= PROGRESS_EVERY:
                last[0] = time.monotonic()
                progress(f"searching: {done:,} of {total:,} test segments")

        yield line
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("searching", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _audit(
    app: AppContext, opts: dict[str, Any], force: bool, show_progress: bool
) -> tuple[AuditResult, list[str]]:
    """Run (or reuse) the audit the options describe; also the warnings said before the search."""
    said: list[str] = []

    def notify(message: str) -> None:
        if message.startswith("warning: "):
            said.append(message.removeprefix("warning: "))
            say(message)
        else:
            progress(message)

    options, execution = _audit_options(opts), _execution(opts)
    with (
        app.open("write") as wh,
        status("preparing the index"),
        _progress_bar(show_progress) as bar,
    ):
        result = wh.audit(
            opts["train"],
            opts["testset"],
            options,
            execution=execution,
            force=force,
            progress=bar,
            notify=notify,
        )
    return result, said


def _fmt(value: float | None) -> str:
    """Three decimals, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"


def _print_audit(result: AuditResult, already_said: list[str]) -> None:
    """The human report of an audit (warnings said during the run are not repeated)."""
    verb = {"computed": "audited", "recomputed": "re-audited", "unchanged": "already audited"}
    searched = {"both": "", "source": ", sources only", "target": ", references only"}
    click.echo(
        f"{verb[result.action]} test set {result.test_set!r} ({result.n_segments} segments) "
        f"against {result.train_corpus!r} ({result.n_train} pairs), mode {result.mode}"
        f"{searched[result.side]}, audit {result.audit_id}"
        + (" — nothing to do (use --force to recompute)" if result.action == "unchanged" else "")
    )
    thresholds = list(result.sides[0]["at_or_above"])
    print_table(
        "exposure",
        [
            "side",
            "mean",
            "median",
            "p05",
            "p25",
            "p75",
            "p95",
            "max",
            "exact",
            *[f">={t}" for t in thresholds],
        ],
        [
            [
                s["side"],
                *(
                    _fmt(s[k])
                    for k in ("mean", "median", "p05", "p25", "p75", "p95", "max", "exact_share")
                ),
                *(_fmt(v) for v in s["at_or_above"].values()),
            ]
            for s in result.sides
        ],
    )
    by = binned_side(result.side)
    print_table(
        f"bins (by {by} exposure)",
        ["bin", "segments", "share", f"mean {by} exposure"],
        [
            [b["bin"], b["n_segments"], f"{b['share']:.1%}", _fmt(b[f"mean_{by}_exposure"])]
            for b in result.bins
        ],
    )
    if result.pair_leak:
        click.echo("PairLeak: " + "  ".join(f"@{t} {v:.1%}" for t, v in result.pair_leak.items()))
    if result.validation:
        v = result.validation
        tm = v.get("abs_delta_tm_bleu")
        click.echo(
            f"validation on {v['sample_size']} sampled segments (seed {v['seed']}): top-1 "
            f"agreement {_fmt(v['top1_agreement'])}, bin agreement {_fmt(v['bin_agreement'])}"
            + (f", |ΔTM-BLEU| {tm:.2f}" if tm is not None else "")
        )
    if result.postings and result.postings.get("total"):
        p = result.postings
        click.echo(
            f"postings visited: {p['visited']:,} of {p['total']:,} "
            f"({p['visited'] / p['total']:.1%})"
        )
    print_lenses(result.lenses)
    click.echo(f"signature: {result.signature}")
    for warning in result.warnings:
        if warning not in already_said:
            say(f"warning: {warning}")


@click.command()
@_config_options
@click.option("--force", is_flag=True, help="Recompute even if an identical audit is stored.")
@json_option
@pass_app
def audit(app: AppContext, force: bool, as_json: bool, **opts: Any) -> None:
    """Measure how close each test segment is to the training corpus (docs/exposure.md)."""
    result, said = _audit(app, opts, force, show_progress=not as_json)
    if as_json:
        emit_json(result.to_dict())
    else:
        _print_audit(result, already_said=said)


@click.command("tm-baseline")
@_config_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the TM hypotheses, one per test segment.",
)
@json_option
@pass_app
def tm_baseline(app: AppContext, out: Path, as_json: bool, **opts: Any) -> None:
    """Write the translation-memory hypotheses (target of each source's nearest neighbour)."""
    if opts["side"] == "target":
        raise UsageError(
            "--side target searches the references alone: there are no source neighbours, so "
            "no TM hypotheses (docs/exposure.md)"
        )
    with app.existing() as wh:
        if wh is not None and wh.corpus(opts["train"], "train").kind == "text":
            raise UsageError(
                f"--train {opts['train']!r} holds documents or monolingual text, not translations: "
                "it has no TM hypotheses (docs/exposure.md)"
            )
    result, _said = _audit(app, opts, force=False, show_progress=not as_json)
    with app.open("write") as wh:
        hyps = wh.tm_hypotheses(result.audit_id)
    if any("\n" in h for h in hyps):
        raise UsageError("a TM hypothesis contains a newline; cannot write one per line")
    try:
        out.write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{out}: cannot write ({exc.strerror or exc})") from None
    empty = sum(1 for h in hyps if not h)
    if as_json:
        emit_json(
            {
                "audit_id": result.audit_id,
                "out": str(out),
                "n_segments": len(hyps),
                "n_empty": empty,
            }
        )
    else:
        click.echo(
            f"wrote {len(hyps)} TM hypotheses to {out} ({empty} empty: no neighbour) "
            f"from audit {result.audit_id}"
        )
