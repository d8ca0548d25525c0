"""The guard that keeps a code change from silently reusing cached numbers (ssa_book.code_versions)."""

import pytest

from ssa_book import code_versions
from ssa_book.cli import code_versions as cli_code_versions


def test_every_computation_has_a_recorded_version():
    record = code_versions.recorded()
    assert set(record) == set(code_versions.COMPUTATIONS)
    assert all(isinstance(entry["version"], int) and entry["version"] >= 1 for entry in record.values())


def test_the_code_of_every_cached_computation_is_as_recorded():
    """Fails when code that computes cached results changed without a decision: bump the version
    (``python -m ssa_book code-versions bump NAME``) if any number can change, else record it."""
    record = code_versions.recorded()
    if any(entry["python"] != code_versions.python_version() for entry in record.values()):
        pytest.skip(f"fingerprints were recorded on another Python version than {code_versions.python_version()}")
    changed = code_versions.stale()
    assert not changed, (
        f"code of {', '.join(changed)} changed since its version was recorded: "
        "python -m ssa_book code-versions bump NAME (a number can change) or record NAME (none can)"
    )


def test_the_fingerprint_ignores_comments_docstrings_and_layout_but_not_code(tmp_path):
    variants = {
        "plain": "def f(x):\n    return x + 1\n",
        "documented": '"""Module."""\n\n\ndef f(x):  # comment\n    """Add one."""\n    return (x\n            + 1)\n',
        "changed": "def f(x):\n    return x + 2\n",
    }
    texts = {}
    for name, source in variants.items():
        (tmp_path / f"{name}.py").write_text(source)
        texts[name] = code_versions._normalized_text(tmp_path / f"{name}.py")
    assert texts["plain"] == texts["documented"] != texts["changed"]
    (tmp_path / "a.cpp").write_text("/* block */ int f(int x) { // line\n  return x + 1; }\n")
    (tmp_path / "b.cpp").write_text("int f(int x) {\n\n return x + 1; }\n")
    (tmp_path / "c.cpp").write_text("int f(int x) { return x - 1; }\n")
    cpp = {name: code_versions._normalized_text(tmp_path / f"{name}.cpp") for name in "abc"}
    assert cpp["a"] == cpp["b"] != cpp["c"]


def test_the_kernels_and_the_shared_training_loop_count_for_every_trained_model():
    for name in ("icl", "encoder", "lm"):
        modules = code_versions.COMPUTATIONS[name].modules
        assert {"ssa.scoring", "ssa.attention", "ssa.kernels", "ssa_book.training"} <= set(modules)
    kernels = code_versions._source_files("ssa.kernels")
    assert any(path.suffix == ".cpp" for path in kernels), "the C++ kernels are part of the fingerprint"


def test_unknown_computation_is_refused():
    with pytest.raises(ValueError, match="computation must be one of"):
        code_versions.version("nonsense")
    with pytest.raises(SystemExit):
        cli_code_versions.main(["record", "nonsense"])


def test_an_experiment_belongs_to_its_folder_and_the_folders_above_it_only():
    assert code_versions.in_folders("icl/every/ssa", ["icl/"])
    assert code_versions.in_folders("icl/every/ssa", ["icl/every/ssa/"])
    assert not code_versions.in_folders("icl/every/ssa_n2", ["icl/every/ssa/"])
    assert not code_versions.in_folders("icl_logits/every/ssa", ["icl/"])
    for computation in code_versions.COMPUTATIONS.values():
        assert all(folder.endswith("/") for folder in computation.experiments), computation.name
    assert code_versions.computation_of("icl/every/ssa") == "icl"


def test_a_computation_never_recorded_is_stale_and_check_says_so(monkeypatch, capsys):
    extra = code_versions.Computation("newcomer", ("ssa.scoring",), ("newcomer/",))
    monkeypatch.setitem(code_versions.COMPUTATIONS, "newcomer", extra)
    assert "newcomer" in code_versions.stale()
    assert cli_code_versions.main(["check"]) == 1
    assert "newcomer: never recorded; bump it to give it version 1" in capsys.readouterr().out
