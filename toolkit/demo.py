"""`toolkit demo`: the main job on the embedded sandbox (filled in by the demo issue)."""
from __future__ import annotations


def run(out: str = "demo-output", scale: float = 1) -> int:
    print("toolkit demo will start the embedded sandbox, pull every resource of the four services into\n"
          f"{out}/toolkit-demo.duckdb, advance the sandbox clock over a few working days, export a snapshot\n"
          f"and write {out}/report.html. The fetchers and the report are not built yet, so it does none of\n"
          "that today; `toolkit actions` lists the catalog and `toolkit sandbox` serves the emulator.")
    return 0
