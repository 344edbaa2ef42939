"""Ctrl-C stops a write even when a library swallows it: the process remembers every SIGINT, and
a transaction about to commit rolls back instead (docs/cli.md, "Exit codes").

Some libraries import their optional dependencies inside handlers that catch everything; a
KeyboardInterrupt raised there is lost and the command would run on to its commit. The process
also remembers whether one of its transactions committed, so that the line printed after Ctrl-C
never says "nothing was committed" about a run that was."""

from __future__ import annotations

import signal
import threading
from types import FrameType

_requested = threading.Event()
_watching: list[object] = []  # the handler `watch_interrupts` installed
_commits = [0]  # transactions that committed (or were committing when Ctrl-C came)

NOTHING_COMMITTED = "interrupted; nothing was committed by the interrupted command"
SOMETHING_COMMITTED = (
    "interrupted after the command had committed its changes; they stay, nothing after them "
    "was written"
)


def watch_interrupts() -> None:
    """Remember each SIGINT of this process, then raise KeyboardInterrupt as Python does (call
    from the main thread; a SIGINT the process ignores, or handles itself, is left so)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def remember(signum: int, frame: FrameType | None) -> None:
        _requested.set()
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, remember)
    _watching.append(remember)


def stop_raising_interrupts() -> None:
    """Ignore SIGINT from now on: the command is over, and a Ctrl-C while the interpreter shuts
    down (where Python restores the default action, death by SIGINT) must not cut its exit
    (call from the main thread)."""
    if _watching and signal.getsignal(signal.SIGINT) is _watching[-1]:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupt_requested() -> bool:
    """Whether this process was sent SIGINT since `watch_interrupts`."""
    return _requested.is_set()


def note_commit_started() -> None:
    """A transaction is about to commit: from here on its changes may stay."""
    _commits[0] += 1


def note_commit_failed() -> None:
    """The commit just started failed: nothing of it stays."""
    _commits[0] -= 1


def interrupted_message() -> str:
    """What to tell after Ctrl-C: whether this process committed anything before it stopped."""
    return SOMETHING_COMMITTED if _commits[0] > 0 else NOTHING_COMMITTED
