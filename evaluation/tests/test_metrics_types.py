"""evaluation.metrics.types' fast copies of frozen, slotted dataclasses: the same objects as ``dataclasses.replace``
and the same pickles' values as the generated ``__getstate__``/``__setstate__`` (the cache keeps pages pickled by
either)."""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass, field, replace

import pytest

from evaluation.metrics.types import fast_replace, fast_state


@dataclass(frozen=True, slots=True)
class Pair:
    name: str
    value: float | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Plain:  # the same fields, the generated pickling kept: a value pickled by the old code
    name: str
    value: float | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class One:
    only: int


pair_replace = fast_replace(fast_state(Pair))
one_replace = fast_replace(fast_state(One))


def test_fast_replace_equals_dataclasses_replace() -> None:
    a = Pair("a", 0.5, {"k": "v"})
    assert pair_replace(a, value=0.75) == replace(a, value=0.75) == Pair("a", 0.75, {"k": "v"})
    assert pair_replace(a) == a and pair_replace(a) is not a
    assert one_replace(One(1), only=2) == One(2)
    with pytest.raises(KeyError):
        pair_replace(a, nope=1)
    with pytest.raises(AttributeError):  # still frozen
        pair_replace(a, value=1.0).value = 2.0  # type: ignore[misc]


def test_fast_state_pickles_and_copies_as_before() -> None:
    a = Pair("a", None, {"k": "v"})
    for got in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert got == a
    assert pickle.loads(pickle.dumps(One(3))) == One(3)
    # a state written by the generated __getstate__ (a list of the values) reads back into the fast one, and back
    old = Plain("b", 1.0, {"x": "y"})
    state = old.__getstate__()  # type: ignore[attr-defined]
    new = object.__new__(Pair)
    new.__setstate__(state)  # type: ignore[attr-defined]
    assert new == Pair("b", 1.0, {"x": "y"})
    back = object.__new__(Plain)
    back.__setstate__(new.__getstate__())  # type: ignore[attr-defined]
    assert back == old
