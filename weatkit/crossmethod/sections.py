"""What the sentence-level sections of a comparison file share, for the packages that read them
(:attr:`weatkit.measures.plugins.Compare.section`): the ``limit`` and the ``method``."""

from __future__ import annotations

from typing import Any

from weatkit.config.declare import Source, options_from_file
from weatkit.config.schema import SAMPLE
from weatkit.errors import ConfigError
from weatkit.measures.registry import family_measures
from weatkit.stats.sampling import SampleOptions


def read_limit(values: dict[str, Any], source: Source) -> int | None:
    """The section's ``limit`` (removed from ``values``), read by the schema's declaration of
    ``--limit`` (:data:`~weatkit.config.schema.SAMPLE`): ``cmp.yaml: SECTION.limit: ...``."""
    given = {"limit": values.pop("limit")} if "limit" in values else {}
    return options_from_file(SampleOptions, SAMPLE, given, source).limit


def check_method(family: str, method: str) -> None:
    """ConfigError (field ``method``) unless ``FAMILY:METHOD`` is a registered measure."""
    methods = [m.name.partition(":")[2] for m in family_measures(family)]
    if method not in methods:
        raise ConfigError(f"choose {', '.join(methods)}, not {method!r}", field="method")
