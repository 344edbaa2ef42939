"""Exceptions for problems a user can act on, each with the exit code the CLI ends with.

Exit codes (docs/cli.md): 0 success, 1 internal error (a bug), 2 bad input or usage, 3 the native
extension is missing or mismatched, 4 a remote service (Postgres, Supabase) failed, 5 the command
stored what it was asked to, then a later step of it failed.
"""

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


class MissingWarehouseError(UsageError):
    """A read found no warehouse at the address (nothing was created)."""


class SchemaError(WarehouseError):
    """The warehouse file cannot be used by this version of tame-wh."""


class LockTimeoutError(WarehouseError):
    """Another process kept the warehouse locked for longer than the lock timeout."""


class RemoteError(WarehouseError):
    """A remote service (Postgres, Supabase) could not be reached or refused a request; nothing
    in the warehouse changed, and the remote side rolled back what it had begun."""

    exit_code = 4


class NativeModuleError(WarehouseError):
    """The compiled extension is missing or does not match the Python package."""

    exit_code = 3


class AfterCommitError(WarehouseError):
    """The command committed its write, then a later step (the gate's verdict, its Markdown)
    failed: the message says what was stored, then what failed; never "nothing was written"."""

    exit_code = 5

    def __init__(self, stored: str, then: str) -> None:
        self.stored = stored
        self.then = then
        super().__init__(f"{stored}; then {then}")
