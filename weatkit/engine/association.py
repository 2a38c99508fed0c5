"""The WEAT statistic and effect size, for one sample or a whole batch of resamples at once.

Caliskan, Bryson & Narayanan (2017), Science 356:183, "Methods":

* association of a word:  s(w, A, B) = mean_{a∈A} cos(w, a) − mean_{b∈B} cos(w, b)
* test statistic:          S(X, Y, A, B) = Σ_{x∈X} s(x, A, B) − Σ_{y∈Y} s(y, A, B)
* effect size:             d = (mean_{x∈X} s(x) − mean_{y∈Y} s(y)) / std_{w∈X∪Y} s(w)

``std`` uses ``ddof`` degrees of freedom: ``ddof=1`` reproduces Caliskan et al. Table 1;
``ddof=0`` (``np.std``) reproduces WEFE, XWEAT and the CA-WEAT code.

A resample is given by *weights*: how often each item of each set is drawn. The observed sample
has all weights 1; a bootstrap resample has multinomial counts; a jackknife sample has a single 0.
With weight matrices ``W_A (R, n_A)`` the associations of all resamples are one matrix product:
``s = sim_A @ W_Aᵀ / ΣW_A − sim_B @ W_Bᵀ / ΣW_B``, so no loop over resamples is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Weights:
    """Resample weights for the four sets, each ``(R, n_set)``; row r is resample r."""

    X: torch.Tensor
    Y: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor


def associations(sim: torch.Tensor, n_a: int, w_a: torch.Tensor, w_b: torch.Tensor) -> torch.Tensor:
    """s(w, A, B) for every target w and every resample.

    Args:
        sim: ``(T, n_t, n_a + n_b)`` similarities of targets (X then Y) to attributes (A then B).
        n_a: number of A columns in ``sim``.
        w_a, w_b: ``(R, n_a)`` and ``(R, n_b)`` attribute weights.

    Returns:
        ``(T, n_t, R)`` association scores.
    """
    signed = torch.cat(
        [w_a / w_a.sum(dim=1, keepdim=True), -w_b / w_b.sum(dim=1, keepdim=True)], dim=1
    )
    t, n_t, n_att = sim.shape
    return (sim.reshape(t * n_t, n_att) @ signed.T).reshape(t, n_t, -1)


def statistic_and_effect_size(
    s: torch.Tensor, n_x: int, w_x: torch.Tensor, w_y: torch.Tensor, ddof: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """S and d for every test and resample.

    Args:
        s: ``(T, n_x + n_y, R)`` associations of X then Y (from :func:`associations`).
        n_x: number of X rows.
        w_x, w_y: ``(R, n_x)`` and ``(R, n_y)`` target weights.
        ddof: delta degrees of freedom of the pooled standard deviation.

    Returns:
        ``(S, d)``, each ``(T, R)``.
    """
    w = torch.cat([w_x, w_y], dim=1).T  # (n_x + n_y, R)
    ws = s * w
    sum_x, sum_y = ws[:, :n_x].sum(dim=1), ws[:, n_x:].sum(dim=1)
    n_wx, n_wy = w_x.sum(dim=1), w_y.sum(dim=1)
    n_w = n_wx + n_wy
    mean_all = (sum_x + sum_y) / n_w
    sq_dev = (ws * s).sum(dim=1) - n_w * mean_all**2  # Σ w (s − mean)²
    std = torch.sqrt(sq_dev.clamp(min=0) / (n_w - ddof))
    effect = (sum_x / n_wx - sum_y / n_wy) / std
    return sum_x - sum_y, effect


def weighted_statistics(
    sim: torch.Tensor, n_x: int, n_a: int, weights: Weights, ddof: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """S and d of every resample described by ``weights``: ``(T, R)`` each."""
    s = associations(sim, n_a, weights.A, weights.B)
    return statistic_and_effect_size(s, n_x, weights.X, weights.Y, ddof)


def unit_weights(sizes: tuple[int, int, int, int], like: torch.Tensor) -> Weights:
    """The observed sample: every item once (R = 1)."""
    ones = [torch.ones(1, n, dtype=like.dtype, device=like.device) for n in sizes]
    return Weights(*ones)
