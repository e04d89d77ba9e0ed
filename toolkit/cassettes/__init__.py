"""Cassettes: every catalog row recorded once from the sandbox, replayed in CI with the network closed.

    cassettes/<service>/<action name>[__v1|__v2].yaml     one per row of toolkit.actions()

`record()` writes them (fresh sandbox per row, seed 0, fixed clock: re-recording gives the same
bytes), `replay()` plays one back through the client, `check_stable()` re-records into a temporary
folder and lists what differs. Everything is scrubbed before it is written (`toolkit.cassettes.scrub`).
Against a real service, `record(service, base_url=...)` records the read-only rows into
`cassettes-real/` with the credentials of TOOLKIT_<SERVICE>_<FIELD>.

    toolkit cassettes record --service media_review          # or: python -m toolkit.cassettes record ...
    python -m toolkit.cassettes check-stable
"""
from toolkit.cassettes.calls import example_params, exercise, row_ids, summary, walk_params
from toolkit.cassettes.record import (
    FOLDER,
    REAL_FOLDER,
    Recorded,
    cassette_path,
    check_stable,
    metadata,
    record,
    record_command,
    replay,
    replay_client,
    rows,
    use_cassette,
    vcr,
    vcr_config,
)
from toolkit.cassettes.scrub import Scrubber, json_body

__all__ = ["FOLDER", "REAL_FOLDER", "Recorded", "Scrubber", "cassette_path", "check_stable", "example_params",
           "exercise", "json_body", "metadata", "record", "record_command", "replay", "replay_client", "row_ids",
           "rows", "summary", "use_cassette", "vcr", "vcr_config", "walk_params"]
