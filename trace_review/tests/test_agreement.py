"""The agreement library on hand-made tables; each expected value is worked out by hand in the comments."""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from trace_review.agreement import (
    Unit,
    bootstrap_interval,
    cohen_kappa,
    confusion_table,
    kind_agreement,
    krippendorff_alpha,
    majority,
    raw_agreement,
)

T, F = True, False


def test_kappa_on_a_two_by_two_table():
    # (human, judge): 4 x (T,T), 1 x (F,T), 2 x (T,F), 3 x (F,F); n = 10.
    # p_o = (4 + 3) / 10 = 0.7. Human T = 6, F = 4; judge T = 5, F = 5.
    # p_e = (6*5 + 4*5) / 100 = 0.5. kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    pairs = [(T, T)] * 4 + [(F, T)] + [(T, F)] * 2 + [(F, F)] * 3
    k = cohen_kappa(pairs)
    assert k.p_o == pytest.approx(0.7)
    assert k.p_e == pytest.approx(0.5)
    assert k.kappa == pytest.approx(0.4)
    assert not k.degenerate
    assert confusion_table(pairs, [T, F]) == [[4, 2], [1, 3]]  # rows human T/F, columns judge T/F


def test_kappa_on_ternary_step_scores():
    # (human, judge): (1,1) (1,1) (.5,.5) (0,.5) (0,0) (1,0); n = 6, agreements 4 -> p_o = 2/3.
    # Human 1:3, .5:1, 0:2; judge 1:2, .5:2, 0:2. p_e = (3*2 + 1*2 + 2*2) / 36 = 1/3.
    # kappa = (2/3 - 1/3) / (2/3) = 0.5.
    pairs = [(1.0, 1.0), (1.0, 1.0), (0.5, 0.5), (0.0, 0.5), (0.0, 0.0), (1.0, 0.0)]
    assert cohen_kappa(pairs).kappa == pytest.approx(0.5)


def test_a_judge_that_always_says_yes_gets_kappa_zero_not_a_crash():
    # Humans (majority) T, T, T, F; judge T every time. p_o = 3/4.
    # Human T = 3, F = 1; judge T = 4, F = 0. p_e = (3*4 + 1*0) / 16 = 3/4. kappa = 0 / (1/4) = 0.
    pairs = [(T, T), (T, T), (T, T), (F, T)]
    k = cohen_kappa(pairs)
    assert k.kappa == pytest.approx(0.0)
    assert not k.degenerate


def test_both_constant_and_equal_is_kappa_one_flagged_degenerate():
    # Every pair (T, T): p_o = 1, p_e = 1 -> 0/0; the convention reports 1.0 and flags it.
    k = cohen_kappa([(T, T)] * 5)
    assert k.kappa == 1.0
    assert k.degenerate
    assert cohen_kappa([]).kappa is None


def test_kind_agreement_with_a_constant_judge_is_defined():
    units = [Unit("a", (T, T), T), Unit("b", (F, F), T), Unit("c", (T, T, F), T), Unit("d", (T, F), T)]
    got = kind_agreement(units, categories=[T, F], resamples=200)
    # d is a 1-1 tie: left out and counted. Pairs (T,T) (F,T) (T,T): raw 2/3.
    assert got.n_tied == 1
    assert got.n_units == 3
    assert got.raw == pytest.approx(2 / 3)
    # Human T = 2, F = 1; judge T = 3. p_e = (2*3 + 0) / 9 = 2/3; kappa = (2/3 - 2/3) / (1/3) = 0.
    assert got.kappa.kappa == pytest.approx(0.0)
    assert got.confusion == [[2, 0], [1, 0]]
    assert got.kappa_interval is not None
    lo, hi = got.kappa_interval
    assert lo <= 0.0 <= hi


def test_majority_needs_more_than_half():
    assert majority([T, T, F]) is T
    assert majority([T, F]) is None
    assert majority([1.0, 0.5, 0.0]) is None
    assert majority([]) is None


def test_alpha_nominal_two_people():
    # Units (T,T), (F,F), (T,F). Coincidences (weight 1/(2-1) = 1 per ordered pair):
    # o_TT = 2, o_FF = 2, o_TF = o_FT = 1. n_T = 3, n_F = 3, n = 6.
    # D_o = (o_TF + o_FT) / n = 2/6. D_e = (n_T n_F + n_F n_T) / (n (n - 1)) = 18/30.
    # alpha = 1 - (1/3) / (3/5) = 1 - 5/9 = 4/9.
    a = krippendorff_alpha([(T, T), (F, F), (T, F)])
    assert a.alpha == pytest.approx(float(Fraction(4, 9)))
    assert a.n_units == 3


def test_alpha_nominal_three_people_and_a_missing_label():
    # Units (T,T,F), (F,F), (T,T). The first has m = 3: each ordered pair weighs 1/2, so
    # o_TT += 2 * 1/2, o_TF += 2 * 1/2, o_FT += 2 * 1/2. Then o_FF += 2 and o_TT += 2.
    # o_TT = 3, o_TF = 1, o_FT = 1, o_FF = 2; n_T = 4, n_F = 3, n = 7.
    # D_o = 2/7; D_e = (4*3 + 3*4) / (7*6) = 24/42 = 4/7; alpha = 1 - (2/7)/(4/7) = 1/2.
    a = krippendorff_alpha([(T, T, F), (F, F), (T, T), (T,)])  # the lone (T,) is not pairable
    assert a.alpha == pytest.approx(0.5)
    assert a.n_units == 3


def test_alpha_interval_on_step_scores():
    # Units (1,1), (.5,1), (0,0); delta = (a-b)^2.
    # o_11 = 2, o_.5,1 = o_1,.5 = 1, o_00 = 2; n_1 = 3, n_.5 = 1, n_0 = 2, n = 6.
    # D_o = (1*0.25 + 1*0.25) / 6 = 1/12.
    # D_e = [2*(3*1*0.25) + 2*(3*2*1) + 2*(1*2*0.25)] / (6*5) = (1.5 + 12 + 1) / 30 = 29/60.
    # alpha = 1 - (1/12) / (29/60) = 1 - 5/29 = 24/29.
    a = krippendorff_alpha([(1.0, 1.0), (0.5, 1.0), (0.0, 0.0)], "interval")
    assert a.alpha == pytest.approx(float(Fraction(24, 29)))
    # Nominal on the same units would call 0.5 vs 1 a full disagreement: lower.
    assert krippendorff_alpha([(1.0, 1.0), (0.5, 1.0), (0.0, 0.0)], "nominal").alpha < a.alpha


def test_alpha_without_any_variation_is_one_flagged_degenerate():
    a = krippendorff_alpha([(T, T), (T, T)])
    assert a.alpha == 1.0 and a.degenerate
    assert krippendorff_alpha([(T,), (F,)]).alpha is None  # nothing pairable


def test_bootstrap_is_reproducible_and_brackets_the_estimate():
    clusters = [[(T, T)], [(F, F)], [(T, F)], [(T, T)], [(F, F)], [(F, T)], [(T, T)], [(F, F)]]
    pooled = [p for c in clusters for p in c]
    first = bootstrap_interval(clusters, raw_agreement, resamples=500, seed=7)
    again = bootstrap_interval(clusters, raw_agreement, resamples=500, seed=7)
    assert first == again
    lo, hi = first
    assert lo <= raw_agreement(pooled) <= hi
    assert lo < hi  # 6 of 8 agree: resampling must move the figure
    perfect = bootstrap_interval([[(T, T)], [(F, F)]], lambda ps: cohen_kappa(ps).kappa, resamples=200)
    assert perfect == (1.0, 1.0)


def test_the_library_loads_no_django():
    probe = ("import sys\nimport trace_review.agreement\n"
             "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
             "{'django', 'annotation', 'evaluation', 'leaderboard', 'config'})))\n")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
