"""Exposure audit speed: `tame-wh audit` (exact) vs. `tame-mt audit` (exact) on the same files.

Run: python bench/retrieval.py [--sizes 100000:2000,1000000:2000] [--mix unrelated|unseen]
Synthetic templated corpora (exact copies, near copies, and other sentences: see --mix). Each size
is loaded into a fresh warehouse (not timed), then, in the same run, our exact audit (index build,
source/target/pair search, TM statistics, storage) and tame-mt's exact audit are timed as child
processes with their peak memory. Ours runs --repeat times (recomputing with --force) and
tame-mt's --reference-repeat times; the median run of each is reported. tame-mt is skipped above
--tame-mt-max training pairs (it needs over ten minutes at 1M). Also printed: our share of
postings actually visited (a 64-row word of a frequent gram's bitmap counts as one entry read).
Targets (issue 3): 100k/2k at least 10x faster than tame-mt with no more memory; 1M/2k < 90 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from measure import median_run, run_child
from synthetic import write_exposure_corpus


def _tame_wh(db: Path, *args: str) -> list[str]:
    """The tame-wh command line for `db`."""
    return [sys.executable, "-m", "cli", "--db", str(db), *args]


def main() -> None:
    """Generate, load, time both tools per size, print the table and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000:2000,1000000:2000")
    parser.add_argument("--tame-mt-max", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of our audit (median)")
    parser.add_argument(
        "--reference-repeat", type=int, default=1, help="runs of tame-mt's audit (median)"
    )
    parser.add_argument(
        "--mix",
        choices=["unrelated", "unseen"],
        default="unrelated",
        help="test sentences that are not copies: another template, or new training-template ones",
    )
    args = parser.parse_args()
    tame_mt = shutil.which("tame-mt") or str(Path(sys.executable).with_name("tame-mt"))
    work = Path(tempfile.mkdtemp(prefix="tame-bench-retrieval-"))
    threads = ["--threads", str(args.threads)] if args.threads else []
    try:
        print(
            f"{'train/test':<14} {'tool':<28} {'seconds':>9} {'peak MiB':>9} {'time x':>8} "
            f"{'mem x':>7} {'postings visited':>17}"
        )
        print("-" * 98)
        for size in args.sizes.split(","):
            n_train, n_test = (int(x) for x in size.split(":"))
            files = write_exposure_corpus(
                work / size.replace(":", "_"), n_train, n_test, mix=args.mix
            )
            db = work / f"{n_train}.duckdb"
            for command in (
                [
                    "corpus",
                    "add",
                    "train",
                    "--src",
                    str(files["train_src"]),
                    "--tgt",
                    str(files["train_tgt"]),
                ],
                [
                    "testset",
                    "add",
                    "test",
                    "--src",
                    str(files["test_src"]),
                    "--ref",
                    str(files["test_ref"]),
                ],
            ):
                subprocess.run(_tame_wh(db, *command), check=True, stdout=subprocess.DEVNULL)
            audit_args = ["audit", "--train", "train", "--testset", "test", *threads]
            ours = median_run(
                [
                    run_child(
                        "tame-wh audit --mode exact",
                        _tame_wh(db, *audit_args, *(["--force"] if k else [])),
                    )
                    for k in range(max(args.repeat, 1))
                ]
            )
            audit = json.loads(
                subprocess.run(
                    _tame_wh(db, "audit", "--train", "train", "--testset", "test", "--json"),
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            postings = audit["postings"] or {}
            share = postings.get("visited", 0) / max(postings.get("total", 0), 1)
            label = f"{n_train // 1000}k/{n_test // 1000}k"
            reference = None
            if n_train <= args.tame_mt_max:
                reference_argv = [
                    tame_mt,
                    "audit",
                    "--train-src",
                    str(files["train_src"]),
                    "--train-tgt",
                    str(files["train_tgt"]),
                    "--test-src",
                    str(files["test_src"]),
                    "--ref",
                    str(files["test_ref"]),
                    "--retrieval",
                    "exact",
                    "--index-mode",
                    "native_exact",
                    "--json-out",
                    str(work / "tame-mt.json"),
                    "--quiet",
                    *([f"--threads={args.threads}"] if args.threads else []),
                ]
                reference = median_run(
                    [
                        run_child("tame-mt audit --retrieval exact", reference_argv)
                        for _ in range(max(args.reference_repeat, 1))
                    ]
                )
                print(
                    f"{label:<14} {reference.label:<28} {reference.seconds:>9.2f} "
                    f"{reference.peak_mib:>9.0f} {1.0:>8.2f} {1.0:>7.2f} {'':>17}"
                )
            time_x = f"{ours.seconds / reference.seconds:>8.3f}" if reference else f"{'':>8}"
            mem_x = f"{ours.peak_mib / reference.peak_mib:>7.2f}" if reference else f"{'':>7}"
            print(
                f"{label:<14} {ours.label:<28} {ours.seconds:>9.2f} {ours.peak_mib:>9.0f} "
                f"{time_x} {mem_x} {share:>16.1%}"
            )
            if reference:
                speedup = reference.seconds / ours.seconds
                verdict = speedup >= 10 and ours.peak_mib <= reference.peak_mib
                print(
                    f"   -> {speedup:.1f}x faster than tame-mt, memory "
                    f"{ours.peak_mib:.0f} vs {reference.peak_mib:.0f} MiB "
                    f"[{'PASS' if verdict else 'FAIL'}: target >= 10x, no more memory]"
                )
            if n_train >= 1_000_000:
                print(
                    f"   -> {ours.seconds:.1f} s "
                    f"[{'PASS' if ours.seconds < 90 else 'FAIL'}: target < 90 s]"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
