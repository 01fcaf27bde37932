"""The three evaluate modules: values, invariants, bad input, bootstrap intervals, and packaged == checkout."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrambled_bench.metrics import METRIC_NAMES, folders, load, metric_path

REPO = Path(__file__).resolve().parents[2]
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def recovery_rate():
    return load("recovery_rate")


@pytest.fixture(scope="module")
def gain():
    return load("relative_performance_gain")


@pytest.fixture(scope="module")
def edit_distance():
    return load("edit_distance")


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_packaged_module_is_the_checkout_file(name, monkeypatch):
    monkeypatch.chdir(REPO)
    # imported in the test, not at the top: `evaluate` imports transformers' pipelines and torch (some
    # seconds), which every xdist worker would otherwise pay while collecting the suite
    import evaluate

    packaged = load(name)
    from_checkout = evaluate.load(f"metrics/{name}")
    packaged_source = Path(inspect.getsourcefile(type(packaged))).read_text(encoding="utf-8")
    checkout_source = Path(inspect.getsourcefile(type(from_checkout))).read_text(encoding="utf-8")
    assert (
        packaged_source
        == checkout_source
        == (REPO / "metrics" / name / f"{name}.py").read_text(encoding="utf-8")
    )
    assert metric_path(name) == REPO / "metrics" / name


def test_unknown_metric_name_is_refused():
    with pytest.raises(ValueError, match="unknown metric 'accuracy'"):
        metric_path("accuracy")


def test_metric_folders_are_self_contained():
    for name in METRIC_NAMES:
        folder = REPO / "metrics" / name
        assert {"README.md", "requirements.txt", "app.py", f"{name}.py"} <= {p.name for p in folder.iterdir()}
        for script in folder.glob("*.py"):
            imported = set()
            for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level:
                    # a relative import must be a sibling file of the folder (evaluate copies it along)
                    assert (folder / f"{node.module}.py").is_file(), (script, node.module)
                elif isinstance(node, ast.ImportFrom):
                    imported.add((node.module or "").split(".")[0])
            assert "scrambled_bench" not in imported, script
            third_party = {"datasets", "evaluate", "numpy", "rapidfuzz", "scipy"}
            standard = {"__future__", "collections", "inspect", "pathlib", "statistics", "typing", "warnings"}
            assert imported <= third_party | standard, script
            # what a Space installs: every third-party import is in the folder's requirements.txt
            required = (folder / "requirements.txt").read_text(encoding="utf-8")
            assert all(name in required for name in imported & third_party), (script, imported & third_party)
        assert "launch_gradio_widget" in (folder / "app.py").read_text(encoding="utf-8")


def test_every_metric_folder_carries_the_same_shared_helpers():
    """The helpers the modules share are one file, copied into each folder so each stays self-contained
    (as evaluate's bleu carries tokenizer_13a.py): the copies must never drift apart."""
    copies = {
        name: (REPO / "metrics" / name / "scrambled_bench_shared.py").read_bytes() for name in METRIC_NAMES
    }
    assert len(set(copies.values())) == 1, (
        "metrics/*/scrambled_bench_shared.py differ; copy one over the others"
    )


def test_every_metric_folder_carries_the_copy_generated_from_the_package_module_now():
    """metrics/shared.py is the one home of the helpers; each folder's scrambled_bench_shared.py is what the
    generator writes from it now, header included."""
    stale = [str(path.relative_to(REPO)) for path in folders.stale_copies(REPO / "metrics")]
    assert not stale, (
        f"{', '.join(stale)} differ from metrics/shared.py as generated now: run `{folders.SYNC_COMMAND}`"
    )


def test_a_generated_copy_says_it_is_generated_from_what_and_how_to_regenerate_it():
    copy = (REPO / "metrics" / "edit_distance" / "scrambled_bench_shared.py").read_text(encoding="utf-8")
    header = "".join(copy.splitlines(keepends=True)[:3])
    assert header.startswith("# Generated: do not edit.")
    assert "metrics/shared.py" in header and folders.SYNC_COMMAND in header
    assert copy == header + (REPO / "metrics" / "shared.py").read_text(encoding="utf-8")


def _run_sync_script(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "sync_metric_folders.py"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_sync_script_checks_and_rewrites_only_the_copies_that_differ(tmp_path: Path):
    """The documented command, on a checkout of its own: `--check` names a stale copy and writes nothing;
    without it the stale copy is rewritten and the others are left untouched."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "sync_metric_folders.py", tmp_path / "scripts")
    (tmp_path / "metrics").mkdir()
    shutil.copy(REPO / "metrics" / "shared.py", tmp_path / "metrics")
    for name in METRIC_NAMES:
        (tmp_path / "metrics" / name).mkdir()
        shutil.copy(REPO / "metrics" / name / "scrambled_bench_shared.py", tmp_path / "metrics" / name)
    stale = tmp_path / "metrics" / "recovery_rate" / "scrambled_bench_shared.py"
    stale.write_text(stale.read_text(encoding="utf-8").replace("def wilson_interval", "def wilson_interval_"))
    current = tmp_path / "metrics" / "edit_distance" / "scrambled_bench_shared.py"
    before = current.stat().st_mtime_ns

    checked = _run_sync_script(tmp_path, "--check")
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout.splitlines() == ["differs: metrics/recovery_rate/scrambled_bench_shared.py"]
    assert "def wilson_interval_" in stale.read_text(encoding="utf-8")

    written = _run_sync_script(tmp_path)
    assert written.returncode == 0, written.stderr
    assert written.stdout.splitlines() == ["wrote: metrics/recovery_rate/scrambled_bench_shared.py"]
    assert stale.read_text(encoding="utf-8") == current.read_text(encoding="utf-8")
    assert folders.stale_copies(tmp_path / "metrics") == []
    assert current.stat().st_mtime_ns == before

    again = _run_sync_script(tmp_path, "--check")
    assert again.returncode == 0 and "as generated now" in again.stdout


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_metric_folders_are_packages_that_ship_their_files(name):
    """import-linter sees only packages: each folder is one (an __init__.py, listed in pyproject.toml), and its
    card and requirements ship beside its modules (the wheel and the strict editable install)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    package = f"scrambled_bench.metrics.{name}"
    assert (REPO / "metrics" / name / "__init__.py").is_file()
    assert package in config["packages"]
    assert {"README.md", "requirements.txt"} <= set(config["package-data"][package])
    assert (metric_path(name) / "README.md").is_file() and (metric_path(name) / "requirements.txt").is_file()


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_importing_a_metric_folders_space_app_launches_nothing(name):
    """The package's tools import every module of the folder (the docstring examples' walk): the Space's
    app.py launches its widget only when run as `python app.py`, and gradio is not needed to import it."""
    module = importlib.import_module(f"scrambled_bench.metrics.{name}.app")
    assert module.launch_gradio_widget.__module__ == "evaluate.utils.gradio"


# ---------------------------------------------------------------- recovery rate


def test_recovery_rate_values(recovery_rate):
    result = recovery_rate.compute(
        predictions=["The cat sat.", "A dog ran.", "Brids fly."],
        references=["The cat sat.", "A dog ran.", "Birds fly."],
        scrambled=["Teh cat sat.", "A dgo rna.", "Brids fly."],
    )
    # scrambled EDs 2, 4, 2 (sum 8); recovered EDs 0, 0, 2 (sum 2): RR = 6/8
    assert result == {
        "recovery_rate": 0.75,
        "edit_distance": pytest.approx(2 / 3),
        "scrambled_edit_distance": pytest.approx(8 / 3),
        "num_samples": 3,
    }


def test_recovery_rate_strips_surrounding_whitespace_like_the_paper(recovery_rate):
    result = recovery_rate.compute(predictions=[" The cat\n"], references=["The cat"], scrambled=["Teh cat "])
    assert (
        result["recovery_rate"] == 1.0
        and result["edit_distance"] == 0.0
        and result["scrambled_edit_distance"] == 2.0
    )


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30)


@SETTINGS
@given(st.lists(st.tuples(words, words), min_size=1, max_size=8))
def test_perfect_recovery_is_one_and_echo_is_zero(recovery_rate, pairs):
    references = [reference for reference, _ in pairs]
    scrambled = [reference[::-1] + "x" for reference, _ in pairs]  # never equal to the reference
    perfect = recovery_rate.compute(predictions=references, references=references, scrambled=scrambled)
    echo = recovery_rate.compute(predictions=scrambled, references=references, scrambled=scrambled)
    assert perfect["recovery_rate"] == 1.0 and perfect["edit_distance"] == 0.0
    assert echo["recovery_rate"] == 0.0
    assert echo["edit_distance"] == echo["scrambled_edit_distance"] > 0


@SETTINGS
@given(st.lists(st.tuples(words, words, words), min_size=1, max_size=8))
def test_recovery_rate_is_at_most_one(recovery_rate, triples):
    references, scrambled, predictions = (list(column) for column in zip(*triples))
    scrambled = [s + "q" if s.strip() == r.strip() else s for r, s in zip(references, scrambled)]
    result = recovery_rate.compute(predictions=predictions, references=references, scrambled=scrambled)
    assert result["recovery_rate"] <= 1.0
    total_scrambled = result["scrambled_edit_distance"] * result["num_samples"]
    expected = (total_scrambled - result["edit_distance"] * result["num_samples"]) / total_scrambled
    assert result["recovery_rate"] == pytest.approx(expected)


def test_recovery_rate_below_zero_when_worse_than_the_input(recovery_rate):
    result = recovery_rate.compute(predictions=["Teh cta!!!"], references=["The cat"], scrambled=["Teh cta"])
    assert result["recovery_rate"] == -0.5


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {"predictions": ["a"], "references": ["a", "b"], "scrambled": ["b", "a"]},
            "same length .*, got predictions=1, references=2, scrambled=2",
        ),
        ({"predictions": [], "references": [], "scrambled": []}, "empty"),
        ({"predictions": ["a"], "references": ["a"], "scrambled": ["a"]}, "undefined"),
        (
            {"predictions": [None], "references": ["a"], "scrambled": ["b"]},
            r"predictions\[0\] must be a string, got NoneType",
        ),
        (
            {"predictions": ["a"], "references": ["a"], "scrambled": [3]},
            r"scrambled\[0\] must be a string, got int",
        ),
        (
            {"predictions": "abc", "references": ["a"], "scrambled": ["b"]},
            "predictions must be a list of strings",
        ),
        ({"predictions": ["a"], "references": ["a"]}, "scrambled is missing"),
    ],
)
def test_recovery_rate_bad_input(recovery_rate, inputs, message):
    with pytest.raises(ValueError, match=message):
        recovery_rate.compute(**inputs)


def test_recovery_rate_interval_is_seeded_and_brackets_the_value(recovery_rate):
    inputs = {
        "predictions": ["The cat sat.", "A dog ran.", "Brids fly.", "Fsih swim."],
        "references": ["The cat sat.", "A dog ran.", "Birds fly.", "Fish swim."],
        "scrambled": ["Teh cat sat.", "A dgo rna.", "Brids fly.", "Fsih siwm."],
    }
    first = recovery_rate.compute(**inputs, confidence_level=0.9, n_resamples=300, seed=7)
    again = recovery_rate.compute(**inputs, confidence_level=0.9, n_resamples=300, seed=7)
    assert first == again
    low, high = first["recovery_rate_ci"]
    assert low <= first["recovery_rate"] <= high <= 1.0
    assert first["edit_distance_ci"][0] <= first["edit_distance"] <= first["edit_distance_ci"][1]
    assert (first["confidence_level"], first["n_resamples"], first["undefined_resamples"]) == (0.9, 300, 0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"confidence_level": 1.5}, "confidence_level must be"),
        ({"confidence_level": 0.9, "n_resamples": 0}, "n_resamples"),
    ],
)
def test_bootstrap_options_are_checked(recovery_rate, options, message):
    with pytest.raises(ValueError, match=message):
        recovery_rate.compute(predictions=["a"], references=["a"], scrambled=["b"], **options)


# ---------------------------------------------------------------- relative performance gain


def test_relative_performance_gain_values(gain):
    result = gain.compute(
        predictions=["A", "B", "C", "A"],
        references=["A", "B", "C", "D"],
        original_predictions=["A", "B", "C", "D"],
        substituted_predictions=["A", None, "", "B"],
    )
    assert result == {
        "relative_performance_gain": pytest.approx(2 / 3),
        "accuracy": 0.75,
        "original_accuracy": 1.0,
        "substituted_accuracy": 0.25,
        "num_samples": 4,
        "unanswered": 0,
    }


def test_unparsed_answers_count_as_wrong(gain):
    result = gain.compute(
        predictions=[None, "", "C"],
        references=["A", "B", "C"],
        original_predictions=["A", "B", "C"],
        substituted_predictions=["", None, ""],
    )
    assert (result["accuracy"], result["unanswered"], result["substituted_accuracy"]) == (
        pytest.approx(1 / 3),
        2,
        0.0,
    )


letters = st.sampled_from(["A", "B", "C", "D", "", None])


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from("ABCD"), letters, letters), min_size=1, max_size=12))
def test_scrambled_as_good_as_original_gives_one(gain, rows):
    references = [r for r, _, _ in rows]
    original = [o for _, o, _ in rows]
    substituted = [s for _, _, s in rows]
    correct = lambda answers: sum(1 for a, r in zip(answers, references) if a == r)
    if correct(original) <= correct(substituted):
        # no gain of the original context over the substituted one: RPG is undefined, said so, never NaN
        undefined = gain.compute(
            predictions=original,
            references=references,
            original_predictions=original,
            substituted_predictions=substituted,
        )
        assert undefined["relative_performance_gain"] is None
        assert "relative_performance_gain_undefined" in undefined
        return
    same_as_original = gain.compute(
        predictions=original,
        references=references,
        original_predictions=original,
        substituted_predictions=substituted,
    )
    same_as_substituted = gain.compute(
        predictions=substituted,
        references=references,
        original_predictions=original,
        substituted_predictions=substituted,
    )
    assert same_as_original["relative_performance_gain"] == 1.0
    assert same_as_substituted["relative_performance_gain"] == 0.0


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (
            {
                "predictions": ["A"],
                "references": ["A", "B"],
                "original_predictions": ["A"],
                "substituted_predictions": ["B"],
            },
            "same length.*references=2",
        ),
        (
            {"predictions": [], "references": [], "original_predictions": [], "substituted_predictions": []},
            "empty",
        ),
        (
            {
                "predictions": ["A"],
                "references": [None],
                "original_predictions": ["A"],
                "substituted_predictions": ["B"],
            },
            r"references\[0\] must be a string",
        ),
        (
            {
                "predictions": ["A"],
                "references": [""],
                "original_predictions": ["A"],
                "substituted_predictions": ["B"],
            },
            r"references\[0\] is empty",
        ),
        (
            {
                "predictions": [1],
                "references": ["A"],
                "original_predictions": ["A"],
                "substituted_predictions": ["B"],
            },
            r"predictions\[0\] must be a string, got int",
        ),
        (
            {"predictions": ["A"], "references": ["A"], "original_predictions": ["A"]},
            "substituted_predictions is missing",
        ),
    ],
)
def test_relative_performance_gain_bad_input(gain, inputs, message):
    with pytest.raises(ValueError, match=message):
        gain.compute(**inputs)


@pytest.mark.parametrize(
    ("predictions", "original", "substituted", "reason", "formula"),
    [
        (["A", "B"], ["B", "B"], ["C", "C"], "original and substituted accuracy are equal", None),
        # the original context is worse than a useless one: the ratio would flip sign and read as a recovery
        (["B", "B"], ["B", "B"], ["A", "B"], "below the substituted", 1.0),
    ],
)
def test_undefined_rpg_is_none_with_its_reason_and_the_formula_kept_apart(
    gain, predictions, original, substituted, reason, formula
):
    result = gain.compute(
        predictions=predictions,
        references=["A", "A"],
        original_predictions=original,
        substituted_predictions=substituted,
    )
    assert result["relative_performance_gain"] is None
    assert reason in result["relative_performance_gain_undefined"]
    assert result.get("relative_performance_gain_formula") == formula
    assert result["accuracy"] == predictions.count("A") / 2  # the accuracies stay


def test_accuracy_alone_without_the_anchors(gain):
    result = gain.compute(predictions=["A", None, "C", "B"], references=["A", "B", "C", "D"])
    assert result == {"accuracy": 0.5, "num_samples": 4, "unanswered": 1}
    with pytest.raises(ValueError, match="substituted_predictions is missing"):
        gain.compute(predictions=["A"], references=["A"], original_predictions=["A"])


def test_relative_performance_gain_interval(gain):
    references = list("ABCD" * 10)
    original = list(references)
    substituted = ["A"] * 40
    scrambled = [r if i % 5 else "D" for i, r in enumerate(references)]
    result = gain.compute(
        predictions=scrambled,
        references=references,
        original_predictions=original,
        substituted_predictions=substituted,
        confidence_level=0.95,
        n_resamples=500,
        seed=0,
    )
    low, high = result["relative_performance_gain_ci"]
    assert low <= result["relative_performance_gain"] <= high
    assert result["accuracy_ci"][0] <= result["accuracy"] <= result["accuracy_ci"][1]
    assert result["undefined_resamples"] == 0


# ---------------------------------------------------------------- edit distance


def test_edit_distance_values(edit_distance):
    result = edit_distance.compute(
        predictions=["kitten", "flaw", " same "], references=["sitting", "lawn", "same"]
    )
    assert result == {
        "edit_distance": pytest.approx(5 / 3),
        "median_edit_distance": 2.0,
        "normalized_edit_distance": pytest.approx((3 / 7 + 2 / 4 + 0) / 3),
        "num_samples": 3,
    }


@SETTINGS
@given(st.lists(st.tuples(words, words), min_size=1, max_size=8))
def test_normalized_edit_distance_is_a_fraction_and_symmetric(edit_distance, pairs):
    predictions, references = (list(column) for column in zip(*pairs))
    forward = edit_distance.compute(predictions=predictions, references=references)
    backward = edit_distance.compute(predictions=references, references=predictions)
    assert 0.0 <= forward["normalized_edit_distance"] <= 1.0
    assert forward["edit_distance"] == backward["edit_distance"]


def test_edit_distance_bad_input(edit_distance):
    with pytest.raises(ValueError, match=r"predictions\[1\] must be a string"):
        edit_distance.compute(predictions=["a", None], references=["a", "b"])
    with pytest.raises(ValueError, match="same length .*, got predictions=1, references=2"):
        edit_distance.compute(predictions=["a"], references=["a", "b"])
    with pytest.raises(ValueError, match="empty"):
        edit_distance.compute(predictions=[], references=[])


def test_batches_added_one_by_one_give_the_same_scores(recovery_rate, gain, edit_distance):
    recovery_rate.add_batch(
        predictions=["The cat sat."], references=["The cat sat."], scrambled=["Teh cat sat."]
    )
    recovery_rate.add_batch(predictions=["Brids fly."], references=["Birds fly."], scrambled=["Brids fly."])
    assert recovery_rate.compute()["recovery_rate"] == 0.5
    gain.add_batch(
        predictions=[None, "B"],
        references=["A", "B"],
        original_predictions=["A", "B"],
        substituted_predictions=["", None],
    )
    assert gain.compute()["relative_performance_gain"] == 0.5
    edit_distance.add_batch(predictions=["kitten"], references=["sitting"])
    assert edit_distance.compute()["edit_distance"] == 3.0
    with pytest.raises(ValueError, match=r"scrambled\[0\] must be a string"):
        recovery_rate.add_batch(predictions=["a"], references=["a"], scrambled=[None])


@SETTINGS
@given(st.lists(st.booleans(), min_size=2, max_size=20), st.randoms(use_true_random=False))
def test_rpg_is_one_whenever_scrambled_accuracy_equals_original(gain, original_correct, random):
    """Same number of correct answers, on other questions than the original ones: RPG is still 1."""
    if not any(original_correct):
        original_correct[0] = True
    references = ["A"] * len(original_correct)
    scrambled_correct = random.sample(original_correct, len(original_correct))
    as_answers = lambda correct: ["A" if ok else "B" for ok in correct]
    result = gain.compute(
        predictions=as_answers(scrambled_correct),
        references=references,
        original_predictions=as_answers(original_correct),
        substituted_predictions=[None] * len(references),
    )
    assert result["relative_performance_gain"] == 1.0
    assert result["accuracy"] == result["original_accuracy"]


#: a process that is the program's own: evaluate imported and a module loaded, then what the process holds
_PROGRAM_PROCESS = """
import json, sys
from scrambled_bench.metrics import claim_process, load
claim_process()
value = load("edit_distance").compute(predictions=["kitten"], references=["sitting"])["edit_distance"]
held = {"torch": "torch" in sys.modules, "evaluator_has_transformers": sys.modules["evaluate.evaluator.base"].TRANSFORMERS_AVAILABLE}
from transformers import Pipeline  # kept out only while evaluate was imported
print(json.dumps({"value": value, **held, "pipeline": Pipeline.__name__}))
"""


def test_the_program_imports_evaluate_without_the_evaluators_pipelines_and_a_users_process_keeps_them() -> (
    None
):
    """The ``scrambled-bench`` program's own process imports ``evaluate`` without ``transformers.pipelines``
    (and so without torch), scores the same, and can import the pipelines afterwards; a user's process (this
    test's, which never claimed itself) gets ``evaluate``'s own import, evaluator and all."""
    pytest.importorskip("transformers")
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM_PROCESS], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    held = json.loads(done.stdout.strip().splitlines()[-1])
    assert held == {"value": 3.0, "torch": False, "evaluator_has_transformers": False, "pipeline": "Pipeline"}

    assert (
        load("edit_distance").compute(predictions=["kitten"], references=["sitting"])["edit_distance"] == 3.0
    )
    assert sys.modules["evaluate.evaluator.base"].TRANSFORMERS_AVAILABLE is True
