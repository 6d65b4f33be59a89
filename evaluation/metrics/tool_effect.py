"""What the tools changed (metrics.md section 15): text -> adaptive, split into what the calls did.

Plain Python. Per non-aux sample the scorer keeps one state byte per mode (``aggregate.slot_state``:
read, right, called, made a valid call); this module pairs a sample's text and adaptive bytes:

- solved by tools: right in adaptive, wrong in text, and the adaptive line made a valid call;
  broken by tools: the reverse; tools called, nothing changed: a valid call and the same outcome;
- tool contribution = (solved - broken) / n, drift without tools = (#(A, not T, no valid call) -
  #(T, not A, no valid call)) / n; their numerators add up to #A - #T, so the two figures add up to
  the accuracy difference (the integers are stored beside the values: exact, not up to rounding);
- tool-only solves: solved by tools and wrong in blind mode (when the file has blind lines);
- oracle headroom: right in oracle mode and wrong in adaptive mode, over n;
- tool outputs shown: successful calls whose output image the model was later sent (``run.images_sent``).

A missing line or a failure class is wrong, as everywhere (section 1). Intervals: the paired bootstrap
over samples of section 8 (each sample's -1/0/+1 value is resampled with its pair: ``bootstrap_mean``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .stats import RESAMPLES, SEED, PairedTest, bootstrap_mean, bootstrap_rate, mcnemar_from_counts
from .types import N_MODES, NO_IMAGES_SENT, Interval, Mean, Rate, ToolEffect, ToolEffectGroup

if TYPE_CHECKING:
    from .prepared import SampleInfo

# The state bits (aggregate.slot_state) this module reads.
RIGHT = 2
UNDECIDED = 8  # the answer needs an LLM judge (metrics.md section 13): the pair is left out until it is judged
VALID_CALL = 16
TEXT, ADAPTIVE, ORACLE, BLIND = 0, 1, 2, 3  # MODES order

NO_TEXT = "no text-mode predictions in this file"
NO_ADAPTIVE = "no adaptive-mode predictions in this file"
NO_CALLS = "no tool calls in this file"
NO_VALID_CALLS = "no valid tool call in this file (every call failed its tool's schema or did not run)"
NO_ORACLE = "no oracle-mode predictions in this file"
NO_SUCCESSFUL = "no call in this file made an image"


# A group as stored (Submission.results): its integers alone. Every value, interval and test is a function of
# them (``group_from_counts``), so the results stay small (a group with its intervals was 900 bytes, and a
# benchmark has a group per domain and per category) and the board's refresh orders and marks its rows without
# drawing a bootstrap.
COUNTS = ("n", "text_correct", "adaptive_correct", "solved", "broken", "unchanged", "kept_right", "drift_up",
          "drift_down", "tool_only", "headroom")


class _Counts:
    __slots__ = ("n", "t", "a", "solved", "broken", "unchanged", "kept", "up", "down", "tool_only", "headroom")

    def __init__(self) -> None:
        self.n = self.t = self.a = self.solved = self.broken = self.unchanged = self.kept = 0
        self.up = self.down = self.tool_only = self.headroom = 0

    def stored(self) -> dict[str, int]:
        return dict(zip(COUNTS, (self.n, self.t, self.a, self.solved, self.broken, self.unchanged, self.kept,
                                 self.up, self.down, self.tool_only, self.headroom)))


def _paired_mean(up: int, down: int, n: int, seed: int, resamples: int, intervals: bool) -> Mean:
    """The mean of n per-sample values, ``up`` of them +1, ``down`` -1, the rest 0, with its bootstrap interval
    (the counts of the three values are drawn, so a sample's pair of modes is resampled together)."""
    if not n:
        return Mean(None, 0)
    iv: Interval | None = None
    if intervals:
        iv = bootstrap_mean([1] * up + [-1] * down + [0] * (n - up - down), seed=seed, resamples=resamples)
    return Mean((up - down) / n, n, iv)


def group_from_counts(counts: Mapping[str, int], *, has_oracle: bool, intervals: bool = True, seed: int = SEED,
                      resamples: int = RESAMPLES) -> ToolEffectGroup:
    """A group's figures from its stored integers (``COUNTS``); ``intervals=False``: the values alone (the
    board's refresh needs only those to order and mark its rows)."""
    n, t, a = counts["n"], counts["text_correct"], counts["adaptive_correct"]
    solved, broken, up, down = counts["solved"], counts["broken"], counts["drift_up"], counts["drift_down"]
    test = mcnemar_from_counts(solved, broken, n)
    headroom = counts["headroom"]
    iv = bootstrap_rate(headroom, n, seed=seed, resamples=resamples) if intervals else None
    return ToolEffectGroup(
        n=n, text_correct=t, adaptive_correct=a, solved=solved, broken=broken,
        unchanged=counts["unchanged"], kept_right=counts["kept_right"], drift_up=up, drift_down=down,
        contribution=_paired_mean(solved, broken, n, seed, resamples, intervals),
        drift=_paired_mean(up, down, n, seed, resamples, intervals),
        difference=_paired_mean(solved + up, broken + down, n, seed, resamples, intervals),
        tool_only=Rate(counts["tool_only"], solved),
        oracle_headroom=Rate(headroom, n, iv) if has_oracle else Rate(0, 0, reason=NO_ORACLE),
        p_value=test.p_value, significant=test.significant)


def stored(effect: ToolEffect | None) -> dict[str, Any] | None:
    """The figures as Submission.results keeps them: each group's integers (``COUNTS``), the reasons, and the
    tool outputs shown as count and n; ``from_stored`` gives the figures back, bit for bit."""
    if effect is None:
        return None

    def counts(g: ToolEffectGroup) -> dict[str, int]:
        return {k: (g.tool_only.count if k == "tool_only" else g.oracle_headroom.count if k == "headroom"
                    else getattr(g, k)) for k in COUNTS}

    shown: dict[str, Any] = {"count": effect.shown.count, "n": effect.shown.n}
    if effect.shown.reason:
        shown["reason"] = effect.shown.reason
    return {"reason": effect.reason, "has_oracle": effect.has_oracle, "has_blind": effect.has_blind,
            "shown": shown, "overall": counts(effect.overall) if effect.overall else None,
            "by_domain": {k: counts(g) for k, g in effect.by_domain.items()},
            "by_category": {k: counts(g) for k, g in effect.by_category.items()}}


def shown_rate(node: Mapping[str, Any] | None, *, intervals: bool = True, seed: int = SEED,
               resamples: int = RESAMPLES) -> Rate:
    """Tool outputs shown from its stored form (``stored``)."""
    if not node or node.get("reason"):
        return Rate(0, 0, reason=(node or {}).get("reason") or NO_IMAGES_SENT)
    count, n = node["count"], node["n"]
    return Rate(count, n, bootstrap_rate(count, n, seed=seed, resamples=resamples) if intervals else None)


def tool_effect(state: bytearray | bytes, order: Sequence[SampleInfo], *, shown_counts: tuple[int, int] | None,
                any_calls: bool, seed: int = SEED, resamples: int = RESAMPLES) -> ToolEffect:
    """Section 15 from the scorer's state bytes (``state[N_MODES * i + m]``, 0 where sample i has no line
    in mode m). ``shown_counts``: (outputs shown, successful calls) over the lines that record the images sent,
    None when no line does. ``any_calls``: some line of the file has a tool call (valid or not)."""
    has = [False] * N_MODES
    for i in range(len(order)):
        for m in range(N_MODES):
            if state[N_MODES * i + m]:
                has[m] = True
    reason = (NO_TEXT if not has[TEXT] else NO_ADAPTIVE if not has[ADAPTIVE] else None)
    if reason is None and not any(state[N_MODES * i + ADAPTIVE] & VALID_CALL for i in range(len(order))):
        reason = NO_VALID_CALLS if any_calls else NO_CALLS
    shown = _shown(shown_counts, seed, resamples)
    if reason is not None:
        return ToolEffect(overall=None, shown=shown, has_blind=has[BLIND], has_oracle=has[ORACLE], reason=reason)
    overall = _Counts()
    domains: dict[str, _Counts] = {}
    categories: dict[str, _Counts] = {}
    for i, info in enumerate(order):
        if info.aux:
            continue
        base = N_MODES * i
        text, adaptive = state[base + TEXT], state[base + ADAPTIVE]
        if (text | adaptive) & UNDECIDED:
            continue
        t, a, called = bool(text & RIGHT), bool(adaptive & RIGHT), bool(adaptive & VALID_CALL)
        solved = a and not t and called
        broken = t and not a and called
        blind_right = bool(state[base + BLIND] & RIGHT)
        sample = info.sample
        for c in (overall, domains.setdefault(sample.domain, _Counts()),
                  categories.setdefault(sample.category, _Counts())):
            c.n += 1
            c.t += t
            c.a += a
            c.solved += solved
            c.broken += broken
            c.unchanged += called and a == t
            c.kept += called and a and t
            c.up += a and not t and not called
            c.down += t and not a and not called
            c.tool_only += solved and not blind_right
            c.headroom += bool(state[base + ORACLE] & RIGHT) and not a

    def group(c: _Counts) -> ToolEffectGroup:
        return group_from_counts(c.stored(), has_oracle=has[ORACLE], seed=seed, resamples=resamples)

    return ToolEffect(overall=group(overall), by_domain={k: group(c) for k, c in sorted(domains.items())},
                      by_category={k: group(c) for k, c in sorted(categories.items())}, shown=shown,
                      has_blind=has[BLIND], has_oracle=has[ORACLE])


def _shown(shown: tuple[int, int] | None, seed: int, resamples: int) -> Rate:
    if shown is None:
        return Rate(0, 0, reason=NO_IMAGES_SENT)
    count, n = shown
    if not n:
        return Rate(0, 0, reason=NO_SUCCESSFUL)
    return Rate(count, n, bootstrap_rate(count, n, seed=seed, resamples=resamples))


def outputs_shown(steps: Any, run: Any) -> tuple[int, int, tuple[str, ...]] | None:
    """(outputs shown, successful calls, the refs of those never shown) of one line, from its ``run`` record:
    ``images_sent`` (per turn, the SHA-256 of every image sent; the first turn is the media) and
    ``tool_outputs`` (each image a call made, ref -> SHA-256). None when the line does not record both.

    A successful call is one without an error that names its output; its output was shown when that
    image's SHA-256 is among the images sent after the first turn."""
    if not isinstance(run, dict):
        return None
    sent, made = run.get("images_sent"), run.get("tool_outputs")
    if not isinstance(sent, list) or not isinstance(made, dict):
        return None
    later = {h for turn in sent[1:] if isinstance(turn, list) for h in turn if isinstance(h, str)}
    shown = total = 0
    hidden: list[str] = []
    for step in steps if isinstance(steps, list) else ():
        tool = step.get("tool") if isinstance(step, dict) else None
        if not isinstance(tool, dict) or tool.get("error") or not isinstance(tool.get("output"), str):
            continue
        total += 1
        if made.get(tool["output"]) in later:
            shown += 1
        else:
            hidden.append(tool["output"])
    return shown, total, tuple(hidden)


def contribution_values(text: Sequence[bool], adaptive: Sequence[bool], called: Sequence[bool]) -> list[int]:
    """Each sample's share of the tool contribution: +1 solved by tools, -1 broken by tools, else 0."""
    return [(1 if a else -1) if c and a != t else 0 for t, a, c in zip(text, adaptive, called)]


def paired_difference(a: Sequence[int], b: Sequence[int], *, seed: int = SEED, resamples: int = RESAMPLES,
                      alpha: float = 0.05) -> PairedTest:
    """Two submissions' tool contributions on the same samples (``contribution_values`` of each, in one sample
    order): the mean difference A - B with the paired bootstrap's interval and two-sided p (twice the smaller
    share of resamples on either side of zero, as ``stats.paired_bootstrap_mcc``)."""
    if len(a) != len(b):
        raise ValueError("paired test needs the same samples on both sides")
    n = len(a)
    if not n:
        return PairedTest(statistic=0.0, p_value=1.0, significant=False, n=0)
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    distinct, counts = np.unique(diff, return_counts=True)
    rng = np.random.default_rng(seed)
    means = rng.multinomial(n, counts / n, size=resamples) @ distinct / n
    p = min(1.0, 2.0 * min(float(np.mean(means <= 0)), float(np.mean(means >= 0))))
    tail = alpha / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return PairedTest(statistic=float(diff.mean()), p_value=p, significant=p < alpha, n=n,
                      interval=Interval(float(low), float(high), 1 - alpha, resamples, seed))
