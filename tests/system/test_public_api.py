"""The public face: `toolkit.__all__` and the catalog tables."""
from __future__ import annotations

import types

import pandas as pd

import toolkit
from toolkit import catalog


def test_all_is_sorted_and_unique():
    assert toolkit.__all__ == sorted(toolkit.__all__)
    assert len(set(toolkit.__all__)) == len(toolkit.__all__)


def test_all_lists_every_public_name_and_only_names_that_exist():
    for name in toolkit.__all__:
        assert hasattr(toolkit, name), name
    public = {name for name, value in vars(toolkit).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public <= set(toolkit.__all__), sorted(public - set(toolkit.__all__))


def test_the_promised_names_are_public():
    for name in ("Client", "connect", "Workspace", "actions", "resources", "Secret", "F", "ToolkitError",
                 "ValidationError", "ModeError", "VersionError", "ApiError", "AuthError", "NotFoundError",
                 "RateLimitError", "ServerError", "TransportError", "PagingError", "ContractError", "DriftWarning",
                 "doctor"):
        assert name in toolkit.__all__


COLUMNS = ["service", "action", "group", "method", "path", "version", "doc", "writes", "destructive"]


def test_actions_table():
    table = toolkit.actions()
    assert isinstance(table, pd.DataFrame)
    assert set(COLUMNS) <= set(table.columns)
    assert table.writes.dtype == bool and table.destructive.dtype == bool
    assert len(table) == sum(len(a.versions) for a in catalog.ACTIONS.values())
    assert set(table.service) == set(catalog.SERVICES)
    assert set(table.method) <= {"GET", "POST", "PUT", "PATCH", "DELETE"}
    assert set(table.version) <= {"", "v1", "v2"}
    assert (table.doc.str.strip() != "").all() and (table.group.str.strip() != "").all()
    assert not table.duplicated(["action", "version"]).any()


def test_actions_rows_per_version():
    table = toolkit.actions("audience_platform")
    metadata = table[table.action == "audience_platform.list_audience_metadata"].set_index("version")
    assert metadata.loc["v1", "path"] == "/api/v1/audiences"
    assert metadata.loc["v2", "path"] == "/api/v2/audiences/metadata"
    assert list(table[table.action == "audience_platform.import_audience"].version) == ["v2"]
    assert set(toolkit.actions("translation").version) == {""}


def test_actions_flags():
    table = toolkit.actions().set_index(["action", "version"])
    assert table.loc[("asset_library.delete_asset", ""), "destructive"]
    assert table.loc[("translation.cancel_submission", ""), "destructive"]
    assert not table.loc[("translation.get_word_count", ""), "writes"]
    assert table.loc[("translation.save_submission", ""), "writes"]
    assert not table.loc[("media_review.list_teams", ""), "writes"]
    writes = toolkit.actions().query("writes and service == 'translation'")
    assert len(writes) > 0 and (writes.method != "GET").all()


def test_actions_filtered_by_service():
    assert set(toolkit.actions("asset_library").service) == {"asset_library"}
    assert len(toolkit.actions("media_review")) == 1


def test_resources_table():
    table = toolkit.resources()
    assert {"service", "resource", "action", "key"} <= set(table.columns)
    assert len(table) == len(catalog.RESOURCES)
    assert set(table.action) <= set(catalog.ACTIONS)


def _modules() -> list[str]:
    import pkgutil
    # __main__ runs on import
    return [m.name for m in pkgutil.walk_packages(toolkit.__path__, "toolkit.") if not m.name.endswith("__main__")]


def _own_names(module: types.ModuleType) -> set[str]:
    """The public functions and classes a module defines itself (not what it imports)."""
    return {name for name, value in vars(module).items() if not name.startswith("_")
            and isinstance(value, type | types.FunctionType) and value.__module__ == module.__name__}


def test_every_public_module_says_what_it_offers_in_all():
    """`dir(reports.audiences)` listed np, pd, Figure, Any and annotations beside its functions: every
    module that defines public names lists them in __all__, and lists nothing it merely imported."""
    import importlib
    missing, imported, absent = [], [], []
    for name in _modules():
        module = importlib.import_module(name)
        own = _own_names(module)
        offered = getattr(module, "__all__", None)
        if offered is None:
            if own:
                missing.append(name)
            continue
        absent += [f"{name}.{n}" for n in offered if not hasattr(module, n)]
        missing += [f"{name}.{n}" for n in own - set(offered)]
        for n in offered:
            value = getattr(module, n, None)
            if isinstance(value, types.ModuleType):     # a package may offer its own submodules
                foreign = not value.__name__.startswith(f"{name}.")
            else:                                       # a class or function from outside toolkit
                foreign = isinstance(value, type | types.FunctionType) and \
                    not getattr(value, "__module__", "").startswith("toolkit")
            if foreign or n == "annotations":
                imported.append(f"{name}.{n}")
    assert not missing and not imported and not absent, (missing, imported, absent)


def test_reports_audiences_offers_its_reports_not_its_imports():
    from toolkit.reports import audiences
    assert {"np", "pd", "Figure", "Any", "annotations"}.isdisjoint(audiences.__all__)
    assert {"sizes", "overlap", "plot_sizes"} <= set(audiences.__all__)
