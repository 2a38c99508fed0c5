"""The README's offline commands reproduce the frozen golden outputs (numbers must not move).

The goldens in ``tests/golden/`` were written by ``python -m tests.golden_cases`` before the
redesign of issue 15. Numeric columns must agree to each case's tolerance
(:attr:`tests.golden_cases.Case.tol`, relative and absolute), text columns exactly: 1e-12 for
arithmetic on fixed inputs (:data:`~tests.golden_cases.ARITHMETIC_TOL`), and 1e-5 relative /
1e-6 absolute for numbers computed through a transformer forward pass, whose float32 kernels
differ between torch/transformers releases and CPUs (:data:`~tests.golden_cases.FORWARD_PASS_TOL`,
where the measured drift is recorded). Every golden
column (and JSON key) must still be there, in the same order; columns added after the golden
was written are allowed, since they cannot move an existing number. A renamed column fails
until the goldens are regenerated on purpose.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from tests.golden_cases import GOLDEN, Case, cases, run_case


def _same_json(ours: object, theirs: object, tol: tuple[float, float], where: str = "") -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        missing = sorted(set(theirs) - set(ours))
        assert not missing, f"{where}: keys {missing} missing"
        for key in theirs:
            _same_json(ours[key], theirs[key], tol, f"{where}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _same_json(a, b, tol, f"{where}[{i}]")
    elif isinstance(theirs, float) and not isinstance(theirs, bool):
        assert isinstance(ours, int | float), where
        assert math.isclose(ours, theirs, rel_tol=tol[0], abs_tol=tol[1]) or (
            math.isnan(ours) and math.isnan(theirs)
        ), f"{where}: {ours!r} != {theirs!r}"
    else:
        assert ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def _same_csv(ours: Path, theirs: Path, tol: tuple[float, float]) -> None:
    a = pd.read_csv(ours, keep_default_na=False, na_values=[""])
    b = pd.read_csv(theirs, keep_default_na=False, na_values=[""])
    kept = [c for c in a.columns if c in set(b.columns)]
    assert kept == list(b.columns), f"{theirs.name}: golden columns missing or reordered"
    assert len(a) == len(b), f"{theirs.name}: {len(a)} rows, golden has {len(b)}"
    for col in b.columns:
        if pd.api.types.is_numeric_dtype(b[col]) and pd.api.types.is_numeric_dtype(a[col]):
            pd.testing.assert_series_equal(
                a[col].astype(float), b[col].astype(float), rtol=tol[0], atol=tol[1],
                obj=f"{theirs.name}:{col}",
            )
        else:
            assert a[col].astype(str).tolist() == b[col].astype(str).tolist(), (
                f"{theirs.name}:{col}"
            )


@pytest.mark.slow
@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_golden(case: Case, data_dir: Path, tmp_path: Path) -> None:
    outputs = run_case(case, data_dir, tmp_path)
    for name, path in outputs.items():
        golden = GOLDEN / case.name / name
        assert golden.is_file(), f"no golden file {golden}"
        if name.endswith(".json"):
            _same_json(
                json.loads(path.read_text()), json.loads(golden.read_text()), case.tol, name
            )
        else:
            _same_csv(path, golden, case.tol)
