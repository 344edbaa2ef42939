"""The compiled extension `warehouse._native`, loaded once and checked against this package."""

from __future__ import annotations

from types import ModuleType

from warehouse import __version__
from warehouse.errors import NativeModuleError


def _load() -> ModuleType:
    """Import the extension and refuse it when its version differs from the Python package's."""
    try:
        from warehouse import _native
    except ImportError as exc:
        raise NativeModuleError(
            f"the native extension warehouse._native cannot be imported ({exc}); "
            "rebuild it with `pip install -e .`"
        ) from exc
    if _native.__version__ != __version__:
        raise NativeModuleError(
            f"native extension version {_native.__version__} does not match tame-wh "
            f"{__version__}; rebuild it with `pip install -e .`"
        )
    return _native


native: ModuleType = _load()
NATIVE_VERSION: str = native.__version__
