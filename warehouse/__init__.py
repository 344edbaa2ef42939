"""tame-wh: the training-aware MT evaluation warehouse (Python core).

`Warehouse.open(address)` is the one handle a script or notebook needs (docs/python.md); the
subpackages hold the pipeline's stages.
"""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING, Any

try:
    __version__: str = metadata.version("tame-wh")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

if TYPE_CHECKING:
    from warehouse.errors import WarehouseError
    from warehouse.handle import Rows, Warehouse

__all__ = ["Rows", "Warehouse", "WarehouseError", "__version__"]


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (every command imports this package first, and
    most need none of them)."""
    if name in ("Rows", "Warehouse"):
        from warehouse import handle

        return getattr(handle, name)
    if name == "WarehouseError":
        from warehouse.errors import WarehouseError

        return WarehouseError
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
