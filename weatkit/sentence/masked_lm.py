"""Sentence scores from a masked language model: AUL, AULA and masked-token log-probabilities.

A sentence ``T = w_1 … w_|T|`` is one row of token ids with the model's special tokens; ``C`` is
the set of its non-special positions (the reference implementations drop the first and the
last token, ``[CLS]``/``[SEP]`` or ``<s>``/``</s>``).

**AUL** (All Unmasked Likelihood; Kaneko & Bollegala, AAAI 2022, "Unmasking the Mask", Eq. 3)
predicts every token of the unmasked sentence in one forward pass:

    AUL(T) = (1/|C|) Σ_{j∈C} log P(w_j | T)

**AULA** (… with Attention weights; same paper, Eq. 4; MBE paper, Kaneko et al. NAACL 2022,
Eq. 1) weights each token by the attention it receives, averaged over all layers, all heads and
all query positions ``i`` of the sentence (special tokens included as queries, as the reference
``calculate_aul`` of github.com/kanekomasahiro/bias_eval_in_multiple_mlm):

    α_j = mean_{l, h, i} Att^{(l,h)}[i, j]
    AULA(T) = (1/|C|) Σ_{j∈C} α_j log P(w_j | T)

The same pass gives the **sentence embedding** used by MBE's weights: the mean of the last layer's
hidden states over ``C``.

**Masked-token log-probabilities** (CrowS-Pairs pseudo-log-likelihood, Nangia et al. EMNLP 2020,
§3): for each requested position ``p`` the sentence is fed with ``w_p`` replaced by the mask token
and ``log P(w_p | T_{\\p})`` is read at ``p``. A read may mask further positions too
(PLL-word-l2r, Kauf & Ivanova 2023: the later sub-tokens of ``w_p``'s word;
:meth:`MaskedLM.word_ids`). :meth:`MaskedLM.masked_candidates` reads several tokens ``c`` at one
mask, ``log P(c | T_{\\p})`` (LPBS: every target word at its slot). Each distinct masked input
(the ids with every masked position replaced, and ``p``) is one row of a batch, however many
reads share it: one log-softmax over the vocabulary at ``p``, gathered at each token read. A read
is cached under the sentence with its token at ``p`` (the token is in the key, so a value is
never served for another token).

Logarithms are natural. Batches are sorted by length and padded on the right with an attention
mask; padded positions are neither keys (the mask) nor queries (left out of α) nor targets, so a
score does not depend on the other rows of its batch. The model is the process's shared handle
(:func:`weatkit.models.pool.get_model`), so word vectors and these scores of one model in one run
use one set of weights. Results are cached per model identity and dtype under
``$WEATKIT_CACHE/sentence`` (:class:`weatkit.models.cache.VectorCache`); a run whose scores are
all cached never loads the network.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.models.batching import ROW_TOKENS, run_batches
from weatkit.models.cache import cached_rows, score_cache
from weatkit.models.handle import ModelHandle, padded
from weatkit.models.pool import get_model

#: Bump when the meaning of cached values changes.
SCORING_VERSION = 1


@dataclass(frozen=True)
class TokenizedSentence:
    """Token ids of one sentence with the model's special tokens, and which ones are special."""

    ids: tuple[int, ...]
    special: tuple[bool, ...]

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.special):
            raise WeatkitError("token ids and special-token flags differ in length")
        if all(self.special):
            raise WeatkitError(f"the sentence {list(self.ids)} has no token besides special ones")

    @classmethod
    def from_ids(cls, ids: Sequence[int]) -> TokenizedSentence:
        """Ids that already carry special tokens first and last (the MBE sets' convention)."""
        values = tuple(int(i) for i in ids)
        if len(values) < 3:
            raise WeatkitError(
                f"token ids {list(values)} need a special token at each end and a token between"
            )
        return cls(values, (True, *([False] * (len(values) - 2)), True))

    @property
    def content(self) -> list[int]:
        """Positions of the non-special tokens (the set C)."""
        return [j for j, s in enumerate(self.special) if not s]

    def key(self) -> str:
        return json.dumps([self.ids, [int(s) for s in self.special]])


@dataclass
class UnmaskedScores:
    """Per-sentence results of the unmasked forward pass.

    Attributes:
        aul: AUL(T), natural log (float64, one per sentence).
        aula: AULA(T), natural log.
        embedding: mean last-layer hidden state over the non-special tokens (float32, n × d).
    """

    aul: np.ndarray
    aula: np.ndarray
    embedding: np.ndarray


class MaskedLM:
    """A masked LM (hub id or local directory) that scores tokenised sentences.

    The model is the process's shared handle (:func:`weatkit.models.pool.get_model`); its
    tokenizer is loaded on first need, its network only when something is not cached.

    Example:
        >>> lm = MaskedLM("bert-base-uncased")  # doctest: +SKIP
        >>> scores = lm.unmasked(lm.tokenize(["She is a nurse."]))  # doctest: +SKIP
        >>> scores.aula.shape  # doctest: +SKIP
        (1,)
    """

    def __init__(self, model: str, options: ContextualOptions | None = None) -> None:
        self.model_name = str(model)
        self.options = options or ContextualOptions()
        self.options.validate()
        self.handle: ModelHandle = get_model(self.model_name, self.options)
        self._config = self.handle.config
        if self.handle.decoder_only:
            raise WeatkitError(
                f"{self.model_name} ({self._config.__class__.__name__}) is a causal LM; "
                "AUL, AULA and masked-token scores need a masked LM"
            )
        self.identity = self.handle.identity
        self.n_computed = 0
        self.n_cached = 0
        #: (network, device) once this object has needed the network
        self._network: tuple[Any, Any] | None = None

    # -- loading --------------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        return self.handle.tokenizer

    @property
    def max_length(self) -> int | None:
        """The longest input the model takes, special tokens included (None when unknown)."""
        return self.handle.max_length

    @property
    def mask_id(self) -> int:
        mask = self.tokenizer.mask_token_id
        if mask is None:
            raise WeatkitError(f"{self.model_name} has no mask token: it is not a masked LM")
        return int(mask)

    def _load(self) -> tuple[Any, Any]:
        if self._network is None:
            self._network = (self.handle.network("mlm"), self.handle.device)
        return self._network

    # -- encoding -------------------------------------------------------------------------------

    def tokenize(self, sentences: Sequence[str]) -> list[TokenizedSentence]:
        """Each sentence encoded with the model's special tokens."""
        if isinstance(sentences, str):
            raise WeatkitError("give a list of sentences, not one string")
        texts = list(sentences)
        for i, text in enumerate(texts):
            if not isinstance(text, str) or not text.strip():
                raise WeatkitError(f"sentence {i} is empty or not text: {text!r}")
        if not texts:
            return []
        enc = self.tokenizer(texts, return_special_tokens_mask=True)
        out = []
        for i, (ids, special) in enumerate(
            zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)
        ):
            if all(special):
                raise WeatkitError(f"sentence {i} gives no token: {texts[i]!r}")
            out.append(TokenizedSentence(tuple(ids), tuple(bool(s) for s in special)))
        return out

    def word_ids(self, sentences: Sequence[str]) -> list[list[int | None]]:
        """The fast tokenizer's ``word_ids()`` of each sentence, aligned with
        :meth:`tokenize`'s ids (None for special tokens)."""
        if not getattr(self.tokenizer, "is_fast", False):
            raise WeatkitError(
                f"{self.model_name}: word boundaries need a fast tokenizer (word_ids); this one "
                "is slow"
            )
        enc = self.tokenizer(list(sentences), return_special_tokens_mask=True)
        return [list(enc.word_ids(i)) for i in range(len(sentences))]

    def check_lengths(self, sentences: Sequence[TokenizedSentence], what: str = "sentence") -> None:
        """WeatkitError naming the first sentence longer than the model takes."""
        limit = self.max_length
        for i, s in enumerate(sentences):
            if limit is not None and len(s.ids) > limit:
                raise WeatkitError(
                    f"{what} {i} is {len(s.ids)} tokens long; {self.model_name} takes {limit}"
                )

    # -- scores ---------------------------------------------------------------------------------

    def unmasked(
        self, sentences: Sequence[TokenizedSentence], *, show_progress: bool | None = None
    ) -> UnmaskedScores:
        """AUL, AULA and the sentence embedding of each sentence (one unmasked pass each)."""
        self.check_lengths(sentences)
        keys = [s.key() for s in sentences]
        values = self._cached(
            "unmasked",
            dict(zip(keys, sentences, strict=True)),
            lambda batch: _unmasked_batch(self.handle, batch, self.handle.pad_id),
            show_progress,
            "AUL/AULA",
        )
        rows = np.stack([values[k] for k in keys]) if keys else np.zeros((0, 2), np.float32)
        return UnmaskedScores(
            aul=rows[:, 0].astype(np.float64),
            aula=rows[:, 1].astype(np.float64),
            embedding=rows[:, 2:].astype(np.float32),
        )

    def masked_log_probs(
        self,
        sentences: Sequence[TokenizedSentence],
        positions: Sequence[Sequence[int]],
        *,
        also_masked: Sequence[Sequence[Sequence[int]]] | None = None,
        show_progress: bool | None = None,
    ) -> list[np.ndarray]:
        """Per sentence, ``log P(w_p | T with p masked)`` at each of its ``positions``;
        ``also_masked[i][k]``: positions masked besides ``positions[i][k]`` in that row."""
        if len(positions) != len(sentences):
            raise WeatkitError("give one list of positions per sentence")
        if also_masked is None:
            also_masked = [[()] * len(wanted) for wanted in positions]
        self.check_lengths(sentences)
        reads = [
            [
                (s, int(p), tuple(int(q) for q in more))
                for p, more in zip(wanted, extra, strict=True)
            ]
            for s, wanted, extra in zip(sentences, positions, also_masked, strict=True)
        ]
        return self._masked_reads(reads, show_progress)

    def masked_candidates(
        self,
        sentences: Sequence[TokenizedSentence],
        positions: Sequence[int],
        candidates: Sequence[Sequence[int]],
        *,
        also_masked: Sequence[Sequence[int]] | None = None,
        show_progress: bool | None = None,
    ) -> list[np.ndarray]:
        """Per sentence ``i``, ``log P(c | T_i with positions[i] masked)`` for each token id ``c``
        of ``candidates[i]`` (float64; whatever token ``T_i`` has at ``positions[i]``), from one
        forward pass per masked input; ``also_masked[i]``: positions masked besides it.

        Raises:
            WeatkitError: lists of other lengths; a position that is not a token of its
                sentence; a candidate that is not a token id of the model.
        """
        n = len(sentences)
        if len(positions) != n or len(candidates) != n:
            raise WeatkitError("give one position and one list of candidates per sentence")
        more = [()] * n if also_masked is None else also_masked
        if len(more) != n:
            raise WeatkitError("give one list of further masked positions per sentence")
        self.check_lengths(sentences)
        vocabulary = int(self._config.vocab_size)
        reads = []
        for s, p, ids, others in zip(sentences, positions, candidates, more, strict=True):
            p, others = int(p), tuple(int(q) for q in others)
            row = []
            for c in ids:
                if not 0 <= int(c) < vocabulary:
                    raise WeatkitError(
                        f"candidate {c} is not a token id of {self.model_name} "
                        f"(0 to {vocabulary - 1})"
                    )
                read = TokenizedSentence((*s.ids[:p], int(c), *s.ids[p + 1 :]), s.special)
                row.append((read, p, others))
            reads.append(row)
        return self._masked_reads(reads, show_progress)

    def _masked_reads(
        self, reads: list[list[_Read]], show_progress: bool | None
    ) -> list[np.ndarray]:
        """``log P(w_p | T with p and the others masked)`` of each (sentence, p, others) read,
        one array per list; the reads that share a masked input share its forward pass."""
        rows: dict[str, _Read] = {}
        keys: list[list[str]] = []
        for row in reads:
            row_keys = []
            for s, p, others in row:
                for q in (p, *others):
                    if not 0 <= q < len(s.ids) or s.special[q]:
                        raise WeatkitError(f"position {q} is not a token of {list(s.ids)}")
                key = json.dumps([s.ids, p, *([list(others)] if others else [])])
                rows[key] = (s, p, others)
                row_keys.append(key)
            keys.append(row_keys)
        mask = self.mask_id if rows else 0
        values = self._cached(
            "masked",
            rows,
            lambda batch: _masked_batch(self.handle, batch, self.handle.pad_id, mask),
            show_progress,
            "masked tokens",
            merge=_one_pass_per_input,
        )
        return [np.array([float(values[k][0]) for k in ks], dtype=np.float64) for ks in keys]

    def _cached(
        self,
        task: str,
        items: dict[str, Any],
        compute: Callable[[list[Any]], np.ndarray],
        show_progress: bool | None,
        label: str,
        merge: Callable[[list[Any]], tuple[list[Any], Any]] | None = None,
    ) -> dict[str, np.ndarray]:
        """Values of ``items`` (key → input) from the cache, the rest computed in batches;
        ``merge`` makes the missing inputs fewer forward passes and says where each one's
        value is in theirs."""
        if not items:
            return {}
        cache = None
        if self.options.cache:
            cache = score_cache(
                "sentence",
                f"sentence-{task}",
                SCORING_VERSION,
                self.identity,
                self.options,
            )

        def run(missing: list[str]) -> np.ndarray:
            _, device = self._load()
            rows = [items[k] for k in missing]
            n_sentences = len({_sentence(row).key() for row in rows})
            passes, where = merge(rows) if merge is not None else (rows, slice(None))
            values, _ = run_batches(
                passes,
                compute,
                length=_length,
                batch_size=self.options.batch_size,
                desc=f"{label} with {self.handle.short_name}",
                model_name=self.model_name,
                device=device,
                unit="pass",
                show_progress=show_progress,
                row_tokens=ROW_TOKENS,
                inputs=f"for {n_sentences} sentences",
            )
            self.n_computed += len(missing)
            return values[where]

        found, n_cached = cached_rows(cache, list(items), run)
        self.n_cached += n_cached
        return found


#: A masked read: (sentence, position read, further positions masked); it reads the sentence's
#: own token at the position.
_Read = tuple[TokenizedSentence, int, tuple[int, ...]]
#: One masked forward pass: (a sentence, position read, further positions masked, the tokens
#: read there).
_Pass = tuple[TokenizedSentence, int, tuple[int, ...], tuple[int, ...]]
#: An unmasked row, a masked read or a masked pass.
_Row = TokenizedSentence | _Read | _Pass


def _sentence(item: _Row) -> TokenizedSentence:
    """The sentence of an unmasked row, a masked read or a masked pass."""
    return item[0] if isinstance(item, tuple) else item


def _length(item: _Row) -> int:
    return len(_sentence(item).ids)


def _unmasked_batch(
    handle: ModelHandle, batch: Sequence[TokenizedSentence], pad: int
) -> np.ndarray:
    """Rows ``[AUL, AULA, embedding…]`` of one right-padded unmasked forward pass."""
    ids, mask = padded([s.ids for s in batch], pad)
    content = torch.zeros(ids.shape, dtype=torch.bool)
    for r, s in enumerate(batch):
        content[r, : len(s.ids)] = ~torch.tensor(s.special)
    device = handle.device
    ids, mask, content = ids.to(device), mask.to(device), content.to(device)
    rows, cols = content.nonzero(as_tuple=True)  # the head runs at the content tokens only
    with handle.eager_attention("mlm"), torch.inference_mode():  # eager gives the weights
        values, out = handle.token_log_probs(
            "mlm",
            input_ids=ids,
            attention_mask=mask,
            rows=rows,
            cols=cols,
            targets=ids[rows, cols],
            output_attentions=True,
            output_hidden_states=True,
        )
        logp = torch.zeros(ids.shape, device=device)
        logp[rows, cols] = values
        received = torch.zeros(ids.shape, device=ids.device)
        queries = mask.float()
        for layer in out.attentions:  # (n, heads, query, key)
            received += (layer.float().mean(dim=1) * queries[:, :, None]).sum(dim=1)
        alpha = received / (len(out.attentions) * queries.sum(dim=1, keepdim=True))
        weight = content.float()
        count = weight.sum(dim=1)
        aul = (logp * weight).sum(dim=1) / count
        aula = (alpha * logp * weight).sum(dim=1) / count
        hidden = out.hidden_states[-1].float()
        embedding = (hidden * weight[..., None]).sum(dim=1) / count[:, None]
        return torch.cat([aul[:, None], aula[:, None], embedding], dim=1).cpu().numpy()


def _one_pass_per_input(reads: list[_Read]) -> tuple[list[_Pass], tuple[np.ndarray, np.ndarray]]:
    """The reads whose masked inputs are equal (they differ at masked positions only) as one
    pass that reads each one's token, every pass padded to the same number of tokens (with its
    first); and each read's (pass, column) in the passes' values."""
    index: dict[str, int] = {}
    first: list[_Read] = []
    tokens: list[list[int]] = []
    where = []
    for s, p, others in reads:
        masked = list(s.ids)
        for q in (p, *others):
            masked[q] = -1
        i = index.setdefault(json.dumps([masked, p]), len(index))
        if i == len(first):
            first.append((s, p, others))
            tokens.append([])
        where.append((i, len(tokens[i])))
        tokens[i].append(s.ids[p])
    width = max(len(t) for t in tokens)
    passes = [
        (*read, (*t, *t[:1] * (width - len(t)))) for read, t in zip(first, tokens, strict=True)
    ]
    rows, columns = zip(*where, strict=True)
    return passes, (np.array(rows), np.array(columns))


def _masked_batch(
    handle: ModelHandle, batch: Sequence[_Pass], pad: int, mask_id: int
) -> np.ndarray:
    """``log P(c | T with p and the row's other positions masked)`` of each token ``c`` read by
    each (sentence, position, other positions, tokens) pass, as an (n, k) array."""
    ids, mask = padded([s.ids for s, *_ in batch], pad)
    rows = torch.arange(len(batch))
    cols = torch.tensor([p for _, p, _, _ in batch])
    targets = torch.tensor([tokens for *_, tokens in batch])
    ids[rows, cols] = mask_id
    for r, (_, _, others, _) in enumerate(batch):
        ids[r, list(others)] = mask_id
    logp, _ = handle.token_log_probs(
        "mlm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols, targets=targets
    )
    return logp.cpu().numpy()
