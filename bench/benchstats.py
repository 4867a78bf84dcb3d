# SPDX-License-Identifier: LGPL-2.1-or-later
"""The statistics of bench/run's comparisons (issue 35), in one place.

A comparison is two variants of a scenario measured in the same rounds:
each round gives one pair, and the ratio A/B of a pair is the unit of
evidence (neighbours in time, so a slow drift of host load cancels). Per
comparison:

  geomean ratio   exp(mean(log(A/B))): ratios multiply, so their centre
                  is geometric (1/r of every pair gives 1/geomean);
  95% interval    a percentile bootstrap of that geometric mean over the
                  pairs, with a recorded seed so a table can be rebuilt;
  sign test       the exact two-sided binomial test of "A above B" against
                  "B above A" (ties dropped): a check that needs no
                  assumption about the ratios' distribution.

The order of the variants within a round is counterbalanced (ABBA: the
list forwards in even rounds, backwards in odd ones, so each variant runs
before and after each other equally often), or shuffled per round from a
recorded seed.

Python 3 standard library only: bench/run runs on a bare host.
"""

import math
import random

BOOTSTRAP_RESAMPLES = 10000
ORDERS = ("abba", "random")


def quantile(sorted_vals, q):
    """Linear interpolation between the closest ranks (numpy's default)."""
    if not sorted_vals:
        return float("nan")
    pos = (len(sorted_vals) - 1) * q
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def geomean(values):
    """Geometric mean of positive values (nan when there are none)."""
    if not values:
        return float("nan")
    return math.exp(math.fsum(math.log(v) for v in values) / len(values))


def paired(a_by_round, b_by_round):
    """A/B for every round both measured (and B is not zero), by round."""
    return [a_by_round[r] / b_by_round[r] for r in sorted(a_by_round)
            if r in b_by_round and b_by_round[r] and a_by_round[r] > 0
            and b_by_round[r] > 0]


def bootstrap_ci(ratios, seed, level=0.95, resamples=BOOTSTRAP_RESAMPLES):
    """Percentile bootstrap interval of the geometric mean of RATIOS.

    The resampling is in log space and the percentile ranks are symmetric
    (k and B-1-k), so the interval of 1/r is exactly 1/(interval of r)."""
    if not ratios:
        return (float("nan"), float("nan"))
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    if n == 1:
        return (ratios[0], ratios[0])
    rng = random.Random(seed)
    means = sorted(math.fsum(logs[rng.randrange(n)] for _ in range(n)) / n
                   for _ in range(resamples))
    k = int(math.floor((1 - level) / 2 * resamples))
    return (math.exp(means[k]), math.exp(means[resamples - 1 - k]))


def sign_test(ratios):
    """(above, below, ties, p): the exact two-sided sign test of ratios
    against 1. p is 1.0 when no ratio differs from 1."""
    above = sum(1 for r in ratios if r > 1)
    below = sum(1 for r in ratios if r < 1)
    ties = len(ratios) - above - below
    n = above + below
    if n == 0:
        return above, below, ties, 1.0
    tail = sum(math.comb(n, k) for k in range(min(above, below) + 1))
    return above, below, ties, min(1.0, 2 * tail / 2 ** n)


def compare(ratios, seed, level=0.95):
    """Everything a comparison prints, as a dict."""
    lo, hi = bootstrap_ci(ratios, seed, level)
    above, below, ties, p = sign_test(ratios)
    return {"n": len(ratios), "geomean": geomean(ratios), "ci_lo": lo,
            "ci_hi": hi, "above": above, "below": below, "ties": ties,
            "sign_p": p}


def round_order(n, rnd, order, seed):
    """Indices of N variants in the order round RND runs them."""
    idx = list(range(n))
    if order == "abba":
        return idx if rnd % 2 == 0 else idx[::-1]
    if order == "random":
        random.Random(f"{seed}:{rnd}").shuffle(idx)
        return idx
    raise ValueError(f"order {order!r}: expected one of {ORDERS}")


def before_counts(n, rounds, order, seed, i, j):
    """In how many of ROUNDS variant I ran before variant J (and after)."""
    first = 0
    for rnd in range(rounds):
        seq = round_order(n, rnd, order, seed)
        first += seq.index(i) < seq.index(j)
    return first, rounds - first
