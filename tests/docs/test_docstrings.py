"""Every public function, class, method and property has a docstring.

The API reference (docs/api.rst) is generated from the docstrings of every public
module, found recursively; an object without one is left out of it silently, so this
test is what keeps the reference complete. Public: not starting with ``_``, in a
module none of whose parts starts with ``_``, defined in that module (re-exports are
checked where they are defined).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import memcglab


def public_modules() -> list[str]:
    """Names of memcglab's public modules, the package itself included."""
    names = ["memcglab"]
    for info in pkgutil.walk_packages(memcglab.__path__, "memcglab."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _members(cls: type) -> list[tuple[str, object]]:
    out = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, property):
            attr = attr.fget
        elif isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if inspect.isfunction(attr):
            out.append((name, attr))
    return out


def undocumented(module_name: str) -> list[str]:
    """The public objects of ``module_name`` without a docstring of their own."""
    module = importlib.import_module(module_name)
    missing = [] if module.__doc__ else [module_name]
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
            continue
        if inspect.isfunction(obj) and not obj.__doc__:
            missing.append(f"{module_name}.{name}")
        if inspect.isclass(obj):
            if not obj.__doc__ or obj.__doc__.startswith(f"{name}("):  # a dataclass's default
                missing.append(f"{module_name}.{name}")
            missing += [f"{module_name}.{name}.{m}" for m, f in _members(obj) if not f.__doc__]
    return missing


def test_the_walk_finds_the_packages_and_their_modules():
    names = public_modules()
    assert {"memcglab", "memcglab.cli", "memcglab.resources", "memcglab.engine",
            "memcglab.engine.engine", "memcglab.sweep.cli"} <= set(names)
    assert "memcglab.__main__" not in names


def test_every_public_object_has_a_docstring():
    missing = [m for name in public_modules() for m in undocumented(name)]
    assert missing == [], "no docstring (the API reference leaves these out): " + ", ".join(
        missing)
