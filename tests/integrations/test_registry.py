"""The registry of harnesses (``integrations/registry.py``): a name is taken once, each built-in and entry
point is loaded once and only when a lookup needs it, a plug-in that fails to load is left out with one
warning naming it while the others still load, and the built-ins resolve from a source tree that has no
installed metadata at all.

The plug-ins here are real installed distributions: a ``*.dist-info`` folder with an ``entry_points.txt``
beside a module, on ``sys.path``, found by ``importlib.metadata`` as any installed package is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.integrations import (
    BUILT_IN,
    ENTRY_POINT_GROUP,
    Harness,
    HarnessLoadWarning,
    LogLayout,
    Registry,
    get_harness,
    register,
)
from scrambled_bench.integrations import registry as registry_module
from scrambled_bench.integrations.lm_eval import LmEvalHarness

ROOT = Path(__file__).resolve().parents[2]

BROKEN = "raise RuntimeError('the plug-in broke at import')\n"
COUNTED = """
from scrambled_bench.integrations import Harness, LogLayout

IMPORTS = globals().get("IMPORTS", 0) + 1


class Quiz(Harness):
    name, title, spec = "quiz", "Quiz", "FILE"
    layout = LogLayout("quiz", "--out", "", "logs")

    def resolve(self, spec, task_sources):
        return []

    def write_variants(self, tasks, request):
        raise NotImplementedError

    def read_folder(self, folder):
        return []
"""


class Echo(Harness):
    """A harness whose name alone is under test: it does nothing."""

    name, title, spec = "echo", "Echo", "FILE"
    layout = LogLayout("echo", "--out", "", "logs")
    resolve = write_variants = read_folder = lambda self, *arguments: []


def install_plugin(folder: Path, module: str, source: str, entry_points: dict[str, str]) -> None:
    """A distribution ``module`` installed into ``folder``: the module's file and its dist-info, whose entry
    points (name -> value) are in the harnesses' group."""
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    lines = [f"{name} = {value}" for name, value in entry_points.items()]
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n" + "\n".join(lines) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` to install plug-ins into (gone from the path, and its modules unloaded,
    after the test)."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if getattr(sys.modules[name], "__file__", "") and str(folder) in str(sys.modules[name].__file__):
            del sys.modules[name]


def test_a_second_harness_under_a_registered_name_is_refused_in_one_line():
    registry = Registry()
    registry.register(Echo())
    with pytest.raises(ScrambledBenchError) as refused:
        registry.register(Echo())
    assert str(refused.value) == (
        f"a harness called 'echo' is already registered ({__name__}.Echo); register(..., replace=True) replaces it"
    )
    replacement = Echo()
    assert registry.register(replacement, replace=True) is replacement and registry.get("echo") is replacement


def test_a_built_in_name_is_taken_before_the_built_in_is_loaded():
    """A harness registered in code under a built-in's name is refused even where the built-in has not been
    loaded yet (no lookup asked for it); ``replace`` puts it in the built-in's place, which is then never
    loaded."""
    registry = Registry()
    impostor = type("Impostor", (Echo,), {"name": "lm-eval"})()
    with pytest.raises(
        ScrambledBenchError,
        match=r"'lm-eval' is already registered \(scrambled_bench\.integrations\.lm_eval:LmEvalHarness, built in\)",
    ):
        registry.register(impostor)
    registry.register(impostor, replace=True)
    assert registry.get("lm-eval") is impostor
    assert registry.names() == sorted(BUILT_IN)


def test_the_package_registry_refuses_a_duplicate_too():
    with pytest.raises(ScrambledBenchError, match="'inspect' is already registered"):
        register(type("Other", (Echo,), {"name": "inspect"})())
    assert get_harness("inspect").title == "Inspect AI"


def test_a_plugin_whose_entry_point_raises_is_left_out_with_one_warning(site: Path):
    install_plugin(site, "broken_harness_plugin", BROKEN, {"broken": "broken_harness_plugin:BrokenHarness"})
    registry = Registry()
    with warnings.catch_warnings():
        warnings.simplefilter(
            "error"
        )  # a lookup by name loads that harness alone: the plug-in is not touched
        assert isinstance(registry.get("lm-eval"), LmEvalHarness)
    with pytest.warns(HarnessLoadWarning) as caught:
        names = registry.names()
    assert names == sorted(BUILT_IN)  # the built-ins still resolve
    [warning] = caught.list
    message = str(warning.message)
    assert message == (
        "harness 'broken' (broken_harness_plugin:BrokenHarness, entry point group scrambled_bench.harnesses) "
        "cannot be loaded and is left out: RuntimeError: the plug-in broke at import"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once: later lookups say nothing more, and list the same
        assert registry.names() == names
        with pytest.raises(ScrambledBenchError) as asked:  # asked for by name: why it is not there
            registry.get("broken")
    assert str(asked.value) == message


def test_a_broken_plugin_is_one_warning_line_on_the_command_line(site: Path, tmp_path: Path):
    """Through the command line, in a process of its own: every command still works, and the warning is one
    line on stderr."""
    install_plugin(site, "broken_harness_plugin", BROKEN, {"broken": "broken_harness_plugin:BrokenHarness"})
    (tmp_path / "logs").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    code = "import sys; from scrambled_bench.evaluate_cli.main import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "score", "--from", "lm-eval", str(tmp_path / "logs")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    warned = (
        "scrambled_bench.harnesses:0: HarnessLoadWarning: harness 'broken' (broken_harness_plugin:BrokenHarness, "
        "entry point group scrambled_bench.harnesses) cannot be loaded and is left out: RuntimeError: the plug-in "
        "broke at import"
    )
    assert [line for line in lines if "HarnessLoadWarning" in line] == [warned]
    assert len(lines) == 2 and lines[1].startswith("error: ") and "no logged samples" in lines[1], lines


def test_each_entry_point_is_loaded_once_and_only_when_needed(site: Path):
    install_plugin(site, "quiz_harness_plugin", COUNTED, {"quiz": "quiz_harness_plugin:Quiz"})
    registry = Registry()
    registry.get("inspect")
    assert "quiz_harness_plugin" not in sys.modules  # looked up by name: only that harness is loaded
    assert registry.get("quiz").title == "Quiz"
    module = sys.modules["quiz_harness_plugin"]
    registry.names(), registry.get("quiz"), registry.names()
    assert module.IMPORTS == 1 and sys.modules["quiz_harness_plugin"] is module


def test_an_entry_point_that_is_a_module_registering_its_harness(site: Path, monkeypatch: pytest.MonkeyPatch):
    """An entry point's value may be a module that registers its harness when imported, through the
    package's :func:`register` (here into a fresh package registry, which looks for entry points anew)."""
    source = COUNTED + "\nfrom scrambled_bench.integrations import register\n\nregister(Quiz())\n"
    install_plugin(site, "registering_plugin", source, {"quiz": "registering_plugin"})
    monkeypatch.setattr(registry_module, "REGISTRY", Registry())
    assert get_harness("quiz").title == "Quiz" and "quiz" in registry_module.harness_names()


def test_what_an_entry_point_gives_must_be_a_harness_of_its_name(site: Path):
    install_plugin(
        site, "odd_plugin", COUNTED + "\nNOT_A_HARNESS = 3\n",
        {"quiz-two": "odd_plugin:Quiz", "three": "odd_plugin:NOT_A_HARNESS"},
    )  # fmt: skip
    with pytest.warns(HarnessLoadWarning) as caught:
        names = Registry().names()
    assert names == sorted(BUILT_IN)
    assert sorted(str(warning.message).split(" left out: ")[1] for warning in caught.list) == [
        "TypeError: it gives int, not a Harness (nor registers one called 'three')",
        "TypeError: its harness is called 'quiz'",
    ]


def test_a_built_in_found_again_as_an_entry_point_is_one_harness(site: Path):
    """The package lists its built-ins in its entry points too: the same name and value found both ways is
    one harness, without a word; another package's entry point under a built-in's name is left out, with
    one warning, and the built-in stands."""
    install_plugin(
        site, "claims_plugin", COUNTED,
        {"lm-eval": BUILT_IN["lm-eval"], "lighteval": "claims_plugin:Quiz"},
    )  # fmt: skip
    registry = Registry()
    with pytest.warns(HarnessLoadWarning) as caught:
        names = registry.names()
    assert names == sorted(BUILT_IN) and registry.get("lighteval").title == "lighteval"
    left_out = (
        "harness 'lighteval' (claims_plugin:Quiz, entry point group scrambled_bench.harnesses) is left out: the "
        "name is taken by scrambled_bench.integrations.lighteval:LightevalHarness"
    )
    assert [str(warning.message) for warning in caught.list] == [left_out]


def test_the_built_ins_are_the_entry_points_of_pyproject():
    """``pyproject.toml`` lists the built-ins for the tools that read the entry point group: the same names
    and values as :data:`BUILT_IN`, so that the two never name different harnesses."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][ENTRY_POINT_GROUP] == dict(BUILT_IN)


def _source_tree(folder: Path) -> Path:
    """The package laid out as ``pyproject.toml``'s ``package-dir`` maps it, as links to the repository's
    folders, and nothing installed: the folder to put on ``sys.path``."""
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-dir"
    ]
    package = folder / "scrambled_bench"
    package.mkdir(parents=True)
    for child in (ROOT / package_dir["scrambled_bench"]).iterdir():
        (package / child.name).symlink_to(child)
    for name, location in package_dir.items():
        if name != "scrambled_bench":
            (package / name.removeprefix("scrambled_bench.")).symlink_to(ROOT / location)
    return folder


def _site_without_the_package(folder: Path) -> Path:
    """The installed libraries (links to the entries of this environment's site-packages) without this
    package's metadata, its editable finder or any ``.pth`` file."""
    folder.mkdir()
    installed = Path(sysconfig.get_paths()["purelib"])
    for entry in installed.iterdir():
        if entry.name.startswith(("scrambled_bench", "__editable__")) or entry.suffix == ".pth":
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


SOURCE_TREE_PROBE = """
import importlib.metadata as metadata
import json
import sys

sys.path[:0] = sys.argv[1:]
try:
    metadata.distribution("scrambled-bench")
    installed = True
except metadata.PackageNotFoundError:
    installed = False
import scrambled_bench
from scrambled_bench.integrations import ENTRY_POINT_GROUP, get_harness, harness_names

print(json.dumps({
    "installed": installed,
    "entry_points": [point.name for point in metadata.entry_points(group=ENTRY_POINT_GROUP)],
    "package": scrambled_bench.__file__,
    "names": harness_names(),
    "titles": [get_harness(name).title for name in harness_names()],
}))
"""


def test_the_built_ins_resolve_from_a_source_tree_without_installed_metadata(tmp_path: Path):
    """``python -I -S`` (no site-packages, no ``.pth`` file, no ``PYTHONPATH``) with the source tree and the
    libraries, but not this package's dist-info, on ``sys.path``: the metadata is really absent, the package
    is the tree's, and the registry still has the three built-ins."""
    tree = _source_tree(tmp_path / "tree")
    libraries = _site_without_the_package(tmp_path / "site")
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", SOURCE_TREE_PROBE, str(tree), str(libraries)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["installed"] is False and found["entry_points"] == []
    assert Path(found["package"]).parent == tree / "scrambled_bench"
    assert found["names"] == sorted(BUILT_IN)
    assert {"Inspect AI", "lighteval", "lm-evaluation-harness"} <= set(found["titles"])
