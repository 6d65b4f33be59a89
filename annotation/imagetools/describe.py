"""The registry as Markdown, for docs/tools.md (`python -m annotation.imagetools.describe`).

A test checks that docs/tools.md holds exactly this text, so the documented arguments cannot
drift from the schemas.
"""

from __future__ import annotations

import json
from typing import Any

from annotation.imagetools.registry import MODULES, REGISTRY, Tool

MODULE_TITLES = {
    "geometry": "Geometry (VTC-Bench)", "enhancement": "Enhancement (VTC-Bench)",
    "feature_extraction": "Feature extraction (VTC-Bench)", "drawing": "Drawing (VTC-Bench)",
    "adapt": "AdaptMMBench and Agent-X",
}


def registry_markdown() -> str:
    parts = []
    for module in MODULES:
        parts.append(f"### {MODULE_TITLES[module]}\n")
        for tool in REGISTRY.values():
            if tool.module == module:
                parts.append(tool_markdown(tool))
    return "\n".join(parts)


def tool_markdown(tool: Tool) -> str:
    flag = " — measures" if tool.measures else ""
    lines = [f"#### `{tool.name}`{flag}\n", tool.description, ""]
    if tool.aliases:
        lines += ["Also called: " + ", ".join(f"`{a}`" for a in tool.aliases) + ".", ""]
    properties = tool.schema.get("properties", {})
    if properties:
        required = set(tool.schema.get("required", []))
        lines += ["| argument | type | default | allowed | meaning |", "|---|---|---|---|---|"]
        for name, prop in properties.items():
            default = "required" if name in required else (
                f"`{json.dumps(prop['default'])}`" if "default" in prop else "optional")
            lines.append(f"| `{name}` | {_type(prop)} | {default} | {_allowed(prop)} | "
                         f"{prop.get('description', '')} |")
        lines.append("")
    else:
        lines += ["No arguments.", ""]
    lines += [f"Example: `{json.dumps({'tool': tool.name, 'args': tool.example})}`", ""]
    return "\n".join(lines)


def _type(prop: dict) -> str:
    if prop.get("format") == "color":
        return "colour"
    if prop.get("format") == "bbox":
        return "box [x1, y1, x2, y2]"
    kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    words = []
    for kind in kinds:
        if kind == "array":
            item = prop.get("items", {}).get("type", "value")
            words.append(f"list of {prop.get('minItems')} {item}s")
        else:
            words.append(kind)
    return " or ".join(words)


def _allowed(prop: dict) -> str:
    if prop.get("format") == "color":
        return '[r, g, b] (0-255), a name ("red") or "#rrggbb"'
    if "enum" in prop:
        return ", ".join(f"`{v}`" for v in prop["enum"])
    bounds = prop.get("items", prop) if prop["type"] == "array" or "items" in prop else prop
    low = _bound(bounds, "minimum", "exclusiveMinimum")
    high = _bound(bounds, "maximum", "exclusiveMaximum")
    if "maxLength" in prop and prop["type"] == "string":
        return f"up to {prop['maxLength']} characters"
    if low is None and high is None:
        return ""
    each = "each " if bounds is not prop else ""
    return f"{each}{low if low is not None else '…'} to {high if high is not None else '…'}"


def _bound(spec: dict, inclusive: str, exclusive: str) -> Any:
    if inclusive in spec:
        return spec[inclusive]
    if exclusive in spec:
        return f"above {spec[exclusive]}" if exclusive == "exclusiveMinimum" else \
            f"below {spec[exclusive]}"
    return None


if __name__ == "__main__":
    print(registry_markdown())
