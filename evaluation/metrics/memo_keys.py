"""Memo keys for the scorer: a hashable, type-tagged flattening of a tool call's arguments.

The tool validator is a pure function of (name, args); ``args_key`` lets the scorer ask it
once per distinct call in a submission.
"""

from __future__ import annotations

from typing import Any

_SCALARS = (str, int, bool, type(None))


def _freeze(value: Any, out: list) -> bool:
    """Append a type-tagged, hashable flattening of a JSON-like value to ``out``.

    Types are part of the key (1, 1.0 and True are equal in Python but not to a schema), as are
    container lengths (so flattenings cannot run into each other); a float zero is keyed by its
    repr (-0.0 and 0.0 print differently). False when the value holds anything else.
    """
    t = type(value)
    if t in _SCALARS:
        out.append(t)
        out.append(value)
        return True
    if t is float:
        out.append(t)
        out.append(value if value else repr(value))
        return True
    if t is list or t is tuple:
        out.append(t)
        out.append(len(value))
        for v in value:  # noqa: SIM110 - a loop, not all(): _freeze appends to ``out`` as it goes
            if not _freeze(v, out):
                return False
        return True
    if t is dict:
        out.append(t)
        out.append(len(value))
        for k, v in value.items():
            if type(k) is not str:
                return False
            out.append(k)
            if not _freeze(v, out):
                return False
        return True
    return False


def args_key(name: str, args: Any) -> tuple | None:
    """The validator memo's key for (name, args): ``name`` then each argument's name and its
    ``_freeze`` flattening; None when the arguments cannot be keyed. Flat arguments (scalars,
    lists of scalars: nearly every call) are flattened inline, identically."""
    if type(args) is not dict:
        return None
    out: list = [name]
    for k, v in args.items():
        if type(k) is not str:
            return None
        out.append(k)
        t = type(v)
        if t is int or t is str or t is bool or v is None:
            out.append(t)
            out.append(v)
        elif t is list:
            out.append(t)
            out.append(len(v))
            for x in v:
                tx = type(x)
                if tx is int or tx is str:
                    out.append(tx)
                    out.append(x)
                elif not _freeze(x, out):
                    return None
        elif not _freeze(v, out):
            return None
    return tuple(out)
