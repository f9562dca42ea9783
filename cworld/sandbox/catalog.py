"""Every sandbox app and stateless server, found by scanning `apps/` and `stateless/`.

Adding an app is adding a package (or a module) there whose top level defines a `SandboxApp` subclass with a
`name`: no list to edit. Names starting with `_` (shared helpers) are skipped.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

from cworld.sandbox.framework.app import SandboxApp

_PACKAGES = ("cworld.sandbox.apps", "cworld.sandbox.stateless")


@cache
def _discover() -> tuple[type[SandboxApp], ...]:
    found: list[type[SandboxApp]] = []
    for package_name in _PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package_name}.{info.name}")
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, SandboxApp) and obj.__module__ == module.__name__ and "name" in vars(obj):
                    found.append(obj)
    names = [a.name for a in found]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise TypeError(f"sandbox apps share a name: {dupes}")
    return tuple(found)


def all_apps() -> list[type[SandboxApp]]:
    """Stateful apps first, then stateless servers, each group in module order."""
    return list(_discover())


def stateful_apps() -> list[type[SandboxApp]]:
    return [a for a in _discover() if a.stateful]


def app_by_name(name: str) -> type[SandboxApp]:
    for app in _discover():
        if app.name == name:
            return app
    raise KeyError(f"no sandbox app '{name}'; have {sorted(a.name for a in _discover())}")
