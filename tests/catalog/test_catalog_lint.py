"""One lint parametrised over every action of the catalog, plus the counts the documents give."""
from __future__ import annotations

import re
import string

import pytest

import toolkit
from toolkit import catalog
from toolkit.catalog.spec import CONTENT_TYPES, Action
from toolkit.http import rules
from toolkit.http.methods import RESERVED

ACTIONS = list(catalog.ACTIONS.values())
ID = re.compile(rf"^({'|'.join(catalog.SERVICES)})\.[a-z]+(_[a-z0-9]+)+$")
BODY_WHERE = {"body", "raw", "form", "file"}


def placeholders(path: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(path) if name is not None]


@pytest.fixture(params=ACTIONS, ids=[a.id for a in ACTIONS])
def action(request) -> Action:
    return request.param


def test_path_placeholders_match_path_params(action):
    path_params = sorted(p.name for p in action.params if p.where == "path")
    for version in action.versions:
        path = action.path_for(version)
        assert path.startswith("/"), path
        found = placeholders(path)
        assert len(found) == len(set(found)), f"{path} repeats a placeholder"
        assert sorted(found) == path_params, f"{action.id} {version}: {path} vs {path_params}"
    for param in action.params:
        if param.where == "path":
            assert param.required and "not_blank" in param.rules, param.name


def test_get_has_no_body(action):
    if action.method == "GET":
        assert action.body is None
        assert not [p.name for p in action.params if p.where in BODY_WHERE]


def test_body_params_have_a_body_kind_and_back(action):
    in_body = [p for p in action.params if p.where in BODY_WHERE]
    if in_body:
        assert action.body in CONTENT_TYPES
        assert set(action.content_types) <= set(CONTENT_TYPES)
        assert action.body in action.content_types
    if any(p.where == "raw" for p in action.params):
        assert [p.where for p in in_body] == ["raw"], "a raw param is the whole body"
    if any(p.where in ("form", "file") for p in action.params):
        assert action.body in ("form", "multipart")
    if any(p.where == "file" for p in action.params):
        assert action.body == "multipart"


def test_method_and_flags(action):
    assert action.method in ("GET", "POST", "PUT", "PATCH", "DELETE")
    assert isinstance(action.writes, bool) and isinstance(action.destructive, bool)
    if action.method == "DELETE":
        assert action.destructive and action.writes
    if action.destructive:
        assert action.writes
    if action.retry_safe:
        assert action.method == "POST" and not action.writes
    assert action.doc.strip() and action.group.strip()


def test_id_form(action):
    assert ID.match(action.id), action.id
    assert action.id.split(".")[0] in catalog.SERVICES


def test_ids_unique():
    ids = [a.id for m in catalog.MODULES for a in m.ACTIONS]
    assert len(ids) == len(set(ids))
    assert len(ids) == len(catalog.ACTIONS)


def test_every_required_param_has_an_example(action):
    missing = [p.name for p in action.params if p.required and p.example is None]
    assert not missing


def test_example_params_pass_the_rules(action):
    example = action.example
    if all(p.name in example for p in action.params if p.required):
        assert rules.problems(action, example) == []


def test_rule_and_check_names_exist(action):
    for param in action.params:
        assert set(param.rules) <= set(rules.PARAM_RULES), (param.name, param.rules)
        assert not param.pattern_rule or param.pattern, param.name       # a rule said of no pattern
        assert not param.also or param.minimum is not None or param.maximum is not None, param.name
        assert set(param.required_in) <= set(catalog.SERVICES[action.service].modes), param.name
    assert set(action.exclusive) <= {p.name for p in action.params}
    assert all(callable(check) for check in action.checks)


def test_params_unique_and_not_reserved(action):
    names = [p.name for p in action.params]
    assert len(names) == len(set(names))
    assert not set(names) & set(RESERVED)
    assert all(name.isidentifier() and name == name.lower() for name in names)
    sent = [(p.where, p.wire) for p in action.params if p.where != "local"]
    assert len(sent) == len(set(sent)), "two params with the same wire name"


def test_choices_hold_the_example(action):
    for param in action.params:
        if param.choices and param.example is not None:
            values = param.example if isinstance(param.example, list) else [param.example]
            assert set(values) <= set(param.choices)


def test_paging_matches_the_response(action):
    if action.response == "page":
        assert action.paging is not None
    for version in action.versions:
        assert version in ("", "v1", "v2")
    if action.service == "audience_platform":
        assert set(action.versions) <= {"v1", "v2"} and action.versions
    else:
        assert action.versions == ("",)


def test_modes_and_versions_are_translation_only(action):
    assert set(action.modes) <= {"client", "hosted"} and action.modes
    service = catalog.SERVICES[action.service]
    assert set(action.modes) <= set(service.modes or ("client", "hosted"))
    if not service.modes:           # a client's mode is checked only where the service has modes
        assert action.modes == ("client", "hosted")
    if action.service != "translation":
        assert action.min_version is None


def test_what_a_write_changes_names_resources_of_its_service(action):
    """Action.changes: what effects marks stale beyond the path's nouns; a read changes nothing."""
    names = {name for service, name in catalog.RESOURCES if service == action.service}
    assert set(action.changes) <= names
    assert action.writes or not action.changes


def test_lookups_name_a_resource_and_its_columns(action):
    """Every declared lookup (Service.lookups, Param.lookup) reads a resource of the action's service
    through columns it has: a form's choices never come from a view that cannot exist."""
    for param in action.params:
        found = catalog.lookup(action, param.name)
        if found is None:
            continue
        resource = catalog.RESOURCES[(action.service, found.resource)]
        columns = {c.name for c in resource.columns}
        assert (found.nested or found.key) in columns, (param.name, found)
        assert found.parent is None or found.parent[1] in columns, (param.name, found)
        fields = {name for _, name, _, _ in string.Formatter().parse(found.label) if name}
        assert fields <= columns | {"key"}, (param.name, found.label)


def test_every_service_lookup_is_read_by_some_param():
    for service in catalog.SERVICES.values():
        names = {p.name for a in catalog.actions_of(service.key) for p in a.params}
        assert set(service.lookups) <= names, service.key


def test_an_api_key_service_names_the_header_of_each_credential():
    for service in catalog.SERVICES.values():
        if service.auth == "api_key":
            assert set(service.key_headers) == set(service.credentials), service.key
        else:
            assert not service.key_headers, service.key


def test_a_token_login_names_its_token_action():
    for service in catalog.SERVICES.values():
        if service.auth == "oauth_password":
            token = catalog.ACTIONS[service.token_action]
            assert token.service == service.key and token.method == "POST"
        else:
            assert not service.token_action


RESOURCES = list(catalog.RESOURCES.values())


@pytest.mark.parametrize("resource", RESOURCES, ids=[f"{r.service}.{r.name}" for r in RESOURCES])
def test_resources_name_real_actions_and_params(resource):
    action = catalog.ACTIONS[resource.action]
    assert action.service == resource.service
    names = {p.name for p in action.params}
    if resource.fan_out:
        assert resource.fan_out in names
    assert set(resource.filters) <= names
    columns = [c.name for c in resource.columns]
    assert len(columns) == len(set(columns))
    assert set(resource.key) <= set(columns)


# --- the counts -------------------------------------------------------------------------------------------

def test_counts():
    """The seeds' actions, and beyond them only what public integrations call (an origin)."""
    table = toolkit.actions()
    added = table.origin.str.contains("(action)", regex=False)
    rows = table[~added].groupby("service").size().to_dict()
    assert rows["media_review"] == 1
    assert rows["asset_library"] == 41
    assert rows["audience_platform"] == 106
    assert rows["translation"] == 82
    beyond = table[added].set_index("action").origin.to_dict()
    assert beyond["asset_library.get_tag"] == "A2, A3 (action)"
    assert not {a for a in beyond if a.startswith(("media_review.", "audience_platform."))}


def test_asset_library_groups():
    table = toolkit.actions("asset_library")
    added = table.origin.str.contains("(action)", regex=False)
    groups = table[~added].groupby("group").size().to_dict()
    assert groups == {"Assets": 11, "Boards": 12, "Custom Fields": 8, "Imports": 2, "Roles": 1, "Tags": 4,
                      "Uploads": 3}
    assert list(table[added].action) == ["asset_library.get_tag"]


def test_audience_platform_groups():
    groups = toolkit.actions("audience_platform").groupby("group").size().to_dict()
    assert groups == {"Actions": 5, "Audiences": 11, "Experience insights": 4, "Document generation": 6,
                      "Analytics": 10, "Warehouse": 24, "Metrics": 1, "Notifications": 3, "Privacy": 4,
                      "Profiles": 8, "Schemas": 12, "System administration": 6, "System information": 4,
                      "User administration": 8}


def test_resources_read_their_own_way_name_what_the_catalog_holds():
    """What fetch reads from Resource.chunks and Resource.settings (no service name is in fetch)."""
    import inspect

    from toolkit.pull import fetch

    for resource in catalog.RESOURCES.values():
        if resource.chunks is not None:
            how = resource.chunks
            assert how.param in {p.name for p in catalog.ACTIONS[resource.action].params}, resource.name
            assert (resource.service, resource.parent) in catalog.RESOURCES, resource.name
            if how.older:
                assert how.one in {p.name for p in catalog.ACTIONS[how.older].params}, resource.name
        if resource.settings is not None:
            assert set(resource.settings.fields) <= {c.name for c in resource.columns}, resource.name
            for _, action in resource.settings.reads:
                assert catalog.ACTIONS[action].method == "GET" and catalog.ACTIONS[action].service == resource.service
    source = inspect.getsource(fetch)
    assert not [s for s in catalog.SERVICES if f'"{s}"' in source or f"'{s}'" in source]
    assert not re.search(r'"\w+\.(get|list)_\w+"', source), "no action id is spelled in fetch"
