"""ipywidgets forms for the write actions: one per action from the catalog, a gallery, multi-step helpers.

    form = library.form("create_board")       # Form: fields, preview(), submit(), confirm, output
    library.forms()                           # Gallery: every write action of the service
    toolkit.forms.MultipartUpload(library)    # helpers where one form is not enough

The client and the workspace know no screen: `Client.form` and `Client.forms` import this package
when they are called. A service's own multi-step helpers are in the modules named for it beside this
one (`<service>_steps.py`, `<service>_work.py`), found from the catalog as `connection.losses` finds
its sentences: a new service adds its module and nothing else, and its classes and functions are
handed on here.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

from toolkit import catalog
from toolkit.connection.effects import affected_resources, board_cascade, loss
from toolkit.forms.fields import MISSING, Field
from toolkit.forms.form import Form
from toolkit.forms.gallery import Gallery, write_actions
from toolkit.forms.lookups import LOOKUPS, Lookup
from toolkit.forms.steps import Steps


def _services_own() -> dict[str, Any]:
    """The classes and functions each service's own modules name in their `__all__`."""
    found: dict[str, Any] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not any(info.name.startswith(f"{key}_") for key in catalog.SERVICES):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for name in getattr(module, "__all__", ()):
            held = getattr(module, name)
            if (inspect.isclass(held) or inspect.isfunction(held)) and held.__module__ == module.__name__:
                found[name] = held
    return found


SERVICES_OWN = _services_own()
globals().update(SERVICES_OWN)

__all__ = ["LOOKUPS", "MISSING", "Field", "Form", "Gallery", "Lookup", "Steps", "affected_resources", "board_cascade",
           "loss", "write_actions"]
__all__ += list(SERVICES_OWN)
