"""The `tame-wh` executable: start-up settings, then the command."""

from __future__ import annotations

import gc
import importlib.abc
import os
import sys
from types import FrameType
from typing import NoReturn


def run() -> None:
    """Run `tame-wh` with the cyclic garbage collector paused while modules load.

    Loading the command's modules creates some hundred thousand long-lived objects, over which
    the collector would otherwise make full passes; once they are loaded they are frozen out of
    every later collection and the collector resumes (`cli.main`).
    """
    gc.disable()
    refuse_pandas_for_duckdb()
    try:
        from warehouse.frontend import (
            interrupt_requested,
            interrupted_message,
            stop_raising_interrupts,
            watch_interrupts,
        )

        watch_interrupts()  # before the imports that may swallow a KeyboardInterrupt
        from warehouse.cli.main import in_own_process, main, resume_gc_after_load
    except (KeyboardInterrupt, ImportError) as cut:
        # A Ctrl-C while the command's modules load: nothing started. Inside an extension
        # module's initialisation (DuckDB's) it surfaces as that module's ImportError; any other
        # ImportError is a broken installation.
        if isinstance(cut, ImportError):
            from warehouse.frontend import interrupt_requested as asked

            if not asked():
                raise
        _leave_interrupted("interrupted; nothing was committed by the interrupted command")
    resume_gc_after_load()
    in_own_process()
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


class _NoPandasForDuckDB(importlib.abc.MetaPathFinder):
    """Refuses `import pandas` when it comes straight from a DuckDB call in tame-wh's own code."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        """Raise ModuleNotFoundError for pandas asked for by DuckDB; defer everything else."""
        if name != "pandas":
            return None
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back
        # C++ leaves no frame of its own: DuckDB's import shows as one from the line that called
        # it. tame-wh's modules never import pandas themselves; anyone else's import goes ahead.
        if frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            raise ModuleNotFoundError("pandas is not loaded for DuckDB's parameters", name=name)
        return None


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def refuse_pandas_for_duckdb() -> None:
    """Keep DuckDB from importing pandas (0.5 to 1.5 s) in a command that passes it no frames.

    DuckDB 1.5.5 imports pandas, when it is installed, to compare every query parameter with
    pandas' missing values; told that it is absent, it converts the parameter as it would without
    pandas. Only DuckDB's own import from tame-wh's code is refused: a metric plugin or a library
    that imports pandas itself still gets it.
    """
    if "pandas" not in sys.modules and not any(
        isinstance(finder, _NoPandasForDuckDB) for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _NoPandasForDuckDB())


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
