"""Comparison files: YAML and TOML, defaults, one-line errors naming the key, fuzzing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from weatkit.crossmethod.config import load_compare_config
from weatkit.errors import WeatkitError

YAML = """
output: out
languages: [en, de]
models:
  - {name: A, model: models/a}
  - {name: B, model: org/some-model, kind: glm}
contextual: {batch_size: 4, device: cpu}
weat: {lists: [weat, my-lists.yaml], tests: [weat1], engine: {n_bootstrap: 10}}
gest: {mlm_templates: [2, 3]}
stereoset: {}
crows: {method: aul}
mbe:
  corpora: {de: de.tsv, fr: {english: en.txt, target: fr.txt}}
  weight: dot
  max_sentences: 50
correlation: {n_bootstrap: 99, by_language: false}
"""

TOML = """
output = "out"
languages = ["en", "de"]
contextual = {batch_size = 4, device = "cpu"}
weat = {lists = ["weat", "my-lists.yaml"], tests = ["weat1"], engine = {n_bootstrap = 10}}
gest = {mlm_templates = [2, 3]}
stereoset = {}
crows = {method = "aul"}
correlation = {n_bootstrap = 99, by_language = false}

[[models]]
name = "A"
model = "models/a"

[[models]]
name = "B"
model = "org/some-model"
kind = "glm"

[mbe]
corpora = {de = "de.tsv", fr = {english = "en.txt", target = "fr.txt"}}
weight = "dot"
max_sentences = 50
"""


def _write(tmp_path: Path, text: str, name: str = "cmp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_and_toml_give_the_same_config(tmp_path: Path) -> None:
    (tmp_path / "models" / "a").mkdir(parents=True)
    from_yaml = load_compare_config(_write(tmp_path, YAML))
    from_toml = load_compare_config(_write(tmp_path, TOML, "cmp.toml"))
    for field in ("output", "languages", "models", "contextual", "weat"):
        assert getattr(from_yaml, field) == getattr(from_toml, field), field
    for method in ("gest", "crows", "mbe"):
        assert from_yaml.section(method) == from_toml.section(method), method
    c = from_yaml
    assert c.output == tmp_path / "out"
    assert c.methods == ("weat", "gest", "stereoset", "crows", "mbe")
    assert c.models[0].model == str(tmp_path / "models" / "a")  # a local directory
    assert c.models[1].model == "org/some-model" and c.models[1].kind == "glm"  # a hub id
    assert c.weat.lists == ("weat", str(tmp_path / "my-lists.yaml"))
    assert c.weat.layers == (0, -2)  # layer 0 and the next-to-last layer by default
    assert c.weat.engine.n_bootstrap == 10
    gest = c.section("gest")
    assert gest.mlm_templates == (2, 3) and gest.glm_templates is None
    mbe = c.section("mbe")
    assert mbe.corpora == {
        "de": str(tmp_path / "de.tsv"),
        "fr": (str(tmp_path / "en.txt"), str(tmp_path / "fr.txt")),
    }
    assert (mbe.weight, mbe.method, mbe.max_sentences) == ("dot", "aula", 50)
    assert c.correlation.n_bootstrap == 99 and not c.correlation.by_language
    assert c.contextual.batch_size == 4


def test_only_named_methods_run_and_output_can_be_overridden(tmp_path: Path) -> None:
    path = _write(tmp_path, "languages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n")
    config = load_compare_config(path, output=str(tmp_path / "elsewhere"))
    assert config.methods == ("crows",)
    assert config.output == tmp_path / "elsewhere"
    assert config.section("crows").method == "pll"


def test_scores_and_eurogest_options(tmp_path: Path) -> None:
    head = "output: o\nlanguages: [en, it]\nmodels: [{name: A, model: m}]\n"
    default = load_compare_config(_write(tmp_path, head + "gest: {}\n"))
    assert (default.scores.n_bootstrap, default.scores.seed) == (1000, 0)
    assert default.scores.confidence_level == 0.95
    gest = default.section("gest")
    assert (gest.eurogest, gest.eurogest_code, gest.coinciding) == (
        True,
        "2025-12",
        "other",
    )
    chosen = load_compare_config(
        _write(
            tmp_path,
            head + "gest: {glm_templates: [0], eurogest_code: 2026-04, coinciding: keep}\n"
            "scores: {n_bootstrap: 200, seed: 5, confidence_level: 0.9}\n",
        )
    )
    assert (chosen.scores.n_bootstrap, chosen.scores.seed) == (200, 5)
    assert chosen.scores.confidence_level == 0.9
    gest = chosen.section("gest")
    assert gest.glm_templates == (0,) and gest.mlm_templates is None
    assert (gest.eurogest_code, gest.coinciding) == ("2026-04", "keep")
    off = load_compare_config(_write(tmp_path, head + "gest: {eurogest: false}\n"))
    assert off.section("gest").eurogest is False
    assert chosen.correlation.n_bootstrap == 2000  # correlation keeps its own


_HEAD = "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_HEAD + "scores: {n_bootstrap: -1}\n", r"scores\.n_bootstrap: must be >= 0, got -1"),
        (_HEAD + "scores: {n_bootstrap: many}\n", r"scores\.n_bootstrap: "),
        (_HEAD + "scores: {n_bootstrap: 1000000000000000}\n", r"scores\.n_bootstrap: "),
        (_HEAD + "scores: {seed: -3}\n", r"scores\.seed: must be >= 0, got -3"),
        (
            _HEAD + "scores: {confidence_level: 95}\n",
            r"scores\.confidence_level: must be between 0 and 1, got 95",
        ),
        (_HEAD + "scores: {level: 0.9}\n", "scores: unknown option 'level'"),
        (_HEAD + "scores: [1000]\n", "scores"),
        (_HEAD + "gest: {eurogest_code: 2024-01}\n", r"gest\.eurogest_code: choose 2025-12"),
        (_HEAD + "gest: {coinciding: drop}\n", r"gest\.coinciding: choose other, refuse, keep"),
        (_HEAD + "gest: {eurogest: maybe}\n", r"gest\.eurogest"),
        (_HEAD + "gest: {templates: [1]}\n", "gest: unknown option 'templates'"),
    ],
)
def test_scores_and_gest_errors_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(WeatkitError, match=message) as info:
        load_compare_config(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("languages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n", "output directory"),
        ("output: o\nmodels: [{name: A, model: m}]\ncrows: {}\n", "languages"),
        ("output: o\nlanguages: [en]\ncrows: {}\n", "models"),
        ("output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n", "at least one method"),
        ("output: o\nlanguages: [en]\nmodels: [{name: A}]\ncrows: {}\n", r"models\[1\].model"),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m, kind: seq2seq}]\ncrows: {}\n",
            r"models\[1\].kind",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}, {name: A, model: n}]\n"
            "crows: {}\n",
            "unique",
        ),
        ("output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {method: x}\n", "pll"),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\nweat: {layers: [top]}\n",
            "weat.layers",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ngest: {mlm_templates: 2}\n",
            "gest.mlm_templates",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\nmbe: {weight: cos}\n",
            "mbe.corpora",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n"
            "mbe: {corpora: {de: x.tsv}, weight: cos}\n",
            "mbe.weight",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n"
            "mbe: {corpora: {de: {english: e.txt}}}\n",
            "mbe.corpora.de",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n"
            "mbe: {corpora: {de: x.tsv}, max_sentences: 0}\n",
            "max_sentences",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {limit: 0}\n",
            r"cmp.yaml: crows\.limit: must be at least 1, got 0",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ngest: {limit: 2.5}\n",
            r"cmp.yaml: gest\.limit: expected int, got float 2.5",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\nstereoset: {limit: -1}\n",
            r"stereoset\.limit: must be at least 1, got -1",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\n"
            "weat: {lists: [weat], limit: 5}\n",
            "weat: unknown option 'limit'",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\nplots: 1\n",
            "unknown option 'plots'",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n"
            "correlation: {confidence_level: 2}\n",
            r"correlation\.confidence_level: must be between 0 and 1, got 2",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n"
            "correlation: {level: 0.9}\n",
            "correlation: unknown option 'level'",
        ),
        ("output: o\nlanguages: [en\n", "line"),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, checkpoints: [m]}]\ncrows: {}\n",
            r"models\[1\]\.checkpoints: expected a list of at least two checkpoints",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, checkpoints: [m, 3]}]\ncrows: {}\n",
            r"models\[1\]\.checkpoints\[2\]",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, checkpoints: [m, m]}]\ncrows: {}\n",
            r"models\[1\]\.checkpoints: a checkpoint is listed twice",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m, checkpoints: [m, n]}]\n"
            "crows: {}\n",
            r"models\[1\]: give model \(one model\) or checkpoints",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: 'A#1', model: m}]\ncrows: {}\n",
            r"models\[1\]\.name: must not contain '#'",
        ),
        (
            "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n"
            "correlation: {seed_units: seeds}\n",
            "seed_units: choose checkpoints or mean",
        ),
    ],
)
def test_errors_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(WeatkitError, match=message) as info:
        load_compare_config(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_limit_of_each_sentence_section(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "output: o\nlanguages: [en, de]\nmodels: [{name: A, model: m}]\n"
        "gest: {limit: 40}\nstereoset: {limit: 30}\ncrows: {method: aul, limit: 20}\n"
        "mbe: {corpora: {de: x.tsv}, limit: 10}\n",
    )
    config = load_compare_config(path)
    limits = [config.section(m).limit for m in ("gest", "stereoset", "crows", "mbe")]
    assert limits == [40, 30, 20, 10] and config.section("crows").method == "aul"
    text = "output: o\nlanguages: [en]\nmodels: [{name: A, model: m}]\ncrows: {}\n"
    assert load_compare_config(_write(tmp_path, text)).section("crows").limit is None


def test_word_vector_entries(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "output: o\nlanguages: [en]\nmodels:\n  - {name: GloVe, path: glove-6b-50d}\n"
        "  - {name: Mine, path: 'vecs/mine.{lang}.vec'}\nweat: {lists: [weat]}\n",
    )
    glove, mine = load_compare_config(path).models
    assert (glove.model, glove.kind, glove.vectors) == ("", "static", "glove-6b-50d")
    assert mine.vectors == str(tmp_path / "vecs" / "mine.{lang}.vec")
    bad = "output: o\nlanguages: [en]\nmodels: [{name: G, path: g.vec, kind: mlm}]\ncrows: {}\n"
    with pytest.raises(WeatkitError, match=r"models\[1\]: path \(word vectors\) takes no kind"):
        load_compare_config(_write(tmp_path, bad))


def test_checkpoints_expand_to_numbered_units(tmp_path: Path) -> None:
    (tmp_path / "s0").mkdir()
    text = (
        "output: o\nlanguages: [en]\nmodels:\n  - {name: M, checkpoints: [s0, org/seed-1]}\n"
        "  - {name: B, model: org/b}\ncrows: {}\ncorrelation: {seed_units: mean}\n"
    )
    config = load_compare_config(_write(tmp_path, text))
    entry = config.models[0]
    assert entry.model == "" and entry.checkpoints == (str(tmp_path / "s0"), "org/seed-1")
    assert [(u.name, u.model) for u in config.units] == [
        ("M#1", str(tmp_path / "s0")),
        ("M#2", "org/seed-1"),
        ("B", "org/b"),
    ]
    assert config.correlation.seed_units == "mean"


def test_unreadable_or_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(WeatkitError, match="cannot read comparison file"):
        load_compare_config(tmp_path / "missing.yaml")
    with pytest.raises(WeatkitError, match=r"\.yaml, \.yml or \.toml"):
        load_compare_config(_write(tmp_path, "x", "cmp.json"))


KEYS = [
    "output",
    "languages",
    "models",
    "name",
    "model",
    "checkpoints",
    "kind",
    "weat",
    "gest",
    "crows",
    "mbe",
    "stereoset",
    "corpora",
    "layers",
    "lists",
    "mlm_templates",
    "glm_templates",
    "method",
    "weight",
    "correlation",
    "contextual",
    "engine",
    "seed_units",
    "scores",
    "n_bootstrap",
    "confidence_level",
    "eurogest",
    "eurogest_code",
    "coinciding",
    "x",
]
SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.recursive(
        SCALARS,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
        ),
        max_leaves=20,
    )
)
def test_fuzzed_files_never_crash(tmp_path: Path, data: object) -> None:
    import yaml

    path = _write(tmp_path, yaml.safe_dump(data))
    try:
        load_compare_config(path)
    except WeatkitError as err:
        assert "\n" not in str(err)
