"""Fault injection: 429 with Retry-After, 500, 503, dropped connections and slow answers.

A fault fires at a rate or on chosen request numbers, counted 1, 2, 3... among the requests it
applies to (its `service` and `action`, or every request). Whether request n is hit is a seeded
hash of (seed, fault, n), not a draw from shared random state, so the same seed hits the same
request numbers whatever the threads interleave, and adding a fault does not move the others.

    start(faults="429@0.05,500@0.01")                      # 5 % answered 429, 1 % answered 500
    start(faults=[Fault("drop", on=(3,), service="asset_library")])
    start(faults="503#2;5:translation,slow@0.1")           # requests 2 and 5 of translation; 10 % slow

The short form: items separated by commas, each `KIND@RATE` or `KIND#N;N...`, optionally followed
by `:SERVICE` or `:SERVICE.ACTION`.
"""
from __future__ import annotations

__all__ = ["Fault", "FaultPlan", "KINDS", "normalise", "parse"]

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass

KINDS = ("429", "500", "503", "drop", "slow")


@dataclass(frozen=True)
class Fault:
    """One kind of failure; `retry_after` (seconds) goes out with a 429, `delay_ms` is a slow answer's delay."""
    kind: str
    rate: float = 0.0
    on: tuple[int, ...] = ()
    service: str | None = None
    action: str | None = None
    retry_after: float = 1
    delay_ms: int = 1000

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", str(self.kind))
        object.__setattr__(self, "on", tuple(int(n) for n in self.on))
        if self.kind not in KINDS:
            raise ValueError(f"fault kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not 0 <= self.rate <= 1:
            raise ValueError(f"fault rate must be between 0 and 1, not {self.rate}")

    def applies(self, service: str, action: str | None) -> bool:
        if self.service is not None and self.service != service:
            return False
        if self.action is None:
            return True
        # a short action name (`list_assets`) or the full id (`asset_library.list_assets`)
        return action is not None and (action == self.action or action.endswith("." + self.action))


def parse(text: str) -> list[Fault]:
    """The short form (`"429@0.05,500#3;7:asset_library"`) as Fault records."""
    faults = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        body, _, scope = item.partition(":")
        service, action = None, None
        if scope:
            service, _, rest = scope.partition(".")
            action = scope if rest else None
        if "@" in body:
            kind, _, rate = body.partition("@")
            faults.append(Fault(kind, rate=float(rate), service=service, action=action))
        elif "#" in body:
            kind, _, numbers = body.partition("#")
            faults.append(Fault(kind, on=tuple(int(n) for n in numbers.split(";") if n),
                                service=service, action=action))
        else:
            raise ValueError(f"fault {item!r}: write KIND@RATE or KIND#N;N, e.g. 429@0.05 or drop#3")
    return faults


def normalise(faults: str | Fault | Iterable[Fault | str] | None) -> tuple[Fault, ...]:
    if faults is None:
        return ()
    if isinstance(faults, str):
        return tuple(parse(faults))
    if isinstance(faults, Fault):
        return (faults,)
    out: list[Fault] = []
    for fault in faults:
        out.extend(parse(fault) if isinstance(fault, str) else [fault])
    return tuple(out)


def _fraction(seed: int, index: int, number: int) -> float:
    digest = hashlib.blake2b(f"{seed}:{index}:{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class FaultPlan:
    """Decides, request by request, which fault (if any) hits it."""

    def __init__(self, faults: str | Fault | Iterable[Fault | str] | None, seed: int) -> None:
        self.faults = normalise(faults)
        self.seed = seed
        self._counts = [0] * len(self.faults)
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.faults)

    def decide(self, service: str, action: str | None) -> Fault | None:
        """The first fault that fires for this request; every applicable fault counts it."""
        chosen = None
        with self._lock:
            for index, fault in enumerate(self.faults):
                if not fault.applies(service, action):
                    continue
                self._counts[index] += 1
                number = self._counts[index]
                fires = number in fault.on or (fault.rate > 0 and _fraction(self.seed, index, number) < fault.rate)
                if fires and chosen is None:
                    chosen = fault
        return chosen
