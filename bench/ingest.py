"""Ingest speed: `tame-wh ingest` of a 10,000-segment run vs. sacrebleu scoring the same files.

Run: python bench/ingest.py [--segments 10000] [--repeat 3]
Reference, measured in the same run: the sacrebleu command line computing corpus BLEU, chrF++
and TER (`-m bleu chrf ter --chrf-word-order 2`) on the same reference and hypothesis files.
Ours parses, computes and stores per-segment statistics for all three metrics plus exact match,
length ratio and sentence chrF++, and writes them in one transaction.
Target (issue 4): ours at most 1.5x the reference.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from measure import Measurement, print_ratio_table, run_child
from synthetic import write_parallel


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


def main() -> None:
    """Register the test set, then time ingest and sacrebleu alternately."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
