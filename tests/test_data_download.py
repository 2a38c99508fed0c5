"""weatkit.data: registry, $WEATKIT_DATA, and checked downloads from a loopback HTTP server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from weatkit import data
from weatkit.errors import WeatkitError

RELPATH = "ca-weat/data/X-WEATv1.tsv"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


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
        assert path.is_file(), relpath
        assert path.stat().st_size == entry.size, relpath
        assert data.sha256_file(path) == entry.sha256, relpath


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
