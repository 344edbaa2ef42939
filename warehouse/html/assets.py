"""What pages load besides their own markup: the Vega bundle, the page script and style sheet.

The Vega, Vega-Lite and vega-embed JavaScript comes from vl-convert-python's bundle (no CDN):
inlined into a report file, written once under a dashboard's `assets/`. Bundling takes seconds,
so the bundle is kept in the user's cache directory, named for its header (BUNDLE_CACHE_ENV).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from functools import cache
from importlib import metadata, resources
from pathlib import Path

import altair as alt
import vl_convert

from warehouse.errors import UsageError
from warehouse.html.files import write_if_changed

# The bundle's entry point: the three libraries as globals of the page.
_GLOBALS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


def _vegalite_version() -> str | None:
    """The Vega-Lite version altair writes (e.g. "6.4") when vl-convert bundles it, else None
    (vl-convert's newest)."""
    wanted = alt.SCHEMA_VERSION.lstrip("v").rsplit(".", 1)[0]
    return wanted if wanted in vl_convert.get_vegalite_versions() else None


def vega_bundle_header() -> str:
    """The first line of the bundle: what made it. The same line means the same bundle."""
    version = _vegalite_version() or "newest"
    return (
        f"/* Vega {vl_convert.get_vega_version()}, Vega-Lite {version} and vega-embed "
        f"{vl_convert.get_vega_embed_version()}, bundled by vl-convert-python "
        f"{_package_version('vl-convert-python')} for tame-wh */\n"
    )


# Where the bundle is cached: this directory when set, else $XDG_CACHE_HOME/tame-wh, else
# ~/.cache/tame-wh. An empty value turns the cache off.
BUNDLE_CACHE_ENV = "TAME_WH_CACHE_DIR"
# The bundle's last line: a cached file without it was cut short (or is still being written).
_BUNDLE_END = "\n/* end of the tame-wh Vega bundle */\n"


@cache
def vega_bundle() -> str:
    """vega-embed, Vega-Lite and Vega as one classic script, starting with its header."""
    header = vega_bundle_header()
    cached = _bundle_cache_file(header)
    if cached is not None:
        try:
            text = cached.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if text.startswith(header) and text.endswith(_BUNDLE_END):
            return text
    # Defines `window.vegaEmbed`, for the Vega-Lite version altair writes.
    script = vl_convert.javascript_bundle(_GLOBALS, vl_version=_vegalite_version())
    if "</script" in script.lower():  # would end an inline element early
        script = script.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    bundle = header + script + _BUNDLE_END
    if cached is not None:
        # A cache that cannot be written (read-only home, full disk) only costs the next
        # process the bundling.
        with contextlib.suppress(UsageError):
            write_if_changed(cached, bundle.encode("utf-8"))
    return bundle


def _bundle_cache_file(header: str) -> Path | None:
    """The cache file of the bundle that `header` names, or None when the cache is off."""
    configured = os.environ.get(BUNDLE_CACHE_ENV)
    if configured is not None:
        if not configured:
            return None
        root = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base) / "tame-wh"
    digest = hashlib.sha256(header.encode("utf-8")).hexdigest()[:16]
    return root / f"vega-bundle-{digest}.js"


def _package_version(name: str) -> str:
    """An installed distribution's version."""
    return metadata.version(name)


def vega_versions() -> dict[str, str]:
    """Versions of the bundled libraries, for page footers."""
    return {
        "vega": vl_convert.get_vega_version(),
        "vega-lite": alt.SCHEMA_VERSION.lstrip("v"),
        "vega-embed": vl_convert.get_vega_embed_version(),
    }


@cache
def _static(name: str) -> str:
    """A file of warehouse/html/static."""
    return (resources.files("warehouse.html") / "static" / name).read_text(encoding="utf-8")


def page_script() -> str:
    """The pages' own script: charts and the segment table."""
    return _static("tame.js")


def page_style() -> str:
    """The pages' style sheet."""
    return _static("tame.css")
