"""Figure files: a figure's format from its file's suffix, its bytes, and writing it atomically.

Every figure of weatkit (:mod:`weatkit.report.plots`, :mod:`weatkit.report.influence_plot`,
:mod:`weatkit.report.null_plot`, :mod:`weatkit.crossmethod.plot`) is made by
:func:`new_figure` or drawn under :data:`STYLE`: a :class:`matplotlib.figure.Figure` that is not
registered with pyplot, so nothing is shown and it is garbage-collected like any object.
:func:`save_figure` writes it atomically in the format given by the file's suffix; the same
figure always gives the same bytes (no creation dates, stable SVG ids).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from weatkit._io.atomic import write_file
from weatkit._io.paths import check_writable
from weatkit.errors import WeatkitError

#: Figure formats by file suffix.
FIGURE_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}

#: The matplotlib settings every figure is drawn and saved with.
STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "weatkit",  # stable ids in SVG files
}
# No creation dates in PDF/SVG files, so the same run gives the same bytes.
_METADATA: dict[str, dict[str, None]] = {
    "png": {},
    "pdf": {"CreationDate": None},
    "svg": {"Date": None},
}


def figure_format(path: str | os.PathLike) -> str:
    """The format (``png``, ``pdf``, ``svg``) of a figure file, from its suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FIGURE_FORMATS:
        raise WeatkitError(
            f"cannot tell the figure format of {path}: give a file ending in "
            f"{', '.join(FIGURE_FORMATS)}"
        )
    return FIGURE_FORMATS[suffix]


def figure_bytes(fig: Figure, fmt: str, dpi: float = 150) -> bytes:
    """The figure rendered as ``png``, ``pdf`` or ``svg`` bytes at ``dpi``."""
    if dpi <= 0:
        raise WeatkitError(f"--dpi must be positive, not {dpi}")
    buffer = io.BytesIO()
    with mpl.rc_context(STYLE):
        fig.savefig(buffer, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return buffer.getvalue()


def save_figure(fig: Figure, path: str | os.PathLike, dpi: float = 150) -> Path:
    """Write the figure atomically to ``path``, in the format of its suffix; returns the path."""
    target = check_writable(path)
    data = figure_bytes(fig, figure_format(target), dpi)
    return write_file(target, data)


def new_figure(width: float, height: float) -> Figure:
    """A figure with constrained layout and an Agg canvas, not registered with pyplot."""
    fig = Figure(figsize=(round(width, 2), round(height, 2)), layout="constrained")
    FigureCanvasAgg(fig)
    return fig
