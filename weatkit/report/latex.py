r"""LaTeX tables of a run's summary in the style of the CA-WEAT paper (Table 1, Tables 6–9).

One ``table`` environment per (list set, test): the embeddings are the rows, the languages the
columns, and the header gives each language's number of lists, e.g. ``de (24)``::

    \begin{table}[ht]
    \centering
    \begin{tabular}{lcc}
    \toprule
     & de (24) & en (5) \\
    \midrule
    WP & $0.4^{+0.2}_{-0.4}$ & $0.7^{+0.4}_{-0.5}$ \\
    CCe & -- & $1.0^{+0.4}_{-0.6}$ \\
    \bottomrule
    \end{tabular}
    \caption{...}
    \label{tab:effect-size-ca-weat-v1-weat1}
    \end{table}

A cell ``$v^{+a}_{-b}$`` is the value ``v`` (the median over the language's lists, or the single
list's value) with ``a = high − v`` and ``b = v − low`` from its confidence interval, all rounded
to ``digits`` decimals (:data:`DEFAULT_DIGITS`: 2; the paper uses 1), a number that rounds to
zero printed as ``0.00``, never ``-0.00``; a CI that excludes its value flips the sign. Without an
interval (``--bootstrap 0``) the cell is the value alone; a missing cell is ``--``. A
``{}^{\dagger}`` in the cell marks an interval whose actual coverage is below the nominal level
(an order-statistic interval of a median over too few lists; ``ci_level`` in ``summary.csv``).
When a model's cell rests on fewer lists than the header's count (lists skipped for low
coverage), that count follows the cell: ``$0.8^{+0.5}_{-0.1}{}^{\dagger}$ (3)``.
Names are escaped (``_ % & # $ { } ~ ^ \``). The tables need ``\usepackage{booktabs}``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from weatkit.errors import WeatkitError
from weatkit.report.run_dir import filter_rows, lang_order

#: Quantities a table can show (each with ``_ci_low`` / ``_ci_high`` columns in the summary).
VALUES = {"effect_size": "Effect size (Cohen's $d$)", "statistic": "Test statistic $S$"}

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
#: Decimals of every number of a table unless told otherwise (the paper uses 1).
DEFAULT_DIGITS = 2
_MAX_DIGITS = 6


def escape_latex(text: str) -> str:
    """``text`` with LaTeX's special characters escaped for use in running text."""
    return "".join(_ESCAPES.get(char, char) for char in str(text))


def latex_tables(
    summary: pd.DataFrame,
    *,
    value: str = "effect_size",
    digits: int = DEFAULT_DIGITS,
    confidence: float = 0.95,
    tests: Sequence[str] | None = None,
    list_sets: Sequence[str] | None = None,
    embeddings: Sequence[str] | None = None,
    langs: Sequence[str] | None = None,
    source: str = "summary.csv",
) -> str:
    """The summary as LaTeX tables, one per (list set, test), separated by a blank line.

    Args:
        summary: the ``summary`` table of a run.
        value: ``effect_size`` (Tables 8–9 of the paper) or ``statistic`` (Tables 6–7).
        digits: decimals of every number (0–6).
        confidence: the nominal CI level, for the caption and the ``†`` marks.
        tests, list_sets, embeddings, langs: keep only these (None: all). The columns follow
            the order of ``langs`` when given, else alphabetical order; rows follow the order
            of the embeddings in the summary.
        source: the summary's file name, for errors (rows are numbered by the frame's index:
            line = index + 2, as read from a CSV file with a header).

    Raises:
        WeatkitError: an unknown value, digits out of range, no rows after filtering, or a
            cell that is not a number (naming ``source``, the line and the column).
    """
    if value not in VALUES:
        raise WeatkitError(f"unknown value {value!r}: choose one of {', '.join(VALUES)}")
    if not 0 <= digits <= _MAX_DIGITS:
        raise WeatkitError(f"--digits must be between 0 and {_MAX_DIGITS}, not {digits}")
    rows = filter_rows(
        summary,
        table=source,
        tests=tests,
        list_sets=list_sets,
        embeddings=embeddings,
        langs=langs,
    )
    groups = rows.groupby(["list_set", "test"], sort=False)
    tables = [
        _table(group, list_set, test, value, digits, confidence, lang_order(group, langs), source)
        for (list_set, test), group in groups
    ]
    return "\n".join(tables)


def _table(
    group: pd.DataFrame,
    list_set: str,
    test: str,
    value: str,
    digits: int,
    confidence: float,
    langs: list[str],
    source: str,
) -> str:
    """One ``table`` environment for one list set and test, with ``langs`` as columns."""
    for col in ("n_lists", value, f"{value}_ci_low", f"{value}_ci_high", "ci_level"):
        if col in group.columns:
            _check_numbers(group, col, source)
    counts = group.groupby("lang")["n_lists"].max()
    cells = group.drop_duplicates(["embeddings", "lang"]).set_index(["embeddings", "lang"])
    header = " & ".join(["", *(f"{escape_latex(lang)} ({counts[lang]})" for lang in langs)])
    body = []
    for name in group["embeddings"].unique():
        row = [
            _cell(cells.loc[(name, lang)], value, digits, confidence, counts[lang])
            if (name, lang) in cells.index
            else "--"
            for lang in langs
        ]
        body.append(" & ".join([escape_latex(name), *row]) + r" \\")
    daggers = any(r"\dagger" in line for line in body)
    fewer = bool((group["n_lists"] < group["lang"].map(counts)).any())
    return "\n".join(
        [
            r"\begin{table}[ht]",
            r"\centering",
            r"\begin{tabular}{l" + "c" * len(langs) + "}",
            r"\toprule",
            header + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            r"\caption{" + _caption(group, list_set, test, value, confidence, daggers, fewer) + "}",
            r"\label{" + _label(value, list_set, test) + "}",
            r"\end{table}",
            "",
        ]
    )


def _check_numbers(group: pd.DataFrame, col: str, source: str) -> None:
    """:class:`WeatkitError` naming the file, line and column of a cell of ``col`` that is not a
    number (empty cells are NaN, shown as ``--``)."""
    raw = group[col]
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = numeric.isna() & raw.notna() & (raw.astype(str).str.strip() != "")
    if col == "n_lists":
        bad |= numeric.isna() | (numeric % 1 != 0)
    if bad.any():
        index = bad.idxmax()
        where = f"line {index + 2}" if isinstance(index, (int, np.integer)) else f"row {index}"
        row = group.loc[index]
        raise WeatkitError(
            f"{source}: {where} ({row.get('embeddings')}, {row.get('lang')}): column {col!r} "
            f"is not a number: {str(raw.loc[index])!r}"
        )


def _cell(row: pd.Series, value: str, digits: int, confidence: float, n_header: int) -> str:
    """``$v^{+a}_{-b}$``, plus the number of lists when it differs from the header's."""
    v, low, high = (float(row[f"{value}{suffix}"]) for suffix in ("", "_ci_low", "_ci_high"))
    if math.isnan(v):
        return "--"
    text = _number(v, digits)
    if not (math.isnan(low) or math.isnan(high)):
        text += "^{" + _offset(high - v, "+", digits) + "}_{" + _offset(v - low, "-", digits) + "}"
    level = float(row["ci_level"]) if "ci_level" in row.index else math.nan
    if level < confidence - 1e-9:
        text += r"{}^{\dagger}"
    cell = f"${text}$"
    if int(row["n_lists"]) != n_header:
        cell += f" ({int(row['n_lists'])})"
    return cell


def _offset(amount: float, sign: str, digits: int) -> str:
    """``amount`` with ``sign`` (``+`` above, ``-`` below), flipped if the CI excludes the value
    (by more than rounds to zero)."""
    if round(amount, digits) < 0:
        sign, amount = ("-" if sign == "+" else "+"), -amount
    return f"{sign}{_number(abs(amount), digits)}"


def _number(value: float, digits: int) -> str:
    """``value`` to ``digits`` decimals; one that rounds to zero is ``0.00``, never ``-0.00``."""
    text = f"{value:.{digits}f}"
    return text.removeprefix("-") if float(text) == 0 else text


def _caption(
    group: pd.DataFrame,
    list_set: str,
    test: str,
    value: str,
    confidence: float,
    daggers: bool,
    fewer: bool,
) -> str:
    """What the cells are: medians over lists, single lists, or both, and the marks used."""
    level = f"{100 * confidence:g}\\%"
    kinds = []
    if (group["n_lists"] > 1).any():
        kinds.append(f"the median over a language's lists with its {level} order-statistic CI")
    if (group["n_lists"] == 1).any():
        kinds.append(f"the value of a language's single list with its {level} bootstrap CI")
    caption = (
        f"{VALUES[value]} for {escape_latex(list_set)} {escape_latex(test)}: "
        f"{'; or '.join(kinds)}. In parentheses: the number of lists of each language."
    )
    if fewer:
        caption += " After a cell: the smaller number of lists it rests on (low coverage)."
    if daggers:
        caption += rf" ${{}}^\dagger$: actual coverage of the interval below {level} (few lists)."
    return caption


def _label(value: str, list_set: str, test: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", f"{value}-{list_set}-{test}").strip("-")
    return f"tab:{slug}"
