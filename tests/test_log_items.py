"""``--log-items`` (issue 28 §2): one row per scored item in items.parquet / items.csv, the
same schema for every sentence measure, and each item's leave-one-out influence equal to the
measure recomputed without the item through its own public function."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tests.test_crows import tiny_pairs
from tests.tiny_models import make_gest_mlm
from weatkit.cli import main
from weatkit.crows.score import crows_metric
from weatkit.items.log import ITEM_COLUMNS

LEADING = ITEM_COLUMNS[:6]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gest_mlm(tmp_path_factory.mktemp("items") / "mlm")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def check_schema(items: pd.DataFrame, options: list[str]) -> None:
    option_columns = [f"{kind}_{o}" for o in options for kind in ("text", "score")]
    assert list(items.columns) == [*LEADING, *option_columns, "outcome", "influence"]


# --- CrowS-Pairs ---------------------------------------------------------------------------


def crows_slow_influence(pairs: pd.DataFrame) -> list[float]:
    """The metric without each scored pair, by crows_metric on the table without it."""
    value = crows_metric(pairs, n_bootstrap=0)["metric"].iloc[0]
    return [
        crows_metric(pairs.drop(index=i), n_bootstrap=0)["metric"].iloc[0] - value
        for i in pairs.index
    ]


def test_crows_items(tiny: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.csv"
    tiny_pairs().rename(columns={"direction": "stereo_antistereo"}).to_csv(data, index=False)
    out = tmp_path / "out"
    res = invoke("crows", "--model", str(tiny), "--data", str(data), "--out", str(out),
                 "--bootstrap", "0", "--no-progress", "--log-items")  # fmt: skip
    assert res.exit_code == 0, res.output
    items = pd.read_parquet(out / "items.parquet")
    pairs = pd.read_csv(out / "pairs.csv", keep_default_na=False, na_values=[""])
    check_schema(items, ["more", "less"])
    assert len(items) == len(pairs) == 5
    assert set(items.measure) == {"crows"} and set(items.method) == {"pll"}
    assert set(items.model) == {str(tiny)} and set(items.language) == {"en"}
    assert items.item_id.tolist() == [str(i) for i in pairs.pair_id]
    assert items.bias_type.tolist() == pairs.bias_type.tolist()
    assert items.text_more.tolist() == pairs.sent_more.tolist()
    assert np.array_equal(items.score_more, pairs.score_more)
    assert np.array_equal(items.score_less, pairs.score_less)
    expected = np.where(pairs.neutral, "tie", np.where(pairs.win == 1, "stereotype",
                                                       "anti-stereotype"))  # fmt: skip
    assert items.outcome.tolist() == expected.tolist()
    assert np.allclose(items.influence, crows_slow_influence(pairs))
    # --scores mode, as CSV
    res = invoke("crows", "--scores", str(out / "pairs.csv"), "--decimals", "3", "--out",
                 str(tmp_path / "again"), "--bootstrap", "0", "--log-items", "csv")  # fmt: skip
    assert res.exit_code == 0, res.output
    again = pd.read_csv(tmp_path / "again" / "items.csv", keep_default_na=False)
    assert again.outcome.tolist() == items.outcome.tolist()
    assert set(again.method) == {"scores"}
    assert np.allclose(again.influence, items.influence)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log-items", "xlsx"], "weatkit: error: --log-items: unknown format 'xlsx': choose "
         "parquet or csv"),
        (["--log-items"], "weatkit: error: --log-items writes items.parquet into the output "
         "directory: give --out DIR"),
    ],
)  # fmt: skip
def test_bad_log_items_is_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    scores = tmp_path / "s.csv"
    pd.DataFrame({"bias_type": ["gender"], "direction": ["stereo"], "score_more": [1.0],
                  "score_less": [0.0]}).to_csv(scores, index=False)  # fmt: skip
    for command in (["crows", "--scores", str(scores)], ["gest", "--scores", str(scores)]):
        res = invoke(*command, *args)
        assert res.exit_code == 1
        assert res.output.strip() == message
