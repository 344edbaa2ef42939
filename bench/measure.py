"""Timing helpers for the benchmarks: run a command as a child, report wall time and peak RSS."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Measurement:
    """Wall-clock seconds and peak resident memory of one child process."""

    label: str
    seconds: float
    peak_mib: float


def run_child(label: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Measurement:
    """Run argv to completion; raise if it fails; measure its own peak RSS via wait4."""
    started = time.perf_counter()
    child = subprocess.Popen(list(argv), env=env, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{label}: {' '.join(argv)} exited with {child.returncode}")
    return Measurement(label, seconds, usage.ru_maxrss / 1024)


def median_run(runs: Sequence[Measurement]) -> Measurement:
    """The run with the median time (the upper middle one for an even count)."""
    return sorted(runs, key=lambda m: m.seconds)[len(runs) // 2]


def print_ratio_table(title: str, reference: Measurement, others: Sequence[Measurement]) -> None:
    """Print each measurement with its time and memory as a ratio of the reference."""
    print(f"\n{title}")
    header = f"{'what':<44} {'seconds':>9} {'x ref':>7} {'peak MiB':>9} {'x ref':>7}"
    print(header)
    print("-" * len(header))
    for m in (reference, *others):
        print(
            f"{m.label:<44} {m.seconds:>9.2f} {m.seconds / reference.seconds:>7.2f} "
            f"{m.peak_mib:>9.0f} {m.peak_mib / reference.peak_mib:>7.2f}"
        )
