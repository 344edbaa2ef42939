"""Dashboard speed: `tame-wh dashboard` over 1,000 runs x 2,000 segments, and a run page's size.

Run: python bench/dashboard.py [--runs 1000] [--segments 2000] [--train 20000] [--variants 8]
                               [--keep wh.duckdb]
The warehouse is filled through the library: a synthetic training corpus and test set
(bench/synthetic.py, with difficulty and provenance) registered with add_corpus; --variants
system outputs (references with words dropped or repeated) scored, with bootstrap intervals, and
stored by write_runs; the other runs copied from them in SQL under other model slugs and
conditions, each with its own created time, tokens, cost, elapsed time and latencies, their sums
refreshed by refresh_runs; then one exact audit (run_audit). `tame-wh dashboard` and
`tame-wh report --html` run as child processes (start-up and imports included). References
measured in the same run on the same warehouse: the leaderboard query the index starts from, and
`build_report` per run (timed on 5 runs, scaled to all), what a page per run built one report at
a time would start from.
Targets (issue 14): the whole dashboard in < 10 s, a run page with 2,000 segments < 3 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))

from measure import measure_child
from synthetic import write_exposure_corpus

from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.report import build_report
from warehouse.exposure.audit import run_audit
from warehouse.ingest.runs import PreparedRun
from warehouse.ingest.write import write_runs
from warehouse.inputs.corpus_files import read_test_set, read_training_corpus
from warehouse.inputs.runcard import TOKEN_FIELDS
from warehouse.metrics.surface import metric_settings
from warehouse.stats.resample import BootstrapSettings
from warehouse.store.corpora import add_corpus
from warehouse.store.schema import open_warehouse
from warehouse.store.sums import refresh_runs

_PROVENANCE = ("news", "web", "bible", "forum")


def _variant(refs: list[str], rng: random.Random, drop: float) -> list[str]:
    """A system output: each reference with about `drop` of its words dropped or repeated."""
    out = []
    for ref in refs:
        words = ref.split()
        kept = [w for w in words if rng.random() > drop] or words[:1]
        if rng.random() < drop:
            kept.insert(rng.randrange(len(kept) + 1), rng.choice(words))
        out.append(" ".join(kept))
    return out


def fill(db: Path, work: Path, runs: int, segments: int, train: int, variants: int) -> None:
    """Create the bench warehouse: corpora, `runs` runs, one exact audit."""
    paths = write_exposure_corpus(work / "text", train, segments)
    meta = work / "text" / "meta.jsonl"
    meta.write_text(
        "".join(
            json.dumps({"difficulty": 1 + i % 5, "provenance": _PROVENANCE[i % 4]}) + "\n"
            for i in range(segments)
        ),
        encoding="utf-8",
    )
    con = open_warehouse(db)
    con.execute("SET enable_progress_bar = false")
    add_corpus(
        con,
        read_training_corpus("bench-train", paths["train_src"], paths["train_tgt"], "en", "es"),
    )
    test = read_test_set(
        "bench-test", paths["test_src"], [paths["test_ref"]], meta, src_lang="en", tgt_lang="es"
    )
    add_corpus(con, test)
    refs = paths["test_ref"].read_text(encoding="utf-8").splitlines()
    difficulty = [1 + i % 5 for i in range(segments)]
    keys = [str(i) for i in range(segments)]
    rng = random.Random(7)
    base = []
    for v in range(variants):
        hyps = _variant(refs, rng, 0.05 + 0.3 * v / max(variants - 1, 1))
        base.append(
            PreparedRun(
                label=f"variant {v}",
                test_corpus_id=test.corpus_id,
                test_name="bench-test",
                new_test_set=None,
                model_slug=f"variant-{v}",
                condition="zero-shot",
                created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                hyps=hyps,
                errors=[None] * segments,
                latency=[None] * segments,
                entry_tokens={name: [None] * segments for name in TOKEN_FIELDS},
                refs=[[r] for r in refs],
                seg_metrics=[],
                run_metrics={},
                document=None,
                settings=metric_settings(1),
                ci=None,
                difficulty=difficulty,
                keys=keys,
                bootstrap=BootstrapSettings(),
            ).score()
        )
    write_runs(con, base)  # scored, with bootstrap intervals, as `tame-wh ingest` writes them
    _replicate(con, [run.run_id for run in base], runs - variants)
    run_audit(con, "bench-train", "bench-test")
    con.close()


def _replicate(con: duckdb.DuckDBPyConnection, sources: list[str], copies: int) -> None:
    """`copies` more runs, each a copy of one stored run under another model and condition,
    with its own created time, token counts, cost, elapsed time and per-entry latencies."""
    n = len(sources)
    mapping = pa.table(
        {
            "source_id": [sources[r % n] for r in range(copies)],
            "new_id": [hashlib.sha256(b"copy %d" % r).hexdigest()[:16] for r in range(copies)],
            "slug": [f"model-{r // 4:03d}" for r in range(copies)],
            "cond": [("zero-shot", "few-shot", "cot", "tuned")[r % 4] for r in range(copies)],
            "minute": list(range(copies)),
        }
    )
    con.register("_copies", mapping)
    try:
        con.execute(
            "INSERT INTO runs BY NAME SELECT r.* REPLACE (m.new_id AS run_id, m.slug AS "
            "model_slug, m.cond AS condition, r.created_at + to_minutes(m.minute) AS created_at) "
            "FROM runs r JOIN _copies m ON r.run_id = m.source_id"
        )
        for table in ("hypotheses", "segment_stats", "run_intervals"):
            con.execute(
                f"INSERT INTO {table} BY NAME SELECT t.* REPLACE (m.new_id AS run_id) "
                f"FROM {table} t JOIN _copies m ON t.run_id = m.source_id"
            )
    finally:
        con.unregister("_copies")
    con.execute(
        "UPDATE runs SET prompt_tokens = n_entries * 40, completion_tokens = n_entries * 20, "
        "total_cost_usd = (hash(run_id) % 1000) / 500.0, "
        "elapsed_seconds = 60.0 + hash(run_id) % 600"
    )
    con.execute("UPDATE hypotheses SET latency_s = (hash(run_id, seg_idx) % 2800) / 1000.0 + 0.2")
    refresh_runs(con, [r for (r,) in con.execute("SELECT run_id FROM runs").fetchall()])


@dataclass(frozen=True)
class _Child:
    """Wall time, CPU time (user + system, all threads) and peak memory of one child process."""

    label: str
    seconds: float
    cpu: float
    peak_mib: float


def _run(label: str, argv: list[str]) -> _Child:
    """Run argv to completion (raise if it fails) and measure it; CPU time says how much work
    there was whatever else the machine was doing."""
    code, seconds, cpu, peak_mib = measure_child(argv, stdout=subprocess.DEVNULL)
    if code != 0:
        raise SystemExit(f"{label}: {' '.join(argv)} failed")
    return _Child(label, seconds, cpu, peak_mib)


def _tame_wh(db: Path, *args: str) -> list[str]:
    """The command line of `tame-wh --db DB ARGS…` with this interpreter."""
    return [sys.executable, "-m", "warehouse.cli", "--db", str(db), *args]


def main() -> None:
    """Fill, then time the leaderboard query, `tame-wh dashboard` (first build, rebuild) and
    `tame-wh report --html`, and print figures against the references."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--train", type=int, default=20000)
    parser.add_argument("--variants", type=int, default=8)
    parser.add_argument("--keep", type=Path, default=None, help="Keep the warehouse here.")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tame-bench-dashboard-"))
    try:
        db = args.keep or work / "wh.duckdb"
        if not db.exists():
            # In a child process, so that the children timed below (forked from this process)
            # do not start with the filling's memory in their peak.
            started = time.perf_counter()
            filler = multiprocessing.get_context("spawn").Process(
                target=fill, args=(db, work, args.runs, args.segments, args.train, args.variants)
            )
            filler.start()
            filler.join()
            if filler.exitcode != 0:
                raise SystemExit(f"filling the warehouse failed (exit {filler.exitcode})")
            print(
                f"filled {args.runs:,} runs x {args.segments:,} segments in "
                f"{time.perf_counter() - started:.1f} s"
            )
        site = work / "site"
        first = _run(
            "tame-wh dashboard (first build)", _tame_wh(db, "dashboard", "--out", str(site))
        )
        again = _run("tame-wh dashboard (rebuild)", _tame_wh(db, "dashboard", "--out", str(site)))
        report = work / "report.html"  # model-000/zero-shot: a copied run, named as a user would
        single = _run(
            "tame-wh report RUN --html",
            _tame_wh(db, "report", "model-000/zero-shot", "--html", str(report)),
        )
        con = open_warehouse(db)
        con.execute("SET enable_progress_bar = false")
        started = time.perf_counter()
        rows = leaderboard(con)
        board = time.perf_counter() - started
        sample = [r["run_id"] for r in rows[:5]]
        started = time.perf_counter()
        for run_id in sample:
            build_report(con, run_id)
        per_report = (time.perf_counter() - started) / len(sample)
        con.close()
        pages = sorted((site / "runs").glob("*.html"), key=lambda p: p.stat().st_size)
        largest = pages[-1].stat().st_size if pages else 0
        shared = sum(p.stat().st_size for p in (site / "assets" / "data").glob("*.js"))
        total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        print(f"\n{'what':<52} {'seconds':>8} {'x ref':>7} {'CPU s':>7} {'peak MiB':>9}")
        print("-" * 87)
        naive = per_report * len(rows)
        print(f"{f'leaderboard query, {len(rows):,} runs (reference)':<52} {board:>8.2f} {1:>7.1f}")
        label = f"build_report per run x {len(rows):,} (from {len(sample)} runs)"
        print(f"{label:<52} {naive:>8.1f} {naive / board:>7.0f}")
        for child in (first, again, single):
            print(
                f"{child.label:<52} {child.seconds:>8.2f} {child.seconds / board:>7.1f} "
                f"{child.cpu:>7.2f} {child.peak_mib:>9.0f}"
            )
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} (2 cores on the reference)")
        print(
            f"\ndashboard = {first.seconds / naive:.3f} x the per-run build_report estimate; "
            f"site {total / 1e6:.0f} MB in {sum(1 for _ in site.rglob('*.html')):,} pages"
        )
        print(
            f"run page: {largest / 1e6:.2f} MB in the dashboard (+ {shared / 1e6:.2f} MB of "
            f"segment text shared by the test set's runs, + the 0.9 MB Vega bundle); "
            f"self-contained report file {report.stat().st_size / 1e6:.2f} MB "
            f"({args.segments:,} segments)"
        )
        biggest = max(largest + shared, report.stat().st_size)
        print(
            f"targets: dashboard < 10 s -> {first.seconds:.2f} s "
            f"[{'PASS' if first.seconds < 10 else 'FAIL'}]; run page < 3 MB -> "
            f"{biggest / 1e6:.2f} MB [{'PASS' if biggest < 3e6 else 'FAIL'}]"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
