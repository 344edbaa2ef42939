"""Exposure audit speed: `tame-wh audit` (exact) vs. `tame-mt audit` (exact) on the same files.

Run: python bench/retrieval.py --real /tmp/rd/en-fr --repeat 3 [--reference-repeat 3]
     python bench/retrieval.py [--sizes 100000:2000,1000000:2000] [--mix unrelated|unseen]

Real text (`--real DIR`, the unpacked en-fr folder or en-fr.tar.gz): 230,986 training pairs and
both test sets (`test`: in-domain help paragraphs, `test-ddtp`: out-of-domain package
descriptions). The corpus and test sets are loaded into a warehouse once (not timed). Parts:
- fresh: `tame-wh audit` on a fresh copy of that warehouse (no audit, no stored index) vs
  `tame-mt audit --retrieval exact --index-mode native_exact` on the text files;
- indexed: the training index built once and stored on both sides (`tame-wh index build`,
  `tame-mt index build`, build times printed), then `tame-wh audit --force` vs
  `tame-mt audit --index BUNDLE`, each tool's stored index read into the page cache (untimed)
  before each of its runs (runs alternate, and a machine may page out what has not been used
  for a minute). When `tame-wh index` is not available the row says so.
Every audit is a child process, timed with its own rusage: wall seconds, CPU seconds (user +
system) and peak RSS; the median of --repeat runs (ours) and --reference-repeat runs (tame-mt),
runs interleaved. Ratios are tame-mt / ours (memory: ours / tame-mt). Every audit of ours is also
checked against tame-mt's: source and target exposures equal to 1e-9 on every segment (tame-mt's
exact mode is an oracle for both; docs/exposure.md), pair exposure never below tame-mt's (ours is
exact, tame-mt reranks a top-50).
Targets (issue 15): fresh audit >= 10x tame-mt in CPU and wall on both sets with peak memory
<= 0.5x; audit with a stored index >= 20x tame-mt's audit with its stored index.

Synthetic templated corpora (`--sizes`, the extra rows; `--sizes none` skips them): 10% exact
copies, 30% near copies, 60% other sentences (see --mix), loaded into a fresh warehouse (not timed),
then the same fresh-audit comparison; tame-mt is skipped above --tame-mt-max training pairs (it
needs over ten minutes at 1M). Also printed: our share of postings visited (a 64-row word of a
frequent gram's bitmap counts as one entry read). Targets: 100k/2k >= 10x tame-mt with no more
memory (issue 3); 1M/2k < 15 s (issue 15).

`--only` picks parts and sets (comma-separated): test, test-ddtp, synthetic, fresh, indexed; e.g.
`--only test-ddtp,fresh`. `--quick`: one run each, test-ddtp only, no synthetic rows.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from measure import (
    Measurement,
    compile_package_sources,
    load_average,
    machine,
    median_each,
    median_run,
    run_child,
)
from realdata import DESCRIPTIONS, TEST_SETS, RealData, real_data
from synthetic import write_exposure_corpus

TOLERANCE = 1e-9
SETS = (*TEST_SETS, "synthetic")
PARTS = ("fresh", "indexed")


def _tame_wh(db: Path, *args: str) -> list[str]:
    """The tame-wh command line for `db`."""
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args]


def _quiet(argv: Sequence[str]) -> str:
    """Run a setup command (not timed); its stdout."""
    done = subprocess.run(list(argv), check=True, capture_output=True, text=True)
    return done.stdout


def _tame_mt_path() -> str:
    """The tame-mt executable of this environment."""
    return shutil.which("tame-mt") or str(Path(sys.executable).with_name("tame-mt"))


def _index_command_available(db: Path) -> bool:
    """Whether this tame-wh has `index build` (a stored training index)."""
    done = subprocess.run(
        _tame_wh(db, "index", "build", "--help"), capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def _files_under(path: Path) -> list[Path]:
    """`path` if it is a file, else every file below it (none when it does not exist)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []


def _read_through(paths: list[Path]) -> None:
    """Read each file once (so the page cache holds it)."""
    for path in paths:
        with path.open("rb") as f:
            while f.read(1 << 24):
                pass


def _copy_warehouse(base: Path, folder: Path) -> Path:
    """A copy of the loaded warehouse in an empty folder (nothing beside it: no stored index)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = folder / base.name
    shutil.copyfile(base, db)
    wal = base.with_name(base.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, db.with_name(db.name + ".wal"))
    return db


# ---------------------------------------------------------------------------------------------
# Checking our exposures against tame-mt's


@dataclass
class Agreement:
    """Per-segment agreement of our audit with tame-mt's diagnostics."""

    n: int = 0
    source: int = 0  # |ours - theirs| > TOLERANCE
    target: int = 0
    pair_below: int = 0  # ours < theirs - TOLERANCE (ours is exact, theirs a reranked top-k)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.source or self.target or self.pair_below or self.problems)

    def describe(self) -> str:
        """One line for the table."""
        if self.problems:
            return "; ".join(self.problems)
        return (
            f"{self.n:,} segments: source mismatches {self.source}, target mismatches "
            f"{self.target} (|diff| > {TOLERANCE:g}); pair below tame-mt {self.pair_below}"
        )


def _our_audit(db: Path, test: str) -> dict[str, Any]:
    """The stored audit of `test` against `train` (`audit --json`, no recomputation)."""
    out = _quiet(_tame_wh(db, "audit", "--train", "train", "--testset", test, "--json"))
    document: dict[str, Any] = json.loads(out)
    return document


def _our_exposures(db: Path, audit_id: str) -> list[tuple[float, float, float]]:
    """Source, target and pair exposure of every segment of a stored audit, in segment order."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT source_exposure, target_exposure, pair_exposure FROM exposures "
            "WHERE audit_id = ? ORDER BY seg_idx",
            [audit_id],
        ).fetchall()
    finally:
        con.close()
    return [(float(s), float(t), float(p)) for s, t, p in rows]


def _their_exposures(diagnostics: Path) -> list[tuple[float, float, float]]:
    """The same three values from tame-mt's per-segment diagnostics (JSON lines)."""
    rows = []
    with open(diagnostics, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            rows.append(
                (
                    float(record["source_exposure"]),
                    float(record["target_exposure"]),
                    float(record["pair_exposure"]),
                )
            )
    return rows


def agreement(db: Path, audit_id: str, diagnostics: Path) -> Agreement:
    """Compare our stored exposures with tame-mt's, segment by segment."""
    ours, theirs = _our_exposures(db, audit_id), _their_exposures(diagnostics)
    out = Agreement(n=len(ours))
    if len(ours) != len(theirs):
        out.problems.append(f"{len(ours)} segments in ours vs {len(theirs)} in tame-mt's")
        return out
    for (s, t, p), (s2, t2, p2) in zip(ours, theirs, strict=True):
        out.source += abs(s - s2) > TOLERANCE
        out.target += abs(t - t2) > TOLERANCE
        out.pair_below += p < p2 - TOLERANCE
    return out


# ---------------------------------------------------------------------------------------------
# Printing


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


ROW = "{set:<10} {part:<20} {tool:<34} {wall:>8} {cpu:>8} {mem:>9}"


def _header(title: str) -> None:
    print(f"\n{title}")
    line = ROW.format(
        set="set", part="part", tool="tool", wall="wall s", cpu="CPU s", mem="peak MiB"
    )
    print(line)
    print("-" * len(line))


def _row(test: str, part: str, m: Measurement) -> None:
    print(
        ROW.format(
            set=test,
            part=part,
            tool=m.label,
            wall=f"{m.seconds:.2f}",
            cpu=f"{m.cpu_seconds:.2f}",
            mem=f"{m.peak_mib:.0f}",
        )
    )


def _ratio_row(
    test: str,
    part: str,
    theirs: Measurement,
    ours: Measurement,
    speed_target: float,
    memory_target: float | None,
) -> tuple[bool, str]:
    """Print tame-mt / ours for wall and CPU (and ours / tame-mt for memory); the verdict."""
    wall = theirs.seconds / ours.seconds
    cpu = theirs.cpu_seconds / ours.cpu_seconds if ours.cpu_seconds else float("inf")
    memory = ours.peak_mib / theirs.peak_mib
    checks = [wall >= speed_target, cpu >= speed_target]
    wanted = f">= {speed_target:g}x wall and CPU"
    if memory_target is not None:
        checks.append(memory <= memory_target)
        wanted += f", memory <= {memory_target:g}x"
    ok = all(checks)
    print(
        ROW.format(
            set=test,
            part=part,
            tool="ratio tame-mt / tame-wh",
            wall=f"{wall:.2f}x",
            cpu=f"{cpu:.2f}x",
            mem=f"{memory:.2f}x",
        )
        + f"  [{_verdict(ok)}: {wanted}]"
    )
    return ok, f"{test} {part}: wall {wall:.1f}x, CPU {cpu:.1f}x, memory {memory:.2f}x ({wanted})"


# ---------------------------------------------------------------------------------------------
# Real text


@dataclass
class RealBench:
    """Settings and scratch space of the real-text part."""

    data: RealData
    work: Path
    tame_mt: str
    repeat: int
    reference_repeat: int
    threads: int | None
    verdicts: list[tuple[bool, str]] = field(default_factory=list)

    @property
    def wh_threads(self) -> list[str]:
        return ["--threads", str(self.threads)] if self.threads else []

    @property
    def mt_threads(self) -> list[str]:
        return [f"--threads={self.threads}"] if self.threads else []

    def load(self, sets: Sequence[str]) -> Path:
        """The training corpus and the test sets in one warehouse (not timed)."""
        db = self.work / "base" / "wh.duckdb"
        db.parent.mkdir(parents=True, exist_ok=True)
        d = self.data
        _quiet(
            _tame_wh(
                db, "corpus", "add", "train", "--src", str(d.train_src), "--tgt", str(d.train_tgt)
            )
        )
        for test in sets:
            _quiet(
                _tame_wh(
                    db, "testset", "add", test, "--src", str(d.src(test)), "--ref", str(d.ref(test))
                )
            )
        return db

    def tame_mt_audit(self, test: str, diagnostics: Path, index: Path | None) -> list[str]:
        """tame-mt's exact audit of one test set (on the text files, or with a stored index)."""
        d = self.data
        training = (
            ["--index", str(index)]
            if index is not None
            else ["--train-src", str(d.train_src), "--train-tgt", str(d.train_tgt)]
        )
        return [
            self.tame_mt,
            "audit",
            *training,
            "--test-src",
            str(d.src(test)),
            "--ref",
            str(d.ref(test)),
            "--retrieval",
            "exact",
            "--index-mode",
            "native_exact",
            "--json-out",
            str(diagnostics.with_suffix(".json")),
            "--diagnostic-out",
            str(diagnostics),
            "--quiet",
            *self.mt_threads,
        ]

    def interleaved(
        self,
        ours: tuple[str, list[list[str]]],
        theirs: tuple[str, list[str]],
        warm: tuple[list[Path], list[Path]] = ([], []),
    ) -> tuple[Measurement, Measurement]:
        """Run ours (one argv per repeat) and tame-mt's alternately; the medians of each.
        `warm` lists each tool's files read (untimed) before each of its runs."""
        our_label, our_argvs = ours
        their_label, their_argv = theirs
        mine: list[Measurement] = []
        other: list[Measurement] = []
        for k in range(max(len(our_argvs), self.reference_repeat)):
            if k < len(our_argvs):
                _read_through(warm[0])
                mine.append(run_child(our_label, our_argvs[k]))
            if k < self.reference_repeat:
                _read_through(warm[1])
                other.append(run_child(their_label, their_argv))
        return median_each(our_label, mine), median_each(their_label, other)

    def fresh(self, base: Path, test: str) -> float | None:
        """A fresh audit on both sides; our audit's index seconds (build)."""
        argvs = []
        copies = []
        for k in range(self.repeat):
            db = _copy_warehouse(base, self.work / f"fresh-{test}-{k}")
            copies.append(db)
            argvs.append(
                _tame_wh(
                    db, "audit", "--train", "train", "--testset", test, "--force", *self.wh_threads
                )
            )
        diagnostics = self.work / f"tame-mt-{test}-fresh.jsonl"
        ours, theirs = self.interleaved(
            ("tame-wh audit (fresh warehouse)", argvs),
            ("tame-mt audit (exact)", self.tame_mt_audit(test, diagnostics, None)),
        )
        _row(test, "fresh audit", theirs)
        _row(test, "fresh audit", ours)
        self.verdicts.append(_ratio_row(test, "fresh audit", theirs, ours, 10, 0.5))
        audit = _our_audit(copies[-1], test)
        self._check(test, "fresh audit", copies[-1], audit, diagnostics)
        timings = audit.get("timings") or {}
        postings = audit.get("postings") or {}
        share = postings.get("visited", 0) / max(postings.get("total", 0), 1)
        print(
            f"{'':<10} {'':<20} our timings: index {timings.get('index_seconds', 0):.2f} s, "
            f"search {timings.get('search_seconds', 0):.2f} s, read "
            f"{timings.get('read_seconds', 0):.2f} s; postings visited {share:.1%}"
        )
        if timings.get("index_loaded"):
            print(f"{'':<10} {'':<20} warning: this audit loaded a stored index (not fresh)")
        for db in copies:
            shutil.rmtree(db.parent, ignore_errors=True)
        index_s = timings.get("index_seconds")
        return float(index_s) if index_s is not None else None

    def _check(
        self, test: str, part: str, db: Path, audit: dict[str, Any], diagnostics: Path
    ) -> None:
        """Print and record the exposure agreement of one of our audits with tame-mt's."""
        agree = agreement(db, str(audit["audit_id"]), diagnostics)
        print(f"{'':<10} {'':<20} exposures vs tame-mt: {agree.describe()} [{_verdict(agree.ok)}]")
        self.verdicts.append((agree.ok, f"{test} {part}: exposures equal to tame-mt's"))

    def build_indexes(self, base: Path) -> tuple[Path, Path | None]:
        """Both stored indexes, their build timed once (tame-mt's bundle; our warehouse copy
        with its index, or None when `tame-wh index` is not available)."""
        d = self.data
        bundle = self.work / "tame-mt-index.bundle"
        mt_build = run_child(
            "tame-mt index build",
            [
                self.tame_mt,
                "index",
                "build",
                "--train-src",
                str(d.train_src),
                "--train-tgt",
                str(d.train_tgt),
                "--out",
                str(bundle),
                "--quiet",
                *self.mt_threads,
            ],
        )
        _row("(train)", "index build", mt_build)
        db = _copy_warehouse(base, self.work / "indexed")
        if not _index_command_available(db):
            print(
                f"{'(train)':<10} {'index build':<20} tame-wh index build: not available "
                "(`tame-wh index` is missing in this checkout)"
            )
            return bundle, None
        ours = run_child(
            "tame-wh index build",
            _tame_wh(db, "index", "build", "--train", "train", *self.wh_threads),
        )
        _row("(train)", "index build", ours)
        print(f"{'':<10} {'':<20} index files: {self._index_files(db)}")
        return bundle, db

    @staticmethod
    def _index_files(db: Path) -> str:
        """What the stored index left beside the warehouse (names and sizes)."""
        files = [p for p in db.parent.rglob("*") if p.is_file() and p.name != db.name]
        files = [p for p in files if not p.name.endswith(".wal")]
        if not files:
            return "none beside the warehouse"
        return ", ".join(
            f"{p.relative_to(db.parent)} ({p.stat().st_size / 2**20:.0f} MiB)" for p in files
        )

    def indexed(
        self, test: str, bundle: Path, db: Path | None, fresh_index_s: float | None
    ) -> None:
        """An audit with a stored index on both sides."""
        diagnostics = self.work / f"tame-mt-{test}-indexed.jsonl"
        their_argv = self.tame_mt_audit(test, diagnostics, bundle)
        if db is None:
            theirs = median_each(
                "tame-mt audit --index",
                [
                    run_child("tame-mt audit --index", their_argv)
                    for _ in range(self.reference_repeat)
                ],
            )
            _row(test, "stored-index audit", theirs)
            print(
                f"{test:<10} {'stored-index audit':<20} {'tame-wh audit (stored index)':<34} "
                "not available: no `tame-wh index` command"
            )
            self.verdicts.append((False, f"{test} stored-index audit: not available"))
            return
        argv = _tame_wh(
            db, "audit", "--train", "train", "--testset", test, "--force", *self.wh_threads
        )
        # Each stored index is read into the page cache before each run of its tool: the runs
        # alternate, and a machine may drop pages unused for a minute (ours does), which would
        # time our audit, the short one, on a cold index and tame-mt's on a warm one.
        ours, theirs = self.interleaved(
            ("tame-wh audit (stored index)", [argv] * self.repeat),
            ("tame-mt audit --index", their_argv),
            warm=(_files_under(db.parent / f"{db.name}.indexes"), _files_under(bundle)),
        )
        _row(test, "stored-index audit", theirs)
        _row(test, "stored-index audit", ours)
        print(
            f"{'':<10} {'':<20} each tool's stored index read into the page cache (untimed) "
            "before each of its runs"
        )
        self.verdicts.append(_ratio_row(test, "stored-index audit", theirs, ours, 20, None))
        audit = _our_audit(db, test)
        self._check(test, "stored-index audit", db, audit, diagnostics)
        timings = audit.get("timings") or {}
        if "index_loaded" in timings and not timings["index_loaded"]:
            print(f"{'':<10} {'':<20} our audit did not load the stored index [FAIL]")
            self.verdicts.append((False, f"{test}: the audit loads the stored index"))
            return
        load_s = timings.get("index_seconds")
        if load_s is not None and fresh_index_s:
            ratio = fresh_index_s / max(load_s, 1e-9)
            print(
                f"{'':<10} {'':<20} index in the audit: built {fresh_index_s:.2f} s (fresh), "
                f"loaded {load_s:.3f} s (stored): {ratio:.0f}x [{_verdict(ratio >= 20)}: >= 20x]"
            )
            self.verdicts.append(
                (ratio >= 20, f"{test}: index load {ratio:.0f}x faster than build")
            )


def run_real(
    args: argparse.Namespace, sets: list[str], parts: list[str], work: Path
) -> list[tuple[bool, str]]:
    """The real-text rows: fresh and stored-index audits of each real test set."""
    with real_data(args.real) as data:
        bench = RealBench(
            data,
            work,
            _tame_mt_path(),
            max(args.repeat, 1),
            max(args.reference_repeat, 1),
            args.threads,
        )
        base = bench.load(sets)
        n_train = data.lines(data.train_src)
        _header(
            f"Real text (en-fr): {n_train:,} training pairs; "
            + "; ".join(f"{t}: {data.lines(data.src(t)):,} {DESCRIPTIONS[t]}" for t in sets)
            + f"\nmedians of {bench.repeat} (tame-wh) and {bench.reference_repeat} (tame-mt) runs; "
            f"load average {load_average()} at the start\n{machine()}"
        )
        fresh_index: dict[str, float] = {}
        if "fresh" in parts:
            for test in sets:
                index_s = bench.fresh(base, test)
                if index_s is not None:
                    fresh_index[test] = index_s
        if "indexed" in parts:
            bundle, db = bench.build_indexes(base)
            for test in sets:
                bench.indexed(test, bundle, db, fresh_index.get(test))
        return bench.verdicts


# ---------------------------------------------------------------------------------------------
# Synthetic text


def run_synthetic(args: argparse.Namespace, work: Path) -> list[tuple[bool, str]]:
    """The synthetic rows (issue 3's table), each size loaded into a fresh warehouse; returns
    the verdict of the 1M-pair audit's time, when that size ran."""
    tame_mt = _tame_mt_path()
    threads = ["--threads", str(args.threads)] if args.threads else []
    print(
        f"\nSynthetic templated text (--mix {args.mix}); load average {load_average()}\n"
        f"{'train/test':<14} {'tool':<32} {'seconds':>9} {'CPU s':>8} {'peak MiB':>9} "
        f"{'time x':>8} {'mem x':>7} {'postings visited':>17}"
    )
    print("-" * 111)
    verdicts: list[tuple[bool, str]] = []
    for size in args.sizes.split(","):
        n_train, n_test = (int(x) for x in size.split(":"))
        files = write_exposure_corpus(work / size.replace(":", "_"), n_train, n_test, mix=args.mix)
        db = work / f"{n_train}.duckdb"
        _quiet(
            _tame_wh(
                db,
                "corpus",
                "add",
                "train",
                "--src",
                str(files["train_src"]),
                "--tgt",
                str(files["train_tgt"]),
            )
        )
        _quiet(
            _tame_wh(
                db,
                "testset",
                "add",
                "test",
                "--src",
                str(files["test_src"]),
                "--ref",
                str(files["test_ref"]),
            )
        )
        audit_args = ["audit", "--train", "train", "--testset", "test", "--force", *threads]
        # Each run on a fresh copy of the loaded warehouse: no audit and no stored index yet.
        runs = []
        for k in range(max(args.repeat, 1)):
            copy = _copy_warehouse(db, work / f"fresh-{n_train}-{k}")
            runs.append(run_child("tame-wh audit --mode exact", _tame_wh(copy, *audit_args)))
        ours = median_run(runs)
        audit = _our_audit(copy, "test")
        for k in range(max(args.repeat, 1)):
            shutil.rmtree(work / f"fresh-{n_train}-{k}", ignore_errors=True)
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
                f"{label:<14} {reference.label:<32} {reference.seconds:>9.2f} "
                f"{reference.cpu_seconds:>8.2f} {reference.peak_mib:>9.0f} {1.0:>8.2f} "
                f"{1.0:>7.2f} {'':>17}"
            )
        time_x = f"{ours.seconds / reference.seconds:>8.3f}" if reference else f"{'':>8}"
        mem_x = f"{ours.peak_mib / reference.peak_mib:>7.2f}" if reference else f"{'':>7}"
        print(
            f"{label:<14} {ours.label:<32} {ours.seconds:>9.2f} {ours.cpu_seconds:>8.2f} "
            f"{ours.peak_mib:>9.0f} {time_x} {mem_x} {share:>16.1%}"
        )
        if reference:
            speedup = reference.seconds / ours.seconds
            cpu_speedup = reference.cpu_seconds / max(ours.cpu_seconds, 1e-9)
            verdict = speedup >= 10 and ours.peak_mib <= reference.peak_mib
            print(
                f"   -> {speedup:.1f}x faster than tame-mt ({cpu_speedup:.1f}x in CPU), memory "
                f"{ours.peak_mib:.0f} vs {reference.peak_mib:.0f} MiB "
                f"[{_verdict(verdict)}: target >= 10x, no more memory]"
            )
        if n_train >= 1_000_000:
            ok = ours.seconds < 15
            print(f"   -> {ours.seconds:.1f} s [{_verdict(ok)}: target < 15 s]")
            verdicts.append((ok, f"{label} synthetic audit: {ours.seconds:.1f} s (< 15 s)"))
    return verdicts


def _selection(only: str | None, quick: bool, real: bool) -> tuple[list[str], list[str], bool]:
    """Which real test sets and parts run, and whether the synthetic rows run."""
    tokens = [t for t in (only or "").split(",") if t]
    unknown = [t for t in tokens if t not in (*SETS, *PARTS)]
    if unknown:
        raise SystemExit(
            f"--only: unknown {', '.join(unknown)}; choose from {', '.join((*SETS, *PARTS))}"
        )
    sets = [t for t in tokens if t in SETS] or (["test-ddtp"] if quick else list(SETS))
    parts = [t for t in tokens if t in PARTS] or list(PARTS)
    synthetic = "synthetic" in sets and not (quick and not tokens)
    real_sets = [t for t in TEST_SETS if t in sets] if real else []
    return real_sets, parts, synthetic


def main() -> None:
    """Load, time both tools per test set, print the tables and the verdicts."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    parser.add_argument("--real", default=None, help="real en-fr data: folder or .tar.gz")
    parser.add_argument(
        "--only", default=None, help="comma-separated: " + ", ".join((*SETS, *PARTS))
    )
    parser.add_argument("--quick", action="store_true", help="one run each, test-ddtp only")
    parser.add_argument(
        "--sizes", default="100000:2000,1000000:2000", help="synthetic sizes, or none"
    )
    parser.add_argument("--tame-mt-max", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="runs of our audit (median)")
    parser.add_argument(
        "--reference-repeat",
        type=int,
        default=3,
        help="runs of tame-mt's audit (median; its time varies by 10-20%% between runs)",
    )
    parser.add_argument(
        "--mix",
        choices=["unrelated", "unseen"],
        default="unrelated",
        help="test sentences that are not copies: another template, or new training-template ones",
    )
    args = parser.parse_args()
    compile_package_sources()
    if args.quick:
        args.repeat, args.reference_repeat = 1, 1
    sets, parts, synthetic = _selection(args.only, args.quick, args.real is not None)
    if args.sizes == "none":
        synthetic = False
    work = Path(tempfile.mkdtemp(prefix="tame-bench-retrieval-"))
    verdicts: list[tuple[bool, str]] = []
    try:
        if args.real is not None and sets:
            verdicts = run_real(args, sets, parts, work)
        if synthetic:
            verdicts += run_synthetic(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if verdicts:
        print("\nVerdicts (issue 15 targets)")
        for ok, what in verdicts:
            print(f"  [{_verdict(ok)}] {what}")


if __name__ == "__main__":
    main()
