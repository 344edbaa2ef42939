"""The `tame-wh` executable: start-up settings, then the command."""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn


def run() -> None:
    """Run `tame-wh` with the cyclic garbage collector paused while modules load.

    Loading the command's modules creates some hundred thousand long-lived objects, over which
    the collector would otherwise make full passes; once they are loaded they are frozen out of
    every later collection and the collector resumes (`cli.main`).
    """
    gc.disable()
    try:
        from warehouse.frontend import (
            interrupt_requested,
            interrupted_message,
            stop_raising_interrupts,
            watch_interrupts,
        )

        watch_interrupts()  # before the imports that may swallow a KeyboardInterrupt
        from warehouse.cli.main import main, resume_gc_after_load
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load: nothing started
        _leave_interrupted("interrupted; nothing was committed by the interrupted command")
    resume_gc_after_load()
    code: str | int | None = 0
    try:
        try:
            main(prog_name="tame-wh")
        finally:
            stop_raising_interrupts()  # a Ctrl-C as the command ends must not cut its exit
    except SystemExit as done:
        code = done.code
    except KeyboardInterrupt:  # Ctrl-C between the command's end and the line above
        code = None
    stop_raising_interrupts()
    if code == 130:  # the command said it was interrupted
        _leave_interrupted(None)
    if interrupt_requested():  # Ctrl-C outside the command itself (click says "Aborted!")
        _leave_interrupted(interrupted_message())
    sys.exit(code)


def _leave_interrupted(message: str | None) -> NoReturn:
    """Exit 130 after Ctrl-C (saying `message` when the command did not), without the
    interpreter's clean-up, where threads a Ctrl-C stopped mid-query (DuckDB's) can abort the
    process: a transaction is either committed or not, and the warehouse is as safe as after
    kill -9."""
    if message is not None:
        print(message, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)
