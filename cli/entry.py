"""The `tame-wh` executable: start-up settings, then the command."""

from __future__ import annotations

import gc


def run() -> None:
    """Run `tame-wh` with the cyclic garbage collector paused while modules load.

    Loading the command's modules creates some hundred thousand long-lived objects, over which
    the collector would otherwise make full passes; once they are loaded they are frozen out of
    every later collection and the collector resumes (`cli.main`).
    """
    gc.disable()
    from cli.main import main, resume_gc_after_load

    resume_gc_after_load()
    main(prog_name="tame-wh")
