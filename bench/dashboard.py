"""Dashboard speed: `tame-wh dashboard` over 1,000 runs x 2,000 segments, and a run page's size.

Run: python bench/dashboard.py [--runs 1000] [--segments 2000] [--train 20000] [--variants 8]
The warehouse is filled through the library as `tame-wh` fills it: a synthetic training corpus
and test set (bench/synthetic.py) registered with add_corpus, runs written by write_runs (each
run's hypotheses are one of --variants scored hypothesis sets, so scoring and bootstrap intervals
are computed once per variant rather than once per run; everything else is per run), token
counts, costs and latencies set per run, then one exact audit. The reference, measured in the
same run on the same warehouse, is the leaderboard query the index page starts from.
Targets (issue 14): the whole dashboard in < 10 s, a run page with 2,000 segments < 3 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))

from synthetic import write_exposure_corpus
from warehouse.html.dashboard import build_dashboard

from warehouse.analysis.leaderboard import leaderboard
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
    settings = BootstrapSettings()
    base = []
    for v in range(variants):
        hyps = _variant(refs, rng, 0.05 + 0.3 * v / max(variants - 1, 1))
        errors: list[str | None] = [None] * segments
        run = PreparedRun(
            label=f"variant {v}",
            test_corpus_id=test.corpus_id,
            test_name="bench-test",
            new_test_set=None,
            model_slug=f"variant-{v}",
            condition="zero-shot",
            created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
            hyps=hyps,
            errors=errors,
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
            bootstrap=settings,
        )
        base.append(run)
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


def main() -> None:
    """Fill, time the leaderboard query and the dashboard (first build and a rebuild)."""
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
            started = time.perf_counter()
            fill(db, work, args.runs, args.segments, args.train, args.variants)
            print(
                f"filled {args.runs:,} runs x {args.segments:,} segments in "
                f"{time.perf_counter() - started:.1f} s"
            )
        con = open_warehouse(db)
        con.execute("SET enable_progress_bar = false")
        started = time.perf_counter()
        rows = leaderboard(con)
        reference = time.perf_counter() - started
        out = work / "site"
        started = time.perf_counter()
        first = build_dashboard(con, out)
        build = time.perf_counter() - started
        started = time.perf_counter()
        again = build_dashboard(con, out)
        rebuild = time.perf_counter() - started
        con.close()
        pages = sorted((out / "runs").glob("*.html"), key=lambda p: p.stat().st_size)
        largest = pages[-1].stat().st_size if pages else 0
        total = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(f"\n{'what':<52} {'seconds':>9} {'x ref':>9}")
        print("-" * 72)
        print(f"{f'leaderboard query ({len(rows):,} rows)':<52} {reference:>9.3f} {1.0:>9.1f}")
        print(
            f"{f'dashboard, first build ({first.written:,} files)':<52} {build:>9.2f} "
            f"{build / reference:>9.1f}"
        )
        print(
            f"{f'dashboard, rebuild ({again.unchanged:,} unchanged)':<52} {rebuild:>9.2f} "
            f"{rebuild / reference:>9.1f}"
        )
        print(
            f"\nlargest run page {largest / 1e6:.2f} MB ({args.segments:,} segments); "
            f"site {total / 1e6:.0f} MB in {sum(1 for _ in out.rglob('*.html')):,} pages"
        )
        print(
            f"targets: dashboard < 10 s -> {build:.2f} s [{'PASS' if build < 10 else 'FAIL'}]; "
            f"run page < 3 MB -> {largest / 1e6:.2f} MB "
            f"[{'PASS' if largest < 3e6 else 'FAIL'}]"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
