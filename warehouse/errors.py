"""Exceptions the warehouse raises for problems a user can fix; the CLI maps them to exit codes."""

from __future__ import annotations


class WarehouseError(Exception):
    """A problem the user can fix; the CLI prints it on one line and exits with `exit_code`."""

    exit_code = 2


class InputError(WarehouseError):
    """Bad input data: a file that cannot be read, parsed or aligned."""

    def __init__(self, problem: str, path: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{problem}")


class UsageError(WarehouseError):
    """An option value or name that does not make sense (unknown corpus, bad threshold, ...)."""


class SchemaError(WarehouseError):
    """The warehouse file cannot be used by this version of tame-wh."""


class LockTimeoutError(WarehouseError):
    """Another process kept the warehouse locked for longer than the lock timeout."""


class NativeModuleError(WarehouseError):
    """The compiled extension is missing or does not match the Python package."""

    exit_code = 3
