"""Analytics speed: the leaderboard and the run x bin view over 1,000 runs x 2,000 segments.

Run: python bench/analytics.py [--runs 1000] [--segments 2000] [--text-runs 5]
The warehouse is filled with synthetic per-segment statistics (and one synthetic exposure audit),
bulk-loaded, then the stored sums are refreshed as ingest and audit would. The reference, measured
in the same run, recomputes the same numbers from text with sacrebleu: corpus BLEU + chrF++ + TER
for a whole run and for each of its four exposure bins, timed on --text-runs real system outputs
and scaled to --runs (an estimate, labelled as such).
Targets (issue 5): the full leaderboard under 1 s, the bin view for all runs under 3 s.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))

from sacrebleu.metrics import BLEU, CHRF, TER
from synthetic import sentence_pair

from warehouse.store.schema import open_warehouse
from warehouse.store.sums import refresh_audit, refresh_runs


def _register(con, table: str, data: pa.Table) -> None:
    """Bulk-insert an Arrow table by column name."""
    con.register("_bench", data)
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _bench")
    finally:
        con.unregister("_bench")


def _stats(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Plausible BLEU, chrF++ and TER statistics for n segments."""
    hyp_len = rng.integers(5, 30, n)
    ref_len = np.maximum(hyp_len + rng.integers(-3, 4, n), 1)
    bleu = np.zeros((n, 10), np.int64)
    bleu[:, 0], bleu[:, 1] = hyp_len, ref_len
    for k in range(4):
        total = np.maximum(hyp_len - k, 0)
        bleu[:, 6 + k] = total
        bleu[:, 2 + k] = (total * rng.uniform(0.2, 0.9, n)).astype(np.int64)
    chrf = rng.integers(1, 80, (n, 24)).astype(np.int64)
    ter = np.stack([rng.integers(0, 10, n).astype(float), ref_len.astype(float)], 1)
    return bleu, chrf, ter


def _lists(matrix: np.ndarray, kind: pa.DataType) -> pa.Array:
    """A 2-D numpy array as an Arrow list column."""
    n, k = matrix.shape
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel(), kind))


def fill(db: Path, runs: int, segments: int) -> float:
    """Create the synthetic warehouse; return the seconds spent refreshing stored sums."""
    rng = np.random.default_rng(0)
    con = open_warehouse(db)
    con.execute(
        "INSERT INTO corpora VALUES ('t1', 'bench-test', 'test', 'en', 'es', ?, 1, ?, "
        "'x', now(), '{}')",
        [segments, segments * 40],
    )
    con.execute(
        "INSERT INTO corpora VALUES ('tr', 'bench-train', 'train', 'en', 'es', 1, 1, 1, "
        "'y', now(), '{}')"
    )
    idx = np.arange(segments)
    _register(
        con,
        "segments",
        pa.table(
            {
                "corpus_id": ["t1"] * segments,
                "seg_idx": idx,
                "seg_key": [str(i) for i in idx],
                "src": [f"source {i}" for i in idx],
                "refs": [["ref"]] * segments,
                "difficulty": pa.array(rng.integers(1, 6, segments), pa.int8()),
                "provenance": ["web" if i % 2 else "news" for i in idx],
            }
        ),
    )
    run_ids = [f"run{r:05d}" for r in range(runs)]
    _register(
        con,
        "runs",
        pa.table(
            {
                "run_id": run_ids,
                "test_corpus_id": ["t1"] * runs,
                "model_slug": [f"model-{r % 50}" for r in range(runs)],
                "condition": ["zero-shot"] * runs,
                "created_at": pa.array([int(time.time())] * runs, pa.timestamp("s")),
                "ingested_at": pa.array([int(time.time())] * runs, pa.timestamp("s")),
                "elapsed_seconds": rng.uniform(10, 500, runs),
                "n_entries": [segments] * runs,
                "prompt_tokens": rng.integers(1000, 9000, runs),
                "completion_tokens": [500] * runs,
                "total_cost_usd": rng.uniform(0, 2, runs),
                "run_card": ["{}"] * runs,
            }
        ),
    )
    for start in range(0, runs, 100):
        chunk = run_ids[start : start + 100]
        n = len(chunk) * segments
        bleu, chrf, ter = _stats(rng, n)
        ids = pa.array(np.repeat(chunk, segments))
        seg = np.tile(idx, len(chunk))
        _register(
            con,
            "segment_stats",
            pa.table(
                {
                    "run_id": ids,
                    "seg_idx": seg,
                    "bleu_stats": _lists(bleu, pa.int64()),
                    "chrf_stats": _lists(chrf, pa.int64()),
                    "ter_stats": _lists(ter, pa.float64()),
                    "exact_match": rng.random(n) < 0.2,
                    "length_ratio": rng.uniform(0.8, 1.2, n),
                    "chrf_sentence": rng.uniform(0, 100, n),
                }
            ),
        )
        _register(
            con,
            "hypotheses",
            pa.table(
                {
                    "run_id": ids,
                    "seg_idx": seg,
                    "hyp": pa.array(["h"] * n),
                    "latency_s": rng.uniform(0.1, 3, n),
                }
            ),
        )
        _register(
            con,
            "metric_values",
            pa.table(
                {
                    "run_id": ids,
                    "seg_idx": seg,
                    "metric": ["comet"] * n,
                    "value": rng.uniform(0, 1, n),
                }
            ),
        )
    exposure = rng.uniform(0, 1, segments)
    con.execute(
        "INSERT INTO audits (audit_id, test_corpus_id, train_corpus_id, mode, "
        "near_threshold, far_threshold, leak_thresholds, n_segments, config, signature, "
        "backend, created_at) VALUES ('a1', 't1', 'tr', 'exact', 0.7, 0.3, "
        "[0.7, 0.85, 0.95], ?, '{}', 'sig', 'bench', now())",
        [segments],
    )
    _register(
        con,
        "exposures",
        pa.table(
            {
                "audit_id": ["a1"] * segments,
                "seg_idx": idx,
                "source_exposure": exposure,
                "source_nn": idx,
                "source_exact": exposure > 0.98,
                "target_exposure": exposure,
                "target_nn": idx,
                "target_ref_idx": pa.array([0] * segments, pa.int32()),
                "target_exact": np.zeros(segments, bool),
                "pair_exposure": exposure,
                "pair_nn": idx,
                "pair_exact": np.zeros(segments, bool),
                "tm_hyp_idx": idx,
                "bin": np.where(
                    exposure > 0.98,
                    "source_exact",
                    np.where(exposure >= 0.7, "near", np.where(exposure >= 0.3, "medium", "far")),
                ),
            }
        ),
    )
    bleu, chrf, ter = _stats(rng, segments)
    _register(
        con,
        "tm_segment_stats",
        pa.table(
            {
                "audit_id": ["a1"] * segments,
                "seg_idx": idx,
                "bleu_stats": _lists(bleu, pa.int64()),
                "chrf_stats": _lists(chrf, pa.int64()),
                "ter_stats": _lists(ter, pa.float64()),
            }
        ),
    )
    started = time.perf_counter()
    refresh_runs(con, run_ids)
    refresh_audit(con, "a1")
    refreshed = time.perf_counter() - started
    con.close()
    return refreshed


def best_of(con, sql: str, repeat: int = 3) -> float:
    """Fastest of `repeat` timed executions of a query (all rows fetched)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - started)
    return min(times)


def sacrebleu_reference(segments: int, text_runs: int) -> float:
    """Seconds sacrebleu needs per run for whole-run + four-bin BLEU, chrF++ and TER."""
    rng = random.Random(5)
    pairs = [sentence_pair(rng) for _ in range(segments)]
    refs = [t for _, t in pairs]
    bins = [rng.randrange(4) for _ in range(segments)]
    metrics = (BLEU(tokenize="13a"), CHRF(word_order=2), TER())
    started = time.perf_counter()
    for k in range(text_runs):
        hyps = [" ".join(w for w in r.split() if hash((w, k)) % 7) for r in refs]
        for subset in [
            range(segments),
            *([i for i in range(segments) if bins[i] == b] for b in range(4)),
        ]:
            sub_h = [hyps[i] for i in subset]
            sub_r = [[refs[i] for i in subset]]
            for metric in metrics:
                metric.corpus_score(sub_h, sub_r)
    return (time.perf_counter() - started) / text_runs


def main() -> None:
    """Fill, time both views and the sacrebleu reference, print the table and verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--text-runs", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tame-bench-analytics-"))
    try:
        db = work / "wh.duckdb"
        started = time.perf_counter()
        refreshed = fill(db, args.runs, args.segments)
        print(
            f"filled {args.runs:,} runs x {args.segments:,} segments in "
            f"{time.perf_counter() - started:.1f} s (stored sums refreshed in {refreshed:.1f} s)"
        )
        con = open_warehouse(db)
        con.execute("SET enable_progress_bar = false")
        board = best_of(con, "SELECT * FROM leaderboard")
        bins = best_of(con, "SELECT * FROM run_bins")
        con.close()
        per_run = sacrebleu_reference(args.segments, args.text_runs)
        reference = per_run * args.runs
        print(f"\n{'what':<58} {'seconds':>9} {'x ref':>9}")
        print("-" * 78)
        print(
            f"{'sacrebleu from text, whole run + 4 bins (estimate)':<58} {reference:>9.1f} "
            f"{1.0:>9.4f}"
        )
        print(f"{'leaderboard view, all runs':<58} {board:>9.3f} {board / reference:>9.5f}")
        print(f"{'run x bin view, all runs':<58} {bins:>9.3f} {bins / reference:>9.5f}")
        print(
            f"\ntargets: leaderboard < 1 s -> {board:.3f} s [{'PASS' if board < 1 else 'FAIL'}]; "
            f"bin view < 3 s -> {bins:.3f} s [{'PASS' if bins < 3 else 'FAIL'}]"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
