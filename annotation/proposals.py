"""Proposals from a model (issue 39, docs/annotation.md "Proposals"): the versioned prompt that asks a VLM
endpoint for an item's key regions, recovery transform, key steps and reference chain, and the reading of
its reply: each part parsed and validated by the same rules as a benchmark file's (benchmark_fields), an
invalid part kept with its error. Plain Python: no Django import (the run itself is
evaluation/proposal_runs.py; the rows are annotation.models.ProposalRun and Proposal).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from annotation.benchmark_fields import (TRANSFORM_OPS, ToolRegistryView, default_registry_view, frame_size,
                                         is_number, parse_key_steps, parse_located_regions, parse_toolchain,
                                         parse_transform)

PROMPT_VERSION = "proposals_v1"
PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
PARTS = ("regions", "transform", "key_steps", "toolchain")
MAX_REGIONS = 12
MAX_STEPS = 12
MAX_CALLS = 16
_OBJECT = re.compile(r"\{.*\}", re.S)


@dataclass(frozen=True)
class ProposalPrompt:
    version: str
    system: str
    user: str


@cache
def load_proposal_prompt(version: str = PROMPT_VERSION) -> ProposalPrompt:
    """The prompt file ``prompts/<version>.txt``: comment lines, then ``[system]`` and ``[user]``."""
    sections: dict[str, list[str]] = {"system": [], "user": []}
    current: list[str] | None = None
    for line in (PROMPTS_DIR / f"{version}.txt").read_text(encoding="utf-8").splitlines():
        if current is None and line.startswith("#"):
            continue
        if line.strip() in ("[system]", "[user]"):
            current = sections[line.strip()[1:-1]]
            continue
        if current is not None:
            current.append(line)
    return ProposalPrompt(version=version, system="\n".join(sections["system"]).strip(),
                          user="\n".join(sections["user"]).strip())


def _signature(name: str) -> str:
    from annotation.imagetools import REGISTRY

    properties = REGISTRY[name].schema.get("properties", {})
    args = ", ".join(f"{arg}: {prop.get('type', 'value')}" for arg, prop in properties.items())
    return f"{name}({args})"


def prompt_texts(*, question_block: str, width: int, height: int, tools: Sequence[str],
                 version: str = PROMPT_VERSION) -> tuple[str, str]:
    """(system, user) of one item's request. ``width`` x ``height``: the image as sent; ``tools``: the
    registry names the chain may use (the benchmark's, or the whole registry)."""
    prompt = load_proposal_prompt(version)
    system = (prompt.system.replace("{transforms}", "; ".join(_signature(n) for n in sorted(TRANSFORM_OPS)))
              .replace("{tools}", ", ".join(tools)))
    user = (prompt.user.replace("{question_block}", question_block).replace("{width}", str(width))
            .replace("{height}", str(height)))
    return system, user


@dataclass
class ParsedProposal:
    """A reply read: the parts that passed validation (a part that did not is None, with its error in
    ``errors``), the confidence (None when not given or not a number in [0, 1])."""

    regions: list[dict[str, Any]] | None = None
    transform: list[dict[str, Any]] | None = None
    key_steps: list[str] | None = None
    toolchain: list[dict[str, Any]] | None = None
    confidence: float | None = None
    errors: dict[str, str] = field(default_factory=dict)

    def parts(self) -> dict[str, Any]:
        return {"regions": self.regions, "transform": self.transform, "key_steps": self.key_steps,
                "toolchain": self.toolchain}


def reply_object(text: str) -> dict[str, Any] | None:
    """The JSON object of a reply, fenced or not; None when there is none."""
    found = _OBJECT.search(text or "")
    if not found:
        return None
    try:
        value = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_proposal(text: str, *, width: int, height: int, scale: float = 1.0,
                   registry: ToolRegistryView | None = None, inputs: Sequence[str] = ("img0",)) -> ParsedProposal:
    """The proposal in ``text``, each part checked as a benchmark file's field is. ``width`` x ``height``: img0's
    size in its own pixels; ``scale``: original pixels per pixel sent (the boxes come back in the original's frame,
    after the proposed transform)."""
    registry = registry or default_registry_view()
    out = ParsedProposal()
    data = reply_object(text)
    if data is None:
        out.errors["reply"] = "the reply holds no JSON object"
        return out

    def collect(part: str) -> Any:
        def err(where: str, message: str) -> None:
            out.errors.setdefault(part, f"{where}: {message}")
        return err

    transform = parse_transform(data.get("transform") or [], registry, collect("transform"))
    out.transform = transform
    raw_regions = data.get("regions") or []
    if isinstance(raw_regions, list) and len(raw_regions) > MAX_REGIONS:
        out.errors["regions"] = f"regions: {len(raw_regions)} boxes, more than {MAX_REGIONS}"
    elif isinstance(raw_regions, list):
        boxes, labels, bad = [], [], False
        for index, item in enumerate(raw_regions, start=1):
            box = item.get("box") if isinstance(item, dict) else item
            if isinstance(box, list) and len(box) == 4 and all(is_number(v) for v in box):
                box = [round(float(v) * scale, 1) for v in box]
            elif not bad:
                out.errors["regions"] = f"regions[{index}]: expected {{\"box\": [x1, y1, x2, y2], \"label\": ...}}"
                bad = True
            boxes.append(box)
            labels.append(str(item.get("label") or "")[:100] if isinstance(item, dict) else "")
        if not bad:
            frame = frame_size(width, height, transform or [])
            located = parse_located_regions(boxes, {"img0": frame}, collect("regions"))
            if located is not None:
                out.regions = [{"box": box, "label": label} for (_, box), label in zip(located, labels, strict=True)]
    else:
        out.errors["regions"] = "regions: expected a list of boxes"
    steps = parse_key_steps(data.get("key_steps") or [], collect("key_steps"))
    if steps is not None and len(steps) > MAX_STEPS:
        out.errors["key_steps"] = f"key_steps: {len(steps)} steps, more than {MAX_STEPS}"
    elif steps is not None:
        out.key_steps = [s.text for s in steps]
    raw_chain = data.get("toolchain") or []
    if isinstance(raw_chain, list) and len(raw_chain) > MAX_CALLS:
        out.errors["toolchain"] = f"toolchain: {len(raw_chain)} calls, more than {MAX_CALLS}"
    else:
        out.toolchain = parse_toolchain(raw_chain, registry, collect("toolchain"), inputs=inputs)
    confidence = data.get("confidence")
    if is_number(confidence) and 0 <= float(confidence) <= 1:
        out.confidence = float(confidence)
    return out


__all__ = ["PARTS", "PROMPT_VERSION", "ParsedProposal", "load_proposal_prompt", "parse_proposal", "prompt_texts",
           "reply_object"]
