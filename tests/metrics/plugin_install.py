"""Putting the tests' metric-plugin distributions (plugin_v1, plugin_v2: `word_f1`, `word_miss`,
`broken_metric` in the `tame_wh.metrics` group; plugin_hostile: plugins that exit, hang, leak a
secret in their error or raise KeyboardInterrupt) on the path, as an installed package is."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from warehouse.metrics.plugins import installed_plugins

HERE = Path(__file__).parent
V1, V2 = HERE / "plugin_v1", HERE / "plugin_v2"
HOSTILE = HERE / "plugin_hostile"


def install_test_plugin(monkeypatch: pytest.MonkeyPatch, folder: Path = V1) -> None:
    """Make the distribution in `folder` the installed one for the rest of the test."""
    for name in [m for m in sys.modules if m.startswith(("tame_wh_word_f1", "tame_wh_hostile"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(folder))
    installed_plugins.cache_clear()
