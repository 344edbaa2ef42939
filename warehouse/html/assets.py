"""What pages load besides their own markup: the Vega bundle, the page script and style sheet.

The Vega, Vega-Lite and vega-embed JavaScript comes from vl-convert-python's bundle (no CDN):
inlined into a report file, written once under a dashboard's `assets/`.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata, resources

import altair as alt
import vl_convert

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


@cache
def vega_bundle() -> str:
    """vega-embed, Vega-Lite and Vega as one classic script, starting with its header."""
    # Defines `window.vegaEmbed`, for the Vega-Lite version altair writes.
    script = vl_convert.javascript_bundle(_GLOBALS, vl_version=_vegalite_version())
    if "</script" in script.lower():  # would end an inline element early
        script = script.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    return vega_bundle_header() + script


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
