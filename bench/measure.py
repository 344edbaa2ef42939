"""Timing helpers for the benchmarks: run a command as a child, report wall time, CPU time and
peak RSS (all from the child's own rusage, via wait4)."""

from __future__ import annotations

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


def run_child(
    label: str,
    argv: Sequence[str],
    env: dict[str, str] | None = None,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
) -> Measurement:
    """Run argv to completion; raise if it fails (showing its stderr, else kept quiet: progress
    messages); measure its own peak RSS and CPU via wait4."""
    with tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(list(argv), env=env, stdout=stdout, stderr=stderr)
        _pid, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            stderr.seek(0)
            sys.stderr.write(stderr.read().decode("utf-8", "replace"))
            raise SystemExit(f"{label}: {' '.join(argv)} exited with {child.returncode}")
    return Measurement(label, seconds, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


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


def load_average() -> str:
    """The 1-minute load average, for the header of a table (timings on a busy machine)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


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
