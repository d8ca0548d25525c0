"""The library installs and runs with torch alone: a clean virtual environment gets torch and the
package (no extras), and runs the README's library example; nothing of the book comes with it."""

import os
import re
import shutil
import subprocess
from importlib import metadata
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BOOK_ONLY = ("transformers", "entmax", "numpy", "pandas", "scipy", "matplotlib", "jupyter_book", "papermill")


def _library_example() -> str:
    """The README's block of Python that follows the line "With torch alone:"."""
    found = re.search(r"With torch alone:\s*```python\n(.*?)```", README, re.S)
    assert found, "the README must show the library's example after a line 'With torch alone:'"
    return found.group(1)


def _requirement_names(distribution: str) -> list[str]:
    """The distributions ``distribution`` needs (without extras), itself first, recursively."""
    found, queue = [], [distribution]
    while queue:
        name = queue.pop()
        if name.lower() in (seen.lower() for seen in found):
            continue
        found.append(name)
        for requirement in metadata.requires(name) or []:
            if "extra ==" not in requirement:
                queue.append(re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0])
    return found


def _torch_alone(folder: Path) -> Path:
    """A folder holding links to the installed torch and the distributions it needs, and nothing
    else: what ``pip install torch`` would put in a clean environment, without the download."""
    folder.mkdir()
    for name in _requirement_names("torch"):
        distribution = metadata.distribution(name)
        for top in {Path(str(file)).parts[0] for file in distribution.files or []}:
            source = Path(distribution.locate_file(top))
            if top not in ("..", "bin") and source.exists() and not (folder / top).exists():
                (folder / top).symlink_to(source)
    return folder


@pytest.mark.skipif(sys.platform != "linux", reason="the clean environment is built the Linux way")
def test_the_library_installs_and_runs_its_readme_example_with_torch_alone(tmp_path):
    environment = tmp_path / "library"
    venv.EnvBuilder(with_pip=True).create(environment)
    site_packages = next((environment / "lib").glob("python*/site-packages"))
    for bundled in [
        *site_packages.glob("setuptools*"),
        *site_packages.glob("_distutils_hack"),
        *site_packages.glob("distutils-precedence.pth"),
    ]:
        shutil.rmtree(bundled) if bundled.is_dir() else bundled.unlink()  # torch's newer setuptools builds the package
    (site_packages / "torch_alone.pth").write_text(str(_torch_alone(tmp_path / "torch_alone")) + "\n")
    source = tmp_path / "source"  # a copy: building in the checkout would leave a build/ folder there
    shutil.copytree(ROOT / "ssa", source / "ssa", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    package = subprocess.run(
        [
            str(environment / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert package.returncode == 0, package.stderr
    check = "\n".join(
        [
            "import importlib.util",
            f"present = [name for name in {BOOK_ONLY!r} if importlib.util.find_spec(name) is not None]",
            "assert not present, f'the library alone brought {present}'",
            _library_example(),
            "import ssa.hf, ssa.scoring",
            "try:\n    ssa.make_scorer('sparsemax')(torch.zeros(1, 3))\nexcept ModuleNotFoundError as error:\n"
            "    assert 'ssa-book[sparse]' in str(error), error\nelse:\n    raise AssertionError('sparsemax ran without entmax')",
        ]
    )
    ran = subprocess.run(
        [str(environment / "bin" / "python"), "-W", "ignore", "-c", check],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "SSA_NATIVE": "0", "HOME": str(tmp_path)},
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_the_package_data_ships_every_source_of_the_kernels():
    """A wheel without one of them (ssa_cpu.h once) cannot build the C++ kernels, and SSA then runs
    as PyTorch operations, with other last bits; scripts/check_wheel.sh checks a built wheel."""
    import fnmatch
    import tomllib

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"
    ]["ssa"]
    sources = [path.relative_to(ROOT / "ssa").as_posix() for path in (ROOT / "ssa" / "kernels" / "csrc").iterdir()]
    unshipped = [source for source in sources if not any(fnmatch.fnmatch(source, pattern) for pattern in patterns)]
    assert sources and not unshipped, f"pyproject.toml's package-data leaves out {unshipped}"


def _without_the_book(folder: Path) -> dict[str, str]:
    """The environment of an interpreter started with ``-S`` that sees the installed torch, the
    distributions it needs and this checkout's ``ssa-book`` (its installed metadata and its source),
    and nothing of the [book] extra beyond what torch needs too."""
    _torch_alone(folder)
    book = metadata.distribution("ssa-book")
    for top in {Path(str(file)).parts[0] for file in book.files or []}:
        if top.endswith(".dist-info"):
            (folder / top).symlink_to(Path(book.locate_file(top)))
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{folder}{os.pathsep}{ROOT}", "PYTHONNOUSERSITE": "1"}


@pytest.mark.skipif(sys.platform != "linux", reason="the environment without the book is built the Linux way")
def test_without_the_book_extra_ssa_book_fails_with_one_line_naming_it(tmp_path):
    import tomllib

    name = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    line = f'ssa_book is the book\'s machinery and needs the [book] extra: pip install "{name}[book]" (not installed: '
    environment = _without_the_book(tmp_path / "torch_and_ssa_book")
    hidden = subprocess.run(
        [sys.executable, "-S", "-c", "import importlib.util; print(importlib.util.find_spec('numpy'))"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert hidden.stdout == "None\n", hidden.stdout + hidden.stderr

    imported = subprocess.run(
        [sys.executable, "-S", "-c", "import ssa_book"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert imported.returncode == 1
    assert imported.stderr.splitlines()[-1].startswith(f"ImportError: {line}"), imported.stderr
    assert "numpy" in imported.stderr.splitlines()[-1] and "ModuleNotFoundError" not in imported.stderr, imported.stderr

    command = subprocess.run(
        [sys.executable, "-S", "-m", "ssa_book", "--help"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert command.returncode != 0 and command.stdout == ""
    assert len(command.stderr.splitlines()) == 1 and command.stderr.startswith(line), command.stderr

    # the installed console script, written as pip writes one: the same line alone
    script = tmp_path / "bin" / "ssa-book"
    script.parent.mkdir()
    script.write_text(
        "import re\nimport sys\nfrom ssa_book.cli import main\nif __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n    sys.exit(main())\n"
    )
    console = subprocess.run(
        [sys.executable, "-S", str(script), "--help"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert console.returncode != 0 and console.stdout == ""
    assert len(console.stderr.splitlines()) == 1 and console.stderr.startswith(line), console.stderr
