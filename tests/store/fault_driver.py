"""Runs `tame-wh ARGS…` with a fault injected when the command first reaches a named function
(`python -m tests.store.fault_driver MODULE.FUNCTION[:after] 'SHELL COMMAND' -- ARGS…`): the
shell command (stop, restart or pause a service) runs, then the function goes on as it would
(with `:after`, the command runs once the function has returned). The exit status is the
command's own, as a user would see it."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any


def main() -> None:
    """Patch the named function in its module and in every module that imported it, then run
    the CLI as the `tame-wh` executable does."""
    point, fault = sys.argv[1], sys.argv[2]
    point, _, when = point.partition(":")
    args = sys.argv[sys.argv.index("--") + 1 :]
    module_name, name = point.rsplit(".", 1)
    importlib.import_module(
        "warehouse.cli.main"
    )  # every command module, so imported names are patched
    module = importlib.import_module(module_name)
    real = getattr(module, name)
    fired: list[bool] = []

    def inject() -> None:
        if not fired:
            fired.append(True)
            subprocess.run(fault, shell=True, check=False)

    def injected(*a: Any, **k: Any) -> Any:
        if when != "after":
            inject()
        result = real(*a, **k)
        if when == "after":
            inject()
        return result

    for loaded in list(sys.modules.values()):
        if getattr(loaded, name, None) is real:
            setattr(loaded, name, injected)
    from warehouse.cli.entry import run

    sys.argv = ["tame-wh", *args]
    try:
        run()
    finally:
        if not fired:
            print(f"fault_driver: {point} was never reached", file=sys.stderr)


if __name__ == "__main__":
    main()
