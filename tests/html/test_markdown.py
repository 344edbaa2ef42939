"""`--format markdown` of regressions, compare and leaderboard, read back by a real Markdown parser
(markdown-it, CommonMark with GFM tables): headings, one table row per result with every cell in
place, and names that hold markup stay text."""

from __future__ import annotations

import json
import random
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from tests.backends import TEMPLATES
from tests.conftest import VOCABULARY
from warehouse.html.markdown import escape

HOSTILE = "<img src=x onerror=alert(1)>|*bold* _x_ [l](http://e) `c` # h"


class _Tree(HTMLParser):
    """The tags of an HTML fragment and the text of each table's cells, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.headings: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag in ("h2", "h3"):
            self._heading = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag in ("h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


def _render(markdown: str) -> _Tree:
    """The Markdown as a GitHub-like renderer reads it, parsed back into tags and cells."""
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    tree = _Tree()
    tree.feed(html)
    return tree


def _report(tmp_path, name, quality, *, model, created, test="ds"):
    """A test report whose hypotheses keep each word with probability `quality`."""
    rng = random.Random(5)
    keep = random.Random(name)
    entries = []
    for i in range(30):
        ref = " ".join(rng.choice(VOCABULARY) for _ in range(6))
        hyp = " ".join(w for w in ref.split() if keep.random() < quality)
        entries.append({"id": f"s{i}", "source": f"{test} {i}", "expected": ref, "predicted": hyp})
    path = tmp_path / f"{name}.json"
    doc = {"model_slug": model, "created_at": created, "dataset": {"id": test}}
    path.write_text(json.dumps({**doc, "entries": entries}))
    return path


@pytest.fixture
def runs(run_cli, db_path) -> dict[str, str]:
    """Four runs: a good and a bad one of a model with a hostile name on one test set, two on
    another; their ids by name (a copy of the warehouse, made once)."""
    specs = {
        "good": (1.0, HOSTILE, "2026-01-01T00:00:00Z", "ds"),
        "bad": (0.5, HOSTILE, "2026-01-02T00:00:00Z", "ds"),
        "x1": (0.9, "other", "2026-01-03T00:00:00Z", "second"),
        "x2": (0.7, "other", "2026-01-04T00:00:00Z", "second"),
    }

    def make(db):
        ids = {}
        for name, (quality, model, created, test) in specs.items():
            path = _report(db.parent, name, quality, model=model, created=created, test=test)
            result = run_cli("ingest", path, "--no-intervals", "--json", db=db)
            assert result.exit_code == 0, result.output
            ids[name] = json.loads(result.stdout)[0]["run_id"]
        (db.parent / "ids.json").write_text(json.dumps(ids), encoding="utf-8")

    folder = TEMPLATES.copy_built("markdown-runs", make, db_path)
    return json.loads((folder / "ids.json").read_text(encoding="utf-8"))


def _rows_line_up(tree: _Tree) -> None:
    """Every row of every table has as many cells as its header."""
    assert tree.tables
    for table in tree.tables:
        assert all(len(row) == len(table[0]) for row in table), table


def test_the_gate_comment_has_its_verdict_and_every_metric(run_cli, runs):
    result = run_cli("regressions", "--run", runs["bad"], "--format", "markdown")
    assert result.exit_code == 1, result.output
    tree = _render(result.stdout)
    assert tree.headings == ["tame-wh gate: ❌ regressed"]
    _rows_line_up(tree)
    gated, info = tree.tables
    assert gated[0] == ["gated metric", "baseline", "run", "Δ", "margin", "one-sided interval",
                        "level", "p (adjusted)", "outcome"]  # fmt: skip
    [chrf] = gated[1:]
    assert chrf[0] == "chrF++" and chrf[8].startswith("fails")
    assert float(chrf[3]) < 0 and chrf[5].startswith("Δ ≤ -")
    assert info[0] == ["metric", "baseline", "run", "Δ", "95% CI of Δ", "p-value", "change"]
    assert {"BLEU", "TER", "exact match"} <= {row[0] for row in info[1:]}
    assert "Rule: a gated metric fails when" in result.stdout
    assert "img" not in tree.tags and "em" not in tree.tags and "a" not in tree.tags


def test_a_first_run_comment_says_it_passed_without_a_baseline(run_cli, runs):
    result = run_cli("regressions", "--run", runs["good"], "--format", "markdown")
    assert result.exit_code == 0
    tree = _render(result.stdout)
    assert tree.headings == ["tame-wh gate: ✅ passed"] and not tree.tables
    assert "no baseline" in result.stdout


def test_the_compare_comment_has_each_pairs_test(run_cli, runs):
    result = run_cli("compare", runs["good"], runs["bad"], "--significance", "--format", "markdown")
    assert result.exit_code == 0, result.output
    tree = _render(result.stdout)
    assert tree.headings == ["tame-wh compare", "A vs B"]
    _rows_line_up(tree)
    side, pair = tree.tables
    assert side[0] == ["metric", "A", "B", "Δ A-B"]
    assert pair[0][:4] == ["metric", "A", "B", "Δ"] and pair[0][-1] == "better"
    assert {row[-1] for row in pair[1:]} == {"A"}  # the good run wins every metric
    assert "img" not in tree.tags


def test_the_leaderboard_comment_ranks_each_test_set_apart(run_cli, runs):
    result = run_cli("leaderboard", "--sort", "chrf", "--format", "markdown", "--clusters")
    assert result.exit_code == 0, result.output
    tree = _render(result.stdout)
    assert tree.headings == [
        "tame-wh leaderboard",
        "Test set ds (2 runs)",
        "Test set second (2 runs)",
    ]
    _rows_line_up(tree)
    for table in tree.tables:
        assert [row[0] for row in table[1:]] == ["1", "2"]
        assert table[0][-2:] == ["cluster", "ranks"]
    first, second = tree.tables
    assert [row[1] for row in first[1:]] == [runs["good"], runs["bad"]]
    assert [row[1] for row in second[1:]] == [runs["x1"], runs["x2"]]
    assert first[1][2] == HOSTILE  # the name is text in one cell
    assert "img" not in tree.tags and "em" not in tree.tags and "a" not in tree.tags


@pytest.mark.parametrize(
    "text",
    [HOSTILE, "# heading", "- item", "12. item", "+ x", "a\nb", "&amp; <b>", "\\*"],
)
def test_escaped_text_renders_as_itself(text):
    tree = _render(f"| h |\n| --- |\n| {escape(text)} |\n")
    assert tree.tables[0][1] == [" ".join(text.split())]
    assert tree.tags == ["table", "thead", "tr", "th", "tbody", "tr", "td"]
