"""The compiled extension `warehouse._native` (typed by `_native.pyi`), checked against this
package's version when first imported."""

from __future__ import annotations

from warehouse import __version__
from warehouse.errors import NativeModuleError

try:
    from warehouse import _native as native
except ImportError as exc:
    raise NativeModuleError(
        f"the native extension warehouse._native cannot be imported ({exc}); "
        "rebuild it with `pip install -e .`"
    ) from exc

if native.__version__ != __version__:
    raise NativeModuleError(
        f"native extension version {native.__version__} does not match tame-wh "
        f"{__version__}; rebuild it with `pip install -e .`"
    )

NATIVE_VERSION: str = native.__version__
RetrievalIndex = native.RetrievalIndex

__all__ = ["NATIVE_VERSION", "RetrievalIndex", "native"]
