"""The Vega bundle's cache: made once, read back whole, rebuilt when damaged, optional."""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.html import assets


@pytest.fixture
def bundling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """A cache directory of the test's own, and a counter of real bundlings (a small stand-in
    bundle: the cache's logic does not depend on its size)."""
    monkeypatch.setenv(assets.BUNDLE_CACHE_ENV, str(tmp_path / "cache"))
    calls: list[int] = []

    def bundle(globals_: str, vl_version: str | None = None) -> str:
        calls.append(1)
        return f"var vega = {{}}; {globals_} // </script> inside\n"

    monkeypatch.setattr(assets.vl_convert, "javascript_bundle", bundle)
    assets.vega_bundle.cache_clear()
    yield calls
    assets.vega_bundle.cache_clear()


def _cached(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("vega-bundle-*.js"))


def test_the_bundle_is_made_once_then_read_from_the_cache(bundling, tmp_path):
    first = assets.vega_bundle()
    assets.vega_bundle.cache_clear()  # a new process
    again = assets.vega_bundle()
    assert again == first and len(bundling) == 1
    assert first.startswith(assets.vega_bundle_header())
    assert "<\\/script>" in first and "</script>" not in first
    [file] = _cached(tmp_path)
    assert file.read_text(encoding="utf-8") == first


def test_a_cut_short_cache_file_is_made_again(bundling, tmp_path):
    first = assets.vega_bundle()
    [file] = _cached(tmp_path)
    file.write_text(first[: len(first) // 2], encoding="utf-8")
    assets.vega_bundle.cache_clear()
    assert assets.vega_bundle() == first and len(bundling) == 2
    assert file.read_text(encoding="utf-8") == first


def test_an_unwritable_cache_still_gives_the_bundle(bundling, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(assets.BUNDLE_CACHE_ENV, str(blocker))
    assert assets.vega_bundle().startswith(assets.vega_bundle_header())
    assert blocker.read_text(encoding="utf-8") == ""


def test_an_empty_cache_setting_turns_the_cache_off(bundling, tmp_path, monkeypatch):
    monkeypatch.setenv(assets.BUNDLE_CACHE_ENV, "")
    assets.vega_bundle()
    assets.vega_bundle.cache_clear()
    assets.vega_bundle()
    assert len(bundling) == 2 and not (tmp_path / "cache").exists()
