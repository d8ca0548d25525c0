"""Conventions every chapter follows; see CONTRIBUTING.md, "Writing a chapter".

* committed without outputs or execution counts;
* first code cell: the Colab install cell, installing from the repository URL in _config.yml,
  tagged ``remove-cell`` (readers of the HTML do not need it);
* second code cell: tagged ``parameters``, assigning exactly ``profile``, ``device``, ``seed``
  with the defaults ``"cpu"``, ``"auto"``, ``0``, and ``remove-cell`` (papermill finds it by its
  tag; the reader does not need it);
* a reader sees no code unless asked: the notebook's ``mystnb.remove_code_source`` is true (so
  that papermill's injected-parameters cell shows nothing), and every other code cell is tagged
  ``remove-cell`` (it only computes or glues), ``remove-input`` (its output is a table or figure
  whose code is plumbing) or ``hide-input`` (its code is behind a toggle, with the cell's
  ``mystnb.remove_code_source`` false);
* one H1 per page, in the first cell, and the sections "Overview", "What you will see" and
  "Summary", in this order;
* every ``{ref}`` and ``{eq}`` target a notebook names is defined in the book;
* every notebook is in _toc.yml, and no placeholder page remains for a notebook that exists.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from ssa_book import book

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))
REPOSITORY_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
PARAMETER_DEFAULTS = {"profile": "cpu", "device": "auto", "seed": 0}
VISIBILITY_TAGS = ("remove-cell", "remove-input", "hide-input")
# Kept by their own maintainers to the older convention (code removed page-wide, cells untagged).
UNTAGGED = {"reproducing.ipynb"}
RHYTHM = ("Overview", "What you will see", "Summary")


def _code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _h1_lines(markdown: str) -> list[str]:
    # Lines inside fenced code blocks are code, not headings.
    without_code = re.sub(r"(?ms)^(```|~~~).*?^\1", "", markdown)
    return [line for line in without_code.splitlines() if re.match(r"#\s", line)]


def test_there_is_at_least_one_notebook():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
class TestNotebook:
    def test_is_valid_and_committed_without_outputs(self, path):
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        # nbformat fills missing cell ids in on reading (with a warning), so the file itself is checked
        without_id = [
            index
            for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"])
            if "id" not in cell
        ]
        assert not without_id, f"cells {without_id} have no id"
        for index, cell in enumerate(_code_cells(notebook)):
            assert cell.outputs == [], f"code cell {index} has outputs: clear them before committing"
            assert cell.execution_count is None, f"code cell {index} has an execution count"

    def test_first_code_cell_installs_from_the_configured_repository(self, path):
        install = _code_cells(nbformat.read(path, as_version=4))[0]
        assert "import ssa" in install.source and "except ImportError" in install.source
        assert f'%pip install -q "ssa-book[book] @ git+{REPOSITORY_URL}"' in install.source
        assert "remove-cell" in install.metadata.get("tags", [])

    def test_second_code_cell_holds_the_tagged_parameters(self, path):
        parameters = _code_cells(nbformat.read(path, as_version=4))[1]
        assert "parameters" in parameters.metadata.get("tags", [])
        if path.name not in UNTAGGED:
            assert "remove-cell" in parameters.metadata["tags"], (
                "the parameters cell is plumbing: tag it remove-cell too"
            )
        assigned = {
            statement.targets[0].id: ast.literal_eval(statement.value)
            for statement in ast.parse(parameters.source).body
            if isinstance(statement, ast.Assign)
        }
        assert assigned == PARAMETER_DEFAULTS

    def test_a_reader_sees_no_code_unless_asked(self, path):
        notebook = nbformat.read(path, as_version=4)
        assert notebook.metadata.get("mystnb", {}).get("remove_code_source") is True, (
            "set the notebook's mystnb.remove_code_source to true: papermill's injected parameters cell would show"
        )
        for index, cell in enumerate(_code_cells(notebook)[1:], start=1):
            tags = cell.metadata.get("tags", [])
            shows_code = cell.metadata.get("mystnb", {}).get("remove_code_source")
            assert shows_code in (None, False), f"code cell {index}: only false may override the notebook"
            assert (shows_code is False) == ("hide-input" in tags), (
                f"code cell {index}: hide-input goes with mystnb.remove_code_source false"
            )
            if path.name in UNTAGGED:
                continue
            chosen = [tag for tag in tags if tag in VISIBILITY_TAGS]
            assert len(chosen) == 1, (
                f"code cell {index} ({cell.source.splitlines()[0]!r}) needs one of {VISIBILITY_TAGS}, has {chosen}"
            )

    def test_follows_overview_what_you_will_see_summary(self, path):
        notebook = nbformat.read(path, as_version=4)
        text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
        sections = [
            match.group(1).strip()
            for match in re.finditer(r"(?m)^##\s+(.*)$", re.sub(r"(?ms)^(```|~~~).*?^\1", "", text))
        ]
        found = [name for name in sections if name in RHYTHM]
        assert found == list(RHYTHM), f"H2 sections {sections}: need {RHYTHM} once each, in this order"
        # the Summary closes the chapter; only the front page's Citation may follow it
        closing = sections[:-1] if path.name == "intro.ipynb" and sections[-1] == "Citation" else sections
        assert closing[-1] == "Summary", "the Summary closes the chapter"

    def test_has_one_h1_in_its_first_cell(self, path):
        notebook = nbformat.read(path, as_version=4)
        headings = [
            (index, line)
            for index, cell in enumerate(notebook.cells)
            if cell.cell_type == "markdown"
            for line in _h1_lines(cell.source)
        ]
        assert len(headings) == 1 and headings[0][0] == 0, f"H1 headings (cell, line): {headings}"


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.name)
def test_markdown_page_has_one_h1(path):
    assert len(_h1_lines(path.read_text())) == 1


def test_a_placeholder_page_stands_exactly_for_each_draft_notebook():
    # A draft (a notebook not yet in _toc.yml) keeps its placeholder page in the book until its
    # cached results land; a notebook in the toc has none left.
    in_toc = set(book.toc_notebooks(ROOT))
    drafts = set(book.draft_notebooks(ROOT))
    for path in NOTEBOOKS:
        relative = path.relative_to(ROOT)
        placeholder = ROOT / "book" / f"{path.stem}.md"
        if relative in in_toc:
            assert not placeholder.exists(), (
                f"delete {placeholder.relative_to(ROOT)}: notebooks/{path.name} replaces it"
            )
        else:
            assert relative in drafts
            assert placeholder.exists(), (
                f"draft notebooks/{path.name} needs its placeholder page book/{path.stem}.md in _toc.yml"
            )


def _targets_defined() -> set[str]:
    """Labels the book defines: MyST targets ``(name)=``, ``:name:`` options and ``$$ ... $$ (name)``."""
    texts = [
        cell.source
        for path in NOTEBOOKS
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "markdown"
    ]
    texts += [page.read_text(encoding="utf-8") for page in PAGES]
    found = set()
    for text in texts:
        found.update(re.findall(r"(?m)^\(([\w-]+)\)=\s*$", text))
        found.update(re.findall(r"(?m)^:name:\s*([\w-]+)\s*$", text))
        found.update(re.findall(r"(?m)^\$\$\s*\(([\w-]+)\)\s*$", text))
    return found


def test_every_reference_names_a_defined_target():
    defined = _targets_defined()
    assert {"ssa-definition", "eq-ssa", "theorem-1a", "theorem-1b", "theorem-2"} <= defined
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for role, body in re.findall(r"\{(ref|eq)\}`([^`]*)`", cell.source):
                target = re.search(r"<([^>]+)>$", body)
                target = target.group(1) if target else body
                assert target in defined, f"{path.name}: {{{role}}}`{body}` names no defined target"
