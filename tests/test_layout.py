"""The package layout: subpackages in pipeline order, imports pointing one way, no cycles."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# warehouse/ by pipeline stage, lowest first: a module may import its own layer and lower ones.
LAYERS = (
    ("__init__", "basics", "errors", "native", "sizes"),
    ("metrics",),
    ("inputs",),
    ("store",),
    ("exposure",),
    ("stats",),
    ("ingest",),
    ("analysis",),
    ("html",),
    ("sync",),
    ("demo",),
    ("handle", "frontend"),
)
LAYER_OF = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


# The command line lives in cli/ at the top of the repository and is linked into the package as
# warehouse.cli (installed there, never as a top-level `cli`); it stands above every layer.
CLI = "warehouse.cli"


def _modules(package: str) -> Iterator[tuple[str, Path]]:
    """Dotted name and path of every Python module of a package (`warehouse` without its CLI)."""
    folder = ROOT.joinpath(*package.split("."))
    for path in sorted(folder.rglob("*.py")):
        parts = (*package.split("."), *path.relative_to(folder).with_suffix("").parts)
        if package == "warehouse" and parts[1] == "cli":
            continue
        yield ".".join(parts), path


def _imports(path: Path) -> set[str]:
    """Every absolute module a file imports (at any depth: functions and type checks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _layer(module: str) -> int:
    """The layer of a warehouse module (`warehouse.store.schema` → store's)."""
    parts = module.split(".")
    return LAYER_OF[parts[1] if len(parts) > 1 else "__init__"]


def test_every_warehouse_module_belongs_to_a_layer():
    top = {
        path.relative_to(ROOT / "warehouse").parts[0].removesuffix(".py")
        for _, path in _modules("warehouse")
    }
    assert top <= set(LAYER_OF) | {"examples", "sql", "migrations"}, top - set(LAYER_OF)


# The package's front re-exports the handle and its result types, each imported from its home
# on first use: it may name any module.
FRONT = "warehouse"


def test_imports_point_down_the_pipeline():
    known = {name for name, _ in _modules("warehouse")}
    upward = []
    for name, path in _modules("warehouse"):
        for target in _imports(path):
            if name.removesuffix(".__init__") == FRONT:
                continue
            if target in known and _layer(target) > _layer(name):
                upward.append(f"{name} imports {target}")
    assert upward == []


def test_the_core_never_imports_the_cli_or_the_tests():
    offending = [
        f"{name} imports {target}"
        for name, path in _modules("warehouse")
        for target in _imports(path)
        if target.split(".")[0] in {"cli", "tests", "bench"} or target.startswith(CLI)
    ]
    assert offending == []


def test_the_cli_is_installed_inside_the_package():
    link = ROOT / "warehouse" / "cli"
    assert link.is_symlink() and link.resolve() == (ROOT / "cli").resolve()
    # Nothing imports a top-level `cli`: the installed distribution has none.
    offending = sorted(
        f"{path.relative_to(ROOT)} imports {target}"
        for folder in ("cli", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        for target in _imports(path)
        if target.split(".")[0] == "cli"
    )
    assert offending == []


def test_no_import_cycles_between_modules():
    known = {name for name, _ in _modules("warehouse")}
    graph = {
        name: {t for t in _imports(path) if t in known and t != name}
        for name, path in _modules("warehouse")
    }
    # Packages import nothing; a module importing `warehouse.x` as a package is not a cycle.
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_tests_mirror_the_package_tree():
    packages = {p.name for p in (ROOT / "warehouse").iterdir() if (p / "__init__.py").is_file()}
    mirrored = {p.name for p in (ROOT / "tests").iterdir() if (p / "__init__.py").is_file()}
    assert packages <= mirrored, packages - mirrored


# What the CLI may import from the core: the front (the handle, its result types, the errors)
# and the front end's vocabulary (option choices, defaults, parsers, a command's guards).
CLI_MAY_IMPORT = {"warehouse", "warehouse.frontend"}


def test_the_cli_imports_only_the_front_door():
    known = {name.removesuffix(".__init__") for name, _ in _modules("warehouse")}
    offending = sorted(
        f"{name} imports {target}"
        for name, path in _modules(CLI)
        for target in _imports(path)
        if target in known and target not in CLI_MAY_IMPORT
    )
    assert offending == []


def test_every_name_of_the_fronts_resolves():
    import warehouse
    import warehouse.frontend

    for module in (warehouse, warehouse.frontend):
        missing = [name for name in module.__all__ if getattr(module, name, None) is None]
        assert missing == [], module.__name__
