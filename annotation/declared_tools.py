"""Tools a benchmark declares but the registry does not run (Agent-X's OCR, WebSearch, Calculator...).

A declaration is a name, a description and a JSON Schema for the call's arguments
(`{"name", "description", "args_schema"}`); Agent-X's `toolmeta.json` entries (`inputs` with
`type`, `name`, `description`, `optional`) are read into that shape. Calls to a declared tool
are validated by name and arguments like registry calls, and never run.

`with_declared(view, tools)` wraps a `ToolRegistryView`: within a benchmark, its declared names
come first (so Agent-X's own `DrawBoundingBox`, which takes a file path and a text box, is not
mistaken for the registry's `draw_bbox`), then the registry's names and aliases. Plain Python:
no Django import.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from annotation.imagetools.registry import fold_name
from annotation.imagetools.schema import schema_errors

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9 _.:-]{0,63}$")
ANY_ARGUMENTS: dict = {"type": "object"}
# toolmeta.json's input types -> JSON Schema types (an image is passed as a path or reference).
TOOLMETA_TYPES = {
    "text": "string", "string": "string", "str": "string", "image": "string", "path": "string",
    "number": "number", "float": "number", "int": "integer", "integer": "integer",
    "bool": "boolean", "boolean": "boolean", "list": "array", "array": "array", "dict": "object",
}  # fmt: skip
fold = fold_name  # the registry's rule: case, spaces, underscores and hyphens do not matter


@dataclass(frozen=True)
class DeclaredTool:
    name: str
    description: str = ""
    args_schema: Mapping[str, Any] = field(default_factory=lambda: dict(ANY_ARGUMENTS))

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "args_schema": dict(self.args_schema)}


def toolmeta_schema(inputs: Any, err: Callable[[str, str], None], where: str) -> dict | None:
    """The argument schema of an Agent-X toolmeta entry's `inputs`."""
    if not isinstance(inputs, list):
        err(f"{where}.inputs", "expected a list of {type, name, description, optional}")
        return None
    properties: dict[str, dict] = {}
    required: list[str] = []
    for index, item in enumerate(inputs, start=1):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name.strip():
            err(f"{where}.inputs[{index}]", "expected an object with a 'name'")
            return None
        prop: dict[str, Any] = {}
        kind = TOOLMETA_TYPES.get(str(item.get("type", "")).strip().lower())
        if kind:
            prop["type"] = kind
        if isinstance(item.get("description"), str):
            prop["description"] = item["description"]
        properties[name] = prop
        if not item.get("optional", False):
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def read_declared_tool(value: Any, err: Callable[[str, str], None], where: str) -> DeclaredTool | None:
    """One declaration: `{"name", "description", "args_schema"}`, or a toolmeta.json entry
    (`inputs` instead of `args_schema`). Problems are reported under `where` (e.g. `tools[3]`)."""
    if not isinstance(value, dict):
        err(where, "expected a tool name or an object {name, description, args_schema}")
        return None
    name = value.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name.strip()):
        err(f"{where}.name", "expected a name of 1-64 letters, digits, spaces, '_', '.', ':' or '-', "
                             "starting with a letter")
        return None
    description = value.get("description", "")
    if not isinstance(description, str):
        err(f"{where}.description", "expected a string")
        return None
    if "args_schema" in value:
        schema = value["args_schema"]
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            err(f"{where}.args_schema", "expected a JSON Schema of an object (\"type\": \"object\")")
            return None
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            err(f"{where}.args_schema", f"not a valid JSON Schema: {exc.message}")
            return None
    elif "inputs" in value:
        schema = toolmeta_schema(value["inputs"], err, where)
        if schema is None:
            return None
    else:
        schema = dict(ANY_ARGUMENTS)
    return DeclaredTool(name=name.strip(), description=description.strip(), args_schema=schema)


def declared_from_dicts(items: Iterable[Mapping[str, Any]]) -> tuple[DeclaredTool, ...]:
    """Stored declarations (Benchmark.declared_tools, already checked at import) as objects."""
    return tuple(DeclaredTool(name=d["name"], description=d.get("description", ""),
                              args_schema=d.get("args_schema") or dict(ANY_ARGUMENTS)) for d in items)


class DeclaredSet:
    """A benchmark's declared tools, looked up by folded name."""

    def __init__(self, tools: Iterable[DeclaredTool]) -> None:
        self.by_fold: dict[str, DeclaredTool] = {}
        for tool in tools:
            self.by_fold.setdefault(fold(tool.name), tool)
        self._validators: dict[str, Draft202012Validator] = {}

    def __bool__(self) -> bool:
        return bool(self.by_fold)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.by_fold.values())

    def get(self, name: Any) -> DeclaredTool | None:
        return self.by_fold.get(fold(name)) if isinstance(name, str) else None

    def problems(self, tool: DeclaredTool, args: Any) -> list[str]:
        validator = self._validators.get(tool.name)
        if validator is None:
            validator = self._validators[tool.name] = Draft202012Validator(dict(tool.args_schema))
        return [str(e) for e in schema_errors(dict(tool.args_schema), args, validator)]

    def suggest(self, name: Any) -> str | None:
        if not isinstance(name, str):
            return None
        close = difflib.get_close_matches(fold(name), list(self.by_fold), n=1, cutoff=0.75)
        return self.by_fold[close[0]].name if close else None


def declared_tool_names(benchmark: Any) -> list[str]:
    """The names a benchmark (anything with `declared_tools`) declares, for `run_chain(declared=...)`."""
    return [d["name"] for d in getattr(benchmark, "declared_tools", None) or ()]
