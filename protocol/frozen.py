"""A quicker ``__init__`` for the frozen, slotted dataclasses a move builds.

A frozen dataclass sets each field with ``object.__setattr__(self, "name", v)``
(its own ``__setattr__`` refuses): a global lookup, an attribute lookup and a
call by name a field, about twice what setting a plain attribute costs. Every
accepted move builds a dozen such values (its request, its move, its outcome
twice, its record, its timed move, the decision's context), some forty fields.
:func:`quick_init` gives a class an ``__init__`` that sets each field through
its slot's own descriptor instead, which the frozen ``__setattr__`` does not
see either: the same values, the same signature, defaults and default
factories, and the class stays as frozen as it was; about half the cost.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T")


class _Factory:
    """A default made by a default factory, as the signature shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def quick_init(cls: type[T]) -> type[T]:
    """``cls`` (a ``@dataclass(frozen=True, slots=True)``, applied below this)
    with the quicker ``__init__``. Refuses a class it could not build one for
    exactly: a ``__post_init__``, an ``InitVar``, a field left out of
    ``__init__`` or keyword-only."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in vars(cls):
        raise TypeError(f"{cls.__name__} is not a frozen, slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    original = vars(cls)["__init__"]
    taken = list(inspect.signature(original).parameters)[1:]  # an InitVar is one
    if taken != [f.name for f in fields] or any(f.kw_only for f in fields):
        raise TypeError(f"{cls.__name__} has fields this does not build")
    env: dict[str, Any] = {"_FACTORY": _FACTORY}
    params_src: list[str] = []
    body: list[str] = []
    for i, f in enumerate(fields):
        env[f"_set{i}"] = getattr(cls, f.name).__set__  # the slot's descriptor
        value = f.name
        if f.default_factory is not dataclasses.MISSING:
            env[f"_factory{i}"] = f.default_factory
            params_src.append(f"{f.name}=_FACTORY")
            value = f"_factory{i}() if {f.name} is _FACTORY else {f.name}"
        elif f.default is not dataclasses.MISSING:
            env[f"_default{i}"] = f.default
            params_src.append(f"{f.name}=_default{i}")
        else:
            params_src.append(f.name)
        body.append(f"    _set{i}(self, {value})")
    source = f"def __init__(self, {', '.join(params_src)}):\n" + "\n".join(body or ["    pass"])
    exec(source, env)
    init = env["__init__"]
    init.__qualname__ = original.__qualname__
    init.__annotations__ = original.__annotations__
    init.__doc__ = original.__doc__
    init.__module__ = cls.__module__
    setattr(cls, "__init__", init)  # noqa: B010 - mypy refuses assigning to __init__
    return cls
