"""The `tame-wh` executable: start-up settings, then the command."""

from __future__ import annotations

import gc
import sys


def run() -> None:
    """Run `tame-wh` with the cyclic garbage collector paused while modules load.

    Loading the command's modules creates some hundred thousand long-lived objects, over which
    the collector would otherwise make full passes; once they are loaded they are frozen out of
    every later collection and the collector resumes (`cli.main`).
    """
    gc.disable()
    try:
        from warehouse.frontend import watch_interrupts

        watch_interrupts()  # before the imports that may swallow a KeyboardInterrupt
        from cli.main import main, resume_gc_after_load
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load: nothing started
        print("interrupted; nothing was committed by the interrupted command", file=sys.stderr)
        sys.exit(130)
    resume_gc_after_load()
    main(prog_name="tame-wh")
