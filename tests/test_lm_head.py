"""The LM head at the positions a score reads only (weatkit.models.lm_head, issue 29), and
batches chunked by token count.

Every known head of every architecture gives the logits of the whole network (loaded
independently with ``AutoModelForMaskedLM`` / ``AutoModelForCausalLM``) within
``FORWARD_PASS_TOL``; the head sees only the positions asked for; an unknown head, or one whose
split fails the check against the full logits, falls back to the full logits with one note.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.golden_cases import FORWARD_PASS_TOL
from tests.tiny_models import CAUSAL_ARCHS, MLM_ARCHS, make_causal_lm, make_char_mlm, make_mlm
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.models import batching, lm_head, pool
from weatkit.models.handle import LoadOptions, ModelHandle, padded
from weatkit.scoring import get_scorer
from weatkit.sentence import masked_lm
from weatkit.sentence.masked_lm import MaskedLM

RTOL, ATOL = FORWARD_PASS_TOL
CPU = LoadOptions(device="cpu")
#: Right-padded rows of token ids (< MLM_VOCAB), special-looking first and last tokens.
ROWS = [[1, 5, 6, 7, 8, 9, 2], [1, 10, 11, 2], [1, 12, 13, 14, 15, 2]]
SENTENCES = ["He is a doctor.", "She is a nurse, said the man.", "a", "This is a sun"]


@pytest.fixture(autouse=True)
def _empty_pool():
    pool.clear()
    yield
    pool.clear()


@pytest.fixture(scope="module", params=MLM_ARCHS)
def mlm_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_mlm(tmp_path_factory.mktemp("mlm") / request.param, request.param)


@pytest.fixture(scope="module", params=CAUSAL_ARCHS)
def glm_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_causal_lm(tmp_path_factory.mktemp("glm") / request.param, request.param)


@pytest.fixture(scope="module")
def char_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_char_mlm(tmp_path_factory.mktemp("char") / "bert")


def _full_logits(model_dir: Path, causal: bool, ids: torch.Tensor, mask: torch.Tensor):
    """The whole network's output, loaded independently of weatkit."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    auto = AutoModelForCausalLM if causal else AutoModelForMaskedLM
    eager = {} if causal else {"attn_implementation": "eager"}  # attention weights for AULA
    model = auto.from_pretrained(model_dir, dtype=torch.float32, **eager).eval()
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, output_attentions=not causal)


def _positions(ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every real position but the last of each row."""
    keep = mask.clone()
    keep[torch.arange(len(keep)), mask.sum(1) - 1] = 0
    return keep.nonzero(as_tuple=True)


def _decoder_rows(handle: ModelHandle, head: str) -> list[int]:
    """Rows of every input the network's decoder (output embeddings) gets from now on."""
    seen: list[int] = []
    decoder = handle.network(head).get_output_embeddings()
    decoder.register_forward_hook(lambda _m, args, _o: seen.append(args[0].reshape(-1, args[0].shape[-1]).shape[0]))  # fmt: skip  # noqa: E501
    return seen


def _check_head_only(model_dir: Path, head: str, capsys: pytest.CaptureFixture[str]) -> None:
    causal = head == "glm"
    handle = ModelHandle(model_dir, CPU)
    ids, mask = padded(ROWS, 0)
    rows, cols = _positions(ids, mask)
    targets = ids[rows, cols + 1]
    full = _full_logits(model_dir, causal, ids, mask)
    expected = torch.log_softmax(full.logits[rows, cols].double(), dim=-1)
    got = handle.log_probs(head, input_ids=ids, attention_mask=mask, rows=rows, cols=cols)
    assert handle._splits[head] is not None  # the head-only path, checked and kept
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=RTOL, atol=ATOL)
    seen = _decoder_rows(handle, head)
    with handle.eager_attention(head):
        values, out = handle.token_log_probs(
            head, input_ids=ids, attention_mask=mask, rows=rows, cols=cols, targets=targets,
            output_attentions=not causal,
        )  # fmt: skip
    assert seen == [len(rows)]  # the decoder ran at the positions read, not at b × t
    np.testing.assert_allclose(
        values.numpy(), expected[torch.arange(len(rows)), targets].numpy(), rtol=RTOL, atol=ATOL
    )
    if not causal:  # what AULA reads from the same pass
        for ours, theirs in zip(out.attentions, full.attentions, strict=True):
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=RTOL, atol=ATOL)
    assert "no head-only scoring" not in capsys.readouterr().err


def test_masked_head_only_log_probs_equal_the_full_logits(
    mlm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check_head_only(mlm_dir, "mlm", capsys)


def test_causal_head_only_log_probs_equal_the_full_logits(
    glm_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _check_head_only(glm_dir, "glm", capsys)


def test_an_unknown_head_gets_the_full_logits_with_one_note(
    char_mlm: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = ModelHandle(char_mlm, CPU)
    name = type(handle.network("mlm")).__name__
    monkeypatch.delitem(lm_head.MASKED_HEADS, name)
    ids, mask = padded(ROWS, 0)
    rows, cols = _positions(ids, mask)
    expected = torch.log_softmax(_full_logits(char_mlm, False, ids, mask).logits[rows, cols], -1)
    for _ in range(2):
        got = handle.log_probs("mlm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=RTOL, atol=ATOL)
    assert handle._splits["mlm"] is None
    notes = [line for line in capsys.readouterr().err.splitlines() if "head-only" in line]
    assert notes == [
        f"{char_mlm}: no head-only scoring for {name}; computing the full logits and reading "
        "the positions needed"
    ]


def test_a_split_that_does_not_give_the_full_logits_is_not_used(
    char_mlm: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A head that leaves out one of its parts (here the transform) fails the check."""
    monkeypatch.setitem(
        lm_head.MASKED_HEADS,
        "BertForMaskedLM",
        lambda m: (m.bert, lambda h: m.cls.predictions.decoder(h)),
    )
    lm = MaskedLM(str(char_mlm), ContextualOptions(cache=False))
    tokens = lm.tokenize(SENTENCES)
    values = lm.masked_log_probs(tokens, [s.content for s in tokens], show_progress=False)
    assert lm.handle._splits["mlm"] is None
    assert "no head-only scoring for BertForMaskedLM" in capsys.readouterr().err
    monkeypatch.undo()
    pool.clear()
    again = MaskedLM(str(char_mlm), ContextualOptions(cache=False))
    expected = again.masked_log_probs(tokens, [s.content for s in tokens], show_progress=False)
    assert again.handle._splits["mlm"] is not None
    for a, b in zip(values, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


def test_logits_chunked_by_positions_give_the_same_log_probs(
    char_mlm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = ModelHandle(char_mlm, CPU)
    ids, mask = padded(ROWS, 0)
    rows, cols = _positions(ids, mask)
    targets = ids[rows, cols + 1]
    kwargs = dict(input_ids=ids, attention_mask=mask, rows=rows, cols=cols, targets=targets)
    whole, _ = handle.token_log_probs("mlm", **kwargs)
    seen = _decoder_rows(handle, "mlm")
    monkeypatch.setattr(lm_head, "CHUNK_LOGITS", 3 * handle.config.vocab_size)
    chunked, _ = handle.token_log_probs("mlm", **kwargs)
    assert seen == [3, 3, 3, 3, 2]  # 14 positions, 3 at a time
    np.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------ token-count batches


def test_batch_end_keeps_rows_times_the_longest_within_the_budget() -> None:
    lengths = [5, 5, 10, 10, 40, 40, 90]
    assert batching.batch_sizes(lengths, 4, None) == [(4, 10), (3, 90)]
    assert batching.batch_sizes(lengths, 4, 10) == [(4, 10), (1, 40), (1, 40), (1, 90)]
    assert batching.batch_sizes(lengths, 4, 25) == [(4, 10), (2, 40), (1, 90)]


def test_token_count_batches_give_the_scores_of_row_batches(
    char_mlm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Masked PLL terms, AUL/AULA and causal log-probabilities with a budget so small that
    every batch of the long sentences is cut, against batches of rows only."""
    glm_dir = make_causal_lm(tmp_path / "gpt2", "gpt2")
    sizes: list[int] = []
    run = batching.run_batches

    def counted(items, compute, **kwargs):
        return run(items, lambda batch: (sizes.append(len(batch)), compute(batch))[1], **kwargs)

    def scores(row_tokens: int | None) -> list[np.ndarray]:
        pool.clear()
        sizes.clear()
        monkeypatch.setattr(masked_lm, "ROW_TOKENS", row_tokens)
        monkeypatch.setattr("weatkit.scoring.hf.ROW_TOKENS", row_tokens)
        lm = MaskedLM(str(char_mlm), ContextualOptions(batch_size=8, cache=False))
        tokens = lm.tokenize(SENTENCES)
        out = lm.masked_log_probs(tokens, [s.content for s in tokens], show_progress=False)
        unmasked = lm.unmasked(tokens, show_progress=False)
        out += [unmasked.aul, unmasked.aula]
        scorer = get_scorer(f"hf:{glm_dir}", ContextualOptions(batch_size=8, cache=False))
        out += [t.logprobs for t in scorer.causal_logprobs(SENTENCES, show_progress=False)]
        return out

    monkeypatch.setattr(masked_lm, "run_batches", counted)
    monkeypatch.setattr("weatkit.scoring.hf.run_batches", counted)
    by_rows = scores(None)
    row_sizes = list(sizes)
    by_tokens = scores(6)
    assert max(sizes) < max(row_sizes) and len(sizes) > len(row_sizes)
    for a, b in zip(by_tokens, by_rows, strict=True):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
