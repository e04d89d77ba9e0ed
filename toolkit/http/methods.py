"""The methods built from the catalog: one per action, with a real signature and docstring, so that
Tab and `?` work in Jupyter. The client's and the connection's classes are both made of them (`with_methods`).

    help(toolkit.client_class("translation").get_submission)
"""
from __future__ import annotations

__all__ = ["RESERVED", "action_method", "docstring", "with_methods"]

import datetime as dt
import inspect
from collections.abc import Callable
from typing import Any

from toolkit import catalog
from toolkit.catalog.spec import Action, Param
from toolkit.errors import UnknownMethodError
from toolkit.http import rules

RESERVED = ("version", "headers", "content_type")     # keywords every method takes besides the params

_KIND_TYPES = {"integer": int, "number": float, "boolean": bool, "int_list": list[int], "list": list[str],
               "object": dict, "file": bytes, "epoch_ms": int | dt.datetime, "datetime": str | dt.datetime}


def action_method(entry: Action) -> Callable[..., Any]:
    """A method calling `self.call` with the action, its signature and docstring from the entry: the
    client's and the connection's methods are both made with it."""
    def method(self: Any, **params: Any) -> Any:
        return self.call(entry, **params)

    parameters = [inspect.Parameter(
        p.name, inspect.Parameter.KEYWORD_ONLY, default=inspect.Parameter.empty if p.required else None,
        annotation=_annotation(p)) for p in sorted(entry.params, key=lambda p: not p.required)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in RESERVED]
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what inspect.signature reads
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *parameters])
    method.__name__ = method.__qualname__ = entry.name
    method.__doc__ = docstring(entry)
    return method


def _annotation(param: Param) -> Any:
    # an id is what its service uses: the translation service's are integers, the others' UUID strings
    if param.kind == "id":
        return int if isinstance(param.example, int) and not isinstance(param.example, bool) else str
    return _KIND_TYPES.get(param.kind, str)


def docstring(entry: Action) -> str:
    """A notebook-friendly docstring: what it does, the request, each param, an example line."""
    versions = f" ({', '.join(entry.versions)})" if entry.versions != ("",) else ""
    lines = [entry.doc, "", f"{entry.method} {entry.path}{versions} · group {entry.group}"]
    modes = catalog.SERVICES[entry.service].modes       # said where the action runs in fewer than its service
    if entry.min_version or (modes and set(modes) - set(entry.modes)):
        lines.append(f"needs system version {entry.min_version or 'any'}"
                     + (f"; modes: {', '.join(m for m in entry.modes if m in modes)}" if modes else ""))
    if entry.destructive:
        lines.append("Destructive: what it removes cannot be brought back.")
    if entry.params:
        lines += ["", "Params:"]
        for p in entry.params:
            # what it may be, in the words a refusal uses (toolkit.http.rules), before it is refused
            said = ([f"one of {', '.join(map(str, p.choices))}"] if p.choices else []) + rules.said_of(p)
            flag = "required" if p.required else "optional"
            lines.append(f"    {p.name} ({p.kind}, {p.where} {p.wire}, {flag}): "
                         + "; ".join(filter(None, [p.doc, *said])))
    example = ", ".join(f"{k}={v!r}" for k, v in entry.example.items())
    lines += ["", f"Example: client.{entry.name}({example})"]
    return "\n".join(lines)


_CLASSES: dict[tuple[type, str], type] = {}


def _missing(owner: str) -> Callable[[Any, str], Any]:
    """`__getattr__` for a class of `with_methods`: a misspelt method (`tm.get_submision`) says the closest
    it has, as `tm.call` does for an action id; a private or special name stays a plain AttributeError
    (copy, pickle and IPython probe those). It reads nothing of the instance, which may be half made."""
    def __getattr__(self: Any, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnknownMethodError(owner, name, sorted(n for n in dir(type(self)) if not n.startswith("_")))
    return __getattr__


def with_methods(base: type, service: str) -> type:
    """`base` subclassed for one service with one method per action, built once: `TranslationClient`,
    `TranslationConnection`, ... (the class name is the service's title-cased key plus the base's)."""
    if (base, service) not in _CLASSES:
        methods: dict[str, Any] = {a.name: action_method(a) for a in catalog.actions_of(service)}
        methods["__getattr__"] = _missing(f"the {service} {base.__name__.lower()}")
        name = "".join(part.title() for part in service.split("_")) + base.__name__
        _CLASSES[base, service] = type(name, (base,), {"__doc__": catalog.SERVICES[service].doc, **methods})
    return _CLASSES[base, service]
