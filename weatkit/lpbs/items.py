"""LPBS's per-item log (``--log-items``), in the shared columns of :mod:`weatkit.items.log`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from weatkit.items.log import concat_items, items_frame, sign_outcome


def lpbs_items(run: Any, *, model: str) -> pd.DataFrame:
    """The log of LPBS (``lpbs``) from a :class:`~weatkit.lpbs.run.LpbsRun`: one row per test,
    attribute set, template and attribute, ``item_id`` ``TEST:SET:ATTRIBUTE:K`` (K the
    template's number), ``bias_type`` the test, ``method`` the unit; the template with the
    attribute in place (``[TARGET] likes career.``) and the masked groups' scores s(G₁, a, t),
    s(G₂, a, t) under ``text_group1``/``score_group1`` and ``text_group2``/``score_group2``;
    ``outcome`` the group the attribute raises more (b > 0: G₁). ``influence``:
    :func:`weatkit.lpbs.stats.row_influence` on S."""
    from weatkit.lpbs.stats import row_influence
    from weatkit.lpbs.templates import TARGET, parse_template

    frames = []
    for r in run.results:
        t, scores = r.test, r.scores
        x, y, a, b = t.names
        groups, sets = ((a, b), (x, y)) if r.swap else ((x, y), (a, b))
        number = {text: k for k, text in enumerate(r.templates)}
        texts = [
            parse_template(tpl).fill(TARGET, attr).text
            for tpl, attr in zip(scores["template"], scores["attribute"], strict=True)
        ]
        ids = [
            f"{t.test}:{s}:{attr}:{number[tpl]}"
            for s, attr, tpl in zip(scores["set"], scores["attribute"], scores["template"],
                                    strict=True)
        ]  # fmt: skip
        options = {"group1": (texts, scores["s_1"]), "group2": (texts, scores["s_2"])}
        frames.append(
            items_frame(
                "lpbs", model, r.unit, t.lang, ids, [t.test] * len(ids), options,
                sign_outcome(scores["bias"].to_numpy(), *groups),
                row_influence(scores, sets, r.unit),
            )
        )  # fmt: skip
    if not frames:
        return items_frame("lpbs", model, "", "", [], [], {}, [], [])
    return concat_items(frames)
