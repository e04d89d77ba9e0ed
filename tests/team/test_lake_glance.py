"""`toolkit mcp`'s answers over a team lake: opened read-only, the same tools as a file, writes refused
by the guard and, past it, by the lake's READ_ONLY attach; the catalog's password in no answer."""
from __future__ import annotations

import json

import pytest

import toolkit as tk
from toolkit.errors import QueryRefusedError
from toolkit.glance import reading
from toolkit.sandbox import available

SERVICE = "audience_platform"


def test_the_assistant_reads_a_lake_and_cannot_write_it(lake):
    dsn, data = lake
    with tk.sandbox.start(emulators={SERVICE: available()[SERVICE]}, enforce_limits=False) as box, \
            tk.Workspace(dsn, data_path=data) as ws:
        cdp = ws.connect(SERVICE, **box.credentials(SERVICE))
        cdp.pull("users")
        cdp.call("create_user", username="lake-bot", email="lake.bot@example.com", password="pw-lake-5c1e")
        cdp.pull("users")
        secrets = box.secrets()
    source = reading.open_source(dsn, data)
    try:
        answers = [reading.list_views(source), reading.describe_view(source, "users"),
                   reading.view_history(source, "users"), reading.view_diff(source, "users"),
                   reading.run_sql(source, "SELECT username FROM audience_platform.users ORDER BY 1")]
        views, described, history, diff, users = answers
        assert [v["view"] for v in views] == ["audience_platform.users"] and views[0]["loads"] == 2
        assert history["loads"][-1]["added"] == 1 and diff["added"]["rows"][0]["username"] == "lake-bot"
        assert "lake-bot" in [row["username"] for row in users["rows"]]
        with pytest.raises(QueryRefusedError):
            reading.run_sql(source, "DELETE FROM audience_platform.users__versions")
        with pytest.raises(Exception, match="(?i)read.only"):     # past the guard, the attach refuses it too
            source.sql("DELETE FROM audience_platform.users__versions")
        assert reading.run_sql(source, "SELECT count(*) AS n FROM audience_platform.users")["rows"][0]["n"] == \
            described["rows"]
        text = json.dumps(answers, default=str)
        password = dsn.split("password=")[1].split()[0] if "password=" in dsn else None
        assert not [s for s in [*secrets, "pw-lake-5c1e", password] if s and len(s) >= 6 and s in text]
    finally:
        source.close()
