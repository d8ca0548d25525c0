"""The tests in this folder are the ``ssa`` library's: they run where the library is installed
without the book (scripts/check_wheel.sh runs them so), so none may import ``ssa_book`` or a
helper module of the book's tests in the folder above; the shared ``conftest.py`` there neither."""

import ast
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
BOOK = re.compile(r"ssa_book(\.|$)")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of the module, a class or a function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def book_imports(source: str, book_helpers: set[str]) -> list[str]:
    """What ``source`` imports of the book: ``ssa_book`` or its modules, a module named in
    ``book_helpers``, or a string naming ``ssa_book`` (given to ``importlib.import_module``,
    ``pytest.importorskip``, ``python -m``) outside a docstring."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            names = [word for word in node.value.split() if BOOK.match(word)]
        else:
            continue
        found += [name for name in names if BOOK.match(name) or name.split(".")[0] in book_helpers]
    return found


def test_no_library_test_imports_the_book():
    book_helpers = {path.stem for path in HERE.parent.glob("*.py")} - {"conftest"}
    files = [*sorted(HERE.glob("*.py")), HERE.parent / "conftest.py"]
    imports = {path.name: book_imports(path.read_text(encoding="utf-8"), book_helpers) for path in files}
    assert len(files) > 2 and {name: found for name, found in imports.items() if found} == {}


def test_every_way_of_importing_the_book_is_found():
    book = "ssa" + "_book"  # the package's name, spelled so that this file's own check passes
    source = '''"""A docstring may name BOOK."""
import ssa
import BOOK
import BOOK.verdicts as verdicts
from BOOK.results import load
from synthetic_runs import loader
module = importlib.import_module("BOOK.results")
subprocess.run([sys.executable, "-m", "BOOK", "bench"])
'''.replace("BOOK", book)
    assert sorted(book_imports(source, {"synthetic_runs"})) == sorted(
        [book, f"{book}.verdicts", f"{book}.results", "synthetic_runs", f"{book}.results", book]
    )
