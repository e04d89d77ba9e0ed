"""The lake's PostgreSQL password never shows, even when PostgreSQL goes away under a refresh: not in a
refresh's lines, a load's recorded error, a warning, a log record or an error raised to the analyst."""
from __future__ import annotations

import logging
import warnings

import pytest
from local_postgres import LocalPostgres, binaries

import toolkit as tk


@pytest.fixture
def own_postgres():
    """A PostgreSQL of this test's own, since the test stops it."""
    server = LocalPostgres(binaries())
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_a_lost_catalog_never_shows_its_password(own_postgres, tmp_path, capsys, caplog):
    own_postgres.create_database("lake")
    dsn, password = own_postgres.dsn("lake"), own_postgres.password
    shown: list[str] = []
    with tk.sandbox.start(seed=7) as box, warnings.catch_warnings(record=True) as warned, \
            caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        ws = tk.Workspace(dsn, data_path=str(tmp_path))
        tm = ws.connect("translation", **box.credentials("translation"))
        ws.connect("audience_platform", **box.credentials("audience_platform")).pull("audiences", progress=False)
        tm.pull("submissions", progress=False)
        own_postgres.halt()
        try:
            done = ws.refresh(progress=False)
            shown += [done.to_csv(), *map(str, done["error"])]
        except Exception as error:  # whatever ends it, its words are the analyst's
            shown += [repr(error), str(error), *map(str, error.args)]
        for attempt in (lambda: ws.loads(), lambda: ws.tables(), lambda: tm.pull("targets", progress=False)):
            try:
                shown.append(str(attempt()))
            except Exception as error:
                shown += [repr(error), str(error)]
        own_postgres.resume()
        with tk.Workspace(dsn, data_path=str(tmp_path)) as again:
            shown.append(again.loads().to_csv())
        try:
            ws.close()
        except Exception as error:
            shown.append(str(error))
    out = capsys.readouterr()
    shown += [out.out, out.err, *(str(w.message) for w in warned), caplog.text]
    assert sum(len(text) for text in shown) > 200      # something was said of the lost catalog
    assert [text[:200] for text in shown if password in text] == []
