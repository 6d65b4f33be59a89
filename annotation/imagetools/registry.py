"""The registry: every tool by its canonical snake_case name, and the names models emit for them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
from jsonschema import Draft202012Validator

from annotation.imagetools.context import Limits, ToolContext, ToolOutput
from annotation.imagetools.errors import ToolArgumentError
from annotation.imagetools.images import ensure_image
from annotation.imagetools.schema import (compile_arguments, compile_defaults, fold_choices,
                                          schema_errors, snake_case_keys, with_defaults)

MODULES = ("geometry", "enhancement", "feature_extraction", "drawing", "adapt")

ToolFunc = Callable[[np.ndarray, dict, ToolContext], ToolOutput]


@dataclass(frozen=True)
class Tool:
    """One tool. `func(image, args, ctx)` gets arguments already validated, with defaults filled
    in; calling the tool itself (`tool(image, args)`) does that preparation first."""

    name: str
    module: str
    description: str
    schema: dict
    func: ToolFunc
    measures: bool = False
    aliases: tuple[str, ...] = ()
    # A valid argument set on a 640x480 image: documentation, the API and the tests use it.
    example: dict = field(default_factory=dict)
    # Image-independent rules a JSON Schema cannot say well (odd kernel, low <= high); raises
    # ToolArgumentError.
    check: Callable[[dict], None] | None = None
    # Argument-form adapters (bbox_2d for bbox, x/y/width/height for a bbox); may raise.
    normalize: Callable[[dict], dict] | None = None

    @cached_property
    def _validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.schema)

    @cached_property
    def _fast(self) -> Callable[[dict], dict | None] | None:
        """The fast path, built once: `fast(args)` gives the filled arguments of a valid call,
        computed as `_problems` computes them (same steps, same result) but with the compiled
        check instead of jsonschema; None when anything is wrong or unproven, and the caller
        then runs `_problems`, which words the errors. None if the schema is beyond the
        compiled check (every call then goes through jsonschema)."""
        ok = compile_arguments(self.schema)
        if ok is None:
            return None
        schema, fill, normalize, check = self.schema, compile_defaults(self.schema), \
            self.normalize, self.check
        names = frozenset(schema["properties"])
        enums = tuple((name, frozenset(prop["enum"]))
                      for name, prop in schema["properties"].items() if prop.get("enum"))

        def fast(args: dict) -> dict | None:
            # snake_case_keys and fold_choices change nothing (so are skipped) when every key
            # is a property or has no capital letter to fold, and every enum value is one of
            # its choices.
            if not names.issuperset(args):
                for name in args:
                    if name not in names and (type(name) is not str or name.lower() != name):
                        args = snake_case_keys(schema, args)
                        break
            for name, choices in enums:
                value = args.get(name)
                if isinstance(value, str) and value not in choices:
                    args = fold_choices(schema, args)
                    break
            if normalize is not None:
                try:
                    args = normalize(args)
                except ToolArgumentError:
                    return None
                if type(args) is not dict:
                    return None
            if not ok(args):
                return None
            filled = fill(args)
            if check is not None:
                try:
                    check(filled)
                except ToolArgumentError:
                    return None
            return filled

        return fast

    def problems(self, args: Any) -> tuple[dict | None, list[ToolArgumentError]]:
        """(the arguments with defaults filled in, []) or (None, every problem found)."""
        if type(args) is dict:
            fast = self._fast
            if fast is not None:
                filled = fast(args)
                if filled is not None:
                    return filled, []
        return self._problems(args)

    def _problems(self, args: Any) -> tuple[dict | None, list[ToolArgumentError]]:
        """The reference path: jsonschema validation, every problem worded."""
        if not isinstance(args, dict):
            return None, schema_errors(self.schema, args, self._validator)
        try:
            args = fold_choices(self.schema, snake_case_keys(self.schema, args))
            if self.normalize:
                args = self.normalize(args)
        except ToolArgumentError as error:
            return None, [error]
        errors = schema_errors(self.schema, args, self._validator)
        if errors:
            return None, errors
        filled = with_defaults(self.schema, args)
        if self.check:
            try:
                self.check(filled)
            except ToolArgumentError as error:
                return None, [error]
        return filled, []

    def prepare(self, args: Any) -> dict:
        """The arguments with defaults filled in; raises ToolArgumentError on the first problem."""
        filled, errors = self.problems({} if args is None else args)
        if errors:
            raise errors[0]
        assert filled is not None
        return filled

    def __call__(self, image: np.ndarray, args: dict | None = None, *, limits: Limits | None = None,
                 images: Mapping[str, np.ndarray] | None = None) -> ToolOutput:
        """Runs the tool alone (no time limit; run_chain enforces that)."""
        ctx = ToolContext(limits=limits or Limits(), images=dict(images or {}))
        return self.func(ensure_image(image), self.prepare(args), ctx)


REGISTRY: dict[str, Tool] = {}
_NAMES: dict[str, str] = {}  # folded name or alias -> canonical name
_FOLD = re.compile(r"[\s_\-]+")
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def fold_name(name: str) -> str:
    """What tool names are compared by: case, spaces, underscores and hyphens do not matter."""
    return _FOLD.sub("", name.strip().lower())


_fold = fold_name


def tool(name: str, module: str, description: str, schema: dict, *, measures: bool = False,
         aliases: tuple[str, ...] = (), example: dict | None = None,
         check: Callable[[dict], None] | None = None,
         normalize: Callable[[dict], dict] | None = None) -> Callable[[ToolFunc], ToolFunc]:
    """Registers the decorated function as a tool."""

    def register(func: ToolFunc) -> ToolFunc:
        if not _SNAKE.match(name) or module not in MODULES or name in REGISTRY:
            raise ValueError(f"bad tool registration: {name!r} in {module!r}")
        for spelling in (name, *aliases):
            owner = _NAMES.setdefault(_fold(spelling), name)
            if owner != name:
                raise ValueError(f"{spelling!r} names both {owner!r} and {name!r}")
        REGISTRY[name] = Tool(name=name, module=module, description=description, schema=schema,
                              func=func, measures=measures, aliases=aliases,
                              example=example or {}, check=check, normalize=normalize)
        _RESOLVED.clear()
        return func

    return register


def add_aliases(name: str, *aliases: str) -> None:
    """More spellings of a registered tool (another harness's names for it); a spelling already naming
    another tool is refused."""
    for spelling in aliases:
        owner = _NAMES.setdefault(_fold(spelling), name)
        if owner != name:
            raise ValueError(f"{spelling!r} names both {owner!r} and {name!r}")
    REGISTRY[name] = replace(REGISTRY[name], aliases=REGISTRY[name].aliases + aliases)
    _RESOLVED.clear()


_RESOLVED: dict[str, str | None] = {}  # memo of resolve_tool_name; cleared by registrations
_RESOLVED_MAX = 4096  # names come from model output: the memo is bounded
_UNSEEN: Any = object()


def resolve_tool_name(name: str) -> str | None:
    """The canonical name for a name or alias, ignoring case, spaces, underscores and hyphens."""
    if type(name) is str:
        canonical: str | None = _RESOLVED.get(name, _UNSEEN)
        if canonical is not _UNSEEN:
            return canonical
    elif not isinstance(name, str):
        return None
    canonical = _NAMES.get(_fold(name))
    if type(name) is str:
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        _RESOLVED[name] = canonical
    return canonical


def suggest_tool_name(name: str) -> str | None:
    """The closest canonical name to an unknown one, for "did you mean" messages."""
    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(_fold(name), list(_NAMES), n=1, cutoff=0.75)
    return _NAMES[close[0]] if close else None


def unknown_tool_message(name: Any) -> str:
    hint = suggest_tool_name(name)
    shown = f'"{name}"' if isinstance(name, str) else repr(name)
    return f"unknown tool {shown}" + (f'; did you mean "{hint}"?' if hint else "")


def validate_args(tool_name: str, args: dict) -> list[str]:
    """Every problem with `args` for the tool, each naming the argument; [] when valid."""
    canonical = resolve_tool_name(tool_name)
    if canonical is None:
        return [unknown_tool_message(tool_name)]
    errors = REGISTRY[canonical].problems(args)[1]
    return [str(error) for error in errors] if errors else []
