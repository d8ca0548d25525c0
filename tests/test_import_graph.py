"""The package's import graph, imports inside functions included: no cycle between its modules,
and the layers of `.importlinter` kept (the same contracts `make test` checks with lint-imports)."""

import configparser
import re
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_library_or_the_book_imports_itself_back():
    graph = grimp.build_graph("ssa", "ssa_book")
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    # A package's __init__ importing its own submodules is how it shows its face, not a cycle.
    edges = {
        module: {target for target in targets if not module.startswith(target + ".")}
        for module, targets in edges.items()
    }
    assert strongly_connected(edges) == []


def test_the_import_contracts_are_kept():
    lint_imports = Path(sys.executable).with_name("lint-imports")  # import-linter's command, installed beside Python
    checked = subprocess.run(
        [str(lint_imports), "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout[-3000:]
    assert "0 broken" in checked.stdout


def _layers(config: configparser.ConfigParser, contract: str) -> list[set[str]]:
    """The layers of a layers contract, top first, each the set of its modules."""
    return [
        {module.strip() for module in re.split(r"[|:]", line) if module.strip()}
        for line in config[f"importlinter:contract:{contract}"]["layers"].strip().splitlines()
    ]


def test_the_import_contracts_name_every_study_of_the_list():
    """Every study of ssa_book.studies.STUDIES is one package, in a layer of the contracts between
    the list of studies and the protocol (ssa_book.chapters), and those layers hold studies only;
    the studies kept independent are studies."""
    from ssa_book.studies import STUDIES

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    layers = _layers(config, "layers")
    above, below = (
        next(index for index, layer in enumerate(layers) if name in layer)
        for name in ("ssa_book.studies", "ssa_book.chapters")
    )
    between = set().union(*layers[above + 1 : below])
    packages = {name: study.packages for name, study in STUDIES.items()}
    assert all(len(found) == 1 for found in packages.values()), packages
    listed = {name: next(iter(found)) for name, found in packages.items()}
    assert {name: package for name, package in listed.items() if package not in between} == {}, (
        "a study missing from .importlinter"
    )
    assert between == set(listed.values()), "a layer of studies in .importlinter holds a module that is no study"
    independent = {module.strip() for module in config["importlinter:contract:studies"]["modules"].split()}
    assert independent <= set(listed.values())
