"""Who holds a warehouse file's lock: DuckDB locks the file with POSIX record locks, and the OS
tells which process holds one (a reader's shared lock or the writer's exclusive one) without
taking it (docs/warehouse.md, "Who holds the file")."""

from __future__ import annotations

import fcntl
import os
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# struct flock on Linux (l_type, l_whence, l_start, l_len, l_pid, padding).
_FLOCK = "hhqqi4x"


@dataclass(frozen=True)
class LockHolder:
    """A process that holds a warehouse file's lock."""

    pid: int
    process: str | None  # its name as the OS gives it (never its arguments: they may hold secrets)
    mode: str  # reading | writing

    def text(self) -> str:
        """`process 4242 (python3) holds it for reading`."""
        name = f" ({self.process})" if self.process else ""
        return f"process {self.pid}{name} holds it for {self.mode}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _process_name(pid: int) -> str | None:
    """The short name of a process (Linux /proc), None when the OS does not tell."""
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def lock_holder(path: str | Path) -> LockHolder | None:
    """The process holding a lock on the warehouse file at `path` (another process's; None when
    the file is free, missing, or the OS cannot tell)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, probe)
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _whence, _start, _length, pid = struct.unpack(_FLOCK, answer)
    if kind == fcntl.F_UNLCK or pid <= 0:
        return None
    return LockHolder(pid, _process_name(pid), "reading" if kind == fcntl.F_RDLCK else "writing")
