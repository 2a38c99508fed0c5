"""``contextual: {lower: true}`` lower-cases what is encoded, not what the vectors answer for.

A transformer has no out-of-vocabulary item: with ``lower=True`` a capitalised list item must be
found by coverage (issue 15, bug 7a), with the vector of its lower-cased form.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.tiny_models import make_bert, manual_word_vector
from weatkit.embeddings.contextual import ContextualExtractor, ContextualOptions
from weatkit.embeddings.coverage import cover_test
from weatkit.lists.model import AssociationTest


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bert(tmp_path_factory.mktemp("lower") / "bert")


def test_lower_keeps_the_items_as_written_for_coverage(bert: Path) -> None:
    test = AssociationTest(
        test="t",
        lang="en",
        list_set="file",
        list_id="l",
        X=("Doctor", "NURSE"),
        Y=("he", "she"),
        A=("Good", "bad"),
        B=("man", "woman"),
    )
    options = ContextualOptions(lower=True, cache=False, device="cpu")
    vectors = ContextualExtractor(str(bert), options).extract(test.vocabulary(), [-1])[-1]
    covered = cover_test(test, vectors, min_coverage=1.0)
    assert covered.coverage == {"X": 1.0, "Y": 1.0, "A": 1.0, "B": 1.0}
    assert covered.n_oov == 0
    # the vector of "Doctor" is the one of the encoded "doctor" ([CLS] doctor [SEP], position 1)
    expected = manual_word_vector(bert, "doctor", [1], -1)
    np.testing.assert_allclose(covered.vectors["X"][0], expected, rtol=1e-5, atol=1e-5)
    assert "Good" in vectors and "NURSE" in vectors
