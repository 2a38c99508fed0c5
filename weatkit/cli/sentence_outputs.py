"""What a sentence command writes and prints beside its table, the same for every command.

* :func:`manifest_file`: ``manifest.json``, what wrote an output directory (the command, the
  ``--limit`` sample, the per-item log's format, the model's loading options of
  :func:`model_record`, the batch sizes ``--batch-size auto`` ran at);
* :func:`item_log_file`: ``items.parquet`` (or ``items.csv``) of ``--log-items``;
* :func:`sample_note` and :func:`scoring_conventions`: the ``note:`` lines of a ``--limit``
  sample and of a model whose scores differ from ``hf:`` models'.

The options they record are declared in :mod:`weatkit.cli.sentence_options`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from weatkit.cli.errors import note
from weatkit.config.schema import CONTEXTUAL, options_from_cli

if TYPE_CHECKING:
    from weatkit.stats.sampling import ItemSample


def item_log_file(opts: Mapping[str, Any], build: Callable[[], Any]) -> dict[str, bytes]:
    """``{"items.FORMAT": ...}`` of ``--log-items`` from the per-item table ``build()`` makes
    (:mod:`weatkit.items.log`), or {} without the option: written with the command's other
    files, all at once."""
    from weatkit.items.log import item_log_files

    if not opts["log_items"]:
        return {}
    return item_log_files(build(), opts["log_items"])


def sample_note(sample: ItemSample | None) -> None:
    """The ``note:`` line of a ``--limit`` sample, printed before scoring (none without one)."""
    if sample is not None:
        note(f"scoring a {sample.describe()} (--limit)")


def manifest_file(
    command: str, sample: ItemSample | None, log_items: str | None, **entries: Any
) -> dict[str, bytes]:
    """``{"manifest.json": ...}``: what a sentence command writes beside its tables with
    ``--out``, always, so that ``weatkit report`` can tell what wrote the directory. It records
    the ``command`` (``weatkit crows``), the ``weatkit_version``, ``log_items`` (the per-item
    log's format, None without one), the ``--limit`` sample
    (:meth:`~weatkit.stats.sampling.ItemSample.to_dict`), the ``entries`` that are not None
    (``compat``: a preset's values) and the batch sizes ``--batch-size auto`` ran at
    (``batch_size_used``: ``{model: N}``)."""
    import weatkit
    from weatkit.models.batching import auto_batch_sizes
    from weatkit.report.tables import manifest_bytes

    given = {k: v for k, v in entries.items() if v is not None}
    asked_auto = (given.get("contextual") or {}).get("batch_size") == "auto"
    if asked_auto and auto_batch_sizes():  # not another command's of this process
        given["batch_size_used"] = auto_batch_sizes()
    if sample is not None:
        given["sample"] = sample.to_dict()
    head = {
        "command": f"weatkit {command}",
        "weatkit_version": weatkit.__version__,
        "log_items": log_items,
    }
    return {"manifest.json": manifest_bytes({**head, **given})}


def scoring_conventions(seen: Mapping[str, Any]) -> dict[str, dict[str, str]] | None:
    """What a run's causal scores include (``seen``: the counts of a
    :func:`weatkit.scoring.conventions.recording` block around its scoring; whether a text's
    first token has a log-probability; how embeddings pool), for its manifest's
    ``scoring_conventions``; a ``note:`` line for each model that differs from ``hf:`` models
    (:func:`weatkit.scoring.conventions.notes`). None when nothing was recorded."""
    from weatkit.scoring.conventions import notes, summarize

    found = summarize(dict(seen))
    for line in notes(found):
        note(line)
    return found or None


def model_record(opts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The loading options of a ``--model`` run (batch size, dtype, device…) as its manifest's
    ``contextual`` records them (``compare``'s too); None without ``--model``. The batch size is
    not part of the score cache's key (docs/guides/caching.md), so this says which batch size
    computed what the run did not find in the cache."""
    if not opts.get("model"):
        return None
    from dataclasses import asdict

    from weatkit.embeddings.contextual import ContextualOptions

    return asdict(options_from_cli(ContextualOptions, CONTEXTUAL, opts))
