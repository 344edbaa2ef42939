"""Metric plugins: per-segment metrics an installed package contributes through the entry-point
group `tame_wh.metrics` (docs/metrics.md, "Metric plugins"). Each entry point, named for its
metric, loads a class (or factory) whose instance has `name`, `version`, `higher_is_better`,
`scale`, `model` and `score(sources, hypotheses, references)`; the run-level score is the mean of
the segments'. The plugin's signature is stored with every run it scored."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from warehouse.errors import UsageError

ENTRY_POINT_GROUP = "tame_wh.metrics"
_NAME = re.compile(r"[a-z][a-z0-9_]{0,47}")


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
        try:
            values = list(self.plugin.score(list(sources), list(hypotheses),
                                            [list(r) for r in refs]))  # fmt: skip
        except Exception as exc:  # a plugin's own failure, named as such
            raise UsageError(
                f"metric plugin {self.name!r} ({self.package}) failed: {type(exc).__name__}: {exc}"
            ) from None
        who = f"metric plugin {self.name!r} ({self.package})"
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


def load_plugin(name: str) -> PluginMetric:
    """The installed plugin for the metric `name`, loaded and checked."""
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
    try:
        plugin = point.load()()
    except Exception as exc:
        raise UsageError(
            f"metric plugin {name!r} ({package}) cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    return _checked(name, package, plugin)


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
