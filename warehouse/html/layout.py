"""The page skeleton shared by every page: head, content security policy, navigation, scripts.

Scripts run only with the page's nonce (`script-src 'nonce-…'`, no eval: Vega evaluates its
expressions with its interpreter), so markup that slipped into text could not run even if
escaping failed; `default-src 'none'` forbids every network request.
The nonce is derived from the page's content, so an unchanged page is byte-for-byte the same.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from warehouse import __version__
from warehouse.html.assets import page_script, page_style, vega_bundle, vega_versions
from warehouse.html.markup import esc


@dataclass(frozen=True)
class Script:
    """A script of a page: its text (inlined) or a relative address (loaded from a file)."""

    text: str | None = None
    src: str | None = None


@dataclass(frozen=True)
class Assets:
    """Where a page finds the Vega bundle and its own script: inline (a self-contained file) or
    under a relative folder such as `../assets/` (dashboard pages)."""

    folder: str | None = None  # None: inline everything

    def scripts(self) -> list[Script]:
        """The Vega bundle, then the page script."""
        if self.folder is None:
            return [Script(text=vega_bundle()), Script(text=page_script())]
        return [Script(src=f"{self.folder}vega.js"), Script(src=f"{self.folder}tame.js")]


def _policy(nonce: str) -> str:
    """The page's content security policy."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; "
        "style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; "
        "form-action 'none'"
    )


def page(
    title: str,
    body: str,
    *,
    assets: Assets,
    nav: str = "",
    data_scripts: tuple[Script, ...] = (),
    charts: bool = True,
) -> str:
    """A whole HTML document around `body` (markup, already escaped)."""
    # `body` under a header with `title` and `nav`, then the data scripts, the Vega bundle and the
    # page script.
    scripts = [*data_scripts, *assets.scripts()] if charts else list(data_scripts)
    digest = hashlib.sha256(title.encode())
    digest.update(body.encode())
    for script in scripts:
        digest.update((script.src or script.text or "").encode()[:4096])
    nonce = digest.hexdigest()[:24]
    tags = "\n".join(
        f'<script nonce="{nonce}" src="{esc(s.src)}"></script>'
        if s.src is not None
        else f'<script nonce="{nonce}">{s.text}</script>'
        for s in scripts
    )
    versions = vega_versions()
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_policy(nonce)}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{esc(title)}</title>\n<style>{page_style()}</style>\n</head>\n<body>\n"
        f'<header class="page">{nav}<h1>{esc(title)}</h1></header>\n'
        f"<main>\n{body}\n</main>\n"
        f'<footer class="page note"><p>tame-wh {esc(__version__)} &middot; charts: Vega '
        f"{esc(versions['vega'])}, Vega-Lite {esc(versions['vega-lite'])} (bundled, offline)"
        "</p></footer>\n"
        f"{tags}\n</body>\n</html>\n"
    )
