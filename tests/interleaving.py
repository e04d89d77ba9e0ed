"""What the tests of incremental loads share, in pull/ and in the team's lake tests alike: a view as
comparable text, and another writer's commit made to fall at a chosen step of a child's load."""
from __future__ import annotations

import pandas as pd

import toolkit
from toolkit import catalog
from toolkit.pull import increments
from toolkit.storage.loads import Load


def view(ws: toolkit.Workspace, service: str, name: str) -> pd.DataFrame:
    frame = ws.sql(f"select * from {service}.{name}").df()
    key = list(catalog.RESOURCES[service, name].key)
    return frame.astype("string").fillna("<NA>").sort_values(key).reset_index(drop=True)


def interleave(monkeypatch, step: str, child: str, commit_parents) -> list[str]:
    """Run `commit_parents()` once, at `step` of the next load of `child`; what ran is listed."""
    ran: list[str] = []

    def once(resource: str) -> None:
        if resource == child and not ran:
            ran.append(step)
            commit_parents()

    if step == "sources read":
        real = increments.seen_now

        def seen_now(store, resource):
            found = real(store, resource)
            once(resource.name)
            return found
        monkeypatch.setattr(increments, "seen_now", seen_now)
    elif step == "plan made":
        real_plan = increments.plan

        def plan(client, store, resource, *args, **kwargs):
            made = real_plan(client, store, resource, *args, **kwargs)
            once(resource.name)
            return made
        monkeypatch.setattr(increments, "plan", plan)
    elif step == "load started":
        real_enter = Load.__enter__

        def enter(self):
            entered = real_enter(self)
            once(self.resource)
            return entered
        monkeypatch.setattr(Load, "__enter__", enter)
    else:
        real_commit = Load._commit

        def commit(self):
            once(self.resource)
            return real_commit(self)
        monkeypatch.setattr(Load, "_commit", commit)
    return ran
