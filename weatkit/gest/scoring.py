"""Per-sample GEST scores from masked (MLM) and causal (GLM) language models.

GEST (Pikuliak et al., "Women Are Beautiful, Men Are Leaders: Gender Stereotypes in Machine
Translation and Language Modeling", arXiv 2311.18711, §4.2 and §4.3; reference code: the
``_inference.ipynb`` notebook and ``masked_models/utils.py`` of github.com/kinit-sk/gest) puts a
first-person, gender-neutral sentence ``s`` into a template ``t`` and compares the probabilities
of a masculine word ``w_m`` and a feminine word ``w_f`` where the template needs a person:

    score(s, t) = log P(w_m | t(s)) − log P(w_f | t(s))

in base 10 by default (the values of the upstream prediction files; ``log_base="e"`` gives
natural logarithms, ``log10 x = ln x / ln 10``).

**Masked LMs** (Table 2 of the paper; template ids 0–3 = the paper's 1–4)::

    0  {w} said: "{s}"         He / She
    1  The {w} said: "{s}"     man / woman
    2  "{s}", {w} said.        he / she
    3  "{s}", the {w} said.    man / woman

Both variants are tokenised with the model's special tokens; the word's tokens (found by
character offsets) are replaced by as many mask tokens, and one forward pass of the masked
sentence gives, for a word of ``k`` tokens ``w_1 … w_k`` at masked positions ``p_1 … p_k``,

    log P(w | t(s)) = (1/k) Σ_i log softmax(logits[p_i])[w_i]

(the mean of the token log-probabilities, as the reference's ``masked_logprob_score``). The two
variants must give the same number of word tokens in the same context, so that they share one
masked input; otherwise the sample is skipped with the reason recorded (the reference compares
the token lists position by position and would mask a shifted tail instead).

**Causal LMs** (template ids 0–1): the prefix ``"{s}",`` (he / she) or ``"{s}", the``
(man / woman) and the word, joined by a space, are one text ``t = prefix + " " + w``, scored by
the model's :class:`~weatkit.scoring.base.Scorer` (any backend offering ``causal``: ``hf``,
``vllm``, ``openai``) as its tokenizer encodes it (``start="tokenizer"``: a BOS only where the
tokenizer adds one, e.g. Llama; none for GPT-2, Pythia, Phi; the reference's
``tokenizer(prefix)``)::

    log P(w | prefix) = Σ_{k ∈ W} log P(t_k | t_<k)

where W are the tokens inside the word's characters, the space before it included
(:meth:`~weatkit.scoring.base.TokenLogprobs.within`): ``Ġhe`` for byte-level BPE, ``▁he`` for
SentencePiece, the tokens the tokenizer's leading-space convention gives. A word of one token
(he, she, man, woman in the usual vocabularies) is the reference's number, the softmax at the
last prefix position. A word of several tokens is the log-probability of all of them, one after
another (the chain rule); the reference's ``encode(w)[-1]`` would score its last token alone,
and earlier weatkit versions its first. A sample is skipped, with the reason, when a word shares a
token with the prefix, when the prefix tokenises differently before the two words, or when the
text is longer than the model takes.

**Slavic masked LMs** (§4.3): a pair of sentences that differ in one word, masculine and
feminine; both are tokenised, the token position where they differ is masked and the score is
``log P(masc token) − log P(fem token)`` at it. Pairs whose tokenisations differ in length or in
more (or fewer) than one position are skipped and counted, as in the paper ("we only considered
pairs that differ in exactly one token").

Masked-LM batches are padded on the right with an attention mask (an item's score does not
depend on the other items in its batch) and sorted by length. The masked LM is the process's
shared handle (:func:`weatkit.models.pool.get_model`); its scores are cached on disk per model
identity, kind, dtype and template (:class:`weatkit.models.cache.VectorCache` under
``$WEATKIT_CACHE/scores/gest``, natural logarithms in float32). A causal LM's token
log-probabilities are cached by the scoring layer, per text (:mod:`weatkit.scoring.cache`). A run
whose scores are all cached never loads the model's weights.

The templates and the score table are in :mod:`weatkit.gest.templates`, the masked-LM inputs and
forward passes in :mod:`weatkit.gest.masked`, the causal-LM word comparison in
:mod:`weatkit.gest.causal`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from weatkit.embeddings.contextual import ContextualOptions
from weatkit.errors import ModelError, WeatkitError
from weatkit.gest.causal import leading_space_token_id, word_difference
from weatkit.gest.masked import MaskedItem, encode_mlm, encode_pair, forward_scores, item_results
from weatkit.gest.templates import (
    COLUMNS,
    PAIR_COLUMNS,
    TEMPLATES,
    GestTemplate,
    check_texts,
    fill,
    log_scale,
    score_frame,
)
from weatkit.gest.templates import GLM_TEMPLATES as GLM_TEMPLATES
from weatkit.gest.templates import LOG_BASES as LOG_BASES
from weatkit.gest.templates import MLM_TEMPLATES as MLM_TEMPLATES
from weatkit.models.batching import run_batches
from weatkit.models.cache import cached_rows, counting, score_cache
from weatkit.models.handle import HEADS, ModelHandle
from weatkit.models.pool import get_model
from weatkit.scoring.base import Scorer, logprobs_by_text
from weatkit.scoring.registry import get_scorer, model_kind
from weatkit.scoring.spec import ModelSpec, parse_model_spec

KINDS = HEADS
#: Bump when the meaning of cached scores changes.
SCORING_VERSION = 1


@dataclass
class ScoringStats:
    """Counts for one scorer, cumulative over its calls.

    Attributes:
        n_scored: (sample, template) items with a score, cached or computed.
        n_cached: items whose score came from the on-disk cache (causal LMs: texts, two per
            item, whose token log-probabilities did).
        n_computed: items (causal LMs: texts) that went through the model.
        n_skipped: items skipped (the reason is in the ``skipped`` column).
        n_batches: forward passes of a masked LM.
    """

    n_scored: int = 0
    n_cached: int = 0
    n_computed: int = 0
    n_skipped: int = 0
    n_batches: int = 0


def load_lm(handle: ModelHandle, kind: str) -> ModelHandle:
    """The handle with its ``AutoModelForMaskedLM`` (``mlm``) or ``AutoModelForCausalLM``
    (``glm``) loaded (:meth:`weatkit.models.handle.ModelHandle.network`: safetensors unless
    ``allow_pickle``, repository code only with ``trust_remote_code``)."""
    handle.network(kind)
    return handle


def language_model_kind(spec: ModelSpec, kind: str | None, options: Any = None) -> str:
    """``kind`` (``"mlm"`` or ``"glm"``) checked, or with None the model's own
    (:func:`weatkit.scoring.registry.model_kind`: an hf model's from its config, a model behind
    another backend a causal LM); masked-LM scores need an hf model."""
    if kind is None:
        return model_kind(spec, options)
    if kind not in HEADS:
        raise ModelError(f"unknown model kind {kind!r}: choose mlm or glm")
    if kind == "mlm" and spec.backend != "hf":
        raise ModelError(
            f"{spec}: masked-LM (mlm) scores need an hf model; the {spec.backend} backend gives "
            "causal log-probabilities (glm)"
        )
    return kind


class GestScorer:
    """GEST scores of one model: a model spec (:mod:`weatkit.scoring.spec`; a hub id or a local
    directory is an hf model).

    A masked LM is the process's shared handle (:func:`weatkit.models.pool.get_model`): its
    tokenizer is loaded on first need, its network only when some score is not cached. A causal
    LM is scored through its :class:`~weatkit.scoring.base.Scorer`
    (:func:`weatkit.scoring.get_scorer`), any backend.

    Attributes:
        kind: ``mlm`` or ``glm``.
        scorer: the causal LM's Scorer (None for a masked LM).
        handle: an hf model's shared handle (None for another backend).
        identity: the model's identity in cache keys (the handle's; the Scorer's for a causal
            LM behind another backend).

    Example:
        >>> scorer = GestScorer("bert-base-uncased")  # doctest: +SKIP
        >>> df = scorer.score_samples(["I am emotional."], templates=[2])  # doctest: +SKIP
        >>> list(df.columns)  # doctest: +SKIP
        ['sample_id', 'template', 'score', 'skipped']
    """

    def __init__(
        self, model: str, kind: str | None = None, options: ContextualOptions | None = None
    ) -> None:
        self.model_name = str(model)
        self.options = options or ContextualOptions()
        self.options.validate()
        spec = parse_model_spec(self.model_name)
        self.kind = language_model_kind(spec, kind, self.options)
        self.handle: ModelHandle | None = (
            get_model(spec.model, self.options) if spec.backend == "hf" else None
        )
        self.scorer: Scorer | None = (
            get_scorer(spec, self.options) if self.kind == "glm" else None
        )
        self.identity: Any = (
            self.handle.identity if self.handle is not None else self.scorer.identity
        )
        self.stats = ScoringStats()
        self._network: ModelHandle | None = None  # set once this scorer needs the network

    # -- public ---------------------------------------------------------------------------------

    def score_samples(
        self,
        sentences: Sequence[str],
        templates: Sequence[int] | None = None,
        *,
        log_base: str = "10",
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """One row per (template, sample): ``sample_id, template, score, skipped``.

        ``sample_id`` is the index in ``sentences``; ``score`` is
        ``log P(w_m | t(s)) − log P(w_f | t(s))`` in ``log_base`` (NaN when skipped) and
        ``skipped`` is ``""`` or the reason. Rows are ordered by template, then sample.
        """
        table = TEMPLATES[self.kind]
        chosen = list(range(len(table))) if templates is None else list(templates)
        for t in chosen:
            if not isinstance(t, int | np.integer) or not 0 <= t < len(table):
                raise WeatkitError(
                    f"unknown {self.kind} template {t!r}: choose from 0..{len(table) - 1}"
                )
        scale = log_scale(log_base)
        texts = check_texts(sentences)
        unique = list(dict.fromkeys(texts))
        frames = []
        for t in chosen:
            template = table[int(t)]
            if self.kind == "glm":
                results = self._glm_scores(template, unique, show_progress)
            else:
                encoded = self._encode_template(template, int(t), unique)
                scores = self._scores(
                    encoded, {"template": int(t), **asdict(template)}, show_progress,
                    f"template {t}",
                )  # fmt: skip
                results = item_results(encoded, scores)
            frames.append(score_frame(texts, results, scale, int(t)))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)

    def score_pairs(
        self,
        pairs: Sequence[tuple[str, str]],
        *,
        log_base: str = "10",
        show_progress: bool | None = None,
    ) -> pd.DataFrame:
        """One row per (masculine, feminine) pair: ``sample_id, score, skipped``.

        Masked LMs only. ``score = log P(t_m) − log P(t_f)`` at the one token position where the
        two tokenisations differ, that position masked; other pairs are skipped with a reason.
        """
        if self.kind != "mlm":
            raise WeatkitError(f"{self.model_name}: sentence pairs need a masked LM (kind='mlm')")
        scale = log_scale(log_base)
        checked = []
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise WeatkitError(f"pair {i} must be (masculine, feminine) sentences: {pair!r}")
            checked.append(json.dumps(check_texts(pair), ensure_ascii=False))
        unique = list(dict.fromkeys(checked))
        tok = self._tokenizer()
        mask = self._mask_id()
        limit = self.handle.max_length
        encoded = {key: encode_pair(tok, key, mask, limit) for key in unique}
        self.stats.n_skipped += sum(isinstance(e, str) for e in encoded.values())
        scores = self._scores(encoded, {"pairs": True}, show_progress, "pairs")
        frame = score_frame(checked, item_results(encoded, scores), scale, 0)
        return frame[PAIR_COLUMNS]

    # -- encoding -------------------------------------------------------------------------------

    def _glm_scores(
        self, template: GestTemplate, sentences: list[str], show_progress: bool | None
    ) -> dict[str, float | str]:
        """Natural-log score, or the reason it is skipped, of each sentence under a causal
        template, from the Scorer's token log-probabilities (module docstring)."""
        if not sentences:
            return {}
        if self.handle is not None:  # a word the tokenizer cannot encode is an error
            tok = self.handle.prefix_space_tokenizer()
            for word in (template.masculine, template.feminine):
                leading_space_token_id(tok, word)
        prefixes = {s: fill(template.text, "", s)[0] for s in sentences}
        pairs = {s: (f"{p} {template.masculine}", f"{p} {template.feminine}")
                 for s, p in prefixes.items()}  # fmt: skip
        with counting() as count:
            scored, too_long = logprobs_by_text(
                self.scorer,
                [text for pair in pairs.values() for text in pair],
                start="tokenizer",
                show_progress=show_progress,
                read_from={text: len(prefixes[s]) for s, pair in pairs.items() for text in pair},
            )
        out: dict[str, float | str] = {}
        for s, (m, f) in pairs.items():
            reason = too_long.get(m) or too_long.get(f)
            out[s] = reason or word_difference(scored[m], scored[f], len(prefixes[s]), template)
        self.stats.n_cached += count.cached
        self.stats.n_computed += count.computed
        self.stats.n_skipped += sum(isinstance(v, str) for v in out.values())
        self.stats.n_scored += sum(not isinstance(v, str) for v in out.values())
        return out

    def _encode_template(
        self, template: GestTemplate, t: int, sentences: list[str]
    ) -> dict[str, MaskedItem | str]:
        if not sentences:
            return {}
        tok = self._tokenizer()
        limit = self.handle.max_length
        if not getattr(tok, "is_fast", False):
            raise WeatkitError(
                f"{self.model_name}: GEST masked-LM templates need a fast tokenizer "
                "(character offsets); this one is slow"
            )
        out = encode_mlm(tok, template, sentences, self._mask_id(), limit)
        unk = tok.unk_token_id
        for item in (e for e in out.values() if isinstance(e, MaskedItem)):
            for word, ids in (
                (template.masculine, item.masculine),
                (template.feminine, item.feminine),
            ):
                if unk is not None and unk in ids:
                    raise WeatkitError(
                        f"{self.model_name} cannot encode {word!r} of template {t}: "
                        "it becomes the unknown token"
                    )
        self.stats.n_skipped += sum(isinstance(e, str) for e in out.values())
        return out

    def _mask_id(self) -> int:
        mask = self._tokenizer().mask_token_id
        if mask is None:
            raise WeatkitError(
                f"{self.model_name} has no mask token: it cannot be scored as a masked LM "
                "(kind='mlm')"
            )
        return int(mask)

    # -- scores ---------------------------------------------------------------------------------

    def _scores(
        self,
        encoded: dict[str, MaskedItem | str],
        what: dict[str, object],
        show_progress: bool | None,
        label: str,
    ) -> dict[str, float]:
        """Natural-log scores of the encoded masked-LM items, from the cache or the model."""
        items = {e.key: e for e in encoded.values() if isinstance(e, MaskedItem)}
        cache = None
        if self.options.cache:
            cache = score_cache(
                "gest",
                "gest-scores",
                SCORING_VERSION,
                self.identity,
                self.options,
                kind=self.kind,
                **what,
            )
        rows, n_cached = cached_rows(
            cache,
            list(items),
            lambda keys: self._compute([items[k] for k in keys], show_progress, label),
        )
        self.stats.n_cached += n_cached
        self.stats.n_scored += len(items)
        return {k: float(v[0]) for k, v in rows.items()}

    def _compute(
        self, items: list[MaskedItem], show_progress: bool | None, label: str
    ) -> np.ndarray:
        handle = self._load()
        pad = handle.pad_id
        out, n_batches = run_batches(
            items,
            lambda batch: forward_scores(handle, batch, pad),
            length=lambda e: len(e.ids),
            batch_size=self.options.batch_size,
            desc=f"GEST {self.kind} {label} with {handle.short_name}",
            model_name=self.model_name,
            device=handle.device,
            unit="sample",
            show_progress=show_progress,
        )
        self.stats.n_batches += n_batches
        self.stats.n_computed += len(items)
        return out.astype(np.float32)

    # -- loading --------------------------------------------------------------------------------

    def _tokenizer(self) -> Any:
        return self.handle.tokenizer

    def _load(self) -> ModelHandle:
        if self._network is None:
            self._network = load_lm(self.handle, self.kind)
        return self._network


# ------------------------------------------------------------------------------ module API


def score_samples(
    model: str,
    sentences: Sequence[str],
    *,
    kind: str | None = None,
    templates: Sequence[int] | None = None,
    log_base: str = "10",
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
) -> pd.DataFrame:
    """GEST scores of ``sentences`` under ``model``'s templates (all by default).

    ``kind`` is ``"mlm"`` or ``"glm"``; None decides from the config (decoder-only → ``glm``).
    Returns ``sample_id, template, score, skipped`` with
    ``score = log P(w_m | t(s)) − log P(w_f | t(s))`` in base ``log_base`` (``"10"`` or ``"e"``);
    see the module docstring for the templates and conventions.
    """
    scorer = GestScorer(model, kind=kind, options=options)
    return scorer.score_samples(
        sentences, templates, log_base=log_base, show_progress=show_progress
    )


def score_gest(
    model: str,
    samples: pd.DataFrame,
    *,
    kind: str | None = None,
    templates: Sequence[int] | None = None,
    log_base: str = "10",
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
) -> pd.DataFrame:
    """:func:`score_samples` of a GEST samples table (:func:`weatkit.gest.data.load_gest`, or a
    sample of it: :func:`weatkit.gest.data.sample_gest`): ``template, sample_id, sentence,
    stereotype, score, skipped``, with the table's own sample ids."""
    scored = score_samples(
        model,
        samples["sentence"].tolist(),
        kind=kind,
        templates=templates,
        log_base=log_base,
        options=options,
        show_progress=show_progress,
    )
    rows = samples.iloc[scored["sample_id"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    scored = scored.drop(columns="sample_id")
    table = pd.concat([scored, rows], axis=1)
    return table[["template", "sample_id", "sentence", "stereotype", "score", "skipped"]]


def score_pairs(
    model: str,
    pairs: Sequence[tuple[str, str]],
    *,
    log_base: str = "10",
    options: ContextualOptions | None = None,
    show_progress: bool | None = None,
) -> pd.DataFrame:
    """Slavic-MLM scores of (masculine, feminine) sentence pairs: ``sample_id, score, skipped``.

    ``score = log P(t_m) − log P(t_f)`` at the single differing token position, masked; pairs
    that differ in length or in other than exactly one token position are skipped.
    """
    scorer = GestScorer(model, kind="mlm", options=options)
    return scorer.score_pairs(pairs, log_base=log_base, show_progress=show_progress)
