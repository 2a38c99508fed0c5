"""Static vector files read once per run, however many embeddings entries name them.

A load is kept under the file's path and content fingerprint
(:func:`weatkit._io.fingerprint.content_fingerprint`, the one the manifest records) and
everything that changes what is read: the format, the words, the first rows, the pickle and
fastText options. Another entry asking the same of the same file gets the same vectors under its
own name (the arrays are shared, not copied). Contextual models, embeddings APIs and the GloVe
default are loaded as before (:func:`weatkit.embeddings.spec.load_embeddings`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from weatkit._io.fingerprint import content_fingerprint
from weatkit.embeddings.contextual import ExtractorPool
from weatkit.embeddings.spec import EmbeddingsSpec, load_embeddings
from weatkit.embeddings.vectors import WordVectors


@dataclass
class LoadedFiles:
    """The static vectors loaded so far in one run (:meth:`load`)."""

    loaded: dict[tuple[object, ...], WordVectors] = field(default_factory=dict)

    def load(
        self,
        spec: EmbeddingsSpec,
        lang: str,
        *,
        words: Iterable[str] | None,
        first_n: int,
        allow_pickle: bool,
        fasttext_oov: bool,
        extractors: ExtractorPool | None = None,
        show_progress: bool | None = None,
    ) -> WordVectors:
        """:func:`~weatkit.embeddings.spec.load_embeddings`, reading a static file only the
        first time it is asked for the same rows."""
        words = None if words is None else list(words)

        def load() -> WordVectors:
            return load_embeddings(
                spec,
                lang,
                words=words,
                first_n=first_n,
                allow_pickle=allow_pickle,
                fasttext_oov=fasttext_oov,
                extractors=extractors,
                show_progress=show_progress,
            )

        static = not (spec.is_contextual or spec.is_default or spec.api_model is not None)
        path = spec.path_for(lang) if static else ""
        if not path or not Path(path).is_file():
            return load()  # not a file (load_embeddings says why, when it is an error)
        key = (
            path,
            tuple(content_fingerprint(path).items()),
            spec.fmt,
            None if words is None else frozenset(words),
            first_n,
            allow_pickle,
            fasttext_oov,
        )
        if key not in self.loaded:
            self.loaded[key] = load()
        vectors = self.loaded[key]
        return vectors if vectors.name == spec.name else replace(vectors, name=spec.name)
