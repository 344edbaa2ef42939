"""What pages load besides their own markup: the Vega bundle, the page script and style sheet.

The Vega, Vega-Lite and vega-embed JavaScript comes from vl-convert-python's bundle (no CDN):
inlined into a report file, written once under a dashboard's `assets/`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import altair as alt
import vl_convert

# The bundle's entry point: the three libraries as globals of the page.
_GLOBALS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


@cache
def vega_bundle() -> str:
    """vega-embed, Vega-Lite and Vega as one classic script defining `window.vegaEmbed`, for the
    Vega-Lite version altair writes (the bundle's newest when vl-convert lacks it)."""
    wanted = alt.SCHEMA_VERSION.lstrip("v").rsplit(".", 1)[0]  # e.g. "6.4"
    version = wanted if wanted in vl_convert.get_vegalite_versions() else None
    script = vl_convert.javascript_bundle(_GLOBALS, vl_version=version)
    if "</script" in script.lower():  # would end an inline element early
        script = script.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")
    return script


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
