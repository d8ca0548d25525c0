"""The book as a reader meets it: one install cell everywhere, commands that match the README and
the CI workflow, and no number typed into the front matter's prose."""

import re
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REPOSITORY_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
WORKFLOW = (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _install_cell(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_every_notebook_starts_with_the_same_install_cell_from_the_configured_repository():
    cells = {path.name: _install_cell(path) for path in NOTEBOOKS}
    assert len(set(cells.values())) == 1, f"install cells differ: {cells}"
    install = next(iter(cells.values()))
    command = f'%pip install -q "ssa-book @ git+{REPOSITORY_URL}"'
    assert command in install
    assert command.removeprefix("%pip install -q ") in README, "the README must document the install cell's command"


def test_the_workflow_runs_the_make_targets_the_readme_documents():
    steps = [step["run"] for job in yaml.safe_load(WORKFLOW)["jobs"].values() for step in job["steps"] if "run" in step]
    make_commands = [command for command in steps if command.startswith("make ")]
    assert any(command.startswith("make test") for command in make_commands)
    assert any(command.startswith("make book") for command in make_commands)
    assert "make book TORCH=cuda DEVICE=cuda PROFILE=paper" in make_commands
    for command in ("make test", "make book", "make book TORCH=cuda DEVICE=cuda PROFILE=paper"):
        assert command in README, f"the README does not document `{command}`"


NAMES = {"GPT-2", "SHA-256"}  # names with a digit in them, not numbers


def _prose(markdown: str) -> str:
    """Markdown without what may hold digits legitimately: code, maths, roles, directives."""
    markdown = re.sub(r"(?ms)^(```|~~~).*?^\1", "", markdown)  # fenced blocks
    markdown = re.sub(r"\$\$.*?\$\$", "", markdown, flags=re.S)
    markdown = re.sub(r"\$[^$]*\$", "", markdown)
    markdown = re.sub(r"\{[\w:.-]+\}`[^`]*`", "", markdown)  # roles, e.g. {glue:text}`claims`
    return re.sub(r"`[^`]*`", "", markdown)


def test_front_matter_prose_types_no_numbers():
    for name in ("intro", "reproducing"):
        notebook = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "markdown":
                # Tables of fixed vocabulary (the profiles) hold no numbers either.
                digits = [word for word in re.findall(r"[^\s]*\d[^\s]*", _prose(cell.source)) if word.strip(".,;:()*") not in NAMES]
                assert not digits, f"notebooks/{name}.ipynb cell {index} types numbers: {digits}; glue them"
