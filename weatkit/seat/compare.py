"""SEAT in ``weatkit compare``: a ``seat`` section of a comparison file, and its rows.

::

    seat:
      tests: [sent-weat6, sent-weat6b]  # the SEAT tests (default: all 50 of --lists seat)
      pooling: first                    # first ([CLS], May et al. for BERT), mean or last
      layer: -1                         # the hidden-state layer (default: the last)
      engine: {n_bootstrap: 1000}       # as weat's; also lists (default: seat), min_coverage

Each test is a column ``seat:TEST@L`` (registered measure ``seat``: neutral 0, stereotypical
above), the model's sentence vectors being its hidden states at layer L pooled over the whole
sequence (``span: sequence`` with ``subwords`` = ``pooling``: :mod:`weatkit.embeddings.
contextual`), the d, interval and p of ``weatkit run --lists seat --span sequence`` (the file's
``contextual`` options otherwise). It is WEAT's computation on other inputs; the column is
``seat``'s so that the MTMM matrix reads SEAT as a method of its own. English only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from weatkit.config.declare import Source
from weatkit.config.files import check_keys, layer_numbers, typed
from weatkit.config.run import run_config_from_mapping
from weatkit.errors import ConfigError
from weatkit.pipeline import RunConfig

_RUN_KEYS = ("lists", "tests", "min_coverage", "engine")
#: The poolings of a sentence: [CLS] (the first position), the mean, the last position.
POOLINGS = ("first", "mean", "last")


@dataclass(frozen=True)
class SeatSection:
    """A comparison file's ``seat`` section (the module docstring)."""

    run: RunConfig = field(default_factory=RunConfig)
    pooling: str = "first"
    layer: int = -1


def read_section(
    values: dict[str, Any], base: Path, source: Source, contextual: Any
) -> SeatSection:
    """The ``seat`` section of a comparison file; errors name the file and the key."""
    check_keys(values, {"pooling", "layer", *_RUN_KEYS}, str(source))
    pooling = typed(values.pop("pooling", "first"), str, source.key("pooling"))
    if pooling not in POOLINGS:
        raise ConfigError(f"{source.key('pooling')}: choose {', '.join(POOLINGS)}, not {pooling!r}")
    layers = layer_numbers(values.pop("layer", -1), source.key("layer"))
    if len(layers) != 1:
        raise ConfigError(f"{source.key('layer')}: give one layer, not {len(layers)}")
    run = run_config_from_mapping(
        {"lists": ["seat"], **values}, source, base, keys=_RUN_KEYS, contextual=contextual
    )
    return SeatSection(run, pooling, layers[0])


def job_inputs(section: SeatSection, lang: str) -> object:
    """The SHA-256 of the test files in ``lang`` (the job's key)."""
    from weatkit.lists.sources import lists_identity

    return lists_identity(section.run.lists, lang, section.run.tests)


def seat_rows(entry: Any, kind: str, lang: str, section: SeatSection, ctx: Any) -> list[dict]:
    """d of every SEAT test of ``section`` on the model's pooled sentence vectors."""
    from weatkit.crossmethod.methods import check_applicable, check_lists, score_rows
    from weatkit.embeddings.spec import parse_embeddings_specs
    from weatkit.measures import weat_measures
    from weatkit.pipeline import run

    check_applicable("seat", entry, kind, lang)
    check_lists(section.run.lists, lang)
    options = replace(ctx.options, span="sequence", subwords=section.pooling)
    (spec,) = parse_embeddings_specs(f"{entry.name}=hf:{entry.model}@{section.layer}", options)
    config = replace(section.run, langs=(lang,), embeddings=(spec,), contextual=options)
    result = run(
        config, show_progress=ctx.show_progress, extractors=ctx.extractors, allow_empty=True
    )
    measures = weat_measures(result.summary, source=entry.name, layer=section.layer)
    return score_rows([replace(m, measure="seat") for m in measures])
