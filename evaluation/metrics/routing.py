"""Routers over a pool of models (metrics.md section 10): splits, picks, figures, baselines.

Plain data in, typed results out. A pool is the quality matrix Q (1 when model m answered
sample s correctly) and the cost matrix C ($ of model m on sample s) over ordered samples and
sorted model names. A router's picks are one probability vector per test sample (a single pick
is probability 1), so one scorer serves both forms: accuracy and cost are expected values.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .cost import cost_bounds, rank_score
from .stats import RESAMPLES, SEED, PairedTest, bootstrap_mean, mcnemar_exact
from .types import Interval

SPLIT_SEED = 42
SPLIT_SHARES = (("train", 0.7), ("dev", 0.1), ("test", 0.2))
SPLITS = tuple(name for name, _ in SPLIT_SHARES)


def split_samples(uids: Sequence[str], seed: int = SPLIT_SEED) -> dict[str, str]:
    """70/10/20 train/dev/test: the uids sorted, shuffled by ``random.Random(seed)``, cut in order.

    The split depends only on the set of uids and the seed, never on the order they come in.
    """
    order = sorted(uids)
    random.Random(seed).shuffle(order)
    n = len(order)
    n_train = round(n * SPLIT_SHARES[0][1])
    n_dev = round(n * SPLIT_SHARES[1][1])
    out = dict.fromkeys(order[:n_train], "train")
    out.update(dict.fromkeys(order[n_train:n_train + n_dev], "dev"))
    out.update(dict.fromkeys(order[n_train + n_dev:], "test"))
    return out


@dataclass(frozen=True)
class Pool:
    """Q and C over ``samples`` (rows) x ``models`` (columns, sorted names)."""

    models: tuple[str, ...]
    samples: tuple[str, ...]
    correct: np.ndarray  # float 0/1, shape (samples, models)
    cost: np.ndarray  # $ per sample, shape (samples, models)

    @classmethod
    def build(cls, models: Sequence[str], samples: Sequence[str],
              correct: Mapping[str, Mapping[str, bool]], cost: Mapping[str, Mapping[str, float]]) -> Pool:
        """From ``correct[model][sample]`` and ``cost[model][sample]``; a missing entry is wrong at $0
        (the model gave no answer and was charged nothing)."""
        names = tuple(sorted(models))
        rows = tuple(samples)
        q = np.array([[1.0 if correct.get(m, {}).get(s) else 0.0 for m in names] for s in rows]).reshape(len(rows), len(names))
        c = np.array([[float(cost.get(m, {}).get(s) or 0.0) for m in names] for s in rows]).reshape(len(rows), len(names))
        return cls(names, rows, q, c)

    def index(self, uids: Sequence[str]) -> list[int]:
        where = {s: i for i, s in enumerate(self.samples)}
        return [where[u] for u in uids]


@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass(frozen=True)
class RouterFigures:
    """A router's figures on the test split (metrics.md section 10)."""

    n: int
    accuracy: Estimate  # share in [0, 1]
    cost_per_sample_usd: Estimate
    rank_score: float | None  # in [0, 1]; None without cost bounds
    oracle_gap: dict[str, float]  # {"accuracy": oracle - router, "cost_usd": router - oracle}
    share: dict[str, float]  # fraction of picks (expected, for probabilities) per model
    accuracy_by_domain: dict[str, float] = field(default_factory=dict)
    share_by_domain: dict[str, dict[str, float]] = field(default_factory=dict)
    # Expected correctness per test sample, in the split's order (for paired tests between routers).
    per_sample: list[float] = field(default_factory=list)

    @property
    def cost_per_10k_usd(self) -> float:
        return self.cost_per_sample_usd.value * 10_000

    def as_dict(self) -> dict[str, object]:
        return {"n": self.n, "accuracy": self.accuracy.as_dict(),
                "cost_per_sample_usd": self.cost_per_sample_usd.as_dict(),
                "cost_per_10k_usd": self.cost_per_10k_usd, "rank_score": self.rank_score,
                "oracle_gap": dict(self.oracle_gap), "share": dict(self.share),
                "accuracy_by_domain": dict(self.accuracy_by_domain),
                "share_by_domain": {d: dict(v) for d, v in self.share_by_domain.items()},
                "per_sample": list(self.per_sample)}


def _estimate(values: np.ndarray) -> Estimate:
    iv = bootstrap_mean(values.tolist())
    return Estimate(float(values.mean()) if values.size else 0.0,
                    iv.low if iv else None, iv.high if iv else None)


def probs_matrix(pool: Pool, picks: Sequence[Mapping[str, float]]) -> np.ndarray:
    """Rows of probabilities over ``pool.models``, each normalised to sum to 1."""
    col = {m: j for j, m in enumerate(pool.models)}
    p = np.zeros((len(picks), len(pool.models)))
    for i, pick in enumerate(picks):
        for m, w in pick.items():
            p[i, col[m]] += float(w)
    total = p.sum(axis=1, keepdims=True)
    probs: np.ndarray = np.divide(p, total, out=np.zeros_like(p), where=total > 0)
    return probs


def oracle_probs(pool: Pool, rows: Sequence[int]) -> np.ndarray:
    """Per sample, the cheapest correct model (the cheapest overall when none is); ties to the first name."""
    q, c = pool.correct[rows], pool.cost[rows]
    p = np.zeros_like(q)
    if q.size:
        # The most correct models of each row, and among them the cheapest; argmin keeps the first of equals.
        best = np.where(q == q.max(axis=1, keepdims=True), c, np.inf).argmin(axis=1)
        p[np.arange(len(rows)), best] = 1.0
    return p


def pool_bounds(pool: Pool, rows: Sequence[int]) -> tuple[float, float] | None:
    """(cmin, cmax): the smallest and largest mean cost per sample among the pool's models on ``rows``."""
    if not len(rows) or not pool.models:
        return None
    return cost_bounds(pool.cost[rows].mean(axis=0).tolist())


def _oracle_means(pool: Pool, rows: Sequence[int]) -> tuple[float, float]:
    """The Oracle's mean accuracy and mean cost per sample on ``rows``."""
    if not len(rows):
        return 0.0, 0.0
    oracle = oracle_probs(pool, rows)
    return (float((oracle * pool.correct[rows]).sum(axis=1).mean()),
            float((oracle * pool.cost[rows]).sum(axis=1).mean()))


def score(pool: Pool, rows: Sequence[int], probs: np.ndarray, *, bounds: tuple[float, float] | None,
          domains: Sequence[str] | None = None) -> RouterFigures:
    """Figures of a router whose picks on pool rows ``rows`` are ``probs`` (one row each)."""
    q, c = pool.correct[rows], pool.cost[rows]
    acc_per = (probs * q).sum(axis=1)
    cost_per = (probs * c).sum(axis=1)
    accuracy, cost = _estimate(acc_per), _estimate(cost_per)
    o_acc, o_cost = _oracle_means(pool, rows)
    share = {m: float(probs[:, j].mean()) if len(rows) else 0.0 for j, m in enumerate(pool.models)}
    by_domain: dict[str, float] = {}
    share_by_domain: dict[str, dict[str, float]] = {}
    if domains is not None:
        for d in sorted(set(domains)):
            mask = np.array([x == d for x in domains])
            by_domain[d] = float(acc_per[mask].mean())
            share_by_domain[d] = {m: float(probs[mask, j].mean()) for j, m in enumerate(pool.models)}
    rs = rank_score(accuracy.value, cost.value, *bounds) if bounds else None
    return RouterFigures(n=len(rows), accuracy=accuracy, cost_per_sample_usd=cost, rank_score=rs,
                         oracle_gap={"accuracy": o_acc - accuracy.value, "cost_usd": cost.value - o_cost},
                         share=share, accuracy_by_domain=by_domain, share_by_domain=share_by_domain,
                         per_sample=[float(x) for x in acc_per])


def single_model_scores(pool: Pool, rows: Sequence[int], *, bounds: tuple[float, float] | None,
                        domains: Sequence[str] | None = None) -> dict[str, RouterFigures]:
    """Each model of the pool routed to alone: the figures ``score`` gives for ``single_model_probs``, in time
    linear in the pool (the Oracle once, each model's column once). Shares list only the model itself (the
    others are 0), as the pool's build stores them."""
    q, c = pool.correct[rows], pool.cost[rows]
    o_acc, o_cost = _oracle_means(pool, rows)
    groups = {d: np.array([x == d for x in domains]) for d in sorted(set(domains))} if domains is not None else {}
    out: dict[str, RouterFigures] = {}
    for j, m in enumerate(pool.models):
        acc_per, cost_per = q[:, j], c[:, j]
        accuracy, cost = _estimate(acc_per), _estimate(cost_per)
        rs = rank_score(accuracy.value, cost.value, *bounds) if bounds else None
        share = {m: 1.0} if len(rows) else {}
        out[m] = RouterFigures(
            n=len(rows), accuracy=accuracy, cost_per_sample_usd=cost, rank_score=rs,
            oracle_gap={"accuracy": o_acc - accuracy.value, "cost_usd": cost.value - o_cost}, share=share,
            accuracy_by_domain={d: float(acc_per[mask].mean()) for d, mask in groups.items()},
            share_by_domain={d: {m: 1.0} for d in groups}, per_sample=[float(x) for x in acc_per])
    return out


def single_model_probs(pool: Pool, model: str, n: int) -> np.ndarray:
    p = np.zeros((n, len(pool.models)))
    p[:, pool.models.index(model)] = 1.0
    return p


def strongest_on(pool: Pool, rows: Sequence[int]) -> str:
    """The model with the best accuracy on ``rows`` (ties: the cheaper, then the first name)."""
    acc, cost = pool.correct[rows].mean(axis=0), pool.cost[rows].mean(axis=0)
    return pool.models[int(np.lexsort((np.arange(len(pool.models)), cost, -acc))[0])]


def cheapest_on(pool: Pool, rows: Sequence[int]) -> str:
    """The model with the lowest mean cost on ``rows`` (ties: the more accurate, then the first name)."""
    acc, cost = pool.correct[rows].mean(axis=0), pool.cost[rows].mean(axis=0)
    return pool.models[int(np.lexsort((np.arange(len(pool.models)), -acc, cost))[0])]


def random_probs(pool: Pool, n: int) -> np.ndarray:
    """Uniform over the models: the exact expected figures of picking a model at random."""
    return np.full((n, len(pool.models)), 1.0 / len(pool.models)) if pool.models else np.zeros((n, 0))


def baselines(pool: Pool, train: Sequence[int], test: Sequence[int], *,
              bounds: tuple[float, float] | None) -> dict[str, tuple[str, RouterFigures]]:
    """Oracle, Strongest and Cheapest (chosen on train) and Random, scored on test: {kind: (label, figures)}."""
    strong, cheap = strongest_on(pool, train), cheapest_on(pool, train)
    n = len(test)
    return {
        "oracle": ("Oracle", score(pool, test, oracle_probs(pool, test), bounds=bounds)),
        "strongest": (f"Strongest on train ({strong})", score(pool, test, single_model_probs(pool, strong, n), bounds=bounds)),
        "cheapest": (f"Cheapest on train ({cheap})", score(pool, test, single_model_probs(pool, cheap, n), bounds=bounds)),
        "random": ("Random", score(pool, test, random_probs(pool, n), bounds=bounds)),
    }


def paired_test(a: Sequence[float], b: Sequence[float], alpha: float = 0.05) -> PairedTest:
    """Two routers on the same test samples: exact McNemar when both picked one model per sample (0/1
    outcomes), else a paired bootstrap of the mean difference (1,000 resamples of samples, fixed
    seed): the 95 % percentile interval, and as p-value twice the smaller share of resampled
    differences on either side of 0."""
    if len(a) != len(b):
        raise ValueError("paired test needs the same samples on both sides")
    if all(x in (0.0, 1.0) for x in a) and all(y in (0.0, 1.0) for y in b):
        return mcnemar_exact([x == 1.0 for x in a], [y == 1.0 for y in b], alpha)
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = int(diff.size)
    if n == 0:
        return PairedTest(statistic=0.0, p_value=1.0, significant=False, n=0)
    rng = np.random.default_rng(SEED)
    stats = np.array([diff[rng.integers(0, n, size=n)].mean() for _ in range(RESAMPLES)])
    lo, hi = np.percentile(stats, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    p = min(1.0, 2 * min(float((stats <= 0).mean()), float((stats >= 0).mean())))
    return PairedTest(statistic=float(diff.mean()), p_value=p, significant=bool(lo > 0 or hi < 0), n=n,
                      interval=Interval(low=float(lo), high=float(hi), level=1 - alpha, resamples=RESAMPLES, seed=SEED))
