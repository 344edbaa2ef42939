"""What the dashboard's page per model shows (docs/html.md): each run of the model over time
with its stored intervals, per test set and condition, and the runs that regressed against
their predecessor (the paired test of `tame-wh regressions`, docs/statistics.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from warehouse.analysis.regressions import find_regressions
from warehouse.basics import grouped
from warehouse.stats.resample import BootstrapSettings

TREND_STEPS = 20  # each series' newest steps tested for regressions (the pages stay quick)


@dataclass
class ModelTrend:
    """One model's runs, oldest first, and the metrics each one regressed on."""

    model_slug: str
    runs: list[dict[str, Any]]
    regressed: dict[str, list[str]] = field(default_factory=dict)  # run id → metric names
    tested: int = 0  # steps tested


def model_trends(
    con: duckdb.DuckDBPyConnection, board: list[dict[str, Any]], settings: BootstrapSettings
) -> list[ModelTrend]:
    """A trend per model with at least two runs, from the leaderboard rows `board`; the newest
    TREND_STEPS steps of each (model, condition, test set) tested with the sign test."""
    by_model = grouped(sorted(board, key=lambda r: (r["model_slug"], str(r["created_at"]),
                                                    r["run_id"])),
                       lambda r: r["model_slug"])  # fmt: skip
    models = {slug: runs for slug, runs in by_model.items() if len(runs) >= 2}
    if not models:
        return []
    report = find_regressions(con, recent=TREND_STEPS, settings=settings)
    regressed: dict[str, list[str]] = {}
    for found in report.regressions:
        regressed.setdefault(found.step.run_id, []).append(found.result.metric_name)
    tested = grouped(report.checked, lambda s: s.model_slug)
    return [
        ModelTrend(slug, runs, {r["run_id"]: regressed[r["run_id"]] for r in runs
                                if r["run_id"] in regressed}, len(tested.get(slug, [])))
        for slug, runs in sorted(models.items())
    ]  # fmt: skip
