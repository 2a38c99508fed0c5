"""CEAT and LPBS as ``weatkit compare`` methods, plugged in through their packages' declarations
(weatkit.measures.plugins.Compare): their rows equal the measures' own API on the same model,
lists, seed and level; the MTMM reads their families as methods; what does not apply says why;
a bad section is a one-line error naming the key."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from tests.tiny_models import make_causal_lm, make_char_mlm
from weatkit.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
GEST = Path(os.environ.get("WEATKIT_DATA", REPO.parent / "shared" / "data")) / "gest/data/gest.csv"
LISTS = {
    "tests": [
        {"test": "home", "lang": "en", "list_id": "gender",
         "X": ["he", "man"], "Y": ["she", "woman"],
         "A": ["job", "doctor"], "B": ["home", "kid", "nurse"]},
        {"test": "care", "lang": "en", "list_id": "gender",
         "X": ["man", "he"], "Y": ["woman", "she"],
         "A": ["nurse", "kid"], "B": ["doctor", "job"]},
    ]
}  # fmt: skip
SEAT_TEST = "heilman_double_bind_competent_one_word"  # 8, 8, 10, 10 sentences
WRITTEN = [
    "The job was hard for the man.", "He was a doctor at home.", "She took the kid home.",
    "The woman is a nurse.", "A kid and a man had a job.", "The doctor saw the woman.",
]  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory):
    from weatkit.crossmethod import compare

    root = tmp_path_factory.mktemp("plugged")
    mlm = make_char_mlm(root / "mlm")
    glm = make_causal_lm(root / "glm", "gpt2")
    (root / "lists.json").write_text(json.dumps(LISTS), encoding="utf-8")
    gest = [row["sentence"] for row in csv.DictReader(GEST.open(encoding="utf-8"))]
    (root / "corpus.txt").write_text("\n".join(gest[:600] + WRITTEN) + "\n", encoding="utf-8")
    (root / "cmp.yaml").write_text(
        f"""output: out
languages: [en, de]
models:
  - {{name: mlm, model: {mlm}}}
  - {{name: glm, model: {glm}}}
contextual: {{cache: false, device: cpu}}
scores: {{n_bootstrap: 200, seed: 4, confidence_level: 0.9}}
ceat: {{corpus: corpus.txt, lists: [lists.json], layers: [-1, 1], n_draws: 300,
        contexts_per_word: 5}}
lpbs: {{lists: [lists.json], templates: ["[TARGET] likes [ATTRIBUTE]."], subtokens: first}}
seat: {{tests: [{SEAT_TEST}], engine: {{n_bootstrap: 100, n_permutations: 0}}}}
validity: {{traits: {{"*home*": career, "*care*": care}}}}
log_items: csv
""",
        encoding="utf-8",
    )
    return root, mlm, glm, compare(root / "cmp.yaml", show_progress=False, plot=False)


def test_ceat_and_lpbs_rows_equal_their_own_api(study) -> None:
    import weatkit
    from weatkit.ceat.options import CeatOptions
    from weatkit.embeddings.contextual import ContextualOptions

    root, mlm, _glm, result = study
    scores = result.scores.set_index(["model", "lang", "measure"])
    run = weatkit.ceat(
        str(mlm), str(root / "corpus.txt"), lists=[str(root / "lists.json")], langs=["en"],
        layers=[-1, 1], options=CeatOptions(n_draws=300, contexts_per_word=5), seed=4,
        confidence_level=0.9, contextual=ContextualOptions(cache=False, device="cpu"),
        device="cpu",
    )  # fmt: skip
    assert len(run.results) == 4  # 2 tests × 2 layers
    for r in run.results.itertuples():
        row = scores.loc[("mlm", "en", f"ceat:{root / 'lists.json'}:{r.test}@{r.layer}")]
        assert row["method"] == "ceat"
        assert row["value"] == pytest.approx(r.ces, rel=1e-9)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((r.ci_low, r.ci_high), rel=1e-9)
        assert row["p_value_neutral"] == pytest.approx(r.pvalue, rel=1e-9)
        assert row["neutral"] == 0.0 and row["ci_level"] == 0.9 and row["n"] == 300
        assert row["ci_excludes_neutral"] == (not r.ci_low <= 0 <= r.ci_high)
    lp = weatkit.lpbs(  # the first test
        str(mlm), [LISTS["tests"][0][k] for k in "XYAB"], templates=["[TARGET] likes [ATTRIBUTE]."],
        subtokens="first", n_bootstrap=200, seed=4, confidence_level=0.9,
        options=ContextualOptions(cache=False, device="cpu"),
    )  # fmt: skip
    row = scores.loc[("mlm", "en", f"lpbs:{root / 'lists.json'}:home")]
    assert row["method"] == "lpbs" and row["n"] == 5
    assert row["value"] == pytest.approx(lp.effect_size, rel=1e-9)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(lp.confidence_interval, rel=1e-9)
    assert row["p_value_neutral"] == pytest.approx(lp.pvalue, rel=1e-9)


def test_what_does_not_apply_says_why_and_the_rest_goes_on(study) -> None:
    root, _mlm, _glm, result = study
    lists = root / "lists.json"
    skipped = {(r.model, r.lang, r.method): r.reason for r in result.skipped.itertuples()}
    assert skipped[("glm", "en", "lpbs")] == "LPBS needs a masked LM; glm is a causal LM"
    assert skipped[("mlm", "de", "ceat")] == f"no lists for de in {lists}"
    assert ("glm", "en", "ceat") not in skipped  # CEAT reads a causal LM's vectors too
    assert set(result.scores["method"]) == {"ceat", "lpbs", "seat"}
    assert {f"ceat:{lists}:home@-1", f"lpbs:{lists}:home"} <= set(result.table.columns)


def test_the_validity_matrix_reads_their_families_as_methods(study) -> None:
    root, *_ = study
    lists = root / "lists.json"
    validity = list(csv.DictReader((root / "out" / "validity.csv").open()))
    pairs = {(r["measure_x"], r["measure_y"]): r["kind"] for r in validity}
    ceat, lpbs = f"ceat:{lists}:home", f"lpbs:{lists}:home"
    assert pairs[(f"{ceat}@-1", lpbs)] == "convergent"  # one trait, two methods
    care = f"lpbs:{lists}:care"
    assert pairs[(f"{ceat}@-1", care)] == "heterotrait-heteromethod"
    assert pairs.get((lpbs, care), pairs.get((care, lpbs))) == "heterotrait-monomethod"
    assert pairs[(f"{ceat}@-1", f"{ceat}@1")] == "monotrait-monomethod"
    items = list(csv.DictReader((root / "out" / "items.csv").open()))
    assert {r["measure"] for r in items} == {"lpbs"}
    assert len(items) == 9  # one (template, attribute) row per attribute of A and B, per test
    manifest = json.loads((root / "out" / "manifest.json").read_text())
    assert manifest["methods"]["ceat"]["options"]["n_draws"] == 300


def test_seat_is_d_of_the_cls_vectors_of_its_sentences(study) -> None:
    """May et al.'s pooling for BERT: the last layer's [CLS] vector of each sentence, WEAT's d
    over them (a plain computation here)."""
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    from weatkit.lists.sources import select_lists

    _root, mlm, _glm, result = study
    (test,) = select_lists(["seat"], ["en"], tests=[SEAT_TEST]).tests
    tok = AutoTokenizer.from_pretrained(mlm)
    model = AutoModel.from_pretrained(mlm, dtype=torch.float32).eval()

    def cls(sentences: tuple[str, ...]) -> np.ndarray:
        with torch.no_grad():
            return np.stack(
                [model(**tok(s, return_tensors="pt")).last_hidden_state[0, 0].numpy()
                 for s in sentences]
            ).astype(np.float64)  # fmt: skip

    x, y, a, b = (cls(getattr(test, k)) for k in "XYAB")

    def s(w: np.ndarray) -> np.ndarray:
        def cos(u: np.ndarray, v: np.ndarray) -> np.ndarray:
            return (u / np.linalg.norm(u, axis=1, keepdims=True)) @ (
                v / np.linalg.norm(v, axis=1, keepdims=True)
            ).T

        return cos(w, a).mean(axis=1) - cos(w, b).mean(axis=1)

    d = (s(x).mean() - s(y).mean()) / np.concatenate([s(x), s(y)]).std(ddof=1)
    row = result.scores.set_index(["model", "measure"]).loc[("mlm", f"seat:{SEAT_TEST}@-1")]
    assert row["method"] == "seat" and row["neutral"] == 0.0
    assert row["value"] == pytest.approx(d, rel=1e-4)


def test_a_changed_corpus_or_list_file_changes_the_job_keys(study, tmp_path: Path) -> None:
    import shutil

    from weatkit.crossmethod.config import load_compare_config
    from weatkit.crossmethod.jobs import plan_compare

    root, *_ = study
    for name in ("corpus.txt", "lists.json"):
        shutil.copy(root / name, tmp_path / name)
    text = (root / "cmp.yaml").read_text().replace("validity:", "#")
    (tmp_path / "cmp.yaml").write_text(text)

    def keys() -> dict[str, str]:
        plan = plan_compare(load_compare_config(tmp_path / "cmp.yaml"))
        return {job.id: job.key for job in plan.jobs}

    before = keys()
    assert set(before) >= {"ceat:mlm:en", "lpbs:mlm:en", "seat:mlm:en", "ceat:glm:de"}
    with (tmp_path / "corpus.txt").open("a") as corpus:
        corpus.write("One more line.\n")
    after = keys()
    assert {k for k in before if before[k] != after[k]} == {
        f"ceat:{m}:{lang}" for m in ("mlm", "glm") for lang in ("en", "de")
    }
    lists = json.loads((tmp_path / "lists.json").read_text())
    lists["tests"][0]["A"].append("tall")
    (tmp_path / "lists.json").write_text(json.dumps(lists))
    changed = {k for k, v in keys().items() if after[k] != v}
    assert changed == {f"{m}:{u}:en" for m in ("ceat", "lpbs") for u in ("mlm", "glm")}


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("ceat: {lists: [caliskan]}", "cmp.yaml: ceat.corpus: give the corpus the contexts"),
        ("ceat: {corpus: c.txt, draws: 5}", "cmp.yaml: ceat: unknown option 'draws'; did you mean"),
        ("ceat: {corpus: c.txt, n_draws: -1}", "cmp.yaml: ceat.n_draws"),
        ("lpbs: {unit: word}", "cmp.yaml: lpbs.unit: choose attribute, sentence, not 'word'"),
        ("lpbs: {templates: ['[TARGET] only']}", "cmp.yaml: lpbs.templates"),
        ("lpbs: {lists: []}", "cmp.yaml: lpbs.lists"),
        ("seat: {pooling: cls}", "cmp.yaml: seat.pooling: choose first, mean, last, not 'cls'"),
        ("seat: {layer: [1, 2]}", "cmp.yaml: seat.layer: give one layer, not 2"),
    ],
)
def test_a_bad_section_is_a_one_line_error_naming_the_key(
    tmp_path: Path, section: str, message: str
) -> None:
    from weatkit.crossmethod.config import load_compare_config

    path = tmp_path / "cmp.yaml"
    path.write_text(
        f"output: out\nlanguages: [en]\nmodels: [{{name: m, model: bert-base-cased}}]\n{section}\n"
    )
    with pytest.raises(ConfigError) as err:
        load_compare_config(path)
    text = str(err.value).replace(str(tmp_path) + os.sep, "")
    assert "\n" not in text and text.startswith(message), text
