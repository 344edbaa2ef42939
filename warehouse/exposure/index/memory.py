"""Memory budgets of audits (`audit --memory-limit`, docs/exposure.md "Memory limit"): the
process's memory, and how many training rows one shard may hold.

The estimates are measured ratios on real localisation text (20,000 to 230,986 English-French
pairs): building an index peaks at 34 to 51 times the bytes of the texts it indexes (the texts,
their normalised copies and the build buffers), and the index itself takes 23 to 29 times.
"""

from __future__ import annotations

import contextlib
import resource
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb

from warehouse.errors import UsageError
from warehouse.sizes import MAX_SIZE_BYTES, size_text

BUILD_PER_TEXT_BYTE = 56  # peak bytes of building an index, per byte of indexed text
INDEX_PER_TEXT_BYTE = 32  # bytes of a built or stored index, per byte of indexed text
PER_ROW = 96  # bytes per row independent of its text (offsets, lengths, hash slots, lists)
RESERVE = 96 * 2**20  # the test set, search scratch and results, Python's own growth
DUCKDB_SHARE = 8  # DuckDB's buffer pool may use 1/8 of the limit during the audit
DUCKDB_MIN = 64 * 2**20
# Peak bytes of building a gram index of ONE long row, per character: a document's distinct
# grams all meet in one set (measured: a 10-million-character document of real French text
# peaked 1.5 GiB above the process; the per-text-byte ratio above holds for sentences).
LONG_ROW_BUILD_PER_CHAR = {"jaccard": 160, "containment": 160, "minhash": 32}
# DuckDB holds a row being read a few times over (the value, its copy into a result vector).
DUCKDB_PER_ROW_BYTE = 4


def current_rss() -> int:
    """Resident memory of this process now, in bytes."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return peak_rss()


def peak_rss() -> int:
    """The highest resident memory of this process so far, in bytes."""
    # VmHWM belongs to this program's address space. ru_maxrss does not: a process started by
    # vfork and exec (as subprocess starts it) inherits its parent's peak at exec, so a tame-wh
    # started by a large process would report the parent's memory as its own.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def duckdb_budget(limit: int, row_needs: int = 0) -> int:
    """What DuckDB's buffer pool may use during an audit within `limit` (at least what reading
    the longest row needs, `row_needs`)."""
    return max(limit // DUCKDB_SHARE, DUCKDB_MIN, row_needs)


def index_budget(limit: int) -> int:
    """What one shard's index may take within `limit`, given what this process holds now."""
    budget = limit - current_rss() - RESERVE - duckdb_budget(limit)
    if budget < 16 * 2**20:
        raise UsageError(
            f"--memory-limit {size_text(limit)} leaves no room for an index: tame-wh already "
            f"uses {size_text(current_rss())} and needs {size_text(RESERVE)} more for the "
            f"search; give at least {size_text(limit - budget + 16 * 2**20)}"
        )
    return budget


@dataclass(frozen=True)
class ShardSize:
    """How many training rows one shard may hold within a budget, and what it is expected to
    take."""

    rows: int
    build_bytes: int
    index_bytes: int


def shard_size(budget: int, rows: int, text_bytes: int) -> ShardSize:
    """The largest shard (at least one row) whose build is expected to fit in `budget`, for a
    corpus of `rows` rows holding `text_bytes` bytes of text on both sides."""
    per_row_build = BUILD_PER_TEXT_BYTE * text_bytes / max(rows, 1) + PER_ROW
    fit = max(1, min(rows, int(budget // per_row_build)))
    per_row_index = INDEX_PER_TEXT_BYTE * text_bytes / max(rows, 1) + PER_ROW
    return ShardSize(fit, int(fit * per_row_build), int(fit * per_row_index))


def release_cached_blocks(con: duckdb.DuckDBPyConnection) -> None:
    """Return the table blocks DuckDB keeps cached after a scan (the training texts, read once
    for an index build) to the system: its memory limit is lowered to 1 MiB for a moment."""
    with contextlib.suppress(duckdb.Error), duckdb_memory(con, 2**20):
        pass


@contextlib.contextmanager
def duckdb_memory(con: duckdb.DuckDBPyConnection, limit: int) -> Iterator[None]:
    """Run the block with DuckDB's memory limit set to `limit` bytes (restored afterwards)."""
    rows = con.execute("SELECT current_setting('memory_limit')").fetchall()
    before = rows[0][0] if rows else None
    try:
        # Inside the try: DuckDB may lower the limit and then fail to evict down to it, and
        # the limit must be restored then too.
        con.execute("SET memory_limit = ?", [f"{limit // 2**20}MiB"])
        yield
    finally:
        if before is not None:
            with contextlib.suppress(duckdb.Error):
                con.execute("SET memory_limit = ?", [before])


def available_memory() -> int:
    """Memory the system can give this process now without swapping (`MemAvailable`), plus what
    the process already holds; when unknown, its physical memory."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 + current_rss()
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return MAX_SIZE_BYTES


def check_longest_row(
    measure: str, name: str, longest: tuple[int, int, int], memory_limit: int | None
) -> int:
    """Refuse, before anything is built, a training row too long for the audit's memory (its
    `--memory-limit`, else what the machine has): the longest row's (row, characters, UTF-8
    bytes) in `longest`. Returns the DuckDB budget that row needs (0: no need beyond the usual)."""
    row, chars, size = longest
    limit = memory_limit if memory_limit is not None else available_memory()
    where = (
        "--memory-limit " + size_text(limit)
        if memory_limit is not None
        else (f"the {size_text(limit)} this machine has free")
    )
    advice = (
        "split long documents into paragraphs (one per line, or one per JSON Lines record) "
        "when adding the corpus"
    )
    per_char = LONG_ROW_BUILD_PER_CHAR.get(measure)
    if per_char is not None and per_char * chars > limit - current_rss() - RESERVE:
        raise UsageError(
            f"training corpus {name!r}: row {row} holds {chars:,} characters, and the "
            f"{measure} index of that one row needs about {size_text(per_char * chars)}, more "
            f"than {where} leaves; {advice}, or audit with --measure substring, which reads "
            "rows of any length"
        )
    needed = DUCKDB_PER_ROW_BYTE * size
    if memory_limit is not None and needed > memory_limit // 2:
        raise UsageError(
            f"training corpus {name!r}: row {row} holds {size:,} bytes, and reading it needs "
            f"about {size_text(needed)} of DuckDB's memory, more than half of {where}; "
            f"{advice}, or give a larger --memory-limit"
        )
    return needed if needed > duckdb_budget(limit) else 0
