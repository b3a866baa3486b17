"""pass@k and pass^k: the product form agrees with the binomial definition; summaries use k = 1, 2, 4, ..., n."""

from __future__ import annotations

import math

import pytest
from rolloutgym.runs.stats import GroupFacts, pass_at_k, pass_hat_k, summarize, summary_ks


@pytest.mark.parametrize("n", [1, 2, 5, 13, 40])
def test_product_form_matches_the_binomials(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            expected_at = 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)
            assert pass_at_k(n, c, k) == pytest.approx(expected_at, abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-12)
    assert math.isnan(pass_at_k(n, 0, n + 1)) and math.isnan(pass_hat_k(0, 0, 1))


def test_summary_ks_are_the_powers_of_two_and_the_group_size():
    assert summary_ks(1) == [1] and summary_ks(16) == [1, 2, 4, 8, 16] and summary_ks(10) == [1, 2, 4, 8, 10]
    assert summary_ks(0) == []


def _facts(item: str, passes: int, size: int) -> GroupFacts:
    scores = (1.0,) * passes + (0.0,) * (size - passes)
    return GroupFacts(item, scores, (1,) * size, (), 0, 0, 0.0)


def test_a_large_group_is_summarised_exactly_and_stays_finite():
    """4,000 rollouts of one task: binomials of that size overflow a float, the running products do not."""
    summary = summarize([_facts("a", 1_000, 4_000)])
    assert sorted(summary.pass_at) == summary_ks(4_000)
    assert summary.pass_at[1] == pytest.approx(0.25) and summary.pass_hat[1] == pytest.approx(0.25)
    assert summary.pass_at[2] == pytest.approx(1 - (3000 * 2999) / (4000 * 3999))
    assert summary.pass_hat[2] == pytest.approx((1000 * 999) / (4000 * 3999))
    assert summary.pass_at[4_000] == 1.0 and summary.pass_hat[4_000] == 0.0


def test_mean_over_tasks_counts_equal_tasks_once_each():
    groups = [_facts("a", 2, 4), _facts("b", 2, 4), _facts("c", 4, 4), _facts("d", 0, 8)]
    summary = summarize(groups)
    assert sorted(summary.pass_at) == [1, 2, 4]  # the smallest group has 4 draws
    expected = (2 * pass_at_k(4, 2, 2) + pass_at_k(4, 4, 2) + pass_at_k(8, 0, 2)) / 4
    assert summary.pass_at[2] == pytest.approx(expected)
    assert summary.pass_hat[4] == pytest.approx((0 + 0 + 1 + 0) / 4)
