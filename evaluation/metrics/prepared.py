"""A benchmark's samples digested once for the scorer (``PreparedBenchmark``).

Split from ``scoring``: what the scorer needs from each sample (gold key, resolved reference
tool names, accuracy group, the toolchain figures of a prediction without calls) is computed
once per benchmark and reused for every submission of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .answers import GoldKey, compile_gold
from .profiles import GENERIC, PROFILES
from .toolchain import normalized_edit_distance, toolset_prf
from .types import Sample


class ScoringError(ValueError):
    """The prediction stream contradicts the benchmark (unknown sample, duplicate line)."""


def default_tool_name(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace("-", "_")


class SampleInfo:
    """What the scorer needs from one sample, computed once per benchmark."""

    __slots__ = ("sample", "index", "gold", "gold_id", "aux", "ref_names", "l_gt", "zoomable",
                 "has_keys", "group", "empty_prf", "empty_edit")

    def __init__(self, sample: Sample, resolve: Callable[[str], str], scoring: str = GENERIC) -> None:
        self.sample = sample
        self.index = -1  # position in the benchmark
        self.gold: GoldKey = compile_gold(sample, scoring)
        self.gold_id = -1  # equal gold keys share an id: the rules' verdicts are memoised by it
        self.aux = sample.aux_line
        self.ref_names: tuple[str, ...] = tuple(resolve(c.tool) for c in sample.toolchain)
        self.l_gt = len(sample.toolchain)
        self.zoomable = bool(sample.regions)
        self.has_keys = bool(sample.key_steps)
        self.group = -1  # index of (domain, category, w/o enh.) among non-aux samples
        # The toolchain figures of a prediction without tool calls, the same for every one.
        self.empty_prf = toolset_prf((), self.ref_names) if self.l_gt else None
        self.empty_edit = normalized_edit_distance((), self.ref_names) if self.l_gt else None


class PreparedBenchmark:
    """Samples digested once; reuse it to score many submissions of the same benchmark.

    ``scoring`` is the benchmark's scoring profile (profiles.py, metrics.md section 13): which
    rule decides an answer's correctness. Nothing else depends on it."""

    def __init__(self, samples: Iterable[Sample | Mapping[str, Any]],
                 resolve_tool: Callable[[str], str | None] | None = None, *, scoring: str = GENERIC) -> None:
        if scoring not in PROFILES:
            raise ValueError(f"unknown scoring profile {scoring!r} (known: {', '.join(PROFILES)})")
        self.scoring = scoring
        resolved: dict[str, str] = {}
        raw = resolve_tool

        def resolve(name: str) -> str:
            got = resolved.get(name)
            if got is None:
                got = (raw(name) if raw is not None else None) or default_tool_name(name)
                resolved[name] = got
            return got

        self.resolve = resolve
        self.resolved = resolved  # the resolver's memo, read directly on the hot path
        self.infos: dict[str, SampleInfo] = {}
        # Non-aux samples fall in groups of equal (domain, category, w/o enh.): per-mode
        # accuracy is tallied per group, then summed into the tables.
        self.groups: list[tuple[str, str, bool]] = []
        self.group_sizes: list[int] = []
        self.n_aux = 0
        group_of: dict[tuple[str, str, bool], int] = {}
        gold_ids: dict[GoldKey, int] = {}
        for s in samples:
            sample = s if isinstance(s, Sample) else Sample.from_mapping(s)
            if sample.uid in self.infos:
                raise ScoringError(f"duplicate sample uid {sample.uid!r} in the benchmark")
            info = self.infos[sample.uid] = SampleInfo(sample, resolve, scoring)
            info.index = len(self.infos) - 1
            info.gold_id = gold_ids.setdefault(info.gold, len(gold_ids))
            if info.aux:
                self.n_aux += 1
                continue
            key = (sample.domain, sample.category, not sample.transform)
            g = group_of.get(key)
            if g is None:
                g = group_of[key] = len(self.groups)
                self.groups.append(key)
                self.group_sizes.append(0)
            self.group_sizes[g] += 1
            info.group = g
        self.order = list(self.infos.values())
        self.n_main = len(self.order) - self.n_aux

    def order_samples(self) -> list[Sample]:
        """The samples in benchmark order."""
        return [info.sample for info in self.order]
