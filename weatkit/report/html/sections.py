"""The sections of a report, in the order a reader meets them.

A section has a title, one line saying how to read it, a link to the documentation page of what
it shows (:data:`DOCS_PAGES`; :func:`docs_link`), its tables (:mod:`weatkit.report.html.table`),
figures (:mod:`weatkit.report.html.svg`) and notes. :func:`run_sections` makes those of a run or
grid directory, :func:`compare_sections` those of a compare directory; both end with the per-item
log (when the directory has one), the skip report and the manifest. :func:`sentence_sections`
makes those of a sentence command's directory: one per table, the per-item log, the manifest. A
measure plugin makes those of its command's directory (its ``report``,
:mod:`weatkit.measures.plugins`), ending with :func:`manifest_section`; their docs key is
``weatkit NAME``, its page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from weatkit.measures.plugins import plugins
from weatkit.report.html.source import ReportSource
from weatkit.report.html.svg import SvgFigure, compare_figures, run_figures
from weatkit.report.html.table import HtmlTable, html_table
from weatkit.report.plot_style import interval_label
from weatkit.report.tables import KEY_COLUMNS

#: Where links to the documentation point: the published site, mkdocs.yml's ``site_url`` (a
#: report shared with a colleague links to pages they can open), overridden by ``docs_url``
#: (``weatkit report --docs-url``; ``http://127.0.0.1:8000/`` for ``mkdocs serve``).
DOCS_URL = "https://weatkit.github.io/weatkit/"
#: The documentation page (a path under ``docs/``) of each kind of section.
DOCS_PAGES = {
    "weat": "measures/weat.md",
    "ca-weat": "measures/ca-weat.md",
    "statistics": "reference/statistics.md",
    "association": "measures/index.md",
    "isomorphism": "measures/isomorphism.md",
    "spaces": "guides/spaces.md",
    "validity": "measures/validity.md",
    "figures": "guides/tables-figures.md",
    "outputs": "guides/outputs.md",
    "compare": "sentence/compare.md",
    "report": "guides/report.md",
    "items": "guides/items.md",
    "weatkit gest": "sentence/gest.md",
    "weatkit crows": "sentence/crows-pairs.md",
    "weatkit stereoset": "sentence/stereoset.md",
    "weatkit mbe": "sentence/mbe.md",
    **{f"weatkit {p.name}": p.docs for p in plugins() if p.docs},
}

#: The intervals of a reliability table (:mod:`weatkit.validity`), after their level.
RELIABILITY_INTERVALS = "bootstrap CI over the units (split_half); F-based CI (icc2, icc2k)"


@dataclass
class Section:
    """One section of a report (module docstring); ``docs`` is a key of :data:`DOCS_PAGES`."""

    id: str
    title: str
    how: str
    docs: str
    tables: list[HtmlTable] = field(default_factory=list)
    figures: list[SvgFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pre: str = ""


def docs_link(page: str, docs_url: str = DOCS_URL) -> str:
    """The address of documentation page ``page`` (``measures/weat.md``) on the site at
    ``docs_url``, as MkDocs serves it (``measures/weat/``)."""
    return (
        docs_url.rstrip("/")
        + "/"
        + page.removesuffix(".md").removesuffix("index")
        + ("" if page.endswith("index.md") else "/")
    )


def run_sections(source: ReportSource) -> list[Section]:
    """The sections of a run or grid directory."""
    tables, manifest = source.tables, source.manifest
    engine = manifest.get("config", {}).get("engine", {})
    level = float(engine.get("confidence_level", 0.95))
    boot = interval_label(f"bootstrap-{engine.get('ci_method', 'percentile')}", level, level)
    sets = set(tables["summary"]["list_set"]) if "summary" in tables else set()
    measure = "ca-weat" if any(str(s).startswith("ca-weat") for s in sets) else "weat"
    sections = []
    if "summary" in tables:
        summary = tables["summary"]
        kinds = [
            interval_label(m, lvl, level)
            for m, lvl in zip(summary.get("ci_method", [None] * len(summary)),
                              summary.get("ci_level", [None] * len(summary)), strict=True)
        ]  # fmt: skip
        section = Section(
            "summary",
            "Summary",
            "One row per embeddings × language × list set × test: the effect size d (> 0: X "
            "goes with A, Y with B) with its interval; several lists give their median and its "
            "order-statistic interval.",
            measure,
        )
        section.tables.append(
            html_table(
                summary.assign(interval=kinds)[
                    _after(list(summary.columns), "effect_size_ci_high", "interval")
                ],
                id="t-summary",
                source="summary.csv",
                interval="each row's interval kind is in its interval column",
            )
        )
        sections.append(section)
    if "results" in tables:
        results = tables["results"]
        section = Section(
            "results",
            "Results",
            "One row per embeddings × list × test: the test statistic S, the effect size d and "
            "their bootstrap intervals, the permutation p and the sets' sizes after OOV removal.",
            measure,
        )
        section.tables.append(
            html_table(results, id="t-results", source="results.csv", interval=boot)
        )
        sections.append(section)
        if "p_value" in results.columns:
            tested = results.dropna(subset=["p_value"])
            columns = [*KEY_COLUMNS, "effect_size", "p_value", "p_holm", "q_bh"]
            section = Section(
                "multiplicity",
                "Multiplicity-adjusted p-values",
                "Every test with a permutation p, adjusted over the whole run: p_holm controls "
                "the family-wise error rate (Holm), q_bh the false discovery rate "
                "(Benjamini–Hochberg); read a test as significant by the adjusted value.",
                "statistics",
            )
            section.tables.append(
                html_table(
                    tested[[c for c in columns if c in tested.columns]],
                    id="t-multiplicity",
                    source="results.csv (rows with a p-value)",
                )
            )
            sections.append(section)
    pooled = [name for name in ("pooled", "association_pooled") if name in tables]
    if pooled:
        section = Section(
            "pooled",
            "Pooled estimates (random effects)",
            "DerSimonian–Laird pooling of d over lists, languages or layers: the pooled d* "
            "with its normal interval and the Hartung–Knapp one (hk), τ² and I² the share of "
            "the spread that is heterogeneity, Q and its p.",
            "statistics",
        )
        for name in pooled:
            section.tables.append(
                html_table(
                    tables[name],
                    id=f"t-{name}",
                    source=f"{name}.csv",
                    interval=f"{level:.0%} normal CI (d* ± z·SE); hk: Hartung–Knapp (t, k − 1 df)",
                )
            )
        sections.append(section)
    if "association" in tables:
        section = Section(
            "association",
            "Association metrics",
            "One row per metric and test (per set or word where the metric gives one): the "
            "metric's value with its bootstrap interval; each metric's page says which sign "
            "means bias.",
            "association",
        )
        section.tables.append(
            html_table(tables["association"], id="t-association", source="association.csv",
                       interval=interval_label("bootstrap-percentile", level, level))
        )  # fmt: skip
        sections.append(section)
    spaces = [
        ("isomorphism", "isomorphism", "how far each space is from isomorphic to the reference"),
        ("correlations", "isomorphism", "R² of d against each isomorphism measure"),
        ("comparisons", "spaces", "paired bootstrap differences of d to a baseline"),
        ("asymmetry", "spaces", "d beside the attribute sets' count difference"),
        ("asymmetry_correlations", "spaces", "correlations of d with the count difference"),
    ]
    present = [s for s in spaces if s[0] in tables]
    if present:
        section = Section(
            "spaces",
            "Isomorphism, baselines and asymmetry",
            "How the effect sizes relate to the embedding spaces: "
            + "; ".join(f"{name}.csv: {what}" for name, _, what in present)
            + ".",
            present[0][1],
        )
        section.tables += [
            html_table(tables[name], id=f"t-{name}", source=f"{name}.csv") for name, _, _ in present
        ]
        sections.append(section)
    if "reliability" in tables:
        section = Section(
            "validity",
            "Validity: reliability across parallel lists",
            "Split-half reliability with the Spearman–Brown correction (r_SB) and ICC(2,1) / "
            "ICC(2,k) of the parallel lists of each test across the spaces: near 1, the lists "
            "rank the spaces alike; near 0, a single list's d says little.",
            "validity",
        )
        section.tables.append(
            html_table(tables["reliability"], id="t-reliability", source="reliability.csv",
                       interval=f"{level:.0%} {RELIABILITY_INTERVALS}")
        )  # fmt: skip
        sections.append(section)
    note = manifest.get("reliability")
    if isinstance(note, str) and note:  # why a grid has no reliability.csv
        if not sections or sections[-1].id != "validity":
            sections.append(
                Section("validity", "Validity", "Reliability across parallel lists.", "validity")
            )
        sections[-1].notes.append(note)
    figures = run_figures(source)
    sections.append(_figure_section(figures.figures, figures.notes))
    sections += _items_section(source)
    sections.append(_run_skip_section(source))
    sections.append(manifest_section(source))
    return sections


def compare_sections(source: ReportSource) -> list[Section]:
    """The sections of a compare directory."""
    tables, manifest = source.tables, source.manifest
    scores_level = manifest.get("resampling", {}).get("crows", {}).get("confidence_level", 0.95)
    corr_level = manifest.get("correlation", {}).get("confidence_level", 0.95)
    sections = []
    section = Section(
        "scores",
        "Scores",
        "table.csv: one row per model × language, one column per measure; scores.csv: each "
        "score with its bootstrap interval over the items and a test of the measure's neutral "
        "value (ci_excludes_neutral, p_value_neutral).",
        "compare",
    )
    if "table" in tables:
        section.tables.append(html_table(tables["table"], id="t-table", source="table.csv"))
    section.tables.append(
        html_table(tables["scores"], id="t-scores", source="scores.csv",
                   interval=f"{scores_level:.0%} percentile bootstrap CI over the items "
                   "(per row: ci_level)")
    )  # fmt: skip
    sections.append(section)
    if "correlations" in tables:
        section = Section(
            "correlations",
            "Correlations between measures",
            "Spearman ρ and Kendall τ_b of each pair of measures across the model × language "
            "units, with bootstrap intervals and permutation p; a flag says why a row cannot be "
            "read as significant.",
            "compare",
        )
        section.tables.append(
            html_table(tables["correlations"], id="t-correlations", source="correlations.csv",
                       interval=interval_label("bootstrap-percentile", corr_level, corr_level))
        )  # fmt: skip
        sections.append(section)
    section = Section(
        "validity",
        "Validity and reliability",
        "validity.csv: the multitrait–multimethod pairs (convergent: same bias type, "
        "different methods, should be high; discriminant: lower) with a verdict per pair; "
        "reliability.csv: test–retest reliability over seeds; seeds.csv: the spread over seeds.",
        "validity",
    )
    intervals = {
        "validity": interval_label("bootstrap-percentile", corr_level, corr_level)
        + " over the units",
        "reliability": f"{corr_level:.0%} {RELIABILITY_INTERVALS}",
        "seeds": "",
    }
    for name, interval in intervals.items():
        if name in tables:
            section.tables.append(
                html_table(tables[name], id=f"t-{name}", source=f"{name}.csv", interval=interval)
            )
    notes = manifest.get("validity", {}).get("notes", [])
    section.notes += [str(n) for n in notes] if isinstance(notes, list) else []
    if not section.tables and not section.notes:
        section.notes.append("no validity.csv (written with a validity section of traits)")
    sections.append(section)
    figures = compare_figures(source)
    sections.append(_figure_section(figures.figures, figures.notes))
    sections += _items_section(source)
    section = Section(
        "skipped",
        "Skip report",
        "The model × language × method steps that did not give a score: not applicable (no "
        "data in that language, a model of the wrong kind) or failed (with the error).",
        "compare",
    )
    if "skipped" in tables:
        section.tables.append(html_table(tables["skipped"], id="t-skipped", source="skipped.csv"))
    sections.append(section)
    sections.append(manifest_section(source))
    return sections


def sentence_sections(source: ReportSource) -> list[Section]:
    """The sections of a sentence command's ``--out`` directory: each CSV table as it is
    (its columns are described on the command's page), the per-item log and the manifest."""
    command = source.manifest["command"]
    sections = [
        Section(
            f"table-{name}",
            f"{name}.csv",
            f"The {name} table {command} wrote, one HTML row per CSV row; its page describes "
            "its columns.",
            command,
            tables=[html_table(table, id=f"t-{name}", source=f"{name}.csv")],
        )
        for name, table in source.tables.items()
    ]
    return [*sections, *_items_section(source), manifest_section(source)]


def _figure_section(figures: list[SvgFigure], notes: list[str]) -> Section:
    return Section(
        "figures",
        "Figures",
        "weatkit's figures of this directory, as weatkit plot draws them; figures that cannot "
        "be drawn from what the directory holds are listed below with the reason.",
        "figures",
        figures=figures,
        notes=notes,
    )


def _items_section(source: ReportSource) -> list[Section]:
    if source.items is None:
        return []
    section = Section(
        "items",
        "Per-item log",
        "One row per scored item: its texts, the score of each option, the outcome and its "
        "influence on the measure (leave-one-out); filter by bias type and outcome.",
        "items",
    )
    section.tables.append(html_table(source.items, id="t-items", source=str(source.items_file)))
    return [section]


def _run_skip_section(source: ReportSource) -> Section:
    manifest = source.manifest
    section = Section(
        "skipped",
        "Skip report",
        "Tests left out (a set's coverage below min_coverage, with the words not found), failed "
        "jobs, and the warnings of list loading (duplicates, invisible characters).",
        "outputs",
    )
    for key, title in (("skipped", "manifest skipped"), ("failed", "manifest failed"),
                       ("skipped_metrics", "manifest skipped_metrics")):  # fmt: skip
        rows = manifest.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            frame = pd.DataFrame(rows).astype(str).replace({"None": ""})
            section.tables.append(html_table(frame, id=f"t-manifest-{key}", source=title))
    lines = manifest.get("report")
    if isinstance(lines, list):
        section.notes += [str(line) for line in lines]
    if not section.tables and not section.notes:
        section.notes.append("nothing was skipped")
    return section


def manifest_section(source: ReportSource) -> Section:
    """Versions, seeds, and the inputs with their fingerprints, then the whole manifest."""
    manifest = source.manifest
    env = manifest.get("environment") if source.kind == "compare" else manifest
    env = env if isinstance(env, dict) else {}
    versions = {k: env[k] for k in ("weatkit_version", "python", "torch", "numpy", "platform")
                if k in env}  # fmt: skip
    command = env.get("command", "")
    versions["command"] = command if isinstance(command, str) else " ".join(map(str, command))
    if "device" in manifest:
        versions["device"] = manifest["device"]
    section = Section(
        "manifest",
        "Manifest",
        "What produced this directory: the versions, the seeds, the inputs with their "
        "fingerprints (SHA-256), then the whole manifest.json.",
        "outputs",
    )
    section.tables.append(_key_values(versions, "t-versions", "manifest: versions"))
    seeds = _seeds(manifest)
    if seeds:
        section.tables.append(_key_values(seeds, "t-seeds", "manifest: seeds"))
    for key in ("experiment",):
        if isinstance(manifest.get(key), dict):
            section.tables.append(_key_values(manifest[key], f"t-{key}", f"manifest: {key}"))
    if source.kind == "compare":
        config = {k: manifest.get(k) for k in ("config_file", "config_sha256")}
        section.tables.append(_key_values(config, "t-config", "manifest: comparison file"))
    for key in ("list_sources", "embeddings", "models"):
        rows = manifest.get(key)
        if isinstance(rows, list) and rows and all(isinstance(r, dict) for r in rows):
            frame = pd.DataFrame([_flat(r) for r in rows])
            section.tables.append(
                html_table(frame, id=f"t-inputs-{key}", source=f"manifest: {key}")
            )
    section.pre = json.dumps(manifest, indent=2, ensure_ascii=False, default=str)
    return section


def _seeds(manifest: dict) -> dict[str, object]:
    """Every seed the manifest records, by its key path."""
    found: dict[str, object] = {}

    def walk(value: object, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                name = f"{path}.{key}" if path else str(key)
                if key == "seed" and not isinstance(item, dict | list):
                    found[name] = item
                elif key not in ("jobs", "samples", "cache", "skipped"):
                    walk(item, name)

    walk(manifest, "")
    return found


def _flat(row: dict) -> dict[str, str]:
    """A manifest record with nested objects flattened (``fingerprint.sha256``)."""
    out: dict[str, str] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in _flat(value).items()})
        else:
            out[key] = "" if value is None else str(value)
    return out


def _after(columns: list[str], anchor: str, name: str) -> list[str]:
    """``columns`` with ``name`` put right after ``anchor`` (at the end without it)."""
    at = columns.index(anchor) + 1 if anchor in columns else len(columns)
    return [*columns[:at], name, *columns[at:]]


def _key_values(values: dict, id: str, source: str) -> HtmlTable:
    frame = pd.DataFrame(
        {"key": list(values), "value": ["" if v is None else str(v) for v in values.values()]}
    )
    return html_table(frame, id=id, source=source)
