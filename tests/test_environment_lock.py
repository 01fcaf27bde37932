"""The tested environment is the lock, ``constraints/test.txt``: every package the project names is pinned
there at a version its range admits, and CI and the README install with it.

A green CI used to depend on what one machine's pip cache held (litellm 1.103 there, 1.110 on a new machine,
which broke lighteval). With the lock, CI tests exactly the versions someone tested; ``scripts/lock.sh``
regenerates it and ``scripts/check-latest.sh`` tries the newest versions first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints" / "test.txt"
#: the extras the test environment installs (README's "Run the tests", .ci/run)
TESTED_EXTRAS = ("test", "local", "probe", "datatrove", "train", "harness")
#: every extra the lock pins: the tested ones and the documentation site's (``docs``: mkdocs build --strict)
LOCKED_EXTRAS = (*TESTED_EXTRAS, "docs")
INSTALL_WITH_LOCK = re.compile(
    r'pip install -e "\.\[' + ",".join(TESTED_EXTRAS) + r'(,docs)?\]" -c constraints/test\.txt'
)


def lock_pins(text: str) -> dict[str, Version]:
    """``name==version`` lines of a pip constraints file, by canonical name.

    >>> lock_pins("# a comment\\nTorch==2.13.0   # via x\\nlm_eval==0.4.13\\n")
    {'torch': <Version('2.13.0')>, 'lm-eval': <Version('0.4.13')>}
    """
    pins = {}
    for line in text.splitlines():
        requirement = line.split("#", 1)[0].strip()
        if requirement:
            name, version = requirement.split("==")
            pins[canonicalize_name(name.split("[")[0])] = Version(version)
    return pins


def requirements_under_test() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    named = [*project["dependencies"], *(line for extra in LOCKED_EXTRAS for line in extras[extra])]
    return [Requirement(line) for line in named]


def test_the_lock_pins_every_package_the_project_names_within_its_range() -> None:
    pins = lock_pins(LOCK.read_text(encoding="utf-8"))
    missing = [str(req) for req in requirements_under_test() if canonicalize_name(req.name) not in pins]
    assert not missing, (
        f"pyproject.toml names packages constraints/test.txt lacks (run scripts/lock.sh): {missing}"
    )
    outside = [
        f"{req} (locked {pins[canonicalize_name(req.name)]})"
        for req in requirements_under_test()
        if not req.specifier.contains(pins[canonicalize_name(req.name)], prereleases=True)
    ]
    assert not outside, (
        f"the lock pins versions pyproject.toml does not allow (run scripts/lock.sh): {outside}"
    )


def test_torch_is_pinned_without_a_local_label() -> None:
    """``torch==2.13.0+cpu`` is on no index but this machine's; the plain pin takes the CPU file here."""
    lines = [line for line in LOCK.read_text(encoding="utf-8").splitlines() if line.startswith("torch==")]
    assert len(lines) == 1 and "+" not in lines[0].split("#")[0], lines


@pytest.mark.parametrize("path", ["README.md", ".ci/run"])
def test_ci_and_the_readme_install_the_test_environment_from_the_lock(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert INSTALL_WITH_LOCK.search(text), f"{path} must install the test extras with -c constraints/test.txt"
