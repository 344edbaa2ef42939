"""Significance speed: 1,000 paired resamples of two 2,000-segment runs vs. sacrebleu's own test;
with --ted and --real, whole boards (every pair of 13 real TED systems, of 15 en-fr-length runs).

Run: python bench/significance.py [--segments 2000] [--resamples 1000] [--repeat 5]
     python bench/significance.py --ted wmt21-ted-zhen.tar.gz --real en-fr.tar.gz [--repeat 3]
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

Boards (--ted, --real): the reference is sacrebleu's `PairedTest` (paired-bs, BLEU 13a and chrF++)
run once per baseline against every later system, which gives every pair's p-value; ours forms the
tie groups of `leaderboard --clusters` on both metrics from the runs' per-segment statistics (their
computation from text is timed apart). Every p-value is checked equal to sacrebleu's. The en-fr
board's 15 runs are real segments: the two Apertium systems' outputs and 13 mixtures of them with
the references, segment by segment. Target (issue 34): at least 30x faster, under 2 s for 15 runs.
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

import numpy as np
from ingest import _noisy_copy
from measure import run_child
from realdata import real_data
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest
from synthetic import write_parallel
from ted import ted_systems

from warehouse.metrics.surface import compute_segment_stats
from warehouse.stats.arrays import RunArrays, build_run_arrays, load_run_arrays
from warehouse.stats.clusters import Board, resamples_to_resolve, tie_groups
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import compare_pair
from warehouse.store.connection import connect

_SACRE_METRICS = {"BLEU": "bleu", "chrF2++": "chrf_plus_plus"}


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


def _runs(references: list[str], systems: dict[str, list[str]]) -> list[RunArrays]:
    """Each system's per-segment statistics against one reference (what ingest stores)."""
    runs = []
    for name, hyps in systems.items():
        stats = compute_segment_stats(hyps, [[r] for r in references], [False] * len(hyps))
        runs.append(
            build_run_arrays(
                run_id=name,
                label=name,
                test_corpus_id="board",
                keys=[str(i) for i in range(len(hyps))],
                bleu=stats.bleu,
                chrf=stats.chrf,
                ter=stats.ter,
                exact=stats.exact_match,
                difficulty=[None] * len(hyps),
                entry_values=[],
            )
        )
    return runs


def _sacrebleu_board(
    references: list[str], systems: dict[str, list[str]], resamples: int
) -> dict[tuple[str, str, str], float]:
    """Every pair's p-value from sacrebleu: `PairedTest` once per baseline, against every later
    system, as (metric, baseline, system) → p."""
    names = list(systems)
    out = {}
    for i, baseline in enumerate(names[:-1]):
        later = names[i + 1 :]
        _sigs, scores = PairedTest(
            [(baseline, systems[baseline]), *((name, systems[name]) for name in later)],
            {"BLEU": BLEU(tokenize="13a"), "chrF2++": CHRF(word_order=2)},
            [references],
            test_type="bs",
            n_samples=resamples,
        )()
        for sacre_name, metric in _SACRE_METRICS.items():
            for k, name in enumerate(later, start=1):
                out[metric, baseline, name] = scores[sacre_name][k].p_value
    return out


def _our_board(runs: list[RunArrays], resamples: int) -> list[Board]:
    """The tie groups of `leaderboard --clusters` on BLEU and chrF++ (paired-bs, Holm)."""
    settings = BootstrapSettings(resamples, 0.05, 12345)
    return [
        tie_groups(runs, metric, method="paired-bs", settings=settings)
        for metric in _SACRE_METRICS.values()
    ]


def _same_p_values(boards: list[Board], expected: dict[tuple[str, str, str], float]) -> int:
    """How many pairs were checked equal to sacrebleu's p-values (raises on a difference)."""
    checked = 0
    for board in boards:
        for pair in board.pairs:
            want = expected[board.metric, pair.run_a, pair.run_b]
            if pair.p_value != want:
                raise SystemExit(
                    f"{board.metric} {pair.run_a} vs {pair.run_b}: p {pair.p_value} != {want}"
                )
            checked += 1
    return checked


def _en_fr_board(folder: str, n_runs: int) -> tuple[list[str], dict[str, list[str]]]:
    """15 runs on the real en-fr test set: the two Apertium systems and mixtures of them with
    the references, segment by segment (real text, real lengths)."""
    with real_data(folder) as data:
        references = data.ref("test").read_text(encoding="utf-8").splitlines()
        real = [
            data.hyp("test", system).read_text(encoding="utf-8").splitlines()
            for system in ("apertium-pivot-cat", "apertium-pivot-spa")
        ]
    systems = {"apertium-pivot-cat": real[0], "apertium-pivot-spa": real[1]}
    rng = np.random.default_rng(34)
    for k in range(n_runs - 2):
        share = 0.05 + 0.5 * k / (n_runs - 2)  # of segments taken from the reference
        pick = rng.random(len(references))
        side = rng.integers(2, size=len(references))
        systems[f"mix{k:02d}"] = [
            references[i] if pick[i] < share else real[side[i]][i] for i in range(len(references))
        ]
    return references, systems


def boards(args: argparse.Namespace) -> None:
    """Time whole boards: sacrebleu once per baseline vs. ours, alternately; check equality."""
    os.environ["SACREBLEU_SEED"] = "12345"
    with ted_systems(args.ted) as (references, systems):
        mt = {name: hyps for name, hyps in systems.items() if name != "ref"}
        ted = (
            f"WMT21 TED zh-en: {len(mt)} real systems x {len(references)} segments",
            references,
            mt,
        )
    en_fr = _en_fr_board(args.real, 15)
    en_fr_board = (f"en-fr test: 15 runs x {len(en_fr[0]):,} real segments", *en_fr)
    for title, refs, hyps in (ted, en_fr_board):
        _time_board(title, refs, hyps, args)


def _time_board(
    title: str, refs: list[str], hyps: dict[str, list[str]], args: argparse.Namespace
) -> None:
    """One board: sacrebleu and ours alternately, then the equality check and the targets."""
    started = time.perf_counter()
    runs = _runs(refs, hyps)
    stats_seconds = time.perf_counter() - started
    expected: dict[tuple[str, str, str], float] = {}
    ours: list[Board] = []

    def sacre() -> object:
        expected.update(_sacrebleu_board(refs, hyps, args.resamples))
        return expected

    def mine() -> object:
        ours[:] = _our_board(runs, args.resamples)
        return ours

    best = _best_seconds({"sacrebleu": sacre, "ours": mine}, args.repeat)
    checked = _same_p_values(ours, expected)
    n_pairs = len(runs) * (len(runs) - 1) // 2
    _print_table(
        f"{title}: all {n_pairs} pairs, BLEU + chrF++, {args.resamples:,} resamples, "
        f"best of {args.repeat}",
        ("sacrebleu PairedTest paired-bs, once per baseline (reference)", best["sacrebleu"]),
        [
            ("tame-wh tie groups from stored statistics (both metrics)", best["ours"]),
            (
                "  + computing the statistics from text (done once, at ingest)",
                best["ours"] + stats_seconds,
            ),
        ],
    )
    ratio = best["sacrebleu"] / best["ours"]
    clusters = {b.metric: max(r.cluster for r in b.ranks) for b in ours}
    under = (
        f"; under 2 s -> {best['ours']:.2f} s [{'PASS' if best['ours'] < 2 else 'FAIL'}]"
        if len(runs) >= 15
        else ""
    )
    print(
        f"{checked} p-values equal to sacrebleu's; clusters: {clusters}; "
        f"target >= 30x -> {ratio:.1f}x [{'PASS' if ratio >= 30 else 'FAIL'}]{under}"
    )
    # What `leaderboard --clusters` does by default: enough resamples to reach Holm's threshold.
    enough = resamples_to_resolve("paired-bs", 0.05, n_pairs, "holm")
    started = time.perf_counter()
    resolved = _our_board(runs, enough)
    seconds = time.perf_counter() - started
    for board in resolved:
        groups = " | ".join(
            ", ".join(r.run_id for r in board.ranks if r.cluster == k)
            for k in sorted({r.cluster for r in board.ranks})
        )
        print(f"with {enough:,} resamples ({seconds:.2f} s for both): {board.metric}: {groups}")


def main() -> None:
    """Ingest two runs, then time sacrebleu and ours alternately on the same data."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ted", default=None, help="WMT21 TED zh-en folder or .tar.gz (boards)")
    parser.add_argument("--real", default=None, help="en-fr folder or .tar.gz (boards)")
    args = parser.parse_args()
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    if args.ted or args.real:
        if not (args.ted and args.real):
            parser.error("the board benchmark needs both --ted and --real")
        boards(args)
        return
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
        cli = [sys.executable, "-m", "warehouse.cli", "--db", str(db)]
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
                    "--no-intervals",
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
