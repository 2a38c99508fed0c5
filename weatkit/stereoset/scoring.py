"""StereoSet intrasentence scores from masked (MLM) and causal (GLM) language models.

Each intrasentence sentence fills the ``BLANK`` of its context with a candidate word ``w``
(:attr:`weatkit.stereoset.data.Sentence.word`); its score (higher = more likely) is, as in the
reference inference code (github.com/moinnadeem/StereoSet ``code/dataloader.py``
``IntrasentenceLoader`` and ``code/models``; github.com/slds-lmu/stereotypes-multi
``code/intrasentence_inference.py``):

**Masked LMs** — ``w`` is tokenised alone, ``t_1 … t_k = tokenizer(w, add_special_tokens=False)``
(the reference's ``tokenizer.encode(w, add_special_tokens=False)``). Step ``i`` (1 … k) puts
``decode(t_1 … t_{i−1}) + mask_token`` in place of ``BLANK`` (one mask; the rest of the word is
absent), encodes the context with the model's special tokens and reads

    p_i = softmax(logits at the mask)[t_i]

and the score is the mean of the probabilities (not of their logs): ``score = (1/k) Σ_i p_i``.
A context with several ``BLANK`` s (two in the English dev set) gets the mask at the last one
(the word's position, see :func:`weatkit.stereoset.data.template_word`) and ``w`` in the others;
the reference replaces every ``BLANK`` with the mask, which puts two masks in one input and
misaligns its batch.

**Causal LMs** — any backend that offers causal scores (``hf``, ``openai``, ``vllm``;
:mod:`weatkit.scoring`): the model spec's :class:`~weatkit.scoring.base.Scorer` gives the
sentence's tokens ``t_1 … t_n`` (its own tokenizer, no special tokens) and the log-probability
of each given the ones before it (:meth:`~weatkit.scoring.base.Scorer.causal_logprobs`). The
``hf`` backend puts the BOS token (``tokenizer.bos_token_id``, else ``eos_token_id``;
``<|endoftext|>`` for GPT-2) before the sentence, so every token has one, and

    score = exp((1/n) Σ_j log P(t_j | BOS, t_1 … t_{j−1}))

the geometric mean of the token probabilities (the reference's ``2 ** mean(log2 p)``). A
backend that gives no log-probability for the first token (an OpenAI-compatible server: NaN,
:class:`~weatkit.scoring.base.TokenLogprobs`) has the mean over the tokens that have one,
``j = 2 … n``. The reference reads ``P(t_1 | BOS)`` from a BOS-only pass and the later tokens
from a pass over the sentence *without* the BOS (``P(t_j | t_1 … t_{j−1})``); here, by default,
all tokens are conditioned on the BOS, in one pass (``bos_pass`` below).

**Options** (:class:`StereosetScoring`; ``--compat stereoset`` selects the reference's
conventions, :mod:`weatkit.measures.compat`):

* ``blanks`` — ``"last"`` (above) or ``"all"``: every ``BLANK`` becomes ``prefix + mask`` and the
  first mask is read, what the reference's ``output[mask_idxs].index_select(1, next_token)
  .diag()`` does at its default batch size of 1.
* ``bos_pass`` — ``"joint"`` (above) or ``"separate"``: ``P(t_1 | BOS)`` from a pass over the BOS
  alone and ``P(t_j | t_1 … t_{j−1})`` (j ≥ 2) from a pass over the sentence without the BOS,
  the reference ``eval_generative_models.py``. Both come from the Scorer: the first is the first
  value of the joint pass (causal attention: the BOS position sees the BOS alone), the others
  the values of ``causal_logprobs(…, start="none")`` after the first, so

      score = exp((1/n) (log P(t_1 | BOS) + Σ_{j≥2} log P(t_j | t_1 … t_{j−1})))

  on every backend that scores a text with no start token (``hf``, ``vllm``; an
  OpenAI-compatible server cannot, and says so in one line before any request).
* ``leading_space`` — False (the reference) or True: when the ``BLANK`` follows a space, the
  candidate word is tokenised as ``" " + w``, so a byte-level BPE (RoBERTa) scores ``Ġw`` — the
  token that follows a space in running text — rather than the word-initial ``w`` (the bug of
  the reference's RoBERTa scores reported in McGill-NLP/bias-bench issue 5); the decoded prefix
  of later steps loses that space again. WordPiece and SentencePiece tokenisations do not change.

All steps of all sentences run in batches sorted by length and padded on the right with an
attention mask, so a score does not depend on its batch. Masked-LM scores are float32 (the
precision of the forward pass) and are cached on disk per model identity, kind and dtype
(:class:`weatkit.models.cache.VectorCache` under ``$WEATKIT_CACHE/scores/stereoset``); a run
whose scores are all cached loads neither the tokenizer nor the model, which is the process's
shared handle (:func:`weatkit.models.pool.get_model`). Causal-LM scores are float64 from the
Scorer's float64 log-probabilities; caching them is the scoring layer's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import WeatkitError
from weatkit.models.batching import run_batches
from weatkit.models.cache import cached_rows, score_cache
from weatkit.models.handle import HEADS, ModelHandle, padded
from weatkit.models.pool import get_model
from weatkit.scoring import Scorer, get_scorer, parse_model_spec
from weatkit.scoring.base import NO_START
from weatkit.stereoset.data import BLANK, StereoSet

KINDS = HEADS
#: Bump when the meaning of cached (masked-LM) scores changes.
SCORING_VERSION = 1
BLANKS: tuple[str, ...] = ("last", "all")
BOS_PASSES: tuple[str, ...] = ("joint", "separate")


@dataclass(frozen=True)
class StereosetScoring:
    """How intrasentence sentences are scored (module docstring, "Options").

    Attributes:
        blanks: ``"last"``: the mask at the last ``BLANK``, the word in the others; ``"all"``:
            every ``BLANK`` masked and the first mask read (the reference).
        bos_pass: causal LMs: ``"joint"``: every token conditioned on the BOS in one pass;
            ``"separate"``: the first token from a BOS-only pass, the others from the sentence
            without the BOS (the reference; backends that score with ``start="none"``).
        leading_space: masked LMs: tokenise the candidate word with the space before its
            ``BLANK`` (True; the bias-bench fix for byte-level BPE) or alone (False; the
            reference).
    """

    blanks: str = "last"
    bos_pass: str = "joint"
    leading_space: bool = False

    def validate(self) -> None:
        """WeatkitError naming the field and its choices on a bad value."""
        for name, choices in (("blanks", BLANKS), ("bos_pass", BOS_PASSES)):
            value = getattr(self, name)
            if value not in choices:
                raise WeatkitError(
                    f"unknown StereoSet {name} {value!r}: choose from {', '.join(choices)}"
                )
        if not isinstance(self.leading_space, bool):
            raise WeatkitError(
                f"StereoSet leading_space must be true or false, not {self.leading_space!r}"
            )

    def changed(self) -> dict[str, object]:
        """The fields that differ from the defaults (they enter the cache key)."""
        default = StereosetScoring()
        return {k: v for k, v in asdict(self).items() if getattr(default, k) != v}


@dataclass
class ScoringStats:
    """Counts for one scorer, cumulative over its calls.

    Attributes:
        n_sentences: distinct inputs scored (cached or computed).
        n_cached: masked-LM inputs whose score came from the on-disk cache (causal LMs: none
            here; the scoring layer caches their log-probabilities).
        n_computed: inputs that went through the model (causal LMs: through its Scorer).
        n_steps: model rows (MLM: one per token of each candidate word; GLM: one per sentence
            and Scorer pass, two passes with ``bos_pass="separate"``).
        n_unknown: MLM candidate words containing the unknown token (scored as such, as the
            reference does).
        n_batches: forward passes of a masked LM (causal LMs: none here; the Scorer's are
            its own).
    """

    n_sentences: int = 0
    n_cached: int = 0
    n_computed: int = 0
    n_steps: int = 0
    n_unknown: int = 0
    n_batches: int = 0


@dataclass
class _Item:
    """One row of a forward pass and where its log-probabilities are read."""

    owner: int  # index of the input it belongs to
    ids: list[int]
    positions: list[int]  # positions whose distributions are read
    targets: list[int]  # the token read at each position


def fill_blank(context: str, insertion: str, word: str) -> str:
    """``context`` with its last ``BLANK`` replaced by ``insertion`` and any other by ``word``."""
    head, _, tail = context.rpartition(BLANK)
    return head.replace(BLANK, word) + insertion + tail


class IntrasentenceScorer:
    """StereoSet intrasentence scores of one model (a model spec: a hub id or a local
    directory, ``hf:``, ``openai:BASE_URL#MODEL``, ``vllm:``; :mod:`weatkit.scoring.spec`).

    Masked LMs run on the process's shared handle (:func:`weatkit.models.pool.get_model`; ``hf``
    only), its tokenizer and network loaded on first need; causal LMs go through the spec's
    :class:`~weatkit.scoring.base.Scorer` (:func:`weatkit.scoring.get_scorer`), made on first
    need.

    Example:
        >>> scorer = IntrasentenceScorer("bert-base-cased")  # doctest: +SKIP
        >>> scores = scorer.score(load_stereoset("en"))  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str,
        kind: str | None = None,
        options: ContextualOptions | None = None,
        scoring: StereosetScoring | None = None,
    ) -> None:
        self.model_name = str(model)
        self.spec = parse_model_spec(self.model_name)
        self.options = options or ContextualOptions()
        self.options.validate()
        self.scoring = scoring or StereosetScoring()
        self.scoring.validate()
        hf = self.spec.backend == "hf"
        self.handle: ModelHandle | None = get_model(self.spec.model, self.options) if hf else None
        if self.handle is not None:
            self.kind = self.handle.lm_kind(kind)
        elif kind in (None, "glm"):
            self.kind = "glm"
        else:
            raise WeatkitError(
                f"{self.spec}: the {self.spec.backend} backend scores causal LMs (kind 'glm'), "
                f"not kind {kind!r}"
            )
        self.stats = ScoringStats()
        # set once this scorer needs the tokenizer / the network / the causal LM's Scorer
        self._tokenizer_obj: Any = None
        self._network: ModelHandle | None = None
        self._causal: Scorer | None = None

    def score(self, dataset: StereoSet, show_progress: bool | None = None) -> dict[str, float]:
        """``{sentence_id: score}`` for every intrasentence sentence of ``dataset``."""
        keys: dict[str, str] = {}
        inputs: dict[str, tuple[str, str]] = {}
        for example, sentence in dataset.sentences("intrasentence"):
            if self.kind == "mlm":
                key = json.dumps([example.context, sentence.word], ensure_ascii=False)
            else:
                key = sentence.sentence
            keys[sentence.id] = key
            inputs.setdefault(key, (sentence.id, key))
        self.stats.n_sentences += len(inputs)
        if self.kind == "glm":
            scores = self._causal_scores(list(inputs.values()), show_progress)
        else:
            scores = self._mlm_scores(inputs, show_progress)
        return {sid: scores[key] for sid, key in keys.items()}

    # -- scores ---------------------------------------------------------------------------------

    def _mlm_scores(
        self, inputs: dict[str, tuple[str, str]], show_progress: bool | None
    ) -> dict[str, float]:
        cache = None
        if self.options.cache:
            cache = score_cache(
                "stereoset",
                "stereoset-intrasentence",
                SCORING_VERSION,
                self._handle().identity,
                self.options,
                kind=self.kind,
                **self.scoring.changed(),
            )
        rows, n_cached = cached_rows(
            cache,
            list(inputs),
            lambda keys: self._compute_mlm([inputs[k] for k in keys], show_progress),
        )
        self.stats.n_cached += n_cached
        return {k: float(v[0]) for k, v in rows.items()}

    def _compute_mlm(
        self, sources: list[tuple[str, str]], show_progress: bool | None
    ) -> np.ndarray:
        """float32 masked-LM scores of the inputs (``(sentence id, key)`` pairs): the mean of
        the step probabilities."""
        items = self._encode_mlm(sources)
        mean_logp = self._run(items, show_progress)
        owners = np.array([e.owner for e in items], dtype=np.int64)
        n = len(sources)
        count = np.bincount(owners, minlength=n)
        scores = np.bincount(owners, weights=np.exp(mean_logp), minlength=n) / count
        self.stats.n_computed += n
        return scores.astype(np.float32)

    def _causal_scores(
        self, sources: list[tuple[str, str]], show_progress: bool | None
    ) -> dict[str, float]:
        """``{key: exp(mean log-probability of the sentence's tokens)}`` (module docstring)."""
        texts = [key for _, key in sources]
        lm = self._causal_lm()
        values: list[np.ndarray] = []
        if self.scoring.bos_pass == "separate":  # the pass without the start token first: a
            # backend that cannot run it refuses before the joint pass is sent
            bare = lm.causal_logprobs(texts, show_progress=show_progress, start=NO_START)
            joint = lm.causal_logprobs(texts, show_progress=show_progress)
            for (sid, _), with_start, without in zip(sources, joint, bare, strict=True):
                if with_start.offsets != without.offsets:
                    raise WeatkitError(
                        f"sentence {sid}: {self.spec} splits it into other tokens without the "
                        "start token"
                    )
                values.append(np.append(with_start.logprobs[:1], without.logprobs[1:]))
            self.stats.n_steps += len(bare)
        else:
            values = [s.logprobs for s in lm.causal_logprobs(texts, show_progress=show_progress)]
        self.stats.n_steps += len(values)
        self.stats.n_computed += len(values)
        out = {}
        for (sid, key), logprobs in zip(sources, values, strict=True):
            total, count = np.nansum(logprobs), np.count_nonzero(~np.isnan(logprobs))
            if not count:
                raise WeatkitError(
                    f"sentence {sid}: {self.spec} gives none of its tokens a log-probability"
                )
            out[key] = math.exp(total / count)
        return out

    def _run(self, items: list[_Item], show_progress: bool | None) -> np.ndarray:
        """Mean masked-LM log-probability of each item's targets (float64), in batches sorted by
        length."""
        handle = self._load()
        pad = handle.pad_id
        out, n_batches = run_batches(
            items,
            lambda batch: forward_logprobs(handle, batch, pad),
            length=lambda e: len(e.ids),
            batch_size=self.options.batch_size,
            desc=f"StereoSet {self.kind} intrasentence with {handle.short_name}",
            model_name=self.model_name,
            device=handle.device,
            show_progress=show_progress,
        )
        self.stats.n_batches += n_batches
        self.stats.n_steps += len(items)
        return out.astype(np.float64)

    # -- encoding -------------------------------------------------------------------------------

    def _encode_mlm(self, sources: list[tuple[str, str]]) -> list[_Item]:
        tok = self._tokenizer()
        mask_id, mask = tok.mask_token_id, tok.mask_token
        if mask_id is None or mask is None:
            raise WeatkitError(
                f"{self.model_name} has no mask token: it cannot be scored as a masked LM "
                "(kind='mlm')"
            )
        parsed = [json.loads(key) for _, key in sources]
        spaced = [self._spaced(context) for context, _ in parsed]
        words = [
            (" " if space else "") + word for (_, word), space in zip(parsed, spaced, strict=True)
        ]
        pieces = tok(words, add_special_tokens=False)["input_ids"]
        if any(spaced):
            alone = tok([word for _, word in parsed], add_special_tokens=False)["input_ids"]
            pieces = [
                ids if not space or tok.decode(ids[:1]).strip() else alone_ids
                for ids, alone_ids, space in zip(pieces, alone, spaced, strict=True)
            ]
        owners: list[int] = []
        targets: list[int] = []
        texts: list[str] = []
        unk = tok.unk_token_id
        every = self.scoring.blanks == "all"
        for i, ((sid, _), (context, word), ids, space) in enumerate(
            zip(sources, parsed, pieces, spaced, strict=True)
        ):
            if not ids:
                raise WeatkitError(
                    f"sentence {sid}: the candidate word {word!r} gives no token with "
                    f"{self.model_name}"
                )
            self.stats.n_unknown += int(unk is not None and unk in ids)
            for step, target in enumerate(ids):
                prefix = tok.decode(ids[:step]) if step else ""
                if space:  # the context has the space already
                    prefix = prefix.lstrip(" ")
                if every:
                    texts.append(context.replace(BLANK, prefix + mask))
                else:
                    texts.append(fill_blank(context, prefix + mask, word))
                owners.append(i)
                targets.append(int(target))
        encoded = tok(texts)["input_ids"]
        limit = self._handle().max_length
        items = []
        for owner, target, ids in zip(owners, targets, encoded, strict=True):
            sid = sources[owner][0]
            n_masks = parsed[owner][0].count(BLANK) if every else 1
            ids = list(ids)
            if limit is not None and len(ids) > limit:
                raise WeatkitError(
                    f"sentence {sid}: {len(ids)} tokens, longer than {self.model_name}'s {limit}"
                )
            where = [j for j, t in enumerate(ids) if t == mask_id]
            if len(where) != n_masks:
                raise WeatkitError(
                    f"sentence {sid}: the masked context has {len(where)} mask tokens, "
                    f"not {n_masks}"
                )
            items.append(_Item(owner, ids, where[:1], [target]))
        return items

    def _spaced(self, context: str) -> bool:
        """Whether the candidate word is tokenised with a leading space in ``context``."""
        if not self.scoring.leading_space:
            return False
        head = context.rpartition(BLANK)[0]
        return head.endswith(" ")

    # -- loading --------------------------------------------------------------------------------

    def _handle(self) -> ModelHandle:
        """The hf model's handle (``__init__`` refuses what needs it on other backends)."""
        assert self.handle is not None
        return self.handle

    def _tokenizer(self) -> Any:
        if self._tokenizer_obj is None:
            self._tokenizer_obj = self._handle().tokenizer
        return self._tokenizer_obj

    def _load(self) -> ModelHandle:
        if self._network is None:
            self._handle().network(self.kind)
            self._network = self._handle()
        return self._network

    def _causal_lm(self) -> Scorer:
        """The spec's Scorer under the options given, checked to offer causal scores."""
        if self._causal is None:
            lm = get_scorer(self.spec, self.options)
            tok = self.handle.tokenizer if self.handle is not None else None
            if tok is not None and tok.bos_token_id is None and tok.eos_token_id is None:
                raise WeatkitError(
                    f"{self.model_name} has neither a BOS nor an EOS token to start sentences with"
                )
            if "causal" not in lm.capabilities:
                raise WeatkitError(
                    f"{self.model_name} gives no causal token log-probabilities: it cannot be "
                    "scored as a causal LM (kind='glm')"
                )
            self._causal = lm
        return self._causal


def forward_logprobs(handle: ModelHandle, batch: Sequence[_Item], pad_id: int) -> np.ndarray:
    """One right-padded masked-LM forward pass; per item the mean over its positions ``p`` of
    ``log softmax(logits[p])[target]`` (natural log; float32 softmax, float64 mean)."""
    n = len(batch)
    ids, mask = padded([e.ids for e in batch], pad_id)
    rows: list[int] = []
    cols: list[int] = []
    targets: list[int] = []
    for r, e in enumerate(batch):
        rows += [r] * len(e.positions)
        cols += e.positions
        targets += e.targets
    device = handle.device
    logp = handle.log_probs("mlm", input_ids=ids, attention_mask=mask, rows=rows, cols=cols)
    with torch.inference_mode():
        logp = logp.gather(1, torch.tensor(targets, device=device)[:, None])[:, 0]
    values = logp.cpu().double().numpy()
    row_idx = np.asarray(rows, dtype=np.int64)
    total = np.bincount(row_idx, weights=values, minlength=n)
    return total / np.bincount(row_idx, minlength=n)


def score_intrasentence(
    model: str,
    dataset: StereoSet,
    *,
    kind: str | None = None,
    options: ContextualOptions | None = None,
    scoring: StereosetScoring | None = None,
    show_progress: bool | None = None,
) -> dict[str, float]:
    """``{sentence_id: score}`` of every intrasentence sentence of ``dataset`` under ``model``.

    ``kind`` is ``"mlm"`` or ``"glm"``; None decides from the config (decoder-only → ``glm``).
    ``scoring`` chooses the conventions (:class:`StereosetScoring`; defaults: weatkit's).
    Scores are probabilities (MLM: mean token probability of the candidate word; GLM: geometric
    mean token probability of the sentence), see the module docstring.
    """
    scorer = IntrasentenceScorer(model, kind=kind, options=options, scoring=scoring)
    return scorer.score(dataset, show_progress)


def to_predictions(scores: dict[str, float]) -> dict[str, list[dict[str, object]]]:
    """``{"intrasentence": [{"id", "score"}, ...]}``: the reference's predictions format."""
    for sid, value in scores.items():
        if not math.isfinite(value):
            raise WeatkitError(f"sentence {sid}: score {value} is not finite")
    return {"intrasentence": [{"id": sid, "score": float(v)} for sid, v in scores.items()]}
