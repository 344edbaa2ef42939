"""The gate as a decision, measured on real runs: its false-fail rate on equal-quality pairs and its
power on degraded candidates, beside the rule it replaces.

Equal quality by construction: on a real test set with two real MT systems (the en-fr data's
Apertium pivots through Catalan and Spanish), a baseline and a candidate are each an independent
per-segment coin-flip mixture of the two systems, so their expected quality is the same. Power: a
candidate is such a mixture with 1%, 2% or 5% of its segments replaced by the output for another
(random) segment. Each pair is judged by

* the gate (`warehouse.stats.gate.decide_gate`): chrF++ alone by default, or chrF++, BLEU, TER
  and exact match under Holm's correction (`--all-metrics`), one-sided non-inferiority at
  alpha = 0.05 with margin 0, resamples adapting from 1,000;
* the previous rule: every shared metric's paired sign test at alpha, any significant drop fails.

Rates come with Wilson 95% intervals. The runs are built in memory from per-segment statistics
computed once (the same arrays `tame-wh` stores), so the figures are the decision's, not the
ingest's.

    python bench/gate.py --real PATH/en-fr.tar.gz [--pairs 200] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realdata import SYSTEMS, real_data

from warehouse.exposure.index.memory import peak_rss
from warehouse.metrics.registry import BLEU, CHRF, EXACT_MATCH, TER, higher_is_better
from warehouse.metrics.surface import compute_segment_stats
from warehouse.stats.arrays import RunArrays, build_run_arrays
from warehouse.stats.gate import GatePolicy, decide_gate
from warehouse.stats.resample import BootstrapSettings
from warehouse.stats.significance import compare_pair

ALPHA = 0.05


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


class Systems:
    """Per-segment statistics of both systems, and of any segment's output against another
    segment's references (for the replaced segments)."""

    def __init__(self, hyps: list[list[str]], refs: list[list[str]]) -> None:
        self.hyps, self.refs = hyps, refs
        self.n = len(refs)
        self.stats = [compute_segment_stats(h, refs, [False] * self.n) for h in hyps]

    def run(self, name: str, choice: np.ndarray, swaps: dict[int, tuple[int, int]]) -> RunArrays:
        """A run taking segment i from system choice[i], except the segments in `swaps`, which
        get (system, other segment)'s output."""
        rows = range(self.n)
        bleu = [self.stats[choice[i]].bleu[i] for i in rows]
        chrf = [self.stats[choice[i]].chrf[i] for i in rows]
        ter = [self.stats[choice[i]].ter[i] for i in rows]
        exact = [self.stats[choice[i]].exact_match[i] for i in rows]
        if swaps:
            keys = sorted(swaps)
            texts = [self.hyps[swaps[i][0]][swaps[i][1]] for i in keys]
            moved = compute_segment_stats(texts, [self.refs[i] for i in keys], [False] * len(keys))
            for at, i in enumerate(keys):
                bleu[i], chrf[i] = moved.bleu[at], moved.chrf[at]
                ter[i], exact[i] = moved.ter[at], moved.exact_match[at]
        return build_run_arrays(
            run_id=name, label=name, test_corpus_id="t", keys=[str(i) for i in rows],
            bleu=bleu, chrf=chrf, ter=ter, exact=exact, difficulty=[None] * self.n,
            entry_values=[], test_set="t",
        )  # fmt: skip


def old_rule_fails(candidate: RunArrays, baseline: RunArrays, settings: BootstrapSettings) -> bool:
    """The previous gate: any metric's significant drop (sign test at alpha) fails."""
    test = compare_pair(candidate, baseline, method="sign", settings=settings)
    return any(r.winner == "B" for r in test.results)


def main() -> int:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", required=True, help="en-fr/ folder or en-fr.tar.gz")
    parser.add_argument("--test", default="test", help="test set (test or test-ddtp)")
    parser.add_argument("--pairs", type=int, default=200, help="equal-quality pairs")
    parser.add_argument("--power-pairs", type=int, default=100, help="pairs per degradation")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    started = time.perf_counter()
    with real_data(options.real) as data:
        refs = [[r] for r in data.ref(options.test).read_text(encoding="utf-8").splitlines()]
        hyps = [data.hyp(options.test, s).read_text(encoding="utf-8").splitlines() for s in SYSTEMS]
    systems = Systems(hyps, refs)
    rng = np.random.default_rng(options.seed)
    shuffle = random.Random(options.seed)
    settings = BootstrapSettings(n_bootstrap=1000, alpha=ALPHA, seed=12345)
    rules = {
        "gate: chrF++ (default)": GatePolicy(alpha=ALPHA),
        "gate: chrF++, BLEU, TER, exact match (Holm)": GatePolicy(
            metrics=(CHRF, BLEU, TER, EXACT_MATCH), alpha=ALPHA
        ),
    }

    def mixture() -> np.ndarray:
        return rng.integers(0, 2, size=systems.n)

    def degraded(share: float) -> tuple[np.ndarray, dict[int, tuple[int, int]]]:
        choice = mixture()
        count = max(1, round(share * systems.n))
        swaps = {}
        for i in shuffle.sample(range(systems.n), count):
            other = shuffle.choice([j for j in (shuffle.randrange(systems.n) for _ in range(3))
                                    if j != i] or [(i + 1) % systems.n])  # fmt: skip
            swaps[i] = (int(choice[i]), other)
        return choice, swaps

    cases: list[tuple[str, int, float]] = [("equal quality", options.pairs, 0.0)]
    cases += [(f"{int(s * 100)}% of segments replaced", options.power_pairs, s)
              for s in (0.01, 0.02, 0.05)]  # fmt: skip
    rows = []
    resamples: list[int] = []
    for what, pairs, share in cases:
        fails = {name: 0 for name in [*rules, "previous rule (any metric, alpha each)"]}
        for k in range(pairs):
            baseline = systems.run(f"b{k}", mixture(), {})
            choice, swaps = degraded(share) if share else (mixture(), {})
            candidate = systems.run(f"c{k}", choice, swaps)
            for name, policy in rules.items():
                verdict = decide_gate(candidate, baseline, policy, settings)
                fails[name] += not verdict.passed
                resamples.append(verdict.n_bootstrap)
            fails["previous rule (any metric, alpha each)"] += old_rule_fails(
                candidate, baseline, settings
            )
        for name, count in fails.items():
            low, high = wilson(count, pairs)
            rows.append((what, name, count, pairs, low, high))
    print(f"test set {options.test}: {systems.n} segments; systems {', '.join(SYSTEMS)}; "
          f"alpha {ALPHA}; seed {options.seed}")  # fmt: skip
    print("\n| candidate | rule | failed | pairs | rate | 95% interval |")
    print("| --- | --- | --- | --- | --- | --- |")
    for what, name, count, pairs, low, high in rows:
        print(f"| {what} | {name} | {count} | {pairs} | {count / pairs:.1%} | "
              f"[{low:.1%}, {high:.1%}] |")  # fmt: skip
    chrf_better = higher_is_better(CHRF)
    print(f"\nresamples per verdict: median {int(np.median(resamples))}, max {max(resamples)} "
          f"(chrF++ higher is better: {chrf_better}); {time.perf_counter() - started:.0f} s; "
          f"peak RSS {peak_rss() / 2**20:.0f} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
