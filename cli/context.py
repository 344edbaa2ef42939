"""Options shared by every command, carried on the click context."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from warehouse import Access, UsageError, Warehouse
from warehouse.frontend import (
    DEFAULT_LOCK_TIMEOUT,
    GATE_CORRECTIONS,
    MAX_RESAMPLES,
    TOKENIZERS,
    Address,
    AsOf,
    MetricOptions,
    is_lake,
    parse_as_of,
)

# The largest integers an option takes: a DuckDB BIGINT (seeds, row counts, limits), and an int32
# for the knobs of the native search.
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
# A week: a longer wait for a lock is a mistake, not a plan.
MAX_LOCK_TIMEOUT = 7 * 24 * 3600.0
# `lake maintain --keep-days`: a century at most.
MAX_KEEP_DAYS = 36_525


def finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Refuse NaN, which passes every range check (and would wait forever)."""
    if value is not None and value != value:
        raise click.BadParameter("give a number of seconds, not nan", param=param)
    return value


@dataclass
class AppContext:
    """Global options: warehouse address (a file or a lake), lock timeout, debug."""

    db: Address
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    debug: bool = False
    db_size_before: int | None = None  # a file's size when the command started
    db_given: bool = True  # named by --db or $TAME_WH_DB (not the ./tame.duckdb default)

    @property
    def is_lake(self) -> bool:
        """Whether the warehouse is a DuckLake lake."""
        return is_lake(self.db)

    def open(self, access: Access, as_of: AsOf | None = None) -> Warehouse:
        """The warehouse as the handle, for a block: `read` opens an existing warehouse of this
        schema read-only (at `as_of` on a lake), `write` creates or upgrades it and holds a
        lake's writers' lock until the block ends."""
        return Warehouse.open(self.db, access=access, as_of=as_of, lock_timeout=self.lock_timeout)

    @contextmanager
    def existing(self) -> Iterator[Warehouse | None]:
        """The warehouse read-only as it is (for its settings), or None when there is none."""
        opened = Warehouse.open_if_exists(self.db, lock_timeout=self.lock_timeout)
        try:
            yield opened
        finally:
            if opened is not None:
                opened.close()


def as_of_value(text: str | None) -> AsOf | None:
    """The parsed `--as-of` value (None when not given)."""
    return parse_as_of(text) if text is not None else None


as_of_option = click.option(
    "--as-of",
    "as_of",
    default=None,
    metavar="SNAPSHOT|TIME",
    help="Answer as the lake stood then: a snapshot id or a UTC date/time (lakes only).",
)


pass_app = click.make_pass_decorator(AppContext)

json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document.")

FORMATS = ("table", "json", "markdown")
format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="table for people, json (as --json), markdown: a GitHub comment or job summary.",
)


def chosen_format(output_format: str, as_json: bool) -> str:
    """The output format of `--format`, json when `--json` is given."""
    if as_json and output_format not in ("table", "json"):
        raise click.UsageError(f"--json and --format {output_format} ask for two formats")
    return "json" if as_json else output_format


def gate_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The gate's policy: `--gate-metric`, `--margin`, `--gate-correction` (docs/statistics.md,
    "The gate"); each defaults to the warehouse's settings, then chrF++, no margin, Holm."""
    options = [
        click.option(
            "--gate-metric",
            "gate_metrics",
            multiple=True,
            metavar="METRIC[,METRIC]",
            help="A metric the gate decides on (repeat, or list with commas; e.g. chrf,bleu). "
            "Default: chrF++ and every metric settings gate.metric.<name> gates.",
        ),
        click.option(
            "--margin",
            "margins",
            multiple=True,
            metavar="METRIC=NUMBER",
            help="A drop the team accepts, in the metric's units (chrf=0.5): the gate fails only "
            "on a drop significantly larger. Default: settings gate.margin.<name>, else 0.",
        ),
        click.option(
            "--gate-correction",
            type=click.Choice(GATE_CORRECTIONS),
            default=None,
            help="How the gated metrics share the error of the decision [default: holm].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def bootstrap_options(
    n_flag: str, n_help: str, alpha_flag: str, alpha_help: str, seed_help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The resamples / alpha / --seed options, each defaulting to None (then the warehouse's
    settings bootstrap.n / bootstrap.alpha / bootstrap.seed apply)."""
    options = [
        click.option(
            n_flag, type=click.IntRange(min=1, max=MAX_RESAMPLES), default=None, help=n_help
        ),
        click.option(
            alpha_flag,
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=None,
            help=alpha_help,
        ),
        click.option(
            "--seed", type=click.IntRange(min=0, max=INT64_MAX), default=None, help=seed_help
        ),
    ]

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def metric_options(
    *, select: bool = False, keep: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--tokenize, --lowercase, --chrf-word-order, --no-ter (sacrebleu's metric options). With
    `select` they choose which statistics to read (unset: the runs as ingested) rather than
    how to compute them; with `keep`, unset ones keep each stored run's own; `chosen_options`
    turns them into `MetricOptions`."""
    verb = "Read the statistics of" if select else "Compute"
    unset = select or keep
    options = [
        click.option(
            "--tokenize",
            type=click.Choice(TOKENIZERS),
            default=None if unset else "13a",
            show_default=not unset,
            help=f"{verb} BLEU with this tokenizer (ja-mecab/ko-mecab need sacrebleu's "
            "[ja]/[ko] extras).",
        ),
        click.option("--lowercase", is_flag=True, help=f"{verb} lowercased BLEU and chrF."),
        click.option(
            "--chrf-word-order",
            type=click.Choice(["0", "2"]),
            default=None if unset else "2",
            show_default=not unset,
            help=f"{verb} chrF with this word n-gram order: 2 = chrF++, 0 = chrF.",
        ),
        click.option(
            "--no-ter",
            is_flag=True,
            help="Statistics without TER." if select else "Skip TER (its scores are NULL).",
        ),
    ]

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def chosen_options(
    tokenize: str | None, lowercase: bool, chrf_word_order: str | None, no_ter: bool
) -> MetricOptions | None:
    """The metric options given on the command line (None when none was given)."""
    if tokenize is None and chrf_word_order is None and not lowercase and not no_ter:
        return None
    return MetricOptions(tokenize or "13a", lowercase, int(chrf_word_order or 2), not no_ter)


def tag_filter_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--tag KEY=VALUE (only runs with it) and --exclude-tag KEY[=VALUE] (none with it)."""
    command = click.option(
        "--exclude-tag",
        "exclude_tags",
        multiple=True,
        metavar="KEY[=VALUE]",
        help="Leave out runs with this tag (any value when none is given; repeat), e.g. pr.",
    )(command)
    return click.option(
        "--tag",
        "tags",
        multiple=True,
        metavar="KEY=VALUE",
        help="Only runs with this tag (repeat).",
    )(command)


def language_options(
    of: str = "", *, lang: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--src-lang and --tgt-lang (and --lang, for a monolingual text, when `lang`): language
    codes, their help prefixed by `of` (e.g. "With --mqm: ")."""

    def add(command: Callable[..., Any]) -> Callable[..., Any]:
        for name, what in (("--tgt-lang", "Target"), ("--src-lang", "Source")):
            command = click.option(
                name, default=None, metavar="CODE", help=f"{of}{what} language code."
            )(command)
        if lang:
            command = click.option(
                "--lang",
                default=None,
                metavar="CODE",
                help="With --text: the text's language code.",
            )(command)
        return command

    return add


def stored_interval_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--no-intervals and the resampling options of the intervals a command stores with a run."""
    command = bootstrap_options(
        "--n-bootstrap-ci",
        "Bootstrap resamples for the confidence intervals (default: settings bootstrap.n, 1000).",
        "--ci-alpha",
        "Intervals cover 1 - alpha (default: settings bootstrap.alpha, 0.05).",
        "Bootstrap seed, stored with the intervals (default: settings bootstrap.seed, 12345).",
    )(command)
    command = click.option(
        "--no-intervals",
        is_flag=True,
        callback=_or_the_old_spelling,
        help="Skip the bootstrap confidence intervals.",
    )(command)
    # The option's first name, kept working for scripts (hidden: "CI" reads as the CI job).
    return click.option(
        "--no-ci", is_flag=True, hidden=True, expose_value=False, callback=_remember_old_spelling
    )(command)


def _remember_old_spelling(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta["no_intervals"] = True


def _or_the_old_spelling(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    # A given option is processed before one left out, so --no-ci has been seen by now.
    return value or bool(ctx.meta.get("no_intervals"))


# --metric NAME on the commands that score runs (ingest, rescore).
plugin_metric_option = click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME",
    help="Also score with this installed metric plugin (docs/metrics.md); repeatable.",
)


def confirm(what: str, yes: bool, prompt: str) -> None:
    """Go on only with --yes or a yes at the terminal's prompt (`what` was said first)."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(f"pass --yes to confirm: {what}; nothing was changed")
    if not click.confirm(prompt, default=False, err=True):
        raise UsageError("nothing was changed")
