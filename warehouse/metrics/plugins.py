"""Metric plugins: per-segment metrics an installed package contributes through the entry-point
group `tame_wh.metrics` (docs/metrics.md, "Metric plugins"). Each entry point, named for its
metric, loads a class (or factory) whose instance has `name`, `version`, `higher_is_better`,
`scale`, `model` and `score(sources, hypotheses, references)`; the run-level score is the mean of
the segments'. The plugin's signature is stored with every run it scored."""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Protocol, TypeVar

from warehouse.basics import first_line, redact
from warehouse.errors import UsageError

ENTRY_POINT_GROUP = "tame_wh.metrics"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")
# How long a plugin may take to load or to score one run (settings row; this default applies to
# warehouses from before it and to a warehouse not created yet).
TIMEOUT_SETTING = "plugin.timeout_seconds"
DEFAULT_TIMEOUT = 600.0
# How often the waiting caller looks up (and so how soon Ctrl-C is seen).
_POLL = 0.1

_Value = TypeVar("_Value")


def guarded(who: str, doing: str, call: Callable[[], _Value], timeout: float) -> _Value:
    """Run plugin code in a thread of its own while the caller waits in short steps, so that
    Ctrl-C always stops the wait and a plugin that never returns ends after `timeout` seconds;
    the plugin's `sys.exit` is an error, its KeyboardInterrupt an interrupt, and the text of its
    errors is redacted. A plugin stopped this way is left running in its (daemon) thread: Python
    cannot stop a thread, and the command ends."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="tame-wh-plugin", daemon=True)
    deadline = time.monotonic() + timeout
    worker.start()
    while worker.is_alive():
        worker.join(_POLL)
        if worker.is_alive() and time.monotonic() > deadline:
            raise UsageError(
                f"{who} did not finish {doing} within {timeout:g} s (settings "
                f"{TIMEOUT_SETTING}); it was abandoned and nothing was stored"
            )
    error = outcome.get("error")
    if isinstance(error, KeyboardInterrupt):
        raise KeyboardInterrupt
    if isinstance(error, SystemExit):
        raise UsageError(f"{who} called sys.exit({error.code!r}) while {doing}; nothing was stored")
    if isinstance(error, BaseException):
        raise UsageError(
            f"{who} failed while {doing}: {type(error).__name__}: {redact(first_line(error, ''))}"
        )
    value: _Value = outcome["value"]
    return value


class MetricPlugin(Protocol):
    """What a plugin's object provides."""

    name: str
    version: str
    higher_is_better: bool
    scale: float
    model: str | None

    def score(
        self,
        sources: Sequence[str],
        hypotheses: Sequence[str],
        references: Sequence[Sequence[str]],
    ) -> Sequence[float]:
        """One finite score per segment."""
        ...


@dataclass(frozen=True)
class PluginMetric:
    """A loaded and checked plugin."""

    name: str
    version: str
    higher_is_better: bool
    scale: float
    model: str | None
    package: str  # the distribution that provides it
    plugin: Any
    timeout: float = field(default=DEFAULT_TIMEOUT, compare=False)  # per call, not its identity

    @property
    def signature(self) -> str:
        """How its scores were computed: name, plugin version, model, package, aggregation."""
        better = "higher" if self.higher_is_better else "lower"
        parts = [self.name, f"plugin-version:{self.version}", f"model:{self.model or 'none'}",
                 f"package:{self.package}", "agg:mean", f"better:{better}",
                 f"scale:{self.scale:g}"]  # fmt: skip
        return "|".join(parts)

    def score(
        self, sources: Sequence[str], hypotheses: Sequence[str], refs: Sequence[Sequence[str]]
    ) -> list[float]:
        """The plugin's per-segment scores, checked: one finite number per segment."""
        who = f"metric plugin {self.name!r} ({self.package})"
        scored = guarded(who, "scoring", lambda: self.plugin.score(
            list(sources), list(hypotheses), [list(r) for r in refs]), self.timeout)  # fmt: skip
        try:
            values = list(scored)
        except Exception as exc:  # not a sequence
            raise UsageError(f"{who} returned {type(scored).__name__}, not a list of scores "
                             f"({type(exc).__name__})") from None  # fmt: skip
        if len(values) != len(hypotheses):
            raise UsageError(f"{who} returned {len(values)} scores for {len(hypotheses)} segments")
        out = []
        for i, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise UsageError(f"{who}: segment {i}'s score is not a number "
                                 f"({type(value).__name__})")  # fmt: skip
            if not math.isfinite(value):
                raise UsageError(f"{who}: segment {i}'s score is {value}")
            out.append(float(value))
        return out


@cache
def installed_plugins() -> dict[str, tuple[str, Any]]:
    """The entry points of the group, by metric name: (distribution, entry point)."""
    from importlib.metadata import entry_points

    found: dict[str, tuple[str, Any]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        package = point.dist.name if point.dist is not None else "unknown"
        found[point.name] = (package, point)
    return found


def plugin_timeout(settings: dict[str, float]) -> float:
    """Seconds a plugin may take to load or to score a run: settings `plugin.timeout_seconds`
    (default 600)."""
    value = settings.get(TIMEOUT_SETTING, DEFAULT_TIMEOUT)
    if not 0 < value <= 7 * 24 * 3600:
        raise UsageError(f"settings {TIMEOUT_SETTING} is {value:g}: give seconds in (0, 604800]")
    return float(value)


def load_plugin(name: str, timeout: float = DEFAULT_TIMEOUT) -> PluginMetric:
    """The installed plugin for the metric `name`, loaded (within `timeout` seconds) and
    checked."""
    from warehouse.metrics.registry import METRICS

    found = installed_plugins()
    if name not in found:
        known = ", ".join(sorted(found)) or "none installed"
        raise UsageError(
            f"--metric {name!r}: no installed package provides it in the entry-point group "
            f"{ENTRY_POINT_GROUP!r} (found: {known})"
        )
    if any(m.name == name or name in m.aliases for m in METRICS):
        raise UsageError(f"metric plugin {name!r}: the name is a built-in metric's")
    package, point = found[name]
    plugin = guarded(f"metric plugin {name!r} ({package})", "loading", lambda: point.load()(),
                     timeout)  # fmt: skip
    return replace(_checked(name, package, plugin), timeout=timeout)


def _checked(name: str, package: str, plugin: Any) -> PluginMetric:
    """The plugin's attributes, each of the documented type."""

    def attribute(key: str, kinds: tuple[type, ...], optional: bool = False) -> Any:
        value = getattr(plugin, key, None)
        if (value is None and optional) or (
            isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        ):
            return value
        raise UsageError(f"metric plugin {name!r} ({package}): `{key}` must be "
                         f"{' or '.join(k.__name__ for k in kinds)}")  # fmt: skip

    if attribute("name", (str,)) != name or not _NAME.fullmatch(name):
        raise UsageError(
            f"metric plugin {name!r} ({package}): its `name` must equal the entry point's and "
            "be lowercase letters, digits and _"
        )
    if not callable(getattr(plugin, "score", None)):
        raise UsageError(f"metric plugin {name!r} ({package}): no `score` method")
    scale = float(attribute("scale", (int, float)))
    if scale not in (1.0, 100.0):
        raise UsageError(f"metric plugin {name!r} ({package}): `scale` must be 1 or 100")
    return PluginMetric(
        name=name,
        version=str(attribute("version", (str,))),
        higher_is_better=bool(attribute("higher_is_better", (bool,))),
        scale=scale,
        model=attribute("model", (str,), optional=True),
        package=package,
        plugin=plugin,
    )


def plugin_scores(
    plugins: Sequence[PluginMetric],
    sources: Sequence[str],
    hypotheses: Sequence[str],
    refs: Sequence[Sequence[str]],
    errors: Sequence[str | None],
    label: str = "",
) -> list[tuple[int, str, float]]:
    """Each plugin's per-segment values (errored entries left out) as (segment, metric, value)
    rows; a plugin's failure names the run (`label`)."""
    kept = [i for i, e in enumerate(errors) if e is None]
    rows: list[tuple[int, str, float]] = []
    for plugin in plugins:
        if not kept:
            continue
        try:
            values = plugin.score([sources[i] for i in kept], [hypotheses[i] for i in kept],
                                  [refs[i] for i in kept])  # fmt: skip
        except UsageError as exc:
            raise UsageError(f"{label}: {exc}" if label else str(exc)) from None
        rows += [(i, plugin.name, v) for i, v in zip(kept, values, strict=True)]
    return sorted(rows)


def signed_direction(signature: str | None) -> bool:
    """Whether a plugin metric's signature says higher is better (the default)."""
    return "|better:lower" not in (signature or "")
