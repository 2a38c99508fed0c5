"""Per-item logs of the sentence measures (``--log-items``; issue 28 §2).

* :mod:`weatkit.items.log` — the common schema (:data:`~weatkit.items.log.ITEM_COLUMNS`), one
  builder per measure from the per-item table it already produced, and the file
  (``items.parquet`` or ``items.csv``);
* :mod:`weatkit.items.influence` — each item's leave-one-out influence on the measure's
  headline value, closed-form and vectorised.
"""

from weatkit.items.influence import (
    eurogest_influence,
    gest_influence,
    mbe_influence,
    proportion_influence,
    term_mean_influence,
)
from weatkit.items.log import (
    ITEM_COLUMNS,
    ITEM_FORMATS,
    ItemLogOptions,
    concat_items,
    crows_items,
    eurogest_items,
    gest_items,
    item_log_files,
    mbe_items,
    stereoset_items,
)

__all__ = [
    "ITEM_COLUMNS",
    "ITEM_FORMATS",
    "ItemLogOptions",
    "concat_items",
    "crows_items",
    "eurogest_influence",
    "eurogest_items",
    "gest_influence",
    "gest_items",
    "item_log_files",
    "mbe_influence",
    "mbe_items",
    "proportion_influence",
    "stereoset_items",
    "term_mean_influence",
]
