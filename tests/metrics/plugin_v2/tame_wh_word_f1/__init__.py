"""Version 2.0 of the tests' word F1 plugin: the same code under a new version (its scores'
signature changes, so comparisons with version 1.0's scores are marked)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_V1 = Path(__file__).parents[2] / "plugin_v1" / "tame_wh_word_f1" / "__init__.py"
_spec = importlib.util.spec_from_file_location("_tame_wh_word_f1_v1", _V1)
assert _spec is not None and _spec.loader is not None
_v1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v1)


class WordF1(_v1.WordF1):  # type: ignore[name-defined,misc]
    """Version 2.0."""

    version = "2.0"
