"""pyproject.toml, environment.yml and requirements/lock.txt describe one environment."""

import os
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _pyproject_requirements() -> list[str]:
    project = _pyproject()["project"]
    extras = [requirement for group in project["optional-dependencies"].values() for requirement in group]
    return project["dependencies"] + extras


def _conda_pip_requirements() -> list[str]:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    pip_sections = [entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict) and "pip" in entry]
    assert len(pip_sections) == 1, "environment.yml must have exactly one pip section"
    return pip_sections[0]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_lists_exactly_the_pyproject_requirements():
    # an extra may repeat another's requirement (the book's includes the library's extras)
    assert sorted(_conda_pip_requirements()) == sorted(set(_pyproject_requirements()))


def test_the_library_needs_torch_and_the_build_tool_of_its_kernels_and_the_book_has_its_extra():
    project = _pyproject()["project"]
    # ninja: torch.utils.cpp_extension's JIT build of the C++ kernels needs it; without it SSA runs
    # as PyTorch operations, whose last bits differ from the cache's.
    assert project["dependencies"] == ["torch>=2.4", "ninja"]
    extras = project["optional-dependencies"]
    assert set(extras["hf"]) | set(extras["sparse"]) <= set(extras["book"])


def test_environment_yml_python_matches_requires_python():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda_python = [
        entry for entry in environment["dependencies"] if isinstance(entry, str) and _name(entry) == "python"
    ]
    assert conda_python == ["python" + _pyproject()["project"]["requires-python"]]


def test_transformers_major_version_is_pinned_and_jupyter_book_is_1x():
    requirements = {_name(requirement): requirement for requirement in _pyproject_requirements()}
    assert requirements["transformers"].endswith(",<6")
    assert requirements["jupyter-book"].endswith(",<2")


def test_lock_file_pins_every_requirement_and_torch():
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, separator, version = line.partition("==")
            assert separator, f"lock.txt line is not an exact pin: {line!r}"
            pins[_name(name)] = version
    missing = {_name(requirement) for requirement in _pyproject_requirements()} - set(pins)
    assert not missing, f"requirements missing from requirements/lock.txt: {sorted(missing)}"
    assert "ssa-book" not in pins
    # The Makefile installs the CPU or CUDA build of exactly this torch version.
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert f"TORCH_VERSION := {pins['torch']}\n" in makefile


def test_tqdm_finds_ipywidgets_so_notebook_kernels_do_not_warn():
    # transformers imports tqdm.auto; in a notebook kernel without ipywidgets that import writes
    # "TqdmWarning: IProgress not found" to the cell's stderr (the decoder chapter once showed it).
    from tqdm.notebook import IProgress

    assert IProgress is not None, "ipywidgets is missing or too old for tqdm: install requirements/lock.txt"


def test_binder_installs_the_locked_cpu_environment_and_the_package():
    binder = ROOT / "binder"
    requirements = (binder / "requirements.txt").read_text(encoding="utf-8").splitlines()
    torch_version = re.search(r"^TORCH_VERSION := (\S+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M).group(
        1
    )
    assert f"torch=={torch_version}+cpu" in requirements
    assert "-r ../requirements/lock.txt" in requirements
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
    post_build = binder / "postBuild"
    assert "pip install --no-deps -e ." in post_build.read_text(encoding="utf-8") and os.access(post_build, os.X_OK)
