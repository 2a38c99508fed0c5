"""Third-party data: where it lives, what it is, checked downloads, and weatkit's caches.

weatkit never ships third-party word lists, sentences or vectors. It reads them from a *data
directory* with the layout of ``shared/data`` (one folder per upstream source, each with a
``SOURCE.md`` and a ``MANIFEST.tsv``), or downloads them, checked by SHA-256, from the commit
pinned in the registry (:mod:`weatkit.data.registry`, the data file ``registry.json``).

* :mod:`weatkit.data.paths` — ``$WEATKIT_DATA``, the cache root and its folders per kind;
* :mod:`weatkit.data.registry` — the registry entries;
* :mod:`weatkit.data.fetch` — :func:`fetch`: local copy, verified cache, or checked download;
* :mod:`weatkit.data.cache` — :func:`cache_info` and :func:`clear_cache`;
* :mod:`weatkit.data.maintain` — regenerates the registry's checksums from a data directory.
"""

from weatkit.data.cache import CacheUsage, cache_info, clear_cache
from weatkit.data.fetch import DataChecksumWarning, fetch, local_path, sha256_file, source_url
from weatkit.data.paths import (
    CACHE_KINDS,
    ENV_CACHE,
    ENV_DATA,
    ENV_DATA_URL,
    cache_dir,
    cache_root,
    data_dir,
    ensure_cache_dir,
)
from weatkit.data.registry import DataFile, is_registered, registry, registry_entry

__all__ = [
    "CACHE_KINDS",
    "ENV_CACHE",
    "ENV_DATA",
    "ENV_DATA_URL",
    "CacheUsage",
    "DataChecksumWarning",
    "DataFile",
    "cache_dir",
    "cache_info",
    "cache_root",
    "clear_cache",
    "data_dir",
    "ensure_cache_dir",
    "fetch",
    "is_registered",
    "local_path",
    "registry",
    "registry_entry",
    "sha256_file",
    "source_url",
]
