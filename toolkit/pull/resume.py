"""Resumable fan-outs: what a pull checkpoints as it walks, and how a pull takes a checkpoint over.

A fan-out is one request a parent, so it is what a long pull spends its time on and what a killed one
must not lose. Its plan (toolkit.pull.fetch's `_Plan`) names every parent it will ask (`planned`),
those whose rows were all handed on (`done`, in order) and those a resumed load holds (`skip`); the
load keeps the batches (toolkit.storage.stage). Given the load, its writer, the plan and the drift
tally, like fetch; it imports neither the fetcher nor anything above.
"""
from __future__ import annotations

__all__ = ["CHECKPOINT_MEMBERS", "CHECKPOINT_SECONDS", "Checkpoints", "Done", "Plan", "member_key", "members_of"]

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import orjson
import pyarrow as pa

from toolkit.pull.drift import Tally

if TYPE_CHECKING:
    from toolkit.storage.loads import Load
    from toolkit.storage.writer import Writer

# a fan-out's work that a killed process loses at most: 10 s (TOOLKIT_CHECKPOINT_SECONDS), or 1,000 parents
# where the service answers faster than a hundred a second; past 4,000 parents, a quarter more than the
# last checkpoint held, so that a fast service's pull of 600,000 parents is not 600 checkpoints (each
# flushes the writer and writes every batch held in memory to disk)
CHECKPOINT_SECONDS = 10.0
CHECKPOINT_MEMBERS = 1000
CHECKPOINT_GROWTH = 4       # the count: at least saved // CHECKPOINT_GROWTH parents more


def members_of(planned: Iterable) -> Iterator:
    """A fan-out's members one at a time, as the values they are: ids handed as Arrow are made Python
    values a slice at a time, never a list of them all (toolkit.pull.given)."""
    if isinstance(planned, pa.Array):
        for start in range(0, len(planned), _SLICE):
            yield from planned.slice(start, _SLICE).to_pylist()
    else:
        yield from planned


_SLICE = 4096


def member_key(member: Any) -> str:
    """A fan-out member (an id, or a chunk of ids) as the text a checkpoint names it by."""
    return orjson.dumps(member, default=str).decode()


class Done:
    """A fan-out's members done, in order: how many, and those done since the latest checkpoint, whose
    files hold the ones before (`Checkpoint.done`). A list of every one held each parent's id until
    the commit: 93 bytes a parent, 56 MB over 600,000 profiles."""

    def __init__(self) -> None:
        self._since: list = []
        self._before = 0     # members done and checkpointed, no longer held here

    def append(self, member: Any) -> None:
        self._since.append(member)

    def extend(self, members: Iterable) -> None:
        self._since.extend(members)

    def __len__(self) -> int:
        return self._before + len(self._since)

    def between(self, start: int, stop: int) -> list:
        """The members done from the `start`-th to before the `stop`-th (none checkpointed before)."""
        if start < self._before:
            raise IndexError(f"members before the {self._before}th are checkpointed, no longer held")
        return self._since[start - self._before:stop - self._before]

    def forget(self, upto: int) -> None:
        """The first `upto` members are checkpointed: hold them no longer."""
        if upto > self._before:
            del self._since[:upto - self._before]
            self._before = upto


class Plan(Protocol):
    """What a checkpoint reads and extends of a fan-out's plan (toolkit.pull.fetch's `_Plan`, which
    imports this module: a Protocol here, not that class)."""
    planned: list | pa.Array | None
    done: Done
    skip: set
    failed: list


class Checkpoints:
    """A fan-out's resumability: every `CHECKPOINT_SECONDS` (or `CHECKPOINT_MEMBERS` parents) the load's
    batches are made to survive the process with the parents they hold (`Load.checkpoint`), and a load
    that finds such a checkpoint of a load like it (same rows asked, a dead process's) takes it over
    and asks only for the rest. A page walk is not resumed: it is one request a page of up to hundreds
    of rows, where a fan-out is one request a parent."""

    def __init__(self, load: Load, batcher: Writer, plan: Plan, tally: Tally) -> None:
        self.load, self.batcher, self.plan, self.tally = load, batcher, plan, tally
        self.every = float(os.environ.get("TOOLKIT_CHECKPOINT_SECONDS", CHECKPOINT_SECONDS))
        self.last_at = time.monotonic()
        self.saved = 0     # members done at the latest checkpoint

    def take_over(self) -> int:
        """Adopt the checkpoint the load found, when every parent it names is one this pull asks
        for (else the rows it holds would not be this pull's); the parents it had done."""
        found, plan = self.load.resumable, self.plan
        if found is None or plan.planned is None:
            return 0
        # a damaged note's `done` is not read: taking it over discards it, and says so
        done = [orjson.loads(key) for key in found.done() or []]
        planned = {member_key(member) for member in members_of(plan.planned)}
        if not {member_key(member) for member in done} <= planned:
            return 0
        note = self.load.resume(found)
        if note is None:
            return 0
        plan.done.extend(done)
        plan.done.forget(len(done))     # their checkpoint holds them
        plan.skip.update(member_key(member) for member in done)
        self.tally.restore(note.get("tally") or {})
        self.saved = len(done)
        return len(done)

    def maybe(self) -> None:
        if self.plan.planned is None:
            return
        more = max(CHECKPOINT_MEMBERS, self.saved // CHECKPOINT_GROWTH)
        if time.monotonic() - self.last_at >= self.every or len(self.plan.done) - self.saved >= more:
            self._save()

    def last(self) -> None:
        """On the way out of a failed pull: what it did since the latest checkpoint, if it made one
        or walked long enough to. Never raises over the failure it follows."""
        if self.plan.planned is None or len(self.plan.done) <= self.saved:
            return
        with contextlib.suppress(Exception):
            self._save()

    def _save(self) -> None:
        self.batcher.flush(wait=True)  # every table taken so far is then in the load's stage
        count = len(self.plan.done)
        failed = {member_key(member) for member in self.plan.failed}
        # only the parents done since the last checkpoint: the stage keeps the rest (Checkpoint.done)
        self.load.checkpoint({"tally": self.tally.state()},
                             [key for key in map(member_key, self.plan.done.between(self.saved, count))
                              if key not in failed])
        self.plan.done.forget(count)
        self.saved, self.last_at = count, time.monotonic()
