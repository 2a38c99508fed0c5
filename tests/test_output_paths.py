"""Output paths are checked before any work, and the messages name the path given (issue 16,
item 4): an output that is a directory, or below a file, fails at once with a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure

from tests.grid_fixtures import make_grid
from weatkit._io.paths import check_writable
from weatkit.cli import main
from weatkit.errors import WeatkitError
from weatkit.grid import load_grid_config, run_grid
from weatkit.report.figures import save_figure


def invoke(args: list[str]):
    return CliRunner().invoke(main, args)


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["embed", "--lists", "weat", "--lang", "en", "--model", "./no/such/model", "--layer", "0"],
         "x.vec"),
        (["align", "--src", "no.vec", "--tgt", "no.vec", "--dict", "no.txt"], "x.vec"),
        (["export", "no-such-run", "--format", "csv"], "x.csv"),
        (["plot", "no-such-run", "--kind", "forest"], "x.png"),
    ],
)  # fmt: skip
def test_an_output_below_a_file_fails_first_naming_the_output(
    tmp_path: Path, command: list[str], name: str
) -> None:
    """Every input here is missing too: the output is checked first, before any reading or
    computing, and the message names the output path itself."""
    blocker = tmp_path / "f"
    blocker.write_text("a file")
    out = blocker / name
    res = invoke([*command, "--out", str(out)])
    assert res.exit_code == 1
    assert res.stderr.strip() == f"weatkit: error: cannot write {out}: {blocker} is not a directory"


def test_embed_output_that_is_a_directory_fails_before_the_model_loads(tmp_path: Path) -> None:
    (tmp_path / "vecs.0.vec").mkdir()  # what --out vecs.{layer}.vec names for layer 0
    template = str(tmp_path / "vecs.{layer}.vec")
    args = ["embed", "--lists", "weat", "--lang", "en", "--model", "./no/such/model"]
    res = invoke([*args, "--layer", "0", "--layer", "1", "--out", template])
    assert res.exit_code == 1
    assert res.stderr.strip() == (
        f"weatkit: error: cannot write {tmp_path / 'vecs.0.vec'}: it is a directory; "
        "give a file name"
    )


def test_save_figure_to_a_directory_names_it(tmp_path: Path) -> None:
    target = tmp_path / "figure.png"
    target.mkdir()
    with pytest.raises(WeatkitError, match=f"^cannot write {target}: it is a directory"):
        save_figure(Figure(), target)


def test_grid_output_that_is_a_file_fails_before_any_job(tmp_path: Path) -> None:
    path = make_grid(tmp_path)
    (tmp_path / "out").write_text("a file")
    config = load_grid_config(path)
    with pytest.raises(WeatkitError) as err:
        run_grid(config, show_progress=False)
    assert str(err.value) == f"cannot write into {tmp_path / 'out'}: it is a file, not a directory"
    assert (tmp_path / "out").read_text() == "a file"


def test_check_writable_creates_nothing_and_accepts_missing_folders(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c.csv"
    assert check_writable(deep) == deep
    assert check_writable(tmp_path / "a" / "b", directory=True) == tmp_path / "a" / "b"
    assert check_writable(tmp_path, directory=True) == tmp_path
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(WeatkitError, match="it is a file, not a directory"):
        check_writable(tmp_path / "file", directory=True)
    with pytest.raises(WeatkitError, match="it is a directory; give a file name"):
        check_writable(tmp_path)
