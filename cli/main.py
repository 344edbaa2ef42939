"""The `tame-wh` command: global options, error handling, subcommand registration."""

from __future__ import annotations

import gc
import importlib
import os
import re
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, NoReturn

import click

from warehouse import AfterCommitError, RemoteError, WarehouseError, __version__
from warehouse.cli.context import MAX_LOCK_TIMEOUT, AppContext, finite
from warehouse.cli.output import configure
from warehouse.frontend import (
    DATA_PATH_ENV_VAR,
    DB_ENV_VAR,
    DEFAULT_LOCK_TIMEOUT,
    LakeAddress,
    Watchdog,
    attach_ahead,
    drop_ahead,
    exit_4_on_abort,
    file_size,
    first_line,
    interrupted_message,
    is_disk_full,
    is_interrupt,
    lake_timeout,
    parse_address,
    reclaim_after_failed_write,
    redact,
    remember_secrets,
    remote_failure,
)

# Subcommands, imported only when used so that start-up stays fast (`name`: "module:attribute").
COMMANDS: dict[str, str] = {
    "init": "warehouse.cli.init:init",
    "doctor": "warehouse.cli.doctor:doctor",
    "corpus": "warehouse.cli.corpora:corpus",
    "testset": "warehouse.cli.corpora:testset",
    "audit": "warehouse.cli.audit:audit",
    "tm-baseline": "warehouse.cli.audit:tm_baseline",
    "index": "warehouse.cli.index:index",
    "ingest": "warehouse.cli.ingest:ingest",
    "human": "warehouse.cli.human:human",
    "meta": "warehouse.cli.meta:meta",
    "runs": "warehouse.cli.runs:runs",
    "report": "warehouse.cli.report:report",
    "leaderboard": "warehouse.cli.leaderboard:leaderboard_cmd",
    "query": "warehouse.cli.query:query",
    "compare": "warehouse.cli.compare:compare",
    "significance": "warehouse.cli.compare:significance",
    "regressions": "warehouse.cli.regressions:regressions",
    "migrate": "warehouse.cli.sync:migrate",
    "sync": "warehouse.cli.sync:sync",
    "demo": "warehouse.cli.demo:demo",
    "copy": "warehouse.cli.copy:copy",
    "lake": "warehouse.cli.lake:lake",
    "dashboard": "warehouse.cli.dashboard:dashboard",
    "export": "warehouse.cli.export:export",
    "rescore": "warehouse.cli.rescore:rescore",
}

# What `tame-wh --help` says of each command: its help's first sentence, kept here so that the
# listing imports no command (tests/cli/test_main.py holds them to the commands' own help).
SUMMARIES: dict[str, str] = {
    "audit": "Measure how close each test segment is to the training corpus (docs/exposure.md).",
    "compare": "Compare runs side by side (run ids, unique prefixes, model slugs or test-report "
    "files).",
    "copy": "Copy every table (and the schema version) between a local file and a lake, either "
    "way; then compare each table's rows and content hash on both sides.",
    "corpus": "Training corpora (parallel text the systems were trained on).",
    "dashboard": "Build a static dashboard: leaderboards, a page per run and test set, "
    "comparisons.",
    "demo": "Create (or reuse) a warehouse and load the bundled English-Spanish example and runs.",
    "export": "Write stored runs as records: one per run and segment, with its text, "
    "per-segment scores, ingested per-entry metrics and exposure.",
    "doctor": "Check the installation and the warehouse; exits 3 when something is broken.",
    "human": "Human judgments (MQM, ESA, DA) on the runs of a test set: add, list.",
    "index": "Stored training indexes, loaded by audits instead of rebuilt: build, list, drop.",
    "ingest": "Ingest runs: plain files (--testset --hyp) or test-report / run-card JSON files.",
    "init": "Create the warehouse, or upgrade it to this version's schema (a no-op when current).",
    "lake": "A lake's maintenance and history (--db ducklake:postgres:…).",
    "leaderboard": "Rank runs; runs whose available composite metrics differ from the rest are "
    "marked.",
    "meta": "Metric-human agreement: system and segment level, overall and per exposure bin.",
    "migrate": "Apply pending numbered migrations to the Supabase/Postgres database, in order.",
    "query": "Run one read-only SELECT over the warehouse (tables, views and macros).",
    "regressions": "List significant drops of each run against the previous run of the same "
    "model, or gate one run against a pinned baseline.",
    "report": "Report one run (id or unique prefix): quality, exposure, bins, composite, cost, "
    "speed.",
    "rescore": "Score stored runs again from their stored hypotheses under other metric options.",
    "runs": "Evaluated runs: list, show, tag, delete.",
    "significance": "Paired significance tests between runs: `compare --significance`.",
    "sync": "Upsert the leaderboard's denormalised columns and bin scores to Supabase/Postgres.",
    "testset": "Test sets (sources with one or more references).",
    "tm-baseline": "Write the translation-memory hypotheses (target of each source's nearest "
    "neighbour).",
}


# Whether the executable paused the garbage collector at start-up (cli.entry): it resumes once
# the command's modules are loaded.
_gc_paused = False


def resume_gc_after_load() -> None:
    """Resume the paused garbage collector once the command's modules are loaded."""
    global _gc_paused
    _gc_paused = True


def _loaded() -> None:
    """The command's modules are loaded: freeze what they created out of later collections
    and resume the collector, if start-up paused it."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


# Commands that open an existing lake first thing, and whether read-only: the attach starts in a
# thread while the command's modules load. A hint only: an attach no command takes is closed.
_ATTACH_AHEAD = {
    "ingest": False,
    "leaderboard": True,
    "report": True,
    "regressions": True,
    "compare": True,
}


def _attach_ahead(ctx: click.Context, args: list[str]) -> None:
    """Start the lake's attach for a command listed in `_ATTACH_AHEAD` (not for --help, nor
    for --as-of, which attaches a past snapshot)."""
    read_only = _ATTACH_AHEAD.get(args[0]) if args else None
    if read_only is None or any(a in ("-h", "--help") or a.startswith("--as-of") for a in args):
        return
    try:
        address = parse_address(ctx.params.get("db"), ctx.params.get("data_path"))
    except WarehouseError:
        return  # told by the group's callback
    if isinstance(address, LakeAddress):
        attach_ahead(address, read_only=read_only)


def _takes_value(option: click.Parameter) -> bool:
    """Whether an option reads the next token as its value."""
    return isinstance(option, click.Option) and not option.is_flag and not option.count


def _option_names(command: click.Command) -> dict[str, bool]:
    """Every option name of a command, and whether it takes a value."""
    return {
        name: _takes_value(p)
        for p in command.params
        if isinstance(p, click.Option)
        for name in (*p.opts, *p.secondary_opts)
    }


def _hoist_global_options(group: click.Group, ctx: click.Context, args: list[str]) -> list[str]:
    """`tame-wh COMMAND … --wide` as `tame-wh --wide COMMAND …`: a global option given after the
    command (and not one of the command's own) moves before it, with its value. Tokens after
    `--`, and values of the command's own options, never move."""
    own = _option_names(group)
    at = 0
    while at < len(args) and args[at].startswith("-") and args[at] != "--":
        name = args[at].split("=", 1)[0]
        at += 2 if own.get(name) and "=" not in args[at] else 1
    if at >= len(args) or args[at] == "--":
        return args
    command: click.Command | None = group.get_command(ctx, args[at])
    theirs = _option_names(command) if command is not None else {}
    front, rest = args[:at], [args[at]]
    i = at + 1
    while i < len(args):
        token = args[i]
        if token == "--":
            rest += args[i:]
            break
        if isinstance(command, click.Group) and not token.startswith("-"):
            command = command.get_command(ctx, token)  # a subcommand: its options count too
            theirs.update(_option_names(command) if command is not None else {})
            rest.append(token)
            i += 1
            continue
        name = token.split("=", 1)[0]
        mine = name in own and name not in theirs and name not in ("-h", "--help", "--version")
        width = 2 if (own if mine else theirs).get(name) and "=" not in token else 1
        (front if mine else rest).extend(args[i : i + width])
        i += width
    return front + rest


class _Group(click.Group):
    """Lazy command group that turns warehouse errors into one-line messages with exit codes."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, _hoist_global_options(self, ctx, args))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        _attach_ahead(ctx, args)
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        _loaded()
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, as click lists them, without importing any."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [
            (name, click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit))
            for name in names
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke(ctx)
        finally:
            drop_ahead()

    def _invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WarehouseError as exc:
            if _debug(ctx):
                traceback.print_exc()
            if is_interrupt(exc):
                _interrupted(ctx)
            if is_disk_full(exc) and not isinstance(exc, AfterCommitError):
                _disk_full(ctx)  # (after a commit the disk is told as what came next)
            click.echo(f"error: {_shown(ctx, str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:
            # The reader went away (e.g. `| head`); stop quietly like other Unix tools.
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - flushing at exit must not fail
            ctx.exit(141)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except Exception as exc:
            if _debug(ctx):
                traceback.print_exc()
            if is_interrupt(exc):  # Ctrl-C stopped a query: DuckDB's error, not Python's
                _interrupted(ctx)
            if is_disk_full(exc):
                _disk_full(ctx)
            if _out_of_memory(exc):
                click.echo(f"error: {_shown(ctx, _out_of_memory_message(ctx, exc))}", err=True)
                ctx.exit(2)
            app = ctx.find_object(AppContext)
            if app is not None and isinstance(app.db, LakeAddress):
                remote = remote_failure(app.db, exc, f"`tame-wh {ctx.invoked_subcommand}`")
                if remote is not None:
                    click.echo(f"error: {_shown(ctx, str(remote))}", err=True)
                    ctx.exit(remote.exit_code)
            message = first_line(exc, "")
            message = _shown(ctx, message)
            click.echo(
                f"internal error: {type(exc).__name__}: {message} (rerun with --debug for details)",
                err=True,
            )
            ctx.exit(1)


def _out_of_memory(exc: BaseException) -> bool:
    """Whether DuckDB (or Python) ran out of the memory it was allowed."""
    duckdb = sys.modules.get("duckdb")
    return isinstance(exc, MemoryError) or (
        duckdb is not None and isinstance(exc, duckdb.OutOfMemoryException)
    )


def _out_of_memory_message(ctx: click.Context, exc: BaseException) -> str:
    """What ran out: DuckDB's memory limit (as its message states it) or the process's."""
    text = str(exc)
    used = re.search(r"\(([^()]*) used\)", text)
    limit = f"its memory limit ({used.group(1)} used)" if used else "the memory it may use"
    return (
        f"`tame-wh {ctx.invoked_subcommand}` needed more than {limit}; the open transaction "
        "was rolled back and nothing of it was written: give the command more memory "
        "(--memory-limit where it has one) or less to do at once"
    )


def _interrupted(ctx: click.Context) -> NoReturn:
    """Ctrl-C: the command's open transaction was rolled back; say so, and whether an earlier one
    had committed (exit 130, as shells do)."""
    click.echo(interrupted_message(), err=True)
    ctx.exit(130)


def _shown(_ctx: click.Context, text: str) -> str:
    """A message as it may be printed: every secret the process knows (the secret environment
    variables, the lake address's values that can carry one) replaced by `***`."""
    return redact(text)


def _disk_full(ctx: click.Context) -> None:
    """A write ran out of disk space (or quota, or file-size limit): nothing was committed; give
    the file's unused tail back and say so in one line (exit 2)."""
    app = ctx.find_object(AppContext)
    where = ""
    if app is not None and isinstance(app.db, Path):
        size = reclaim_after_failed_write(app.db, app.db_size_before)
        kept = "removed" if size is None else f"left at {size:,} bytes"
        where = f"; the warehouse {app.db} is as it was ({kept})"
    click.echo(
        f"error: no space left on device: nothing was committed{where}; free some space "
        "(or raise the quota / file-size limit) and run the command again",
        err=True,
    )
    ctx.exit(2)


def _debug(ctx: click.Context) -> bool:
    """Whether --debug was given."""
    app = ctx.find_object(AppContext)
    return bool(app and app.debug)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--db",
    default=None,
    metavar="PATH|LAKE",
    help=f"Warehouse: a DuckDB file, or a lake ducklake:postgres:<libpq string> (default: "
    f"${DB_ENV_VAR}, else ./tame.duckdb).",
)
@click.option(
    "--data-path",
    default=None,
    metavar="URL|DIR",
    help=f"Where a new lake keeps its data files: s3://bucket/prefix/ or a directory (default: "
    f"${DATA_PATH_ENV_VAR}; an existing lake records its own).",
)
@click.option(
    "--lock-timeout",
    type=click.FloatRange(min=0, max=MAX_LOCK_TIMEOUT),
    callback=finite,
    default=DEFAULT_LOCK_TIMEOUT,
    show_default=True,
    help="Seconds to wait while another process holds the warehouse.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks on errors.")
@click.option("--wide", is_flag=True, help="Print every table column, however wide.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@click.version_option(__version__, "--version", prog_name="tame-wh")
@click.pass_context
def main(
    ctx: click.Context,
    db: str | None,
    data_path: str | None,
    lock_timeout: float,
    debug: bool,
    wide: bool,
    quiet: bool,
) -> None:
    """tame-wh: training-aware MT evaluation warehouse (DuckDB, or a DuckLake lake)."""
    configure(wide=wide, quiet=quiet)
    try:
        address = parse_address(db, data_path)
    except WarehouseError as exc:
        click.echo(f"error: {redact(str(exc))}", err=True)
        ctx.exit(exc.exit_code)
    if isinstance(address, LakeAddress):
        remember_secrets(address.hidden_values())
    if isinstance(address, Path) and address.exists() and not address.is_file():
        click.echo(
            f"error: --db {address} is not a regular file (a DuckDB warehouse file, or a lake "
            "ducklake:postgres:…)",
            err=True,
        )
        ctx.exit(2)
    size = file_size(address) if isinstance(address, Path) else None
    given = db is not None or bool(os.environ.get(DB_ENV_VAR))
    ctx.obj = AppContext(
        db=address, lock_timeout=lock_timeout, debug=debug, db_size_before=size, db_given=given
    )
    if isinstance(address, LakeAddress):
        watch_lake(ctx, address)


# Held by the first watchdog that stops the command, so that only one says why.
_STOPPING = threading.Lock()
# Whether the command runs as the `tame-wh` executable (its own process), not inside a caller.
_OWN_PROCESS = [False]


def in_own_process() -> None:
    """The command is the process (`cli.entry`): it may decide how the process ends."""
    _OWN_PROCESS[0] = True


def watch_lake(ctx: click.Context, address: LakeAddress) -> None:
    """Bound the command's waits on a lake's services: when the catalog or the object store has
    not answered for $TAME_WH_LAKE_TIMEOUT seconds, say so in one line and end the process with
    exit 4 (its PostgreSQL sessions end with it, so nothing uncommitted is kept)."""
    watched: set[LakeAddress] = ctx.find_root().meta.setdefault("tame_wh.watched_lakes", set())
    if address in watched:
        return
    watched.add(address)
    try:
        timeout = lake_timeout()
    except WarehouseError as exc:
        click.echo(f"error: {exc}", err=True)
        ctx.exit(exc.exit_code)

    def stop(message: str) -> None:
        # Two lakes (copy's source and destination) may both go silent: one line, one exit.
        if not _STOPPING.acquire(blocking=False):
            return
        click.echo(f"error: {redact(message)}", err=True)
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(RemoteError.exit_code)

    doing = f"`tame-wh {ctx.invoked_subcommand or ctx.info_name}`"
    if _OWN_PROCESS[0]:
        exit_4_on_abort(address, doing)
    watchdog = Watchdog(address, timeout, stop, doing).__enter__()
    ctx.call_on_close(watchdog.__exit__)
