import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import ssa_book
from ssa_book.results.cache import REQUIRE_CACHE_ENV, cached, cached_entry
from ssa_book.results.errors import CacheMissError, EntryError
from ssa_book.results.keys import CACHE_SCHEMA_VERSION, cache_key, code_identity, entry_path
from ssa_book.results.mirror import RESULTS_MIRROR_ENV, _committed_source, committed_cache_url
from ssa_book.results.provenance import (
    NUMERIC_CPU_FLAGS,
    Provenance,
    code_state,
    instruction_sets,
    new_provenance,
    processor_name,
    run_git,
)
from ssa_book.results.store import entries_of, read_entry
from ssa_book.results.validate import RESULTS_BYTES_LIMIT, committed_bytes, list_entries, reformat_entry
from synthetic_runs import PROVENANCE
from ssa_book.cli import results as cli_results

REGENERATE = "python -m ssa_book book run --profile cpu --only demo"


class Counter:
    """A compute function that remembers how often it ran."""

    def __init__(self, value=None):
        self.calls = 0
        self.value = value if value is not None else {"loss": 0.25, "curve": (1, 2, 3)}

    def __call__(self):
        self.calls += 1
        return self.value


@pytest.fixture(autouse=True)
def no_required_cache(monkeypatch):
    monkeypatch.delenv(REQUIRE_CACHE_ENV, raising=False)


def test_second_call_is_a_cache_hit_with_the_same_value(tmp_path):
    compute = Counter()
    config = {"seed": 3, "steps": 10}
    first = cached("demo/run", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    second = cached("demo/run", dict(config), compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert compute.calls == 1
    # A fresh result and a cached one look the same: JSON round trip (tuples become lists).
    assert first == second == {"loss": 0.25, "curve": [1, 2, 3]}


def test_entry_layout_and_provenance(tmp_path):
    config = {"seed": 7, "width": 4}
    cached("demo/run", config, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path, device="cpu")
    path = entry_path("demo/run", config, profile="cpu", results_dir=tmp_path)
    assert path.parent == tmp_path / "cpu" / "demo" / "run"
    assert len(path.stem) == 16
    stored = json.loads(path.read_text())
    assert stored["config"] == config
    assert stored["schema_version"] == CACHE_SCHEMA_VERSION
    provenance = stored["provenance"]
    assert provenance["seed"] == 7
    assert provenance["device"] == "cpu"
    for field in (
        "git_commit",
        "git_dirty",
        "torch",
        "transformers",
        "python",
        "platform",
        "processor",
        "wall_time_s",
        "created_utc",
    ):
        assert field in provenance
    assert provenance["processor"] == processor_name("cpu")
    # the instruction sets a CPU computation's rounding can depend on
    assert provenance["instruction_sets"] == instruction_sets("cpu")
    assert provenance["instruction_sets"]["aten_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert set(provenance["instruction_sets"]["flags"]) <= set(NUMERIC_CPU_FLAGS)
    assert instruction_sets("cuda:0") is None
    assert not list(path.parent.glob("*.tmp")), "the atomic write left a temporary file behind"


def test_chapter_times_sum_what_each_part_reads_and_name_its_processors(tmp_path, monkeypatch):
    from ssa_book import chapters, reproduce, studies

    def decoder_run(profile, device, progress, scorer, seed):  # reads one entry per run, as a study's kind does
        cached(
            "demo/run",
            {"scorer": scorer, "seed": seed},
            Counter(),
            profile=profile,
            regenerate=REGENERATE,
            results_dir=tmp_path,
        )
        return ""

    monkeypatch.setitem(studies.KINDS, "decoder", chapters.RunKind(decoder_run))
    stored_seconds = {}
    for scorer, processor in (("softmax", "CPU A"), ("ssa", None)):  # seed 1 of each stays uncomputed
        config = {"scorer": scorer, "seed": 0}
        cached(
            "demo/run", config, Counter(), profile="smoke", regenerate=REGENERATE, results_dir=tmp_path, device="cpu"
        )
        path = entry_path("demo/run", config, profile="smoke", results_dir=tmp_path)
        stored = json.loads(path.read_text())
        stored["provenance"]["wall_time_s"] = stored_seconds[scorer] = 10.0 if processor else 25.0
        if processor is None:
            del stored["provenance"]["processor"]  # written before entries recorded it
        else:
            stored["provenance"]["processor"] = processor
        path.write_text(json.dumps(stored))
    row = next(row for row in reproduce.chapter_times("smoke") if row["chapter"] == "decoder")
    assert (row["part"], row["runs"], row["cached"]) == ("", 4, 2)
    assert row["wall_time_s"] == sum(stored_seconds.values()) == 35.0
    assert row["processors"] == ["CPU A", "not recorded"]
    # the two runs missing, at the mean of the two cached
    assert row["missing_s"] == 2 * 35.0 / 2


def test_cached_entry_gives_the_result_with_the_provenance_it_was_stored_with(tmp_path):
    compute = Counter()
    fresh = cached_entry(
        "demo/run", {"seed": 2}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path, device="cpu"
    )
    again = cached_entry("demo/run", {"seed": 2}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert compute.calls == 1 and fresh.result == again.result == {"loss": 0.25, "curve": [1, 2, 3]}
    assert fresh.provenance == again.provenance
    assert again.provenance.to_dict() == json.loads(fresh.path.read_text())["provenance"]
    assert again.provenance.device == "cpu" and again.provenance.wall_time_s >= 0


def test_key_ignores_key_order_but_not_values(tmp_path):
    a = entry_path("demo", {"x": 1, "y": 2}, profile="cpu", results_dir=tmp_path)
    b = entry_path("demo", {"y": 2, "x": 1}, profile="cpu", results_dir=tmp_path)
    c = entry_path("demo", {"x": 1, "y": 3}, profile="cpu", results_dir=tmp_path)
    assert a == b != c


def test_dataclass_config_equals_its_dict(tmp_path):
    @dataclasses.dataclass
    class Config:
        seed: int = 0
        scorer: str = "ssa"

    assert entry_path("demo", Config(), profile="cpu", results_dir=tmp_path) == entry_path(
        "demo", {"seed": 0, "scorer": "ssa"}, profile="cpu", results_dir=tmp_path
    )


def test_stored_entry_with_another_config_is_recomputed_not_reused(tmp_path):
    config = {"seed": 0}
    cached("demo", config, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    path = entry_path("demo", config, profile="cpu", results_dir=tmp_path)
    stored = json.loads(path.read_text())
    stored["config"] = {"seed": 1}  # e.g. a truncated-key collision or a hand edit
    path.write_text(json.dumps(stored))
    compute = Counter({"loss": 9.0})
    assert cached("demo", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path) == {"loss": 9.0}
    assert compute.calls == 1


def test_stored_entry_of_another_schema_version_is_recomputed(tmp_path):
    config = {"seed": 0}
    cached("demo", config, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    path = entry_path("demo", config, profile="cpu", results_dir=tmp_path)
    stored = json.loads(path.read_text())
    stored["schema_version"] = CACHE_SCHEMA_VERSION - 1
    path.write_text(json.dumps(stored))
    compute = Counter()
    cached("demo", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert compute.calls == 1


def test_required_missing_entry_names_the_regenerate_command(tmp_path, monkeypatch):
    monkeypatch.setenv(REQUIRE_CACHE_ENV, "1")
    compute = Counter()
    with pytest.raises(CacheMissError) as raised:
        cached("demo", {"seed": 0}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert REGENERATE in str(raised.value)
    assert "demo" in str(raised.value) and "is missing" in str(raised.value)
    assert compute.calls == 0


def test_require_argument_overrides_the_environment(tmp_path):
    with pytest.raises(CacheMissError):
        cached("demo", {"seed": 0}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path, require=True)


def test_non_finite_results_are_refused_naming_the_key_path(tmp_path):
    compute = Counter({"curves": {"ssa": [0.5, math.nan]}})
    with pytest.raises(ValueError, match=r"result\['curves'\]\['ssa'\]\[1\] is nan"):
        cached("demo", {"seed": 0}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert not list(tmp_path.rglob("*.json"))


def test_non_finite_results_are_stored_when_allowed(tmp_path):
    compute = Counter({"loss": math.inf})
    first = cached(
        "demo", {"seed": 0}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path, allow_nonfinite=True
    )
    second = cached("demo", {"seed": 0}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert first == second == {"loss": math.inf}
    assert compute.calls == 1


def test_numpy_values_are_stored_as_plain_numbers(tmp_path):
    compute = Counter({"accuracy": np.float32(0.5), "per_step": np.arange(3)})
    assert cached("demo", {"seed": 0}, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path) == {
        "accuracy": 0.5,
        "per_step": [0, 1, 2],
    }


@pytest.mark.parametrize("bad", [{"seed": object()}, {1: "integer key"}])
def test_unstorable_config_is_a_type_error(tmp_path, bad):
    with pytest.raises(TypeError, match="config"):
        cached("demo", bad, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)


@pytest.mark.parametrize("experiment", ["", "/abs", "../escape"])
def test_experiment_must_be_a_relative_name(tmp_path, experiment):
    with pytest.raises(ValueError, match="experiment"):
        entry_path(experiment, {}, profile="cpu", results_dir=tmp_path)


def test_unknown_profile_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="profile must be one of"):
        cached("demo", {}, Counter(), profile="gpu", regenerate=REGENERATE, results_dir=tmp_path)


def test_list_entries_reports_problems(tmp_path):
    cached("demo/a", {"seed": 0}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    cached("demo/b", {"seed": 1}, Counter(), profile="smoke", regenerate=REGENERATE, results_dir=tmp_path)
    renamed = tmp_path / "cpu" / "demo" / "a" / "0000000000000000.json"
    next((tmp_path / "cpu" / "demo" / "a").glob("*.json")).rename(renamed)
    entries = {entry.experiment: entry for entry in list_entries(tmp_path)}
    assert set(entries) == {"demo/a", "demo/b"}
    assert entries["demo/b"].problems == ()
    assert entries["demo/a"].problems == ("file name does not match the key of its config",)
    assert cli_results.main(["validate", "--results-dir", str(tmp_path)]) == 1


def test_entries_are_stored_on_one_line_and_format_rewrites_others_without_changing_them(tmp_path):
    config = {"seed": 0, "rate": 0.1}
    cached(
        "demo/a",
        config,
        Counter({"curve": [0.1, 1e-05, 3]}),
        profile="cpu",
        regenerate=REGENERATE,
        results_dir=tmp_path,
    )
    path = entry_path("demo/a", config, profile="cpu", results_dir=tmp_path)
    written = path.read_text()
    assert written.count("\n") == 1 and written.endswith("}\n")
    path.write_text(json.dumps(json.loads(written), indent=1))  # the layout entries had before
    assert cli_results.main(["format", "--results-dir", str(tmp_path)]) == 0
    assert path.read_text() == written
    assert not reformat_entry(path)
    assert cli_results.main(["validate", "--results-dir", str(tmp_path)]) == 0


def test_validate_fails_when_the_committed_results_pass_the_size_cap(tmp_path, monkeypatch, capsys):
    cached("demo/a", {"seed": 0}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    cached("demo/b", {"seed": 1}, Counter(), profile="smoke", regenerate=REGENERATE, results_dir=tmp_path)
    committed = committed_bytes(tmp_path)
    assert committed == sum(
        path.stat().st_size for path in (tmp_path / "cpu").rglob("*.json")
    )  # smoke is not committed
    monkeypatch.setattr(cli_results, "RESULTS_BYTES_LIMIT", committed)
    assert cli_results.main(["validate", "--results-dir", str(tmp_path)]) == 0
    monkeypatch.setattr(cli_results, "RESULTS_BYTES_LIMIT", committed - 1)
    assert cli_results.main(["validate", "--results-dir", str(tmp_path)]) == 1
    assert "over the cap" in capsys.readouterr().err


def test_committed_results_are_under_the_size_cap():
    assert committed_bytes() <= RESULTS_BYTES_LIMIT


def test_committed_results_are_valid():
    """Every entry under results/ (cpu and paper are committed) passes validation."""
    invalid = [(str(entry.path), entry.problems) for entry in list_entries() if entry.problems]
    assert not invalid


def test_a_stopped_run_never_enters_the_books_cache(monkeypatch, tmp_path):
    from ssa_book import paths
    from ssa_book.results.keys import check_throwaway_cache

    monkeypatch.delenv("SSA_RESULTS_DIR", raising=False)
    if paths.repository_root() is None:
        pytest.skip("needs the checkout (editable install)")
    with pytest.raises(ValueError, match="stop_at"):
        check_throwaway_cache()
    check_throwaway_cache(tmp_path)  # a throwaway folder is fine
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path))
    check_throwaway_cache()


def test_provenance_is_about_the_code_not_the_cache(tmp_path, monkeypatch):
    """A run that rewrites (or, forced, first deletes) its own cache entry is still clean; a
    change to the code, before or during the run, is not."""
    import subprocess

    from ssa_book import paths

    def git(*arguments):
        subprocess.run(["git", *arguments], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "old.json").write_text("{}\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    monkeypatch.setattr(paths, "repository_root", lambda: tmp_path)
    (tmp_path / "results" / "old.json").unlink()
    assert code_state().dirty is False
    before = code_state()
    (tmp_path / "code.py").write_text("x = 2\n")  # the code changes while the run computes
    provenance = new_provenance({"seed": 0}, "cpu", 1.0, before)
    assert provenance["git_dirty"] is True and provenance["git_commit"] == before.commit


def test_validate_clean_requires_a_traceable_provenance(tmp_path):
    head = run_git("rev-parse", "HEAD")
    if head is None:
        pytest.skip("needs the git checkout")
    code = code_identity("icl")
    for name, provenance in {
        "clean": {**PROVENANCE, "git_dirty": False, "git_commit": head},
        "dirty": {**PROVENANCE, "git_dirty": True, "git_commit": head},
        "unknown": {**PROVENANCE, "git_dirty": False, "git_commit": "0" * 40},
        "untracked": {**PROVENANCE, "git_dirty": None, "git_commit": None},
    }.items():
        versioned = name != "untracked"
        experiment = (
            f"icl/every/softmax/demo/{name}" if versioned else f"demo/{name}"
        )  # under icl/every/softmax/: versioned by the icl code
        path = entry_path(experiment, {"seed": 0}, profile="cpu", results_dir=tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "schema_version": CACHE_SCHEMA_VERSION,
                    "experiment": experiment,
                    "profile": "cpu",
                    "config": {"seed": 0},
                    "result": {},
                    "provenance": provenance,
                    **({"code": code} if versioned else {}),
                }
            ),
            encoding="utf-8",
        )
    problems = {entry.experiment: entry.problems for entry in list_entries(tmp_path, clean=True)}
    assert problems["icl/every/softmax/demo/clean"] == ()
    assert problems["icl/every/softmax/demo/dirty"] == ("computed from a dirty working tree",)
    assert problems["icl/every/softmax/demo/unknown"] == (f"commit {'0' * 12} is not in this checkout",)
    assert set(problems["demo/untracked"]) == {
        "no code version in its key",
        "no record of the tree's state",
        "no commit recorded",
    }
    assert all(entry.problems == () for entry in list_entries(tmp_path))  # without --clean: layout only
    assert cli_results.main(["validate", "--results-dir", str(tmp_path), "--clean"]) == 1


def test_the_code_version_is_in_the_key(tmp_path, monkeypatch):
    from ssa_book import code_versions

    compute = Counter()
    config = {"seed": 0}
    cached("icl/every/softmax/demo", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    path = entry_path("icl/every/softmax/demo", config, profile="cpu", results_dir=tmp_path)
    stored = json.loads(path.read_text())
    assert stored["code"] == {**code_identity("icl"), "fingerprint": code_versions.fingerprint("icl")}
    assert path.stem != cache_key(config)[:16]  # without the code version the key differs
    cached("icl/every/softmax/demo", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert compute.calls == 1
    bumped = code_versions.version("icl") + 1
    monkeypatch.setattr(code_versions, "version", lambda name: bumped)
    # The old code's entry is not reused: required, it is missing; listed, it is stale.
    with pytest.raises(CacheMissError, match="is missing"):
        cached(
            "icl/every/softmax/demo",
            config,
            compute,
            profile="cpu",
            regenerate=REGENERATE,
            results_dir=tmp_path,
            require=True,
        )
    (entry,) = list_entries(tmp_path)
    assert entry.problems == (f"computed by icl code version {bumped - 1}; the current version is {bumped}",)
    cached("icl/every/softmax/demo", config, compute, profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert compute.calls == 2


def test_an_entry_without_the_code_version_its_experiment_needs_is_invalid(tmp_path):
    config = {"seed": 0}
    path = (
        tmp_path / "cpu" / "icl" / "every" / "softmax" / "demo" / f"{cache_key(config)[:16]}.json"
    )  # keyed as before code versions
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "schema_version": CACHE_SCHEMA_VERSION,
                "experiment": "icl/every/softmax/demo",
                "profile": "cpu",
                "config": config,
                "result": {},
                "provenance": PROVENANCE,
            }
        )
    )
    (entry,) = list_entries(tmp_path)
    assert entry.problems == ("its key holds no icl code version",)


def _committed_entry(mirror, config, result):
    """Write an entry into ``mirror`` laid out like the repository, as a commit would hold it."""
    path = entry_path("icl/every/softmax/demo", config, profile="cpu", results_dir=mirror / "results")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "schema_version": CACHE_SCHEMA_VERSION,
                "experiment": "icl/every/softmax/demo",
                "profile": "cpu",
                "code": code_identity("icl"),
                "config": config,
                "result": result,
                "provenance": PROVENANCE,
            }
        ),
        encoding="utf-8",
    )
    return path


def test_without_a_checkout_the_committed_cache_is_read(tmp_path, monkeypatch):
    mirror, local = tmp_path / "mirror", tmp_path / "local"
    _committed_entry(mirror, {"seed": 0}, {"loss": 0.5})
    monkeypatch.setenv(RESULTS_MIRROR_ENV, str(mirror))
    compute = Counter()
    found = cached(
        "icl/every/softmax/demo",
        {"seed": 0},
        compute,
        profile="cpu",
        regenerate=REGENERATE,
        results_dir=local,
        require=True,
    )
    assert found == {"loss": 0.5} and compute.calls == 0
    assert entry_path("icl/every/softmax/demo", {"seed": 0}, profile="cpu", results_dir=local).is_file()  # kept locally
    # Absent from the commit: the usual path (computed here, or reported missing when required).
    with pytest.raises(CacheMissError, match="is missing"):
        cached(
            "icl/every/softmax/demo",
            {"seed": 1},
            compute,
            profile="cpu",
            regenerate=REGENERATE,
            results_dir=local,
            require=True,
        )
    assert cached(
        "icl/every/softmax/demo", {"seed": 1}, compute, profile="cpu", regenerate=REGENERATE, results_dir=local
    ) == {"loss": 0.25, "curve": [1, 2, 3]}


def test_a_committed_entry_that_does_not_match_is_refused(tmp_path, monkeypatch):
    mirror, local = tmp_path / "mirror", tmp_path / "local"
    path = _committed_entry(mirror, {"seed": 0}, {"loss": 0.5})
    tampered = json.loads(path.read_text())
    tampered["config"] = {"seed": 9}  # served under the key of seed 0
    path.write_text(json.dumps(tampered))
    monkeypatch.setenv(RESULTS_MIRROR_ENV, str(mirror))
    with pytest.raises(CacheMissError, match="does not match"):
        cached(
            "icl/every/softmax/demo", {"seed": 0}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=local
        )
    assert not entry_path("icl/every/softmax/demo", {"seed": 0}, profile="cpu", results_dir=local).exists()


def test_the_committed_cache_comes_from_the_installed_commit(monkeypatch):
    from ssa_book import paths

    commit = "0123456789abcdef0123456789abcdef01234567"
    assert committed_cache_url("https://github.com/ssa-book/ssa-book", commit) == (
        f"https://raw.githubusercontent.com/ssa-book/ssa-book/{commit}"
    )
    assert committed_cache_url("https://github.com/ssa-book/ssa-book.git", commit).endswith(f"/ssa-book/{commit}")
    assert committed_cache_url("https://gitlab.com/a/b", commit) is None
    assert committed_cache_url("https://github.com/a/b", "main") is None  # a branch moves; only a commit is read
    monkeypatch.delenv(RESULTS_MIRROR_ENV, raising=False)
    monkeypatch.setattr(
        "ssa_book.results.mirror.installed_commit", lambda: ("https://github.com/ssa-book/ssa-book", commit)
    )
    monkeypatch.setattr(paths, "repository_root", lambda: None)
    assert _committed_source() == f"https://raw.githubusercontent.com/ssa-book/ssa-book/{commit}"
    monkeypatch.setattr(paths, "repository_root", lambda: Path("/checkout"))
    assert _committed_source() is None  # a checkout reads its own results/


# ----------------------------------------------------------------------------------------------
# The typed reader: every committed entry reads back as stored, and nothing else reads entries.


def test_every_committed_entry_reads_back_exactly_as_stored():
    """Provenance.to_dict() gives back each committed entry's stored provenance, whichever fields
    the code of its day wrote (no processor, no instruction sets, a note on a moved entry)."""
    listed = list_entries()
    assert listed
    layouts = set()
    for entry in listed:
        stored = json.loads(entry.path.read_text(encoding="utf-8"))
        typed = entry.stored
        assert typed is not None, entry.problems
        assert typed.provenance.to_dict() == stored["provenance"], entry.path
        assert Provenance.from_dict(stored["provenance"]) == typed.provenance
        assert (typed.experiment, typed.profile, typed.config, typed.result, typed.code, typed.schema_version) == (
            stored["experiment"],
            stored["profile"],
            stored["config"],
            stored["result"],
            stored.get("code"),
            stored["schema_version"],
        )
        assert read_entry(entry.path) == typed
        layouts.add(tuple(sorted(stored["provenance"])))
    assert len(layouts) > 1  # the committed cache holds older layouts, which must read too


def test_an_optional_field_stored_as_null_differs_from_one_never_stored():
    gpu = {**PROVENANCE, "device": "cuda", "processor": "Made-up GPU", "instruction_sets": None}
    older = {**PROVENANCE}
    assert Provenance.from_dict(gpu).to_dict() == gpu
    assert Provenance.from_dict(older).to_dict() == older
    assert Provenance.from_dict(gpu).instruction_sets is Provenance.from_dict(older).instruction_sets is None
    assert Provenance.from_dict(older).processor is None


@pytest.mark.parametrize(
    "change, field",
    [
        ({"torch": None}, "torch"),  # a required field may not be null
        ({"wall_time_s": "slow"}, "wall_time_s"),
        ({"git_dirty": "no"}, "git_dirty"),
        ({"seed": True}, "seed"),
        ({"processor": 3}, "processor"),
        ({"hostname": "box"}, "hostname"),  # unknown: it would not be written back
    ],
)
def test_a_bad_provenance_field_is_named(change, field):
    with pytest.raises(EntryError, match=f"'{field}'"):
        Provenance.from_dict({**PROVENANCE, **change})


def test_a_missing_field_is_named_with_the_file(tmp_path):
    cached("demo/run", {"seed": 0}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    path = entry_path("demo/run", {"seed": 0}, profile="cpu", results_dir=tmp_path)
    stored = json.loads(path.read_text())
    del stored["provenance"]["created_utc"]
    path.write_text(json.dumps(stored))
    with pytest.raises(EntryError, match=f"{path.name}.*provenance lacks the field 'created_utc'"):
        read_entry(path)
    (listed,) = list_entries(tmp_path)
    assert listed.problems == ("provenance lacks the field 'created_utc'",) and listed.stored is None
    del stored["result"]
    path.write_text(json.dumps(stored))
    with pytest.raises(EntryError, match="the entry lacks the field 'result'"):
        read_entry(path)


def test_entries_of_reads_one_experiments_folder_at_one_profile_or_all(tmp_path):
    for profile, seed in (("cpu", 0), ("cpu", 1), ("smoke", 2)):
        cached("demo/run", {"seed": seed}, Counter(), profile=profile, regenerate=REGENERATE, results_dir=tmp_path)
    cached("demo/run/deeper", {"seed": 3}, Counter(), profile="cpu", regenerate=REGENERATE, results_dir=tmp_path)
    assert sorted(entry.config["seed"] for entry in entries_of("demo/run", "cpu", tmp_path)) == [0, 1]
    assert sorted(entry.config["seed"] for entry in entries_of("demo/run", results_dir=tmp_path)) == [0, 1, 2]
    assert entries_of("demo/none", "cpu", tmp_path) == []


# JSON files that the package reads and that are no result entries: module -> the argument read.
NOT_RESULT_FILES = {
    ("ssa_book/book.py", "executed_path.read_text(encoding='utf-8')"),  # an executed notebook
    ("ssa_book/book.py", "staged.read_text(encoding='utf-8')"),  # a staged notebook
    ("ssa_book/code_versions.py", "record_path().read_text(encoding='utf-8')"),  # ssa_book/code_versions.json
    ("ssa_book/measure.py", "trace.read_text()"),  # the profiler's trace
    ("ssa_book/paper_check.py", "report_path.read_text(encoding='utf-8')"),  # a chapter process's report
    ("ssa/hf.py", "Path(index).read_text()"),  # a Hugging Face shard index
    ("ssa_book/data.py", "text"),  # ssa_book/datasets.json
    ("ssa_book/lm/data.py", "line"),  # a line of a JSON-lines text corpus
    ("ssa_book/lm/evaluate.py", "line"),  # a line of a JSON-lines set of minimal pairs
    ("ssa_book/lm/tokenizer.py", "tokenizer.backend_tokenizer.to_str()"),  # a tokenizer, in memory
    ("ssa_book/training.py", "json.dumps(value)"),  # a JSON round trip in memory
    ("ssa_book/direction_check.py", "line"),  # a line of a notebook's log of direction words
    (
        "ssa_book/cli/decoder.py",
        "(found['pretrained'] / 'config.json').read_text(encoding='utf-8')",
    ),  # a checkpoint's model config
}


def _python_sources():
    """(name, source) of every module of the package and every notebook code cell."""
    package = Path(ssa_book.__file__).parent
    root = package.parent
    for path in sorted(package.rglob("*.py")):
        yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                lines = "".join(cell["source"]).splitlines()
                yield (
                    f"{path.name}[{index}]",
                    "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!"))),
                )


def test_nothing_but_results_reads_a_result_entry():
    """Outside ssa_book/results/ no code parses JSON it has not been allowed to (NOT_RESULT_FILES) and
    none takes a "provenance" out of a dict: entries are read with read_entry, entries_of or
    list_entries, and their provenance is a Provenance."""
    import ast

    found = []
    for name, source in _python_sources():
        if name.startswith("ssa_book/results/"):
            continue
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("load", "loads")
                and ast.unparse(node.func.value) == "json"
                and node.args
            ):
                if (name, ast.unparse(node.args[0])) not in NOT_RESULT_FILES:
                    found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
            keys = []
            if isinstance(node, ast.Subscript):
                keys = [node.slice]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and node.args
            ):
                keys = [node.args[0]]
            if any(isinstance(key, ast.Constant) and key.value == "provenance" for key in keys):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "read entries through ssa_book.results.store (read_entry, entries_of):\n" + "\n".join(found)
