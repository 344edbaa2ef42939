"""Sharded exact audits at scale (issue 13): sharded vs unsharded, a local Ray cluster, and an
audit kept within a memory limit.

Run: python bench/scale.py [--pairs 1000000] [--tests 2000] [--shards 8] [--ray]
     python bench/scale.py --big 10000000 --memory-limit 4GiB [--pairs 0]

The corpus is synthetic but shaped like real text: sentence lengths drawn around 8 words (about 50
characters per side, as in real localisation corpora), words from a Zipf distribution over 60,000
generated word forms (a heavy-tailed gram distribution), and a test set of 2,000 segments: 10%
exact copies of training rows, 40% near copies (a word changed), 50% new sentences. It is loaded
into a warehouse once (not timed). Every audit is a child process timed by its own rusage (wall,
CPU, peak RSS); medians of --repeat runs, alternated. Parts:
- sharded: `audit` with the whole-corpus stored index vs `audit --shard-rows N/shards` with the
  stored shards; results compared row by row (identical), time ratio (target <= 1.3x);
- ray (`--ray`): the same sharded audit through a local 2-CPU Ray cluster on loopback started here
  (`audit --executor ray`): identical results, the overhead over the local executor;
- memory (`--big N --memory-limit SIZE`): a fresh audit of N pairs with `--memory-limit` (shards
  built and stored as it goes), its peak RSS against the limit and its time.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from measure import Measurement, load_average, median_each, run_child

ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyzéèàç"))
VOCABULARY = 60_000


def _words(rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` generated word forms of 2 to 11 letters."""
    lengths = rng.integers(2, 12, size=n)
    letters = rng.choice(ALPHABET, size=int(lengths.sum()))
    ends = np.cumsum(lengths)
    return np.array(["".join(letters[e - k : e]) for e, k in zip(ends, lengths, strict=True)])


def _sentences(rng: np.random.Generator, words: np.ndarray, n: int) -> list[str]:
    """`n` sentences: lengths around 8 words, words drawn by a Zipf law."""
    lengths = np.clip(rng.lognormal(np.log(7.5), 0.5, size=n).astype(int), 1, 60)
    ranks = np.minimum(rng.zipf(1.15, size=int(lengths.sum())), len(words)) - 1
    drawn = words[ranks]
    out, at = [], 0
    for k in lengths:
        out.append(" ".join(drawn[at : at + k]))
        at += k
    return out


def write_corpus(folder: Path, pairs: int, tests: int, seed: int = 7) -> None:
    """Training pairs and a test set with copies, near copies and new sentences."""
    rng = np.random.default_rng(seed)
    src_words, tgt_words = _words(rng, VOCABULARY), _words(rng, VOCABULARY)
    chunk = 1_000_000
    with (folder / "train.src").open("w") as fs, (folder / "train.tgt").open("w") as ft:
        for start in range(0, pairs, chunk):
            n = min(chunk, pairs - start)
            fs.write("\n".join(_sentences(rng, src_words, n)) + "\n")
            ft.write("\n".join(_sentences(rng, tgt_words, n)) + "\n")
    picked = rng.integers(0, pairs, size=tests)
    wanted = set(picked.tolist())
    rows: dict[int, tuple[str, str]] = {}
    with (folder / "train.src").open() as fs, (folder / "train.tgt").open() as ft:
        for i, (s, t) in enumerate(zip(fs, ft, strict=True)):
            if i in wanted:
                rows[i] = (s.rstrip("\n"), t.rstrip("\n"))
    fresh_src = _sentences(rng, src_words, tests)
    fresh_tgt = _sentences(rng, tgt_words, tests)
    test_src, test_ref = [], []
    for k, row in enumerate(picked.tolist()):
        s, t = rows[row]
        kind = k % 10
        if kind == 0:  # an exact copy
            test_src.append(s)
            test_ref.append(t)
        elif kind <= 4:  # a near copy: one word replaced on each side
            test_src.append(_replace_word(rng, s, src_words))
            test_ref.append(_replace_word(rng, t, tgt_words))
        else:
            test_src.append(fresh_src[k])
            test_ref.append(fresh_tgt[k])
    (folder / "test.src").write_text("\n".join(test_src) + "\n")
    (folder / "test.ref").write_text("\n".join(test_ref) + "\n")


def _replace_word(rng: np.random.Generator, text: str, words: np.ndarray) -> str:
    """`text` with one word replaced by a random one."""
    parts = text.split(" ")
    parts[int(rng.integers(0, len(parts)))] = str(words[int(rng.integers(0, len(words)))])
    return " ".join(parts)


def _tame_wh(db: Path, *args: str) -> list[str]:
    """The tame-wh command line for `db` (quiet)."""
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), "--quiet", *args]


def _setup(argv: list[str]) -> None:
    """Run an untimed setup command."""
    subprocess.run(argv, check=True, capture_output=True)


def _exposures(db: Path) -> str:
    """A digest of every stored exposure row (the only audit of the warehouse)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT * EXCLUDE (audit_id) FROM exposures ORDER BY seg_idx").fetchall()
    finally:
        con.close()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def _row(m: Measurement) -> None:
    print(f"  {m.label:<44} {m.seconds:>9.2f} {m.cpu_seconds:>9.2f} {m.peak_mib:>9.0f}")


def _load(work: Path, pairs: int, tests: int) -> Path:
    """A warehouse holding the generated corpus (`train`) and test set (`test`)."""
    folder = work / f"data-{pairs}"
    folder.mkdir()
    write_corpus(folder, pairs, tests)
    db = work / f"wh-{pairs}" / "wh.duckdb"
    db.parent.mkdir()
    corpus = ["corpus", "add", "train", "--src", str(folder / "train.src")]
    _setup(_tame_wh(db, *corpus, "--tgt", str(folder / "train.tgt")))
    testset = ["testset", "add", "test", "--src", str(folder / "test.src")]
    _setup(_tame_wh(db, *testset, "--ref", str(folder / "test.ref")))
    shutil.rmtree(folder)
    return db


def _interleaved(
    runs: list[tuple[str, list[str]]], repeat: int, db: Path
) -> list[tuple[Measurement, str]]:
    """Each command `repeat` times, alternating; medians and the exposures' digest."""
    measured: dict[str, list[Measurement]] = {label: [] for label, _ in runs}
    digests: dict[str, set[str]] = {label: set() for label, _ in runs}
    for _ in range(repeat):
        for label, argv in runs:
            measured[label].append(run_child(label, argv))
            digests[label].add(_exposures(db))
    out = []
    for label, _ in runs:
        [digest] = digests[label] if len(digests[label]) == 1 else ["differs between runs"]
        out.append((median_each(label, measured[label]), digest))
    return out


class RayCluster:
    """A local Ray cluster on loopback with 2 CPUs, stopped (its processes, by id) on exit."""

    def __enter__(self) -> str:
        self.temp = tempfile.mkdtemp(prefix="tame-ray-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ray = str(Path(sys.executable).with_name("ray"))
        argv = [ray, "start", "--head", "--num-cpus", "2", "--node-ip-address", "127.0.0.1"]
        argv += ["--port", str(port), "--temp-dir", self.temp, "--include-dashboard", "false"]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        subprocess.run([*argv, "--disable-usage-stats"], check=True, capture_output=True, env=env)
        return f"127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if self.temp.encode() in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue
        shutil.rmtree(self.temp, ignore_errors=True)


def sharded_part(args: argparse.Namespace, work: Path) -> list[tuple[bool, str]]:
    """Sharded vs unsharded (and Ray) on --pairs pairs."""
    verdicts = []
    db = _load(work, args.pairs, args.tests)
    shard_rows = -(-args.pairs // args.shards)
    print(
        f"\n{args.pairs:,} pairs / {args.tests:,} test segments, {args.shards} shards of "
        f"{shard_rows:,} rows; load average {load_average()}"
    )
    print(f"  {'':<44} {'wall s':>9} {'CPU s':>9} {'peak MiB':>9}")
    build = run_child(
        "index build (whole corpus)", _tame_wh(db, "index", "build", "--train", "train")
    )
    _row(build)
    build_sharded = run_child(
        f"index build --shard-rows {shard_rows}",
        _tame_wh(db, "index", "build", "--train", "train", "--shard-rows", str(shard_rows)),
    )
    _row(build_sharded)
    audit = ["audit", "--train", "train", "--testset", "test", "--force"]
    runs = [
        ("audit (whole-corpus index)", _tame_wh(db, *audit)),
        (f"audit --shard-rows {shard_rows}", _tame_wh(db, *audit, "--shard-rows", str(shard_rows))),
    ]
    (whole, whole_digest), (sharded, sharded_digest) = _interleaved(runs, args.repeat, db)
    _row(whole)
    _row(sharded)
    ratio = sharded.seconds / whole.seconds
    same = whole_digest == sharded_digest
    print(f"  -> sharded / whole {ratio:.2f}x wall; exposures identical: {same}")
    verdicts.append((same, f"{args.pairs:,}: {args.shards} shards give the unsharded exposures"))
    verdicts.append(
        (ratio <= 1.3, f"{args.pairs:,}: sharded time {ratio:.2f}x unsharded (<= 1.3x)")
    )
    if args.ray:
        with RayCluster() as address:
            ray_argv = _tame_wh(
                db, *audit, "--shard-rows", str(shard_rows), "--executor", "ray",
                "--ray-address", address,
            )  # fmt: skip
            [(on_ray, ray_digest)] = _interleaved(
                [("audit --executor ray", ray_argv)], args.repeat, db
            )
        _row(on_ray)
        overhead = on_ray.seconds / sharded.seconds
        same = ray_digest == sharded_digest
        print(f"  -> Ray / local executor {overhead:.2f}x wall; exposures identical: {same}")
        verdicts.append((same, f"{args.pairs:,}: Ray cluster gives the local exposures"))
    return verdicts


def memory_part(args: argparse.Namespace, work: Path) -> list[tuple[bool, str]]:
    """A fresh audit of --big pairs within --memory-limit."""
    db = _load(work, args.big, args.tests)
    print(
        f"\n{args.big:,} pairs / {args.tests:,} test segments, --memory-limit "
        f"{args.memory_limit}; load average {load_average()}"
    )
    print(f"  {'':<44} {'wall s':>9} {'CPU s':>9} {'peak MiB':>9}")
    argv = ["audit", "--train", "train", "--testset", "test", "--memory-limit", args.memory_limit]
    fresh = run_child("audit --memory-limit (fresh: builds shards)", _tame_wh(db, *argv))
    _row(fresh)
    again = run_child("audit --memory-limit (stored shards)", _tame_wh(db, *argv, "--force"))
    _row(again)
    from warehouse.sizes import parse_size

    limit_mib = parse_size(args.memory_limit) / 2**20
    ok = max(fresh.peak_mib, again.peak_mib) < limit_mib
    files = sorted((db.parent / "wh.duckdb.indexes").glob("*.index"))
    size = sum(f.stat().st_size for f in files) / 2**30
    peak = max(fresh.peak_mib, again.peak_mib)
    print(
        f"  -> {len(files)} shard files, {size:.1f} GiB; peak {peak:.0f} MiB of {limit_mib:.0f} MiB"
    )
    return [(ok, f"{args.big:,}: peak RSS under --memory-limit {args.memory_limit}")]


def main() -> None:
    """Generate, load, time, print the verdicts."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    parser.add_argument("--pairs", type=int, default=1_000_000, help="0 skips the sharded part")
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ray", action="store_true", help="also through a local Ray cluster")
    parser.add_argument("--big", type=int, default=0, help="pairs of the memory-limit part")
    parser.add_argument("--memory-limit", default="4GiB")
    parser.add_argument("--work", default=None, help="folder for the data (default: a temp dir)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tame-bench-scale-", dir=args.work))
    verdicts: list[tuple[bool, str]] = []
    try:
        if args.pairs:
            verdicts += sharded_part(args, work)
        if args.big:
            verdicts += memory_part(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nVerdicts (issue 13)")
    for ok, what in verdicts:
        print(f"  [{'PASS' if ok else 'FAIL'}] {what}")


if __name__ == "__main__":
    main()
