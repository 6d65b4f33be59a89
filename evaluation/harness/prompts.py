"""The prompts a run sends: one file per family and mode, versioned in its name (like the judge's).

A file is ``prompts/<family>.<mode>.<version>.txt``: comment lines (``#``, where the wording comes
from), then a ``[system]`` section (optional) and a ``[user]`` section. ``{question_block}``,
``{image_list}``, ``{image_sizes}`` and ``{tool_protocol}`` are filled in; nothing else is touched,
so braces in the text are safe. Bump the version (and add the new file) whenever a wording changes:
the version is recorded on every line, and cached requests are keyed by the messages themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from evaluation.harness.items import RunItem

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
FAMILIES = ("generic", "vtcbench", "vlmevalkit")
PROMPT_VERSIONS: dict[str, str] = dict.fromkeys(FAMILIES, "v1")


@dataclass(frozen=True)
class Prompt:
    name: str  # "vtcbench.adaptive.v1": what the line records
    system: str
    user: str


@cache
def load_prompt(family: str, mode: str) -> Prompt:
    if family not in PROMPT_VERSIONS:
        raise ValueError(f'no prompts for the family "{family}" (known: {", ".join(FAMILIES)})')
    name = f"{family}.{mode}.{PROMPT_VERSIONS[family]}"
    text = (PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {"system": [], "user": []}
    current: list[str] | None = None
    for line in text.splitlines():
        if current is None and line.startswith("#"):
            continue
        if line.strip() in ("[system]", "[user]"):
            current = sections[line.strip()[1:-1]]
            continue
        if current is not None:
            current.append(line)
    return Prompt(name=name, system="\n".join(sections["system"]).strip(), user="\n".join(sections["user"]).strip())


def question_block(item: RunItem) -> str:
    """The question as VLMEvalKit lays it out (ImageMCQDataset.build_prompt): an optional hint, the
    question, the options lettered, and the closing sentence of a multiple-choice question."""
    text = f"Hint: {item.hint}\n" if item.hint else ""
    text += f"Question: {item.question}\n"
    if item.options:
        text += "Options:\n" + "".join(f"{letter}. {option}\n" for letter, option in item.options.items())
        text += "Please select the correct answer from the options above. \n"
    return text.rstrip("\n")


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template.strip()
