"""Metric plugins that misbehave, for the tests: one exits the process, one never returns, one
fails with the S3 secret key in its message, one raises KeyboardInterrupt, and one exits while
it is being loaded."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence


class _Base:
    name = ""
    version = "1.0"
    higher_is_better = True
    scale = 1.0
    model = None


class Exiting(_Base):
    """Calls sys.exit(0) while scoring."""

    name = "exiting_metric"

    def score(self, sources: Sequence[str], hypotheses: Sequence[str], references):  # type: ignore[no-untyped-def]
        """Exits."""
        sys.exit(0)


class Hanging(_Base):
    """Never returns (a model download that stalls, say)."""

    name = "hanging_metric"

    def score(self, sources, hypotheses, references):  # type: ignore[no-untyped-def]
        """Sleeps for ever, in small steps."""
        if os.environ.get("TAME_WH_TEST_PLUGIN_STARTED"):
            with open(os.environ["TAME_WH_TEST_PLUGIN_STARTED"], "w") as marker:
                marker.write("started")
        while True:
            time.sleep(0.05)


class Leaky(_Base):
    """Fails with the process's S3 secret key in its message."""

    name = "leaky_metric"

    def score(self, sources, hypotheses, references):  # type: ignore[no-untyped-def]
        """Raises an error carrying the secret."""
        secret = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
        raise RuntimeError(f"could not reach the scoring service with key {secret}\nsecond line")


class Interrupting(_Base):
    """Raises KeyboardInterrupt (as a Ctrl-C inside the plugin would)."""

    name = "interrupting_metric"

    def score(self, sources, hypotheses, references):  # type: ignore[no-untyped-def]
        """Raises KeyboardInterrupt."""
        raise KeyboardInterrupt


def exiting_loader():  # type: ignore[no-untyped-def]
    """A factory that exits the process while the plugin is loaded."""
    sys.exit(3)
