"""The dashboard's page per model: its runs over time and the ones that regressed, as
`tame-wh regressions` finds them on each series' newest steps."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from warehouse import Warehouse
from warehouse.analysis.leaderboard import leaderboard
from warehouse.analysis.regressions import find_regressions
from warehouse.analysis.trends import model_trends
from warehouse.html.trend_page import trend_page
from warehouse.stats.resample import BootstrapSettings

EXAMPLES = Path(__file__).resolve().parents[2] / "warehouse" / "examples"


@pytest.fixture
def history(run_cli, demo_db, tmp_path):
    """The demo, then three more zero-shot runs of demo-large, each dropping more words."""
    refs = (EXAMPLES / "test.es").read_text(encoding="utf-8").splitlines()
    for k in (1, 2, 3):
        rng = random.Random(k)
        hyps = [" ".join(w for w in r.split() if rng.random() > 0.1 * k) or "x" for r in refs]
        path = tmp_path / f"h{k}.txt"
        path.write_text("\n".join(hyps) + "\n", encoding="utf-8")
        done = run_cli("ingest", "--testset", "demo-test", "--hyp", path,
                       "--model-slug", "demo-large", "--condition", "zero-shot")  # fmt: skip
        assert done.exit_code == 0, done.output
    return demo_db


def test_each_model_with_two_runs_has_a_trend_with_its_regressions(history, run_cli):
    cli = json.loads(run_cli("regressions", "--json").stdout)
    with Warehouse.open(history, access="read") as wh:
        trends = model_trends(wh.con, leaderboard(wh.con), BootstrapSettings())
    by_model = {t.model_slug: t for t in trends}
    assert set(by_model) == {"demo-large", "demo-small"}
    large = by_model["demo-large"]
    assert len(large.runs) == 4 and large.tested == 3
    assert [str(r["created_at"]) for r in large.runs] == sorted(
        str(r["created_at"]) for r in large.runs
    )
    expected: dict[str, list[str]] = {}
    for found in cli["regressions"]:
        expected.setdefault(found["run_id"], []).append(found["metric_name"])
    assert large.regressed == expected and expected  # the drops are found
    assert by_model["demo-small"].tested == 0  # two conditions: no run has a predecessor
    html = trend_page(large, run_href=lambda run_id: f"../runs/{run_id}.html")
    assert 'id="chart-trend"' in html and "▼" in html
    for run_id in expected:
        assert f'href="../runs/{run_id}.html"' in html


def test_recent_steps_are_the_newest_of_each_series(history):
    with Warehouse.open(history, access="read") as wh:
        every = find_regressions(wh.con).checked
        latest = find_regressions(wh.con, latest=True).checked
        two = find_regressions(wh.con, recent=2).checked
    assert len(every) == 3 and latest == every[-1:] and two == every[-2:]
