"""Third-party data: where it lives, what it is, and checked downloads.

weatkit never ships third-party word lists or vectors. It reads them from a *data directory*
with the layout of ``shared/data`` (one folder per upstream source, each with a ``SOURCE.md``):

1. ``$WEATKIT_DATA/<relpath>`` when that file exists (a local copy; trusted, only warned about
   when its SHA-256 differs from the registry);
2. else ``<cache>/<relpath>`` when it was downloaded before and its SHA-256 still matches;
3. else it is downloaded from ``$WEATKIT_DATA_URL/<relpath>`` (a mirror with the data-directory
   layout) or, without a mirror, from the upstream repository at the commit pinned in
   :data:`REGISTRY`, verified against the registered SHA-256 and only then moved into the cache.

The cache is ``$WEATKIT_CACHE`` or the platform cache directory (``~/.cache/weatkit`` on Linux).

Pinned commits, licences and citations come from the ``SOURCE.md`` files of the data directory
(``ca-weat/``, ``cbn/``, ``gest/``, ``crows-pairs/``, ``gn_glove/``, ``wefe/``, ``xweat/``).
Files that were converted for the data directory (``cbn/*`` from R data, ``xweat/derived/*``)
have no upstream raw URL and are only available from ``$WEATKIT_DATA`` or a mirror.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from weatkit._io.atomic import temp_file
from weatkit.errors import WeatkitError

ENV_DATA = "WEATKIT_DATA"
ENV_CACHE = "WEATKIT_CACHE"
ENV_DATA_URL = "WEATKIT_DATA_URL"

#: Seconds to wait for the server on connect and on each read.
DOWNLOAD_TIMEOUT = 30.0
_CHUNK = 1 << 16


class DataChecksumWarning(UserWarning):
    """A file in ``$WEATKIT_DATA`` differs from the registered version (it is used anyway)."""


@dataclass(frozen=True)
class DataFile:
    """One registered third-party file.

    Attributes:
        relpath: path in the data-directory layout, e.g. ``"ca-weat/data/CA-WEATv1.tsv"``.
        sha256: hex digest of the exact bytes weatkit expects.
        size: size in bytes (a download larger than this is aborted).
        url: raw URL at the pinned upstream commit, or None for files converted for the data
            directory.
        licence: the licence as the upstream repository states it.
        citation: what to cite when using the file.
    """

    relpath: str
    sha256: str
    size: int
    url: str | None
    licence: str
    citation: str


def _raw(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


_CAWEAT_COMMIT = "a49768afa54df6b137d5e37d4af1830c832126ca"
_GEST_COMMIT = "7dd908cae11720ee5d95e43a4ab94fb410c8b790"
_CROWS_COMMIT = "8aaac11c485473159ec9328a65253a5be9a479dc"
_GNGLOVE_COMMIT = "7e0c7cabb67875bef76b0d3026846e1c2029c860"
_WEFE_COMMIT = "1998132a3e809481a7456d952f7473d191990946"

_CAWEAT_LICENCE = "none stated upstream (cite the paper; all rights reserved until clarified)"
_CAWEAT_CITE = (
    "España-Bonet, C. and Barrón-Cedeño, A. (2022). The (Undesired) Attenuation of Human Biases "
    "by Multilinguality. EMNLP 2022. https://aclanthology.org/2022.emnlp-main.133"
)
_XWEAT_CITE = (
    _CAWEAT_CITE + "; de/it/hr/tr/ru: Lauscher, A. and Glavaš, G. (2019). Are We Consistently "
    "Biased? Multidimensional Analysis of Biases in Distributional Word Vectors. *SEM 2019; "
    "ar: Lauscher, A. et al. (2020). AraWEAT"
)
_CALISKAN_CITE = (
    "Caliskan, A., Bryson, J. J. and Narayanan, A. (2017). Semantics derived automatically from "
    "language corpora contain human-like biases. Science 356(6334):183-186; items and vectors via "
    "the cbn R package by Will Lowe (github.com/conjugateprior/cbn @ 3a578d5)"
)
_GEST_CITE = (
    "Pikuliak, M. et al. (2023). Women Are Beautiful, Men Are Leaders: Gender Stereotypes in "
    "Machine Translation and Language Modeling. arXiv:2311.18711"
)
_CROWS_CITE = (
    "Nangia, N., Vania, C., Bhalerao, R. and Bowman, S. R. (2020). CrowS-Pairs: A Challenge "
    "Dataset for Measuring Social Biases in Masked Language Models. EMNLP 2020"
)
_GNGLOVE_CITE = (
    "Zhao, J., Zhou, Y., Li, Z., Wang, W. and Chang, K.-W. (2018). Learning Gender-Neutral Word "
    "Embeddings. EMNLP 2018 (word lists after Bolukbasi et al. 2016)"
)
_WEFE_CITE = (
    "Badilla, P., Bravo-Marquez, F. and Pérez, J. (2020). WEFE: The Word Embeddings Fairness "
    "Evaluation Framework. IJCAI 2020"
)


def _entries() -> list[DataFile]:
    caweat = "cristinae/CA-WEAT"
    return [
        DataFile(
            "ca-weat/data/CA-WEATv1.tsv",
            "9b67f6e14fd1525244d27e6a0ad0b9799871997db4447107c006063f1fe27700",
            165893,
            _raw(caweat, _CAWEAT_COMMIT, "data/CA-WEATv1.tsv"),
            _CAWEAT_LICENCE,
            _CAWEAT_CITE,
        ),
        DataFile(
            "ca-weat/data/CA-WEATv3.tsv",
            "c79aebfdf80e351e165d836538c398ebb3a989996598b935465601965f5714c8",
            301512,
            _raw(caweat, _CAWEAT_COMMIT, "data/CA-WEATv3.tsv"),
            _CAWEAT_LICENCE,
            _CAWEAT_CITE,
        ),
        DataFile(
            "ca-weat/data/CA-WEATv3.json",
            "56bf47eeba98654fdcc3682d1a96de0fa613a9a0b4a8f02f7393b36f4df16684",
            339964,
            _raw(caweat, _CAWEAT_COMMIT, "data/CA-WEATv3.json"),
            _CAWEAT_LICENCE,
            _CAWEAT_CITE,
        ),
        DataFile(
            "ca-weat/data/CA-WEATv2_es.json",
            "2993bef097806a51843c93a4d64c6caa6e28fba2a13dd48adb5195741fe588d7",
            43974,
            _raw(caweat, _CAWEAT_COMMIT, "data/CA-WEATv2_es.json"),
            _CAWEAT_LICENCE,
            _CAWEAT_CITE + "; Spanish varieties: España-Bonet et al., NAACL 2024",
        ),
        DataFile(
            "ca-weat/data/X-WEATv1.tsv",
            "072a66ff906f4c02e97760f78f820530200938f27cd710104bc0d83b2b87dba5",
            13304,
            _raw(caweat, _CAWEAT_COMMIT, "data/X-WEATv1.tsv"),
            _CAWEAT_LICENCE,
            _XWEAT_CITE,
        ),
        DataFile(
            "ca-weat/plots/collectedData.csv",
            "d545351c60a41080d84d33c2760fcce38f7189da2d2b116a69f37ccf6bc1e177",
            402361,
            _raw(caweat, _CAWEAT_COMMIT, "plots/collectedData.csv"),
            _CAWEAT_LICENCE,
            _CAWEAT_CITE,
        ),
        DataFile(
            "cbn/cbn_items.tsv",
            "f2e877aaa73e9df2fcc20ec53581501081b3addf1d0950c30d99605e2cbe418a",
            24773,
            None,  # converted from data/cbn_items.rda
            "GPL-3 (cbn R package)",
            _CALISKAN_CITE,
        ),
        DataFile(
            "cbn/cbn_item_vectors_glove840B300d.txt",
            "e60b5a83c5b13e51baf6d585655462970f3eecf2b9a752298df83bcd6b04fdf4",
            1189945,
            None,  # converted from data/cbn_item_vectors.rda
            "GPL-3 (cbn R package); GloVe vectors: ODC-PDDL (Stanford GloVe)",
            _CALISKAN_CITE
            + "; Pennington, J., Socher, R. and Manning, C. D. (2014). GloVe. EMNLP 2014",
        ),
        DataFile(
            "xweat/derived/xweat_en_lists.json",
            "3ef9dd3c5ec8a7fc42dceed158219d043f3d6819102798de6060cbb6c2c972ae",
            11531,
            None,  # extracted from weat.py of anlausch/XWEAT @ 4f95484
            "none stated upstream",
            "Lauscher, A. and Glavaš, G. (2019). Are We Consistently Biased? *SEM 2019",
        ),
        DataFile(
            "wefe/wefe/datasets/data/WEAT.json",
            "1a4a448a1825b29c67a7ebb7733343084b015f5b8ed720b2d9e193840a3d49a1",
            7255,
            _raw("dccuchile/wefe", _WEFE_COMMIT, "wefe/datasets/data/WEAT.json"),
            "MIT",
            _WEFE_CITE + "; " + _CALISKAN_CITE.split(";")[0],
        ),
        DataFile(
            "gest/data/gest.csv",
            "7e306adaa2913b660c6ddccddb26703a1de8c880cb0597ad27db4bca75380eea",
            214899,
            _raw("kinit-sk/gest", _GEST_COMMIT, "data/gest.csv"),
            "Apache-2.0",
            _GEST_CITE,
        ),
        DataFile(
            "gest/data/gest_1.1.csv",
            "51d14d5dc648d5be867d40bd312c016471c485827f6c28488c7234b9d30fcd9c",
            218585,
            _raw("kinit-sk/gest", _GEST_COMMIT, "data/gest_1.1.csv"),
            "Apache-2.0",
            _GEST_CITE,
        ),
        DataFile(
            "crows-pairs/data/crows_pairs_anonymized.csv",
            "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
            437764,
            _raw("nyu-mll/crows-pairs", _CROWS_COMMIT, "data/crows_pairs_anonymized.csv"),
            "CC BY-SA 4.0",
            _CROWS_CITE,
        ),
        DataFile(
            "gn_glove/wordlist/male_word_file.txt",
            "d431679ce3ef4134647e22cb5fd89e8dbee3f04636f1c7cbae5f28a369acf60f",
            1752,
            _raw("uclanlp/gn_glove", _GNGLOVE_COMMIT, "wordlist/male_word_file.txt"),
            "Apache-2.0",
            _GNGLOVE_CITE,
        ),
        DataFile(
            "gn_glove/wordlist/female_word_file.txt",
            "5f0803f056de3fbc459589bce26272d3c5453112a3a625fb8ee99c0fbbed5b35",
            1896,
            _raw("uclanlp/gn_glove", _GNGLOVE_COMMIT, "wordlist/female_word_file.txt"),
            "Apache-2.0",
            _GNGLOVE_CITE,
        ),
    ]


#: Every third-party file weatkit reads, keyed by its path in the data-directory layout.
REGISTRY: dict[str, DataFile] = {entry.relpath: entry for entry in _entries()}


def data_dir() -> Path | None:
    """The local data directory from ``$WEATKIT_DATA``, or None when the variable is unset/empty."""
    value = os.environ.get(ENV_DATA, "").strip()
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """The download cache: ``$WEATKIT_CACHE``, else the platform cache directory + ``weatkit``."""
    value = os.environ.get(ENV_CACHE, "").strip()
    if value:
        return Path(value).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "weatkit" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "weatkit"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "weatkit"


def registry_entry(relpath: str) -> DataFile:
    """The registry entry of ``relpath``; WeatkitError naming the known files when it has none."""
    try:
        return REGISTRY[_check_relpath(relpath)]
    except KeyError:
        known = ", ".join(sorted(REGISTRY))
        raise WeatkitError(f"unknown data file {relpath!r}; registered files: {known}") from None


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_relpath(relpath: str) -> str:
    """Reject absolute paths and ``..`` so a relpath can never leave the data or cache directory."""
    pure = PurePosixPath(relpath)
    if not relpath or "\\" in relpath or pure.is_absolute() or ".." in pure.parts:
        raise WeatkitError(f"invalid data path {relpath!r}: expected a relative path like a/b.tsv")
    return str(pure)


def local_path(relpath: str) -> Path | None:
    """``$WEATKIT_DATA/relpath`` when it exists as a file, else None."""
    root = data_dir()
    if root is None:
        return None
    candidate = root / _check_relpath(relpath)
    return candidate if candidate.is_file() else None


def source_url(relpath: str) -> str:
    """Where :func:`fetch` downloads ``relpath``: the mirror when set, else the upstream URL."""
    entry = registry_entry(relpath)
    mirror = os.environ.get(ENV_DATA_URL, "").strip()
    if mirror:
        return mirror.rstrip("/") + "/" + urllib.parse.quote(entry.relpath)
    if entry.url is None:
        raise WeatkitError(
            f"{entry.relpath} is a conversion made for the weatkit data directory and has no "
            f"upstream download; set {ENV_DATA} to a data directory that has it or {ENV_DATA_URL} "
            "to a mirror"
        )
    return entry.url


_verified_local: dict[tuple[str, int, int], bool] = {}


def _warn_if_modified(path: Path, entry: DataFile) -> None:
    """Warn (once per file version) when a local data file differs from the registered one."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _verified_local:
        _verified_local[key] = sha256_file(path) == entry.sha256
        if not _verified_local[key]:
            warnings.warn(
                f"{path} differs from the registered {entry.relpath} (expected SHA-256 "
                f"{entry.sha256}); using it anyway",
                DataChecksumWarning,
                stacklevel=3,
            )


def fetch(relpath: str, *, quiet: bool = False) -> Path:
    """The path of a data file, downloading (and verifying) it into the cache on first use.

    Args:
        relpath: path in the data-directory layout, e.g. ``"ca-weat/data/CA-WEATv1.tsv"``.
        quiet: do not print the source, licence and citation after a download.

    Raises:
        WeatkitError: unknown file, no download source, unreachable server, checksum mismatch.
    """
    relpath = _check_relpath(relpath)
    local = local_path(relpath)
    if local is not None:
        if relpath in REGISTRY:
            _warn_if_modified(local, REGISTRY[relpath])
        return local

    entry = registry_entry(relpath)
    cached = cache_dir() / entry.relpath
    if cached.is_file():
        if sha256_file(cached) == entry.sha256:
            return cached
        cached.unlink()  # stale or damaged: download again

    url = source_url(relpath)
    _download(url, cached, entry)
    if not quiet:
        print(
            f"weatkit: downloaded {entry.relpath} from {url}\n"
            f"  licence: {entry.licence}\n  cite: {entry.citation}",
            file=sys.stderr,
        )
    return cached


def _download(url: str, target: Path, entry: DataFile) -> None:
    """Download ``url`` to ``target`` via a temp file in the cache root; verify before renaming."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise WeatkitError(f"cannot download {url}: only http, https and file URLs are supported")
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = temp_file(root, "download", suffix=".part")
    except OSError as err:
        raise WeatkitError(f"cannot write to the weatkit cache {root}: {err.strerror}") from None
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            _copy_url(url, out, digest, entry)
        actual = digest.hexdigest()
        if actual != entry.sha256:
            raise WeatkitError(
                f"checksum mismatch for {entry.relpath} downloaded from {url}: expected SHA-256 "
                f"{entry.sha256}, got {actual}; nothing was cached"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _copy_url(url: str, out: BinaryIO, digest: Any, entry: DataFile) -> None:
    """Stream ``url`` into ``out`` and ``digest``; every failure is a one-line WeatkitError."""
    hint = f"check the connection or set {ENV_DATA} to a local data directory"
    request = urllib.request.Request(url, headers={"User-Agent": "weatkit"})
    written = 0
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response:
            for chunk in iter(lambda: response.read(_CHUNK), b""):
                written += len(chunk)
                if written > entry.size:
                    raise WeatkitError(
                        f"checksum mismatch for {entry.relpath} downloaded from {url}: larger than "
                        f"the expected {entry.size} bytes (expected SHA-256 {entry.sha256}); "
                        "nothing was cached"
                    )
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as err:
        raise WeatkitError(f"cannot download {url}: HTTP {err.code} {err.reason}; {hint}") from None
    except urllib.error.URLError as err:
        raise WeatkitError(f"cannot download {url}: {err.reason}; {hint}") from None
    except (OSError, http.client.HTTPException) as err:  # timeouts, resets, truncated replies
        reason = str(err) or type(err).__name__
        raise WeatkitError(f"cannot download {url}: {reason}; {hint}") from None
