"""Which process a load belongs to, and whether that process still lives.

A workspace file is held only while a process reads or commits (toolkit.storage.handle), so a load
recorded "running" may be another process's, walking right now, or the remains of one killed mid-pull.
Each load records its owner (`_loads.owner`): the host, the PID and the moment that PID started, so
that a PID the system has since given to another program does not count as the owner.

    owner = this_process(); alive(owner)        # True
"""
from __future__ import annotations

__all__ = ["alive", "this_process"]

import functools
import os
import socket


def _started(pid: int) -> str:
    """When a process started, in clock ticks since boot (Linux's /proc); "" where that is unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


@functools.cache
def _host() -> str:
    return socket.gethostname()


def this_process() -> str:
    """This process as a load's owner: `host/pid/started`."""
    return f"{_host()}/{os.getpid()}/{_started(os.getpid())}"


def alive(owner: str | None) -> bool:
    """Whether the process that owns a load still runs. A load with no owner was written by a toolkit
    that held the file for the whole load: whoever can read the file now outlived it. A process on
    another host cannot be asked, and counts as alive."""
    if not owner:
        return False
    host, _, rest = owner.partition("/")
    pid_text, _, started = rest.partition("/")
    if host != _host():
        return True
    try:
        pid = int(pid_text)
        if pid <= 0:  # 0 and below name process groups, never one process
            return False
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # it lives, as another user
        pass
    return not started or _started(pid) in ("", started)
