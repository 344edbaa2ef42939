"""`tame-wh report RUN --html FILE`: one self-contained page per run."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from tests.html.conftest import HOSTILE, run_ids
from warehouse.cli.main import main


def _report(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), "report", *map(str, args)])


def test_report_html_is_one_self_contained_file(demo_copy, tmp_path):
    out = tmp_path / "report.html"
    result = _report(demo_copy, "demo-large", "--html", out)
    assert result.exit_code == 0, result.output
    assert "written" in result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    # Everything inline: no script, style sheet or image is loaded from anywhere.
    assert not re.search(r"<script[^>]*\bsrc=", page)
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)
    assert "<link" not in markup and "<img" not in markup and "url(" not in markup
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert policy and "script-src 'nonce-" in policy[1] and "unsafe" not in policy[1].split(";")[1]
    assert "window.vegaEmbed" in page
    for section in ("Exposure", "Scores per exposure bin", "Composite and tier", "Segments"):
        assert f">{section}</h2>" in page
    assert 'id="segments-run"' in page and "tameShared" in page


def test_report_html_again_leaves_the_file_alone(demo_copy, tmp_path):
    out = tmp_path / "report.html"
    assert _report(demo_copy, "demo-large", "--html", out).exit_code == 0
    before = out.stat().st_mtime_ns
    result = _report(demo_copy, "demo-large", "--html", out, "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["written"] is False and doc["bytes"] == out.stat().st_size
    assert out.stat().st_mtime_ns == before


def test_report_html_unknown_run_is_one_line_exit_2(demo_copy, tmp_path):
    out = tmp_path / "report.html"
    result = _report(demo_copy, "no-such-run", "--html", out)
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "unknown run" in result.output
    assert not out.exists()


def test_report_html_without_an_audit_says_no_audit(hostile_db, tmp_path):
    out = tmp_path / "plain.html"
    assert _report(hostile_db, run_ids(hostile_db)["plain-model"], "--html", out).exit_code == 0
    page = out.read_text(encoding="utf-8")
    assert "no audit" in page
    assert 'id="chart-exposure"' not in page and 'id="chart-bins"' not in page


def test_report_html_escapes_hostile_text(hostile_db, tmp_path):
    out = tmp_path / "evil.html"
    assert _report(hostile_db, "evil-model", "--html", out).exit_code == 0
    page = out.read_text(encoding="utf-8")
    for text in HOSTILE:
        assert text not in page
    assert "x&lt;b&gt;y" in page and "evil&lt;i&gt;set" in page  # condition and test set name
