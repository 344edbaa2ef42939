"""tame-wh: the training-aware MT evaluation warehouse (Python core)."""

from __future__ import annotations

from importlib import metadata

try:
    __version__: str = metadata.version("tame-wh")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
