"""protocol/frozen.py: the quicker __init__ builds exactly what the dataclass's own would."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from protocol.frozen import quick_init
from protocol.moves import Event, Move, MoveKind, Outcome, Status
from protocol.requests import MoveRequest
from protocol.scoring import TimedMove
from server.core.decide import Ctx
from server.core.records import MovePlayed


@dataclass(frozen=True, slots=True)
class _Sample:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


@quick_init
@dataclass(frozen=True, slots=True)
class _Quick:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)


def test_same_values_signature_and_frozenness() -> None:
    pairs = [
        (_Sample(1), _Quick(1)),
        (_Sample(1, "x"), _Quick(1, "x")),
        (_Sample(1, "x", [2]), _Quick(1, "x", [2])),
    ]
    for plain, quick in pairs:
        assert dataclasses.astuple(plain) == dataclasses.astuple(quick)
    assert str(inspect.signature(_Quick)) == str(inspect.signature(_Sample))
    assert _Quick(1).c == [] and _Quick(1).c is not _Quick(1).c  # a new default each time
    assert _Quick(a=1, c=[3], b="y") == _Quick(1, "y", [3])
    with pytest.raises(TypeError):
        _Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Quick(1, "b", [], 4)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Quick(1).a = 2  # type: ignore[misc]


def test_the_move_values_use_it_and_build_as_before() -> None:
    move = Move(MoveKind.TABLEAU_TO_TABLEAU, 1, 2, 3)
    outcome = Outcome(move, (Event.TURN_OVER,), (4, 5), 6, 0, Status.PLAYING)
    values: list[Any] = [
        move,
        Move(MoveKind.DRAW),
        outcome,
        Outcome(move, (), (), None, 0, Status.WON, True, move),
        TimedMove(7, 8, move),
        MovePlayed("p", 1, 7, 8, move),
        MoveRequest("r", 1, move, 0),
        Ctx(5, str),
    ]
    for value in values:
        cls = type(value)
        assert vars(cls)["__init__"].__qualname__ == f"{cls.__qualname__}.__init__"
        copy = dataclasses.replace(value)
        assert copy == value
        assert [getattr(copy, f.name) for f in dataclasses.fields(copy)] == [
            getattr(value, f.name) for f in dataclasses.fields(value)
        ]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, None)
    assert Ctx(5, str).proven == {} and Ctx(5, str).proven is not Ctx(5, str).proven
    assert Move(MoveKind.DRAW) == Move(MoveKind.DRAW, 0, 0, 1)
    assert hash(Move(MoveKind.DRAW)) == hash(Move(MoveKind.DRAW, 0, 0, 1))


def test_refuses_what_it_would_build_wrong() -> None:
    @dataclass(frozen=True, slots=True)
    class Post:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True, slots=True)
    class Init:
        a: int
        b: InitVar[int]

    @dataclass(frozen=True, slots=True)
    class Hidden:
        a: int
        b: int = field(default=0, init=False)

    @dataclass(frozen=True, slots=True)
    class Keyword:
        a: int = field(kw_only=True)

    @dataclass(slots=True)
    class Thawed:
        a: int

    @dataclass(frozen=True)
    class Unslotted:
        a: int

    for cls in (Post, Init, Hidden, Keyword, Thawed, Unslotted):
        with pytest.raises(TypeError):
            quick_init(cls)
