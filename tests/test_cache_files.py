"""The cache's files on disk (ssa_book.files, ssa_book.results): one malformed entry blocks nothing, an
entry replaces another only whole, files keep the umask's permissions, the temporaries of an
interrupted write are cleaned up, and a cache that cannot be written is refused before any
computation. Tiny synthetic entries in temporary folders; nothing trains."""

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from ssa_book import data, files, regenerate
from ssa_book.cli import regenerate as regenerate_command
from ssa_book.chapters import Run, RunKind
from ssa_book.results.cache import REQUIRE_CACHE_ENV, cached, cached_entry
from ssa_book.results.errors import CacheMissError
from ssa_book.results.keys import CACHE_SCHEMA_VERSION, code_identity, entry_path
from ssa_book.results.mirror import RESULTS_MIRROR_ENV
from ssa_book.results.store import _REPORTED, read_entry, remove_abandoned_temporaries
from ssa_book.results.validate import list_entries, reformat_entry
from read_only import make_read_only
from ssa_book.cli import book as cli_book
from ssa_book.cli import results as cli_results

REGENERATE = "python -m ssa_book regenerate demo --profile smoke"


class Counter:
    """A compute function that counts its calls (and fails when told to)."""

    def __init__(self, fail=False):
        self.calls, self.fail = 0, fail

    def __call__(self):
        self.calls += 1
        if self.fail:
            raise RuntimeError("the computation failed")
        return {"loss": 0.5}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "results"
    monkeypatch.setenv("SSA_RESULTS_DIR", str(root))
    monkeypatch.delenv(REQUIRE_CACHE_ENV, raising=False)
    monkeypatch.delenv(RESULTS_MIRROR_ENV, raising=False)
    _REPORTED.clear()
    return root


def _store(config, compute=None, **options):
    return cached_entry("demo/run", config, compute or Counter(), profile="smoke", regenerate=REGENERATE, **options)


def _malform(path):
    """An extra field: the entry's config still matches its key, but it is not an entry."""
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "extra": 1}))


@contextlib.contextmanager
def umask(mask):
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


def test_a_malformed_entry_is_named_once_then_computed_again_and_replaced(cache, capsys):
    path = _store({"seed": 0}).path
    _malform(path)
    compute = Counter()
    assert _store({"seed": 0}, compute).result == {"loss": 0.5} and compute.calls == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and str(path) in err[0] and "unknown field 'extra'" in err[0] and "treated as missing" in err[0]
    )
    assert "extra" not in json.loads(path.read_text()) and read_entry(path).result == {"loss": 0.5}
    (listed,) = list_entries(cache)
    assert listed.problems == ()


def test_a_required_malformed_entry_is_a_miss_that_says_so(cache, capsys):
    path = _store({"seed": 0}).path
    _malform(path)
    for _ in range(2):
        with pytest.raises(CacheMissError, match="is malformed"):
            _store({"seed": 0}, require=True)
    assert len(capsys.readouterr().err.strip().splitlines()) == 1  # named once per process, however often it is read
    path.write_text("{not json")
    with pytest.raises(CacheMissError, match="is malformed"):
        _store({"seed": 0}, require=True)


def test_a_failed_computation_deletes_nothing(cache):
    """A malformed entry stays until a complete new one replaces it; so does a good one recomputed."""
    path = _store({"seed": 0}).path
    good = path.read_text()
    with pytest.raises(RuntimeError):
        _store({"seed": 0}, Counter(fail=True), recompute=True)
    assert path.read_text() == good
    _malform(path)
    malformed = path.read_text()
    with pytest.raises(RuntimeError):
        _store({"seed": 0}, Counter(fail=True))
    assert path.read_text() == malformed
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left either


def _demo_kind(compute):
    return RunKind(
        lambda profile, device, progress, seed: str(
            cached("demo/run", {"seed": seed}, compute, profile=profile, regenerate=REGENERATE)
        )
    )


def test_regenerate_plans_and_recomputes_a_malformed_entry(cache, monkeypatch, capsys):
    monkeypatch.setattr(regenerate, "single_thread", lambda: None)
    compute = Counter()
    monkeypatch.setitem(regenerate.KINDS, "demo", _demo_kind(compute))
    runs = [Run("demo", (seed,), f"demo / seed {seed}") for seed in (0, 1)]
    assert regenerate.run_plan(runs, profile="smoke", device="cpu") == 0 and compute.calls == 2
    malformed = entry_path("demo/run", {"seed": 1}, profile="smoke")
    _malform(malformed)
    capsys.readouterr()
    assert regenerate.run_plan(runs, profile="smoke", device="cpu", dry_run=True) == 0
    out, err = capsys.readouterr()
    assert "2 runs at profile smoke: 1 cached, 1 to compute" in out and "to compute  demo / seed 1" in out
    assert len(err.strip().splitlines()) == 1 and str(malformed) in err
    assert regenerate.run_plan(runs, profile="smoke", device="cpu") == 0 and compute.calls == 3
    assert read_entry(malformed).result == {"loss": 0.5}


def test_a_malformed_entry_of_a_chapter_does_not_stop_its_dry_run(cache, capsys):
    from ssa_book.lm.config import run_config
    from ssa_book.lm.experiment import EXPERIMENT

    path = entry_path(EXPERIMENT, run_config("smoke", "ssa", 0).to_dict(), profile="smoke")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "schema_version": CACHE_SCHEMA_VERSION,
                "config": run_config("smoke", "ssa", 0).to_dict(),
                "code": code_identity("lm"),
                "result": {},
                "extra": 1,
            }
        )
    )
    assert regenerate_command.main(["decoder", "--profile", "smoke", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "4 runs at profile smoke: 0 cached, 4 to compute" in out
    assert len(err.strip().splitlines()) == 1 and str(path) in err and "Traceback" not in err


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_entries_and_fetched_files_keep_the_umasks_permissions(cache, tmp_path, monkeypatch, mask, mode):
    with umask(mask):
        path = _store({"seed": mask}).path
        reformat_entry(path)
    assert path.stat().st_mode & 0o777 == mode
    content = b"a line\n"
    monkeypatch.setattr(
        data,
        "load_manifest",
        lambda: {
            "zorro": {
                "files": {
                    "a.txt": {
                        "sha256": hashlib.sha256(content).hexdigest(),
                        "size": len(content),
                        "url": "https://example.invalid",
                    }
                }
            }
        },
    )
    (tmp_path / "mirror" / "zorro").mkdir(parents=True)
    (tmp_path / "mirror" / "zorro" / "a.txt").write_bytes(content)
    with umask(mask):
        data.fetch(["zorro"], mirror=tmp_path / "mirror", data_dir=tmp_path / "data")
    assert (tmp_path / "data" / "zorro" / "a.txt").stat().st_mode & 0o777 == mode


def _dead_process_id() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


def _temporary(folder, writer, suffix=".tmp", age_s=0.0):
    """A temporary named as ``files.temporary_sibling`` names one, written by ``writer`` (host, pid)."""
    path = folder / f".abc.json~{writer[0]}~{writer[1]}~0123abcd{suffix}"
    path.write_text("half")
    if age_s:
        os.utime(path, (time.time() - age_s, time.time() - age_s))
    return path


def test_only_abandoned_temporaries_are_removed(tmp_path):
    host, me, dead = files._host(), os.getpid(), _dead_process_id()
    orphaned = _temporary(tmp_path, (host, dead))  # its writer is gone
    old = _temporary(tmp_path, ("elsewhere", 7), age_s=files.ABANDONED_AFTER_S + 60)  # untouched for over an hour
    writing = _temporary(tmp_path, (host, me))  # a live writer's, fresh
    other_host = _temporary(tmp_path, ("elsewhere", dead))  # another machine's process: only its age tells
    unnamed = tmp_path / ".abc.json.k3j2h1.tmp"  # tempfile.mkstemp's name: no writer known
    unnamed.write_text("half")
    entry = tmp_path / "abc.json"
    entry.write_text("{}")
    removed = files.remove_abandoned_temporaries(tmp_path, ".tmp")
    assert sorted(removed) == sorted([orphaned, old])
    assert writing.exists() and other_host.exists() and unnamed.exists() and entry.exists()
    os.utime(unnamed, (0, 0))
    assert files.remove_abandoned_temporaries(tmp_path, ".tmp") == [unnamed]


def test_the_next_write_and_regenerate_clean_up_after_an_interrupted_write(cache, capsys):
    path = _store({"seed": 0}).path
    here = _temporary(path.parent, (files._host(), _dead_process_id()))
    elsewhere = cache / "smoke" / "other" / "run"
    elsewhere.mkdir(parents=True)
    far = _temporary(elsewhere, (files._host(), _dead_process_id()))
    _store({"seed": 1})
    assert not here.exists() and far.exists()
    assert f"removed {here}" in capsys.readouterr().err
    assert remove_abandoned_temporaries() == [far]


def test_an_interrupted_fetch_leaves_a_part_file_the_next_fetch_removes(tmp_path, monkeypatch):
    content = b"a line\n"
    monkeypatch.setattr(
        data,
        "load_manifest",
        lambda: {
            "zorro": {
                "files": {
                    "sub/a.txt": {
                        "sha256": hashlib.sha256(content).hexdigest(),
                        "size": len(content),
                        "url": "https://example.invalid",
                    }
                }
            }
        },
    )
    folder = tmp_path / "data" / "zorro" / "sub"
    folder.mkdir(parents=True)
    left = _temporary(folder, (files._host(), _dead_process_id()), suffix=data.PART_SUFFIX)
    live = _temporary(folder, (files._host(), os.getpid()), suffix=data.PART_SUFFIX)
    (tmp_path / "mirror" / "zorro" / "sub").mkdir(parents=True)
    (tmp_path / "mirror" / "zorro" / "sub" / "a.txt").write_bytes(content)
    data.fetch(["zorro"], mirror=tmp_path / "mirror", data_dir=tmp_path / "data")
    assert not left.exists() and live.exists() and (folder / "a.txt").read_bytes() == content


def test_a_cache_that_cannot_be_written_is_refused_before_any_computation(cache, tmp_path, monkeypatch, capsys):
    compute = Counter()
    monkeypatch.setitem(regenerate.KINDS, "demo", _demo_kind(compute))
    runs = [Run("demo", (0,), "demo / seed 0")]
    make_read_only(cache, monkeypatch)
    with pytest.raises(regenerate.CacheNotWritableError, match="is not writable"):
        regenerate.run_plan(runs, profile="smoke", device="cpu")
    assert compute.calls == 0
    assert regenerate.run_plan(runs, profile="smoke", device="cpu", dry_run=True) == 0  # a dry run writes nothing
    monkeypatch.setenv("SSA_RESULTS_DIR", str(tmp_path / "missing" / "results"))
    with pytest.raises(regenerate.CacheNotWritableError, match="does not exist, nor does its parent"):
        regenerate.run_plan(runs, profile="smoke", device="cpu")
    assert compute.calls == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        regenerate_command.main(["decoder", "--profile", "smoke", "--seeds", "0", "--scorers", "ssa"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and "SSA_RESULTS_DIR" in err
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("variable", ["SSA_CHECKPOINT_DIR", "SSA_RUNS_DIR"])
def test_a_training_folder_that_cannot_be_written_is_refused_before_any_computation(
    cache, tmp_path, monkeypatch, capsys, variable
):
    compute = Counter()
    monkeypatch.setitem(regenerate.KINDS, "demo", _demo_kind(compute))
    runs = [Run("demo", (0,), "demo / seed 0")]
    for name in ("SSA_CHECKPOINT_DIR", "SSA_RUNS_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    make_read_only(tmp_path / variable.lower(), monkeypatch)
    with pytest.raises(
        regenerate.TrainingFolderError, match=f"is not writable \\(set {variable} to a writable folder\\)"
    ):
        regenerate.run_plan(runs, profile="smoke", device="cpu")
    assert compute.calls == 0
    assert regenerate.run_plan(runs, profile="smoke", device="cpu", dry_run=True) == 0
    monkeypatch.setenv(variable, str(tmp_path / variable.lower() / "below"))  # to be created in a read-only folder
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        regenerate_command.main(["decoder", "--profile", "smoke", "--seeds", "0", "--scorers", "ssa"])
    err = capsys.readouterr().err
    assert (
        exited.value.code == 2 and len(err.strip().splitlines()) == 1 and f"set {variable} to a writable folder" in err
    ), err
    assert "SSA_RESULTS_DIR" not in err and "cannot be created" in err
    monkeypatch.setenv(variable, str(tmp_path / "writable" / "new"))  # created on first write
    assert regenerate.run_plan(runs, profile="smoke", device="cpu") == 0 and compute.calls == 1


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640)])
def test_checkpoints_keep_the_umasks_permissions_and_leave_no_temporary(tmp_path, mask, mode):
    import torch

    from ssa_book.training import save_checkpoint

    path = tmp_path / "runs" / "checkpoint.pt"
    with umask(mask):
        save_checkpoint(path, {"step": 3, "weights": torch.arange(4.0)})
        save_checkpoint(path, {"step": 4, "weights": torch.arange(5.0)})  # replaced whole
    assert path.stat().st_mode & 0o777 == mode and [file.name for file in path.parent.iterdir()] == ["checkpoint.pt"]
    state = torch.load(path, weights_only=True)
    assert state["step"] == 4 and torch.equal(state["weights"], torch.arange(5.0))


def test_a_read_only_profile_folder_is_refused_even_in_a_writable_cache(cache, monkeypatch):
    from ssa_book.paths import cache_problem

    cache.mkdir()
    assert cache_problem("smoke") is None  # created on first write
    make_read_only(cache / "smoke", monkeypatch)
    assert "smoke is not writable" in cache_problem("smoke") and cache_problem("cpu") is None


def test_the_book_runner_refuses_a_cache_it_could_not_write_unless_it_only_reads(cache, monkeypatch, capsys):
    make_read_only(cache, monkeypatch)
    with pytest.raises(SystemExit) as exited:
        cli_book.parse_arguments(["run", "--profile", "smoke", "--no-html"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and "--require-cache" in err
    assert cli_book.parse_arguments(["run", "--profile", "smoke", "--no-html", "--require-cache"]).require_cache


def test_validate_refuses_a_results_dir_that_does_not_exist(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        cli_results.main(["validate", "--results-dir", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "argument --results-dir: no folder" in err
