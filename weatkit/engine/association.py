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

Padding: an item of weight 0 in every resample contributes nothing to any sum, so tests with
different set sizes share one batch when each set is padded to the largest size with members of
weight 0 (:func:`pad_weights`, :func:`padded_positions`): the numbers are those of the unpadded
test.
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


def attribute_weights(w_a: torch.Tensor, w_b: torch.Tensor) -> torch.Tensor:
    """``(R, n_a + n_b)``: ``[w_A / Σw_A, −w_B / Σw_B]``, so that ``s = sim @ ·ᵀ``."""
    return torch.cat(
        [w_a / w_a.sum(dim=1, keepdim=True), -w_b / w_b.sum(dim=1, keepdim=True)], dim=1
    )


def associations(sim: torch.Tensor, n_a: int, w_a: torch.Tensor, w_b: torch.Tensor) -> torch.Tensor:
    """s(w, A, B) for every resample, test and target.

    Args:
        sim: ``(T, n_t, n_a + n_b)`` similarities of targets (X then Y) to attributes (A then B).
        n_a: number of A columns in ``sim``.
        w_a, w_b: ``(R, n_a)`` and ``(R, n_b)`` attribute weights.

    Returns:
        ``(R, T, n_t)`` association scores: one matrix product ``signed @ simᵀ`` with the tests
        side by side, so that the target weights of a resample broadcast over the tests.
    """
    t, n_t, _ = sim.shape
    return (attribute_weights(w_a, w_b) @ flat_similarities(sim)).view(-1, t, n_t)


def flat_similarities(sim: torch.Tensor) -> torch.Tensor:
    """``(n_a + n_b, T · n_t)``: the tests' similarity matrices side by side, transposed, the
    right factor of :func:`associations`."""
    t, n_t, n_att = sim.shape
    return sim.permute(2, 0, 1).reshape(n_att, t * n_t)


def statistic_and_effect_size(
    s: torch.Tensor, n_x: int, w: torch.Tensor, ddof: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """S and d of every sample in ``s``, reduced over its last axis (the targets).

    Args:
        s: ``(..., n_x + n_y)`` associations of X then Y (from :func:`associations`, or a
            batched product of per-test weights); overwritten (it holds ``w · s²`` on return).
        n_x: number of X columns.
        w: the target weights, X then Y, broadcastable to ``s``.
        ddof: delta degrees of freedom of the pooled standard deviation.

    Returns:
        ``(S, d)``, each of ``s``'s shape without its last axis.
    """
    n_wx, n_wy = w[..., :n_x].sum(dim=-1), w[..., n_x:].sum(dim=-1)
    return statistic_from_sums(*weighted_sums(s, n_x, w), n_wx, n_wy, ddof)


def weighted_sums(
    s: torch.Tensor, n_x: int, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Σ_X w s, Σ_Y w s and Σ w s² over the last axis of ``s`` (overwritten, as in
    :func:`statistic_and_effect_size`)."""
    ws = s * w
    if 2 * n_x == s.shape[-1]:  # X and Y as one reduction
        sum_x, sum_y = ws.unflatten(-1, (2, n_x)).sum(dim=-1).unbind(-1)
    else:
        sum_x, sum_y = ws[..., :n_x].sum(dim=-1), ws[..., n_x:].sum(dim=-1)
    return sum_x, sum_y, ws.mul_(s).sum(dim=-1)


def statistic_from_sums(
    sum_x: torch.Tensor,
    sum_y: torch.Tensor,
    sum_sq: torch.Tensor,
    n_wx: torch.Tensor,
    n_wy: torch.Tensor,
    ddof: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """S = Σ_X w s − Σ_Y w s and d = (Σ_X w s / n_X − Σ_Y w s / n_Y) / σ, with n_X, n_Y the
    total weights and σ² = (Σ w s² − n s̄²) / (n − ddof) over X∪Y (n = n_X + n_Y, s̄ the
    weighted mean), elementwise over the sums of :func:`weighted_sums`."""
    n_w = n_wx + n_wy
    mean_all = (sum_x + sum_y) / n_w
    sq_dev = sum_sq - n_w * mean_all**2  # Σ w (s − mean)²
    std = torch.sqrt(sq_dev.clamp(min=0) / (n_w - ddof))
    effect = (sum_x / n_wx - sum_y / n_wy) / std
    return sum_x - sum_y, effect


def weighted_statistics(
    sim: torch.Tensor, n_x: int, n_a: int, weights: Weights, ddof: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """S and d of every resample described by ``weights``: ``(T, R)`` each.

    Zero weights leave an item out exactly, so ``sim`` may be padded (:func:`padded_positions`)
    when the weights are zero at the padding.
    """
    s = associations(sim, n_a, weights.A, weights.B)
    w = torch.cat([weights.X, weights.Y], dim=1)[:, None, :]  # (R, 1, n_x + n_y)
    stat, eff = statistic_and_effect_size(s, n_x, w, ddof)
    return stat.T, eff.T


def unit_weights(sizes: tuple[int, int, int, int], like: torch.Tensor) -> Weights:
    """The observed sample: every item once (R = 1)."""
    ones = [torch.ones(1, n, dtype=like.dtype, device=like.device) for n in sizes]
    return Weights(*ones)


def pad_weights(weights: Weights, widths: tuple[int, int, int, int]) -> Weights:
    """``weights`` with zero columns appended to each set up to ``widths`` (padding members
    that no resample draws)."""
    padded = [
        torch.nn.functional.pad(w, (0, n - w.shape[1]))
        for w, n in zip((weights.X, weights.Y, weights.A, weights.B), widths, strict=True)
    ]
    return Weights(*padded)


def padded_positions(sizes: tuple[int, ...], widths: tuple[int, ...]) -> torch.Tensor:
    """Where the items of sets of ``sizes`` sit when each set is padded to its width: for
    ``(2, 3)`` in ``(4, 4)``, ``[0, 1, 4, 5, 6]``."""
    starts = [sum(widths[:j]) for j in range(len(widths))]
    return torch.cat([torch.arange(n) + s for n, s in zip(sizes, starts, strict=True)])
