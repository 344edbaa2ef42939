"""Every ```python block of the README and docs/ runs, in a folder holding the bundled example's
files (what the blocks name)."""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks() -> list[tuple[str, str]]:
    """(page and ordinal, code) of every Python block."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for k, code in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.S), 1):
            found.append((f"{page.relative_to(ROOT)}#{k}", code))
    return found


def test_the_readme_and_the_python_page_have_python_blocks():
    pages = {name.split("#")[0] for name, _ in _blocks()}
    assert {"README.md", "docs/python.md"} <= pages


@pytest.mark.parametrize("name,code", _blocks(), ids=[name for name, _ in _blocks()])
def test_every_python_block_runs(name, code, tmp_path, monkeypatch, capsys):
    with resources.as_file(resources.files("warehouse") / "examples") as examples:
        shutil.copytree(examples, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TAME_WH_DB", raising=False)
    exec(compile(code, name, "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip()  # every block shows something
