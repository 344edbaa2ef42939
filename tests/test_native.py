"""The compiled extension: it loads, and a version mismatch with the Python package is refused."""

from __future__ import annotations

import importlib

import pytest

import warehouse
import warehouse.native
from warehouse import _native
from warehouse.errors import NativeModuleError


def test_native_module_version_matches_package():
    assert warehouse.native.NATIVE_VERSION == warehouse.__version__ == _native.__version__


def test_version_mismatch_is_refused_at_import(monkeypatch):
    monkeypatch.setattr(_native, "__version__", "0.0.0-stale")
    with pytest.raises(NativeModuleError, match=r"0\.0\.0-stale does not match tame-wh"):
        importlib.reload(warehouse.native)
    monkeypatch.undo()
    importlib.reload(warehouse.native)
    assert warehouse.__version__ == warehouse.native.NATIVE_VERSION
