"""Significance speed: 1,000 paired resamples of two 2,000-segment runs vs. sacrebleu's own test.

Run: python bench/significance.py [--segments 2000] [--resamples 1000] [--repeat 5]
Reference, measured in the same run: sacrebleu's `PairedTest` paired bootstrap (BLEU 13a and
chrF++) on the same reference and hypothesis files; it extracts both systems' statistics from
text, then resamples. Ours reads the two stored runs' per-segment statistics from the warehouse,
then runs the paired sign test of docs/statistics.md (BLEU, chrF++ and exact match; native int64
resample sums, vectorised formulas), and sacrebleu's paired-bs reproduced on the stored statistics
(its float32 sums and its own formula per resample, for identical results).
In-process timings (best of --repeat, alternating; shared machines are noisy) exclude interpreter
start-up and imports; the command-line pair (`sacrebleu --paired-bs` vs `tame-wh significance`,
one run each) includes both.
Target (issue 5): the sign test at least 20x faster than sacrebleu.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from ingest import _noisy_copy
from measure import run_child
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest
from synthetic import write_parallel

from warehouse.stats.arrays import load_run_arrays
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import compare_pair
from warehouse.store.connection import connect


def _best_seconds(work: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Shortest wall time of each job over `repeat` rounds that run every job once in turn
    (timeit's advice for noisy machines: the least disturbed run is the cost of the work)."""
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(repeat):
        for name, job in work.items():
            started = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - started)
    return {name: min(t) for name, t in times.items()}


def _print_table(title: str, reference: tuple[str, float], others: list[tuple[str, float]]) -> None:
    """Each timing with the reference's time as a multiple of it (higher = faster than ref)."""
    print(f"\n{title}")
    header = f"{'what':<62} {'seconds':>9} {'ref / this':>11}"
    print(header)
    print("-" * len(header))
    for label, seconds in (reference, *others):
        print(f"{label:<62} {seconds:>9.3f} {reference[1] / seconds:>10.1f}x")


def main() -> None:
    """Ingest two runs, then time sacrebleu and ours alternately on the same data."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="tame-bench-significance-"))
    try:
        src, ref = write_parallel(work / "test", args.segments, seed=5)
        references = ref.read_text(encoding="utf-8").splitlines()
        hyp_paths = []
        for k in (1, 2):
            path = work / f"hyp{k}.txt"
            path.write_text("\n".join(_noisy_copy(references, k)) + "\n", encoding="utf-8")
            hyp_paths.append(path)
        db = work / "wh.duckdb"
        cli = [sys.executable, "-m", "cli", "--db", str(db)]
        quiet = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        subprocess.run(
            [*cli, "testset", "add", "bench", "--src", str(src), "--ref", str(ref)], **quiet
        )
        run_ids = []
        for k, path in enumerate(hyp_paths):
            out = subprocess.run(
                [
                    *cli,
                    "ingest",
                    "--testset",
                    "bench",
                    "--hyp",
                    str(path),
                    "--model-slug",
                    f"m{k}",
                    "--no-ci",
                    "--json",
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            run_ids.append(out.stdout.split('"run_id": "')[1].split('"')[0])

        os.environ["SACREBLEU_SEED"] = "12345"
        hyps = [p.read_text(encoding="utf-8").splitlines() for p in hyp_paths]
        settings = BootstrapSettings(args.resamples, 0.05, 12345)

        def sacrebleu_paired_bs() -> object:
            test = PairedTest(
                [("a", hyps[0]), ("b", hyps[1])],
                {"BLEU": BLEU(tokenize="13a"), "chrF2++": CHRF(word_order=2)},
                [references],
                test_type="bs",
                n_samples=args.resamples,
            )
            return test()

        def ours(method: str) -> Callable[[], object]:
            def run() -> object:
                con = connect(db, read_only=True)
                try:
                    a, b = (load_run_arrays(con, r) for r in run_ids)
                finally:
                    con.close()
                return compare_pair(a, b, method=method, settings=settings)

            return run

        best = _best_seconds(
            {"sacrebleu": sacrebleu_paired_bs, "sign": ours("sign"), "bs": ours("paired-bs")},
            args.repeat,
        )
        sacre, sign, paired_bs = best["sacrebleu"], best["sign"], best["bs"]
        _print_table(
            f"{args.segments:,} segments, {args.resamples:,} paired resamples, "
            f"best of {args.repeat} (in process)",
            ("sacrebleu PairedTest paired-bs: BLEU + chrF++ (reference)", sacre),
            [
                ("tame-wh sign test: BLEU + chrF++ + exact match (load + test)", sign),
                ("tame-wh paired-bs, sacrebleu-exact (load + test)", paired_bs),
            ],
        )
        n = str(args.resamples)
        sacre_cli = run_child(
            "sacrebleu CLI --paired-bs",
            [
                sys.executable,
                "-m",
                "sacrebleu",
                str(ref),
                "-i",
                *map(str, hyp_paths),
                "-m",
                "bleu",
                "chrf",
                "--chrf-word-order",
                "2",
                "--paired-bs",
                "--paired-bs-n",
                n,
                "--format",
                "text",
                "--quiet",
            ],
        )
        ours_cli = run_child(
            "tame-wh significance",
            [*cli, "significance", *run_ids, "--n-bootstrap", n, "--json"],
        )
        _print_table(
            "command line, one run each (includes interpreter start-up and imports)",
            ("sacrebleu -i A B --paired-bs (reference)", sacre_cli.seconds),
            [("tame-wh significance A B (sign test)", ours_cli.seconds)],
        )
        ratio = sacre / sign
        print(
            f"\ntarget: sign test >= 20x faster than sacrebleu -> {ratio:.1f}x "
            f"[{'PASS' if ratio >= 20 else 'FAIL'}]"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
