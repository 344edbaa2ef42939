"""Ingest speed: `tame-wh ingest` of a 10,000-segment run vs. sacrebleu scoring the same files.

Run: python bench/ingest.py [--segments 10000] [--repeat 3]
Reference, measured in the same run: the sacrebleu command line computing corpus BLEU, chrF++
and TER (`-m bleu chrf ter --chrf-word-order 2`) on the same reference and hypothesis files.
Ours parses, computes and stores per-segment statistics for all three metrics plus exact match,
length ratio and sentence chrF++, and writes them in one transaction.
Target (issue 4): ours at most 1.5x the reference.

TER statistics alone (issue 17): the native kernel (`native.ter_stats`) vs sacrebleu's
`TER()._extract_corpus_statistics`, in this process on the same text, their outputs checked equal:
the noisy hypotheses of the ingest rows, and word-shuffled ~60-word segments (six reference lines
joined, words shuffled: sacrebleu's shift search at its worst; `--ter-shuffled`, 0 to skip;
sacrebleu timed once there, the native kernel the median of `--repeat`).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).parent))

from measure import Measurement, print_ratio_table, run_child
from synthetic import write_parallel

T = TypeVar("T")


def _noisy_copy(lines: list[str], seed: int) -> list[str]:
    """System output: the reference with a few words dropped or swapped."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split()
        if len(words) > 3 and rng.random() < 0.5:
            del words[rng.randrange(len(words))]
        if len(words) > 3 and rng.random() < 0.3:
            k = rng.randrange(len(words) - 1)
            words[k], words[k + 1] = words[k + 1], words[k]
        out.append(" ".join(words))
    return out


def _median(label: str, runs: list[Measurement]) -> Measurement:
    """Median time (and max memory) of repeated measurements."""
    return Measurement(
        label, statistics.median(m.seconds for m in runs), max(m.peak_mib for m in runs)
    )


def _seconds(run: Callable[[], T], repeat: int) -> tuple[float, T]:
    """Median wall time of `repeat` (at least one) calls, and the last call's result."""
    times = []
    for _ in range(max(repeat, 1)):
        started = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), out


def _shuffled(references: list[str], n: int, seed: int) -> tuple[list[str], list[str]]:
    """`n` long segments (six reference lines joined) and their word-shuffled hypotheses."""
    rng = random.Random(seed)
    refs = [" ".join(references[(6 * k + j) % len(references)] for j in range(6)) for k in range(n)]
    hyps = []
    for ref in refs:
        words = ref.split()
        rng.shuffle(words)
        hyps.append(" ".join(words))
    return hyps, refs


def _ter_row(label: str, hyps: list[str], refs: list[str], repeat: int, sacre_repeat: int) -> None:
    """Time native and sacrebleu TER statistics on the same text; print the row and the ratio."""
    from sacrebleu.metrics import TER

    from warehouse.native import native

    per_segment = [[r] for r in refs]
    ours_s, ours = _seconds(lambda: native.ter_stats(hyps, per_segment), repeat)
    theirs_s, theirs = _seconds(
        lambda: TER()._extract_corpus_statistics(hyps, [refs]), sacre_repeat
    )
    equal = ours == [[float(v) for v in s] for s in theirs]
    print(
        f"{label:<44} {theirs_s:>9.2f} {ours_s:>9.3f} {theirs_s / ours_s:>8.0f}x "
        f"{'yes' if equal else 'NO'}"
    )
    if not equal:
        raise SystemExit(f"{label}: native TER statistics differ from sacrebleu's")


def main() -> None:
    """Register the test set, then time ingest and sacrebleu alternately."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ter-shuffled", type=int, default=60)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tame-bench-ingest-"))
    try:
        src, ref = write_parallel(work / "test", args.segments, seed=3)
        db = work / "wh.duckdb"
        cli = [sys.executable, "-m", "cli", "--db", str(db)]
        subprocess.run(
            [*cli, "testset", "add", "bench", "--src", str(src), "--ref", str(ref)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        references = ref.read_text(encoding="utf-8").splitlines()
        sacre, ours = [], []
        for k in range(args.repeat):
            hyp = work / f"hyp{k}.txt"
            hyp.write_text("\n".join(_noisy_copy(references, k)) + "\n", encoding="utf-8")
            sacre.append(
                run_child(
                    "sacrebleu CLI: BLEU + chrF++ + TER",
                    [
                        sys.executable,
                        "-m",
                        "sacrebleu",
                        str(ref),
                        "-i",
                        str(hyp),
                        "-m",
                        "bleu",
                        "chrf",
                        "ter",
                        "--chrf-word-order",
                        "2",
                        "-b",
                    ],
                )
            )
            ours.append(
                run_child(
                    "tame-wh ingest (stats + store)",
                    [
                        *cli,
                        "ingest",
                        "--testset",
                        "bench",
                        "--hyp",
                        str(hyp),
                        "--model-slug",
                        f"m{k}",
                    ],
                )
            )
        reference = _median("sacrebleu CLI: BLEU + chrF++ + TER (reference)", sacre)
        measured = _median("tame-wh ingest (stats + store)", ours)
        print_ratio_table(
            f"{args.segments:,} segments, median of {args.repeat}", reference, [measured]
        )
        ratio = measured.seconds / reference.seconds
        print(
            f"\ntarget: ingest <= 1.5x sacrebleu -> {ratio:.2f}x "
            f"[{'PASS' if ratio <= 1.5 else 'FAIL'}]"
        )
        print(
            f"\nTER statistics in process ({os.cpu_count()} CPUs; sacrebleu single-threaded)\n"
            f"{'text':<44} {'sacrebleu':>9} {'native':>9} {'speedup':>9} equal"
        )
        noisy = _noisy_copy(references, 0)
        _ter_row(
            f"noisy copies, {len(noisy):,} segments", noisy, references, args.repeat, args.repeat
        )
        if args.ter_shuffled > 0:
            hyps, refs = _shuffled(references, args.ter_shuffled, seed=5)
            _ter_row(f"shuffled ~60 words, {len(hyps):,} segments", hyps, refs, args.repeat, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
