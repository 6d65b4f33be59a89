"""The demo-prediction simulator: prediction files of made-up models, for demos and benchmarks.

Nothing here is a real model's output. Given a benchmark's samples (the scorer's mapping shape,
``evaluation.selectors.scoring_samples``) and a ``Profile``, it writes formats.md prediction
lines, deterministically (the same profile and seed give the same file):

- **text** mode: right with probability ``text_accuracy``, lowered by ``distortion_penalty`` on
  samples whose image needs a recovery transform (they are hard without tools).
- **adaptive** mode: the model decides whether to call tools. With probability ``selection`` it
  decides well (tools exactly when its text answer would have been wrong); otherwise it tosses
  a coin. With tools it replays the sample's reference toolchain (thoughts taken from the key
  steps) and is right with probability ``tool_accuracy``; without tools it answers as in text mode.
  On the domain ``tools_hurt_domain`` the tools mislead it: with tools it keeps a right text answer
  with probability ``HURT_KEEP`` only, and never mends a wrong one (the Tools tab's "tools hurt here").
- **oracle** mode (the key region and recovery given): right with probability ``oracle_accuracy``.
- **blind** mode (the question without the image; MMReason's guessability audit): a fixed share
  of the samples (``GUESSABLE_SHARE``, the same ones for every profile, picked by the uid) can be
  guessed from the text, and is right with probability ``GUESSED``; any other sample is right with
  probability ``blind_accuracy``. So several blind profiles agree on the guessable ones.
- A wrong answer is another option letter, the number plus one, or a wrong word.
- Token counts: ``input_tokens`` per turn plus ``tokens_per_call`` per tool call; ``output_tokens``
  per turn. The cost then follows from the submission's prices.

So ``selection`` near 1 gives a high mode-selection MCC, near 0 a poor one.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from evaluation.metrics.types import BOARD_MODES, MODES
GUESSABLE_SHARE = 0.3  # blind mode: this share of samples can be answered without the image
GUESSED = 0.9  # and is, with this probability
HURT_KEEP = 0.3  # on the tools_hurt_domain, a right text answer survives the tools with this probability


@dataclass(frozen=True, slots=True)
class Profile:
    text_accuracy: float = 0.5
    distortion_penalty: float = 0.2
    tool_accuracy: float = 0.7
    oracle_accuracy: float = 0.8
    selection: float = 0.8
    input_tokens: int = 1200
    output_tokens: int = 150
    tokens_per_call: int = 900
    blind_accuracy: float = 0.15
    modes: tuple[str, ...] = BOARD_MODES  # "blind" only when asked for
    seed: int = 0
    tools_hurt_domain: str = ""  # the domain (slug) where tool calls mislead the model


def _rng(profile: Profile, uid: str, what: str) -> random.Random:
    # String seeds are hashed with SHA-512 by random.seed: stable across runs and PYTHONHASHSEED.
    return random.Random(f"{profile.seed}:{uid}:{what}")


def _answer(sample: Mapping[str, Any], right: bool, rng: random.Random) -> str:
    gold = str(sample["answer"])
    if right:
        return gold
    options = sample.get("options") or {}
    others = [k for k in sorted(options) if k != gold]
    if others:
        return rng.choice(others)
    try:
        return str(float(gold) + 1 if "." in gold else int(gold) + 1)
    except ValueError:
        return "unreadable"


def _tool_steps(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    key_steps = list(sample.get("key_steps") or [])
    steps: list[dict[str, Any]] = []
    for i, call in enumerate(sample.get("toolchain") or []):
        thought = key_steps[i] if i < len(key_steps) else f"Use {call['tool']}."
        steps.append({"thought": thought, "tool": {"name": call["tool"], "args": dict(call.get("args") or {}),
                                                   "input": call.get("input"), "output": call.get("output")}})
    for extra in key_steps[len(steps):]:
        steps.append({"thought": extra})
    if not any("tool" in s for s in steps):  # no reference chain: a plausible single call
        steps.insert(0, {"thought": "Zoom into the region that answers the question.",
                         "tool": {"name": "zoom_in", "args": {"bbox": list(sample["regions"][0])}}
                         if sample.get("regions") else {"name": "enhance_contrast", "args": {}}})
    return steps


def _line(sample: Mapping[str, Any], mode: str, right: bool, steps: list, profile: Profile,
          rng: random.Random) -> dict[str, Any]:
    calls = sum(1 for s in steps if "tool" in s)
    turns = max(1, len(steps))
    return {
        "sample_id": sample["uid"],
        "mode": mode,
        "answer": f"<answer>{_answer(sample, right, rng)}</answer>",
        "steps": steps,
        "usage": {"input_tokens": profile.input_tokens * turns + profile.tokens_per_call * calls,
                  "output_tokens": profile.output_tokens * turns},
        "turns": turns,
        "latency_ms": 800 * turns + rng.randint(0, 400),
        "meta": {"simulated": True},
    }


def simulate(samples: Iterable[Mapping[str, Any]], profile: Profile) -> Iterator[dict[str, Any]]:
    """Prediction lines for every sample and every mode of the profile (modes grouped in order)."""
    samples = list(samples)
    for mode in MODES:
        if mode not in profile.modes:
            continue
        for s in samples:
            uid = s["uid"]
            text_p = profile.text_accuracy - (profile.distortion_penalty if s.get("transform") else 0.0)
            text_right = _rng(profile, uid, "text").random() < max(0.0, text_p)
            rng = _rng(profile, uid, mode)
            if mode == "text":
                yield _line(s, mode, text_right, [{"thought": "Read the answer off the image."}], profile, rng)
            elif mode == "blind":
                guessable = random.Random(f"blind:{uid}").random() < GUESSABLE_SHARE  # the same for every profile
                yield _line(s, mode, rng.random() < (GUESSED if guessable else profile.blind_accuracy),
                            [{"thought": "No image: answer from the question alone."}], profile, rng)
            elif mode == "oracle":
                yield _line(s, mode, rng.random() < profile.oracle_accuracy,
                            [{"thought": "The key region is given; read it."}], profile, rng)
            else:
                use_tools = (not text_right) if rng.random() < profile.selection else rng.random() < 0.5
                if use_tools:
                    draw = rng.random()
                    hurt = bool(profile.tools_hurt_domain) and s.get("domain") == profile.tools_hurt_domain
                    right = (text_right and draw < HURT_KEEP) if hurt else draw < profile.tool_accuracy
                    yield _line(s, mode, right, _tool_steps(s), profile, rng)
                else:
                    yield _line(s, mode, text_right, [{"thought": "No tool needed; read it directly."}],
                                profile, rng)
