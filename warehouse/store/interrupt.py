"""Ctrl-C stops a write even when a library swallows it: the process remembers every SIGINT, and
a transaction about to commit rolls back instead (docs/cli.md, "Exit codes").

Some libraries import their optional dependencies inside handlers that catch everything; a
KeyboardInterrupt raised there is lost and the command would run on to its commit."""

from __future__ import annotations

import signal
import threading
from types import FrameType

_requested = threading.Event()


def watch_interrupts() -> None:
    """Remember each SIGINT of this process, then raise KeyboardInterrupt as Python does (call
    from the main thread; a SIGINT the process ignores, or handles itself, is left so)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def remember(signum: int, frame: FrameType | None) -> None:
        _requested.set()
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, remember)


def interrupt_requested() -> bool:
    """Whether this process was sent SIGINT since `watch_interrupts`."""
    return _requested.is_set()
