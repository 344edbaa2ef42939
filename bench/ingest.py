"""Ingest speed: `tame-wh ingest` vs. the sacrebleu CLI scoring the same files; JSON reports and
report-file `compare` vs. the same hypotheses as plain files.

Run: python bench/ingest.py --real /tmp/rd/en-fr --repeat 3
     python bench/ingest.py [--segments 10000] [--repeat 3]

Real text (`--real DIR`, the unpacked en-fr folder or en-fr.tar.gz; test sets `test`: 2,000
in-domain help paragraphs and `test-ddtp`: 1,500 out-of-domain package descriptions; systems: the
two Apertium pivots). Both test sets are registered in a warehouse once (not timed); every timed
command is a child process on a fresh copy of it, measured with its own rusage (wall, CPU =
user + system, peak RSS); medians of --repeat runs (ours) and --reference-repeat runs (sacrebleu),
interleaved. Parts:
- plain: the sacrebleu CLI computing BLEU + chrF++ + TER (`sacrebleu REF -i HYP -m bleu chrf
  ter --chrf-word-order 2 -b -w 4`) vs `tame-wh ingest --testset NAME --hyp HYP` (statistics,
  checks, bootstrap intervals, storage), each test set and system; the scores are checked equal
  (to the 4 decimals sacrebleu prints). Target (issue 15): ingest of test-ddtp >= 3x faster.
- reports: three 2,000-entry test reports (`test`, the two systems and a third whose lines
  alternate between them; id, source, expected, predicted, latency and token usage per entry)
  vs the same hypotheses as plain files (three `ingest --testset test --hyp` calls, summed):
  `ingest A B C` (the reports define their own test set) and `ingest --testset test A B C`
  (matched against the registered one). Target: within 1.5x.
- compare: `compare A.json B.json` (parsed and scored in memory), without and with
  `--significance`, vs ingesting the same two systems' hypotheses as plain files (two
  `ingest --testset test --hyp` calls, summed; target: within 1.5x), and, for reference, vs
  `compare RUN_A RUN_B` of those runs once stored (already scored); the compared values are
  checked equal to the stored runs'.

- rescore: ten stored 2,000-segment runs of `test` (the two systems and eight seeded
  line-by-line mixtures of them) scored again under `--tokenize intl`: one `rescore --all` vs
  ingesting the ten files again with `--tokenize intl` (ten processes, summed); the re-scored runs
  are checked to be the fresh ingests' (same run ids) with sacrebleu's intl BLEU.

Synthetic rows (`--segments`; issue 4's table): a 10,000-segment run of templated text vs
sacrebleu (target: at most 1.5x the reference); TER statistics alone (issue 17): the native
kernel (`native.ter_stats`) vs sacrebleu's `TER()._extract_corpus_statistics`, in this process on
the same text, checked equal: noisy copies and word-shuffled ~60-word segments (`--ter-shuffled`,
0 to skip).

`--only` picks (comma-separated): test, test-ddtp, plain, reports, compare, rescore, synthetic; e.g.
`--only test-ddtp,plain`. `--quick`: one run each, test-ddtp for the plain part, no synthetic rows.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).parent))

from measure import (
    Measurement,
    compile_package_sources,
    load_average,
    median_each,
    print_ratio_table,
    run_child,
)
from realdata import DESCRIPTIONS, SYSTEMS, TEST_SETS, RealData, real_data
from synthetic import write_parallel

T = TypeVar("T")
PARTS = ("plain", "reports", "compare", "rescore")
REPORT_TEST = "test"  # the test set the reports are built from
MIXED = "apertium-pivot-mixed"  # the third report: lines alternating between the two systems
RESCORED_RUNS = 10  # stored runs the rescore part scores again


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


def _sacrebleu(ref: Path, hyp: Path) -> list[str]:
    """The sacrebleu command line scoring BLEU, chrF++ and TER (scores only, 4 decimals)."""
    return [
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
        "-w",
        "4",
    ]


def _tame_wh(db: Path, *args: str) -> list[str]:
    """The tame-wh command line for `db`."""
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args]


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# ---------------------------------------------------------------------------------------------
# Synthetic text


def run_synthetic(args: argparse.Namespace, work: Path) -> None:
    """The synthetic rows: time ingest and sacrebleu alternately; the TER statistics rows."""
    src, ref = write_parallel(work / "synthetic", args.segments, seed=3)
    db = work / "synthetic.duckdb"
    subprocess.run(
        _tame_wh(db, "testset", "add", "bench", "--src", str(src), "--ref", str(ref)),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    references = ref.read_text(encoding="utf-8").splitlines()
    sacre, ours = [], []
    for k in range(args.repeat):
        hyp = work / f"synthetic-hyp{k}.txt"
        hyp.write_text("\n".join(_noisy_copy(references, k)) + "\n", encoding="utf-8")
        sacre.append(run_child("sacrebleu CLI: BLEU + chrF++ + TER", _sacrebleu(ref, hyp)))
        ours.append(
            run_child(
                "tame-wh ingest (stats + store)",
                _tame_wh(
                    db, "ingest", "--testset", "bench", "--hyp", str(hyp), "--model-slug", f"m{k}"
                ),
            )
        )
    reference = median_each("sacrebleu CLI: BLEU + chrF++ + TER (reference)", sacre)
    measured = median_each("tame-wh ingest (stats + store)", ours)
    print_ratio_table(
        f"Synthetic text: {args.segments:,} segments, median of {args.repeat}; load average "
        f"{load_average()}",
        reference,
        [measured],
    )
    ratio = measured.seconds / reference.seconds
    print(f"\ntarget: ingest <= 1.5x sacrebleu -> {ratio:.2f}x [{_verdict(ratio <= 1.5)}]")
    print(
        f"\nTER statistics in process ({os.cpu_count()} CPUs; sacrebleu single-threaded)\n"
        f"{'text':<44} {'sacrebleu':>9} {'native':>9} {'speedup':>9} equal"
    )
    noisy = _noisy_copy(references, 0)
    _ter_row(f"noisy copies, {len(noisy):,} segments", noisy, references, args.repeat, args.repeat)
    if args.ter_shuffled > 0:
        hyps, refs = _shuffled(references, args.ter_shuffled, seed=5)
        _ter_row(f"shuffled ~60 words, {len(hyps):,} segments", hyps, refs, args.repeat, 1)


# ---------------------------------------------------------------------------------------------
# Real text

ROW = "{set:<10} {what:<52} {wall:>8} {cpu:>8} {mem:>9}"


def _header(title: str) -> None:
    print(f"\n{title}")
    line = ROW.format(set="set", what="what", wall="wall s", cpu="CPU s", mem="peak MiB")
    print(line)
    print("-" * len(line))


def _row(test: str, m: Measurement) -> None:
    print(
        ROW.format(
            set=test,
            what=m.label,
            wall=f"{m.seconds:.2f}",
            cpu=f"{m.cpu_seconds:.2f}",
            mem=f"{m.peak_mib:.0f}",
        )
    )


def _ratio(
    test: str, label: str, value_wall: float, value_cpu: float, target: str, ok: bool | None
) -> None:
    """A ratio row (with its verdict when it has a target)."""
    verdict = f"  [{_verdict(ok)}: {target}]" if ok is not None else f"  ({target})"
    print(
        ROW.format(set=test, what=label, wall=f"{value_wall:.2f}x", cpu=f"{value_cpu:.2f}x", mem="")
        + verdict
    )


def _sum(label: str, runs: Sequence[Measurement]) -> Measurement:
    """Several commands run one after the other: summed times, the largest peak."""
    return Measurement(
        label,
        sum(m.seconds for m in runs),
        max(m.peak_mib for m in runs),
        sum(m.cpu_seconds for m in runs),
    )


def _lines(path: Path) -> list[str]:
    """A text file's lines (without their line ends)."""
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write_reports(data: RealData, folder: Path) -> dict[str, tuple[Path, Path]]:
    """The three test reports of REPORT_TEST and the same hypotheses as plain files, by system."""
    folder.mkdir(parents=True, exist_ok=True)
    sources, refs = _lines(data.src(REPORT_TEST)), _lines(data.ref(REPORT_TEST))
    hyps = {system: _lines(data.hyp(REPORT_TEST, system)) for system in SYSTEMS}
    hyps[MIXED] = [hyps[SYSTEMS[i % 2]][i] for i in range(len(sources))]
    rng = random.Random(7)
    out = {}
    for system, lines in hyps.items():
        entries = [
            {
                "id": str(i),
                "source": source,
                "expected": ref,
                "predicted": hyp,
                "error": None,
                "latency_s": round(rng.uniform(0.2, 4.0), 3),
                "usage": {
                    "prompt_tokens": rng.randrange(80, 900),
                    "completion_tokens": rng.randrange(10, 400),
                },
            }
            for i, (source, ref, hyp) in enumerate(zip(sources, refs, lines, strict=True))
        ]
        report = {
            "model_slug": system,
            "dataset": {"id": "en-fr-test", "language_pair": "en-fr"},
            "created_at": "2026-01-15T12:00:00Z",
            "elapsed_seconds": 1234.5,
            "totals": {
                "prompt_tokens": sum(e["usage"]["prompt_tokens"] for e in entries),  # type: ignore[index]
                "completion_tokens": sum(e["usage"]["completion_tokens"] for e in entries),  # type: ignore[index]
            },
            "entries": entries,
        }
        report_path, hyp_path = folder / f"{system}.report.json", folder / f"{system}.hyp"
        report_path.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        hyp_path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        out[system] = (report_path, hyp_path)
    return out


def _copy_warehouse(base: Path, folder: Path) -> Path:
    """A copy of the warehouse with the registered test sets, alone in a new folder."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    db = folder / base.name
    shutil.copyfile(base, db)
    return db


def _json_output(argv: list[str]) -> Any:
    """Run a command printing JSON (not timed); the parsed document."""
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


@dataclass
class RealIngestBench:
    """Settings and scratch space of the real-text part."""

    data: RealData
    work: Path
    repeat: int
    reference_repeat: int
    base: Path = field(init=False)
    verdicts: list[tuple[bool, str]] = field(default_factory=list)
    _copies: int = 0

    def __post_init__(self) -> None:
        self.base = self.work / "base" / "wh.duckdb"
        self.base.parent.mkdir(parents=True)
        for test in TEST_SETS:
            subprocess.run(
                _tame_wh(
                    self.base,
                    "testset",
                    "add",
                    test,
                    "--src",
                    str(self.data.src(test)),
                    "--ref",
                    str(self.data.ref(test)),
                ),
                check=True,
                stdout=subprocess.DEVNULL,
            )

    def fresh_copy(self) -> Path:
        """A new copy of the warehouse holding the registered test sets and nothing else."""
        self._copies += 1
        return _copy_warehouse(self.base, self.work / f"copy-{self._copies}")

    def empty_warehouse(self) -> Path:
        """A new folder for a warehouse that does not exist yet."""
        self._copies += 1
        folder = self.work / f"copy-{self._copies}"
        folder.mkdir(parents=True)
        return folder / "wh.duckdb"

    def plain(self, test: str, system: str) -> None:
        """sacrebleu CLI vs ingest of one hypothesis file; scores checked equal."""
        ref, hyp = self.data.ref(test), self.data.hyp(test, system)
        theirs_out = self.work / "sacrebleu.out"
        ours_out = self.work / "ingest.out"
        mine, other = [], []
        for k in range(max(self.repeat, self.reference_repeat)):
            if k < self.reference_repeat:
                with open(theirs_out, "w") as out:
                    other.append(
                        run_child(
                            "sacrebleu CLI: BLEU + chrF++ + TER", _sacrebleu(ref, hyp), stdout=out
                        )
                    )
            if k < self.repeat:
                db = self.fresh_copy()
                argv = _tame_wh(
                    db,
                    "ingest",
                    "--testset",
                    test,
                    "--hyp",
                    str(hyp),
                    "--model-slug",
                    system,
                    "--json",
                )
                with open(ours_out, "w") as out:
                    mine.append(run_child("tame-wh ingest --testset --hyp", argv, stdout=out))
                shutil.rmtree(db.parent)
        theirs = median_each(f"{system}: sacrebleu CLI, BLEU + chrF++ + TER", other)
        ours = median_each(f"{system}: tame-wh ingest --hyp", mine)
        _row(test, theirs)
        _row(test, ours)
        wall, cpu = theirs.seconds / ours.seconds, theirs.cpu_seconds / ours.cpu_seconds
        if test == "test-ddtp":
            ok = wall >= 3 and cpu >= 3
            _ratio(test, f"{system}: speed-up (sacrebleu / ours)", wall, cpu, ">= 3x", ok)
            self.verdicts.append(
                (
                    ok,
                    f"ingest {test} {system}: {wall:.1f}x wall, {cpu:.1f}x CPU faster than "
                    "sacrebleu (>= 3x)",
                )
            )
        else:
            _ratio(test, f"{system}: speed-up (sacrebleu / ours)", wall, cpu, "no target", None)
        sacre = json.loads(theirs_out.read_text())
        scores = json.loads(ours_out.read_text())[0]["scores"]
        mine_rounded = [round(scores[name], 4) for name in ("bleu", "chrf", "ter")]
        equal = all(abs(a - b) < 1e-9 for a, b in zip(mine_rounded, sacre, strict=True))
        print(
            f"{'':<10} scores BLEU / chrF++ / TER: sacrebleu {sacre}, ours {mine_rounded} "
            f"[{_verdict(equal)}: equal]"
        )
        self.verdicts.append((equal, f"ingest {test} {system}: scores equal to sacrebleu's"))

    def _ingest_plain(self, db: Path, what: str, hyps: Sequence[tuple[str, Path]]) -> Measurement:
        """`ingest --testset test --hyp FILE` of each (system, file) into `db`, summed."""

        def one(system: str, hyp: Path) -> list[str]:
            return _tame_wh(
                db, "ingest", "--testset", REPORT_TEST, "--hyp", str(hyp), "--model-slug", system
            )

        runs = [run_child("plain", one(system, hyp)) for system, hyp in hyps]
        return _sum(f"{what}: {len(runs)} x ingest --testset --hyp", runs)

    def reports(self, files: dict[str, tuple[Path, Path]]) -> tuple[Path, dict[str, str]]:
        """Three reports vs three plain files; the warehouse of the last plain ingest and its
        run ids by system (for the compare part)."""
        reports = [str(report) for report, _hyp in files.values()]
        plain, alone, registered = [], [], []
        plain_db = self.base
        run_ids: dict[str, str] = {}
        checks: list[tuple[bool, str]] = []
        for k in range(self.repeat):
            plain_db = self.fresh_copy()
            hyps = [(system, hyp) for system, (_report, hyp) in files.items()]
            plain.append(self._ingest_plain(plain_db, "3 plain files", hyps))
            db = self.empty_warehouse()
            alone.append(
                run_child(
                    "3 reports: ingest A B C (own test set)", _tame_wh(db, "ingest", *reports)
                )
            )
            db2 = self.fresh_copy()
            registered.append(
                run_child(
                    "3 reports: ingest --testset test A B C",
                    _tame_wh(db2, "ingest", "--testset", REPORT_TEST, *reports),
                )
            )
            last = k == self.repeat - 1
            if last:
                checks = self._check_report_scores(plain_db, db, db2, run_ids)
            shutil.rmtree(db.parent)
            shutil.rmtree(db2.parent)
            if not last:
                shutil.rmtree(plain_db.parent)
        reference = median_each(plain[0].label, plain)
        _row(REPORT_TEST, reference)
        for runs in (alone, registered):
            ours = median_each(runs[0].label, runs)
            _row(REPORT_TEST, ours)
            wall, cpu = ours.seconds / reference.seconds, ours.cpu_seconds / reference.cpu_seconds
            ok = wall <= 1.5 and cpu <= 1.5
            _ratio(REPORT_TEST, "  x plain files", wall, cpu, "<= 1.5x", ok)
            self.verdicts.append(
                (ok, f"{ours.label}: {wall:.2f}x wall, {cpu:.2f}x CPU of plain files (<= 1.5x)")
            )
        for equal, label in checks:
            print(f"{'':<10} {label} [{_verdict(equal)}]")
            self.verdicts.append((equal, label))
        return plain_db, run_ids

    def _check_report_scores(
        self, plain_db: Path, alone_db: Path, registered_db: Path, run_ids: dict[str, str]
    ) -> list[tuple[bool, str]]:
        """Whether the runs ingested from reports have the plain files' scores."""

        def scores(db: Path) -> dict[str, tuple[str, list[float]]]:
            rows = _json_output(_tame_wh(db, "runs", "list", "--json"))
            return {r["model_slug"]: (r["run_id"], [r["bleu"], r["chrf"], r["ter"]]) for r in rows}

        plain = scores(plain_db)
        run_ids.update({slug: run_id for slug, (run_id, _s) in plain.items()})
        out = []
        for label, db in (("reports alone", alone_db), ("reports --testset", registered_db)):
            other = scores(db)
            equal = {k: v[1] for k, v in other.items()} == {k: v[1] for k, v in plain.items()}
            out.append((equal, f"{label}: BLEU, chrF++ and TER equal to the plain files' runs"))
        return out

    def compare(
        self, files: dict[str, tuple[Path, Path]], db: Path, run_ids: dict[str, str]
    ) -> None:
        """compare of two report files vs ingesting the same two systems' hypotheses as plain
        files (the target), and vs compare of those two runs once stored (for reference)."""
        a, b = SYSTEMS
        report_a, report_b = str(files[a][0]), str(files[b][0])
        for extra in ([], ["--significance"]):
            flag = " --significance" if extra else ""
            by_id = _tame_wh(db, "compare", run_ids[a], run_ids[b], *extra)
            by_file = _tame_wh(db, "compare", report_a, report_b, *extra)
            mine, stored, plain = [], [], []
            for _ in range(self.repeat):
                plain_db = self.fresh_copy()
                hyps = [(system, files[system][1]) for system in (a, b)]
                plain.append(self._ingest_plain(plain_db, "2 plain files", hyps))
                shutil.rmtree(plain_db.parent)
                stored.append(run_child(f"compare RUN_A RUN_B{flag} (stored runs)", by_id))
                mine.append(run_child(f"compare A.json B.json{flag}", by_file))
            reference = median_each(plain[0].label, plain)
            already = median_each(stored[0].label, stored)
            ours = median_each(mine[0].label, mine)
            for row in (reference, already, ours):
                _row(REPORT_TEST, row)
            wall, cpu = ours.seconds / reference.seconds, ours.cpu_seconds / reference.cpu_seconds
            ok = wall <= 1.5 and cpu <= 1.5
            _ratio(REPORT_TEST, "  x plain files", wall, cpu, "<= 1.5x", ok)
            self.verdicts.append(
                (
                    ok,
                    f"compare A.json B.json{flag}: {wall:.2f}x wall, {cpu:.2f}x CPU of ingesting "
                    "the two plain files (<= 1.5x)",
                )
            )
            _ratio(
                REPORT_TEST,
                "  x stored runs",
                ours.seconds / already.seconds,
                ours.cpu_seconds / already.cpu_seconds,
                "the runs already scored; for reference",
                None,
            )
            stored_doc = _json_output([*by_id, "--json"])
            in_memory = _json_output([*by_file, "--json"])
            equal = _same_values(stored_doc, in_memory)
            print(f"{'':<10} compared values equal [{_verdict(equal)}]")
            self.verdicts.append(
                (equal, f"compare{flag}: report files give the stored runs' values")
            )

    def rescore(self, n_runs: int = RESCORED_RUNS) -> None:
        """`rescore --all --tokenize intl` of `n_runs` stored 2,000-segment runs vs ingesting
        their files again with `--tokenize intl` (one process per file, summed); the re-scored
        runs checked to be the fresh ingests' runs and to carry sacrebleu's intl BLEU."""
        from sacrebleu.metrics import BLEU

        files = _mixed_systems(self.data, self.work / "rescore", n_runs)
        stored = self.fresh_copy()
        for slug, hyp in files:  # the runs as ingested (13a), not timed
            subprocess.run(_tame_wh(stored, "ingest", "--testset", REPORT_TEST, "--hyp",
                                    str(hyp), "--model-slug", slug), check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
        mine, again = [], []
        rescored: list[dict[str, Any]] = []
        fresh: dict[str, str] = {}
        for _ in range(self.repeat):
            db = _copy_warehouse(stored, self.work / "rescore-db")
            out = self.work / "rescore.json"
            with open(out, "w") as sink:
                mine.append(run_child(f"rescore --all --tokenize intl ({n_runs} runs)",
                                      _tame_wh(db, "rescore", "--all", "--tokenize", "intl",
                                               "--json"), stdout=sink))  # fmt: skip
            rescored = json.loads(out.read_text())
            db2 = _copy_warehouse(stored, self.work / "reingest-db")
            runs = []
            for slug, hyp in files:
                with open(out, "w") as sink:
                    argv = _tame_wh(db2, "ingest", "--testset", REPORT_TEST, "--hyp",
                                    str(hyp), "--model-slug", slug, "--tokenize", "intl",
                                    "--json")  # fmt: skip
                    runs.append(run_child("ingest", argv, stdout=sink))
                fresh[slug] = json.loads(out.read_text())[0]["run_id"]
            again.append(_sum(f"{n_runs} x ingest --tokenize intl (files again)", runs))
        reference = median_each(again[0].label, again)
        ours = median_each(mine[0].label, mine)
        _row(REPORT_TEST, reference)
        _row(REPORT_TEST, ours)
        wall, cpu = reference.seconds / ours.seconds, reference.cpu_seconds / ours.cpu_seconds
        _ratio(REPORT_TEST, "  speed-up (ingest again / rescore)", wall, cpu, "no target", None)
        refs = _lines(self.data.ref(REPORT_TEST))
        intl = BLEU(tokenize="intl")
        by_slug = {r["model_slug"]: r for r in rescored}
        same_ids = all(by_slug[slug]["run_id"] == fresh[slug] for slug, _hyp in files)
        equal = all(
            abs(by_slug[slug]["scores"]["bleu"] - intl.corpus_score(_lines(hyp), [refs]).score)
            < 1e-9
            for slug, hyp in files
        )
        for ok, what in (
            (same_ids, f"rescore: the {n_runs} re-scored runs are the fresh ingests' runs"),
            (equal, f"rescore: the {n_runs} runs' BLEU equals sacrebleu's BLEU(tokenize='intl')"),
        ):
            print(f"{'':<10} {what} [{_verdict(ok)}]")
            self.verdicts.append((ok, what))
        self.verdicts.append((True, f"rescore of {n_runs} runs: {wall:.1f}x wall, {cpu:.1f}x "
                              "CPU faster than ingesting the files again"))  # fmt: skip


def _mixed_systems(data: RealData, folder: Path, n: int) -> list[tuple[str, Path]]:
    """`n` hypothesis files of the `test` set: the two systems, then mixtures taking each line
    from one or the other at random (seeded), as model slugs sys-0 … sys-(n-1)."""
    folder.mkdir(parents=True, exist_ok=True)
    a, b = (_lines(data.hyp(REPORT_TEST, system)) for system in SYSTEMS)
    out = []
    for k in range(n):
        rng = random.Random(k)
        lines = a if k == 0 else b if k == 1 else [x if rng.random() < 0.5 else y
                                                   for x, y in zip(a, b, strict=True)]  # fmt: skip
        path = folder / f"sys-{k}.txt"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        out.append((f"sys-{k}", path))
    return out


def _same_values(stored: dict[str, Any], in_memory: dict[str, Any]) -> bool:
    """Two compare documents agree on every metric value and test result (labels aside)."""

    def strip(document: dict[str, Any]) -> Any:
        return {
            "metrics": document["metrics"],
            "n_segments": document["n_segments"],
            "significance": [
                {k: v for k, v in pair.items() if k not in ("run_a", "run_b")}
                for pair in document.get("significance") or []
            ],
        }

    return bool(strip(stored) == strip(in_memory))


def run_real(
    args: argparse.Namespace, sets: list[str], parts: list[str], work: Path
) -> list[tuple[bool, str]]:
    """The real-text rows."""
    with real_data(args.real) as data:
        bench = RealIngestBench(data, work, max(args.repeat, 1), max(args.reference_repeat, 1))
        _header(
            "Real text (en-fr): "
            + "; ".join(f"{t}: {data.lines(data.src(t)):,} {DESCRIPTIONS[t]}" for t in TEST_SETS)
            + f"\nmedians of {bench.repeat} (tame-wh) and {bench.reference_repeat} (sacrebleu) "
            f"runs; load average {load_average()} at the start"
        )
        if "plain" in parts:
            for test in sets:
                for system in SYSTEMS:
                    bench.plain(test, system)
        if "reports" in parts or "compare" in parts:
            files = write_reports(data, work / "reports")
            db, run_ids = bench.reports(files)
            if "compare" in parts:
                bench.compare(files, db, run_ids)
        if "rescore" in parts:
            bench.rescore()
        return bench.verdicts


def _selection(only: str | None, quick: bool, real: bool) -> tuple[list[str], list[str], bool]:
    """Which real test sets (plain part) and parts run, and whether the synthetic rows run."""
    choices = (*TEST_SETS, *PARTS, "synthetic")
    tokens = [t for t in (only or "").split(",") if t]
    unknown = [t for t in tokens if t not in choices]
    if unknown:
        raise SystemExit(f"--only: unknown {', '.join(unknown)}; choose from {', '.join(choices)}")
    sets = [t for t in tokens if t in TEST_SETS] or (["test-ddtp"] if quick else list(TEST_SETS))
    parts = [t for t in tokens if t in PARTS] or ([] if "synthetic" in tokens else list(PARTS))
    synthetic = "synthetic" in tokens or not (tokens or quick)
    return (sets, parts, synthetic) if real else ([], [], True)


def main() -> None:
    """Time each selected part; print the tables and the verdicts."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[1:]),
    )
    parser.add_argument("--real", default=None, help="real en-fr data: folder or .tar.gz")
    parser.add_argument("--only", default=None, help="comma-separated parts and test sets")
    parser.add_argument("--quick", action="store_true", help="one run each, test-ddtp only")
    parser.add_argument("--segments", type=int, default=10_000, help="synthetic segments")
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours (median)")
    parser.add_argument(
        "--reference-repeat", type=int, default=1, help="runs of sacrebleu (real text)"
    )
    parser.add_argument("--ter-shuffled", type=int, default=60)
    args = parser.parse_args()
    compile_package_sources()
    if args.quick:
        args.repeat, args.reference_repeat = 1, 1
    sets, parts, synthetic = _selection(args.only, args.quick, args.real is not None)
    work = Path(tempfile.mkdtemp(prefix="tame-bench-ingest-"))
    verdicts: list[tuple[bool, str]] = []
    try:
        if args.real is not None and parts:
            verdicts = run_real(args, sets, parts, work)
        if synthetic:
            run_synthetic(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if verdicts:
        print("\nVerdicts (issue 15 targets and checks)")
        for ok, what in verdicts:
            print(f"  [{_verdict(ok)}] {what}")


if __name__ == "__main__":
    main()
