"""Timing helpers for the benchmarks: run a command as a child, report wall time, CPU time and
peak RSS (all from the child's own rusage, via wait4).

The child is started by a small launcher (this file run as a script), never by the measuring
process itself: Linux hands a process started by vfork/fork and exec its parent's peak RSS as
its own starting ru_maxrss, so a child of a large process (a benchmark holding a corpus, pytest
after a thousand tests) would report the parent's memory. The launcher is small, so the peak it
hands down is a few MiB, below anything measured.

Run as a script: python bench/measure.py --usage-to FILE -- ARGV...
runs ARGV (standard streams inherited), writes its wall seconds, CPU seconds and peak RSS as
JSON to FILE, and exits with its exit code.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any


@dataclass(frozen=True)
class Measurement:
    """Wall-clock seconds, peak resident memory and CPU seconds (user + system) of one child."""

    label: str
    seconds: float
    peak_mib: float
    cpu_seconds: float = 0.0


def measure_child(
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
) -> tuple[int, float, float, float]:
    """Exit code, wall seconds, CPU seconds and peak MiB of argv run to completion through the
    launcher."""
    with tempfile.NamedTemporaryFile(suffix=".json") as usage:
        launcher = [sys.executable, os.path.abspath(__file__), "--usage-to", usage.name, "--"]
        code = subprocess.call([*launcher, *argv], env=env, stdout=stdout, stderr=stderr)
        with open(usage.name) as got:
            text = got.read()
    if not text:
        raise SystemExit(f"the launcher could not run {' '.join(argv)} (exit {code})")
    seen = json.loads(text)
    return seen["exit"], seen["seconds"], seen["cpu_seconds"], seen["peak_kib"] / 1024


def run_child(
    label: str,
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
) -> Measurement:
    """Run argv to completion; raise if it fails (showing its stderr, else kept quiet: progress
    messages); measure its own peak RSS and CPU via wait4."""
    with tempfile.TemporaryFile() as stderr:
        code, seconds, cpu, peak_mib = measure_child(argv, env=env, stdout=stdout, stderr=stderr)
        if code != 0:
            stderr.seek(0)
            sys.stderr.write(stderr.read().decode("utf-8", "replace"))
            raise SystemExit(f"{label}: {' '.join(argv)} exited with {code}")
    return Measurement(label, seconds, peak_mib, cpu)


def median_run(runs: Sequence[Measurement]) -> Measurement:
    """The run with the median time (the upper middle one for an even count)."""
    return sorted(runs, key=lambda m: m.seconds)[len(runs) // 2]


def median_each(label: str, runs: Sequence[Measurement]) -> Measurement:
    """Median wall time, median CPU time and median peak memory of repeated runs."""
    return Measurement(
        label,
        statistics.median(m.seconds for m in runs),
        statistics.median(m.peak_mib for m in runs),
        statistics.median(m.cpu_seconds for m in runs),
    )


def median_ingests(
    label: str, tame_wh: Sequence[str], testset: str, hyps: Sequence[str], *extra: str
) -> Measurement:
    """`TAME_WH ingest --testset TESTSET --hyp H --model-slug bench-NAME EXTRA…` as a child once
    per hypothesis file H (each a new run); the medians."""
    runs = []
    for hyp in hyps:
        slug = "bench-" + os.path.splitext(os.path.basename(hyp))[0]
        argv = [*tame_wh, "ingest", "--testset", testset, "--hyp", hyp, "--model-slug", slug]
        runs.append(run_child(label, [*argv, *extra]))
    return median_each(label, runs)


def compile_package_sources() -> None:
    """Byte-compile the repository's Python packages as an installer does, so that every timed
    child loads them from bytecode, as the installed reference tools load theirs (where
    PYTHONDONTWRITEBYTECODE is set, a checkout would otherwise recompile each module on every
    run)."""
    import compileall

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for package in ("warehouse",):  # warehouse/cli links to cli/
        compileall.compile_dir(os.path.join(root, package), quiet=1)


def load_average() -> str:
    """The 1-minute load average, for the header of a table (timings on a busy machine)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def machine() -> str:
    """The CPU model, its threads and the exact search's kernel on it, for a table's header."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    from warehouse.native import native

    return f"{model}, {os.cpu_count()} CPU threads, search kernel {native.search_kernel()}"


def print_ratio_table(title: str, reference: Measurement, others: Sequence[Measurement]) -> None:
    """Print each measurement with its time and memory as a ratio of the reference."""
    print(f"\n{title}")
    width = max(44, *(len(m.label) for m in (reference, *others)))
    header = (
        f"{'what':<{width}} {'seconds':>9} {'x ref':>7} {'CPU s':>8} {'x ref':>7} "
        f"{'peak MiB':>9} {'x ref':>7}"
    )
    print(header)
    print("-" * len(header))
    for m in (reference, *others):
        cpu_x = m.cpu_seconds / reference.cpu_seconds if reference.cpu_seconds else float("nan")
        print(
            f"{m.label:<{width}} {m.seconds:>9.2f} {m.seconds / reference.seconds:>7.2f} "
            f"{m.cpu_seconds:>8.2f} {cpu_x:>7.2f} "
            f"{m.peak_mib:>9.0f} {m.peak_mib / reference.peak_mib:>7.2f}"
        )


def _launch(argv: Sequence[str]) -> int:
    """The launcher: run `--usage-to FILE -- ARGV...`, write ARGV's usage to FILE, return its
    exit code."""
    if len(argv) < 4 or argv[0] != "--usage-to" or argv[2] != "--":
        sys.stderr.write("usage: measure.py --usage-to FILE -- ARGV...\n")
        return 2
    started = time.perf_counter()
    child = subprocess.Popen(list(argv[3:]))
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    seen = {
        "exit": code,
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_kib": usage.ru_maxrss / 1024 if sys.platform == "darwin" else usage.ru_maxrss,
    }
    with open(argv[1], "w") as out:
        json.dump(seen, out)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    raise SystemExit(_launch(sys.argv[1:]))
