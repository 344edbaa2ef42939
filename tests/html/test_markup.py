"""Escaping: text in markup, JSON in script elements, chart data, file names."""

from __future__ import annotations

import json
import math

import pytest

from tests.html.conftest import HOSTILE
from warehouse.html.charts import CHART_KINDS, chart_json, chart_spec
from warehouse.html.markup import (
    Raw,
    cell,
    esc,
    escape_script_json,
    json_block,
    safe_name,
    script_json,
    table,
    to_json,
)


@pytest.mark.parametrize("text", HOSTILE)
def test_text_in_markup_has_no_tag_or_quote_left(text):
    escaped = esc(text)
    for char in "<>\"'":
        assert char not in escaped
    assert cell(text) == escaped


@pytest.mark.parametrize("text", [*HOSTILE, "a\u2028b\u2029c", "&amp; <!-- x -->"])
def test_json_in_a_script_element_cannot_close_it_and_reads_back_the_same(text):
    block = json_block("data", {"hyp": [text]})
    inner = block.removeprefix('<script type="application/json" id="data">')
    inner = inner.removesuffix("</script>")
    for fragment in ("<", ">", "&", "\u2028", "\u2029"):
        assert fragment not in inner
    assert json.loads(inner) == {"hyp": [text]}


def test_raw_json_is_escaped_too():
    assert escape_script_json('["</script>"]') == '["\\u003c/script\\u003e"]'
    assert json.loads(escape_script_json('["a&b"]')) == ["a&b"]


def test_non_finite_numbers_become_null():
    assert to_json({"a": [1.0, math.nan, math.inf], "b": -math.inf}) == (
        '{"a":[1.0,null,null],"b":null}'
    )
    assert script_json(float("nan")) == "null"


def test_tables_escape_cells_but_keep_raw_markup():
    html = table(["<h>"], [[Raw('<a href="x">ok</a>')], ["<b>"], [1.5], [None]])
    assert "<th" in html and "&lt;h&gt;" in html
    assert '<a href="x">ok</a>' in html
    assert "&lt;b&gt;" in html and "<b>" not in html
    assert ">1.50<" in html and ">n/a<" in html


@pytest.mark.parametrize("kind", CHART_KINDS)
def test_chart_json_is_the_chart_spec_with_its_rows(kind):
    rows = {"x": [{"v": 1, "t": "<b>"}]}
    assert json.loads(chart_json(kind, rows)) == chart_spec(kind, rows)
    assert "$schema" not in chart_spec(kind, rows)  # pages name no address


@pytest.mark.parametrize(
    ("text", "suffix", "expected"),
    [
        ("demo-test", "", "demo-test"),
        ("../../etc/passwd", "", "etc-passwd"),
        ("evil<i>set", "abc", "evil-i-set-abc"),
        ("...", "", "x"),
        ("ñandú", "1", "and-1"),
    ],
)
def test_file_names_are_safe(text, suffix, expected):
    assert safe_name(text, suffix) == expected
