"""``regenerate`` on Dask workers (ssa_book.runner): a local cluster, a scheduler over TCP with a
worker killed mid-run, the cache's one writer, and the same numbers as ``--jobs 1``."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ssa_book import regenerate, runner
from ssa_book.cli import regenerate as regenerate_command
from ssa_book.chapters import Run, RunKind
from ssa_book.cli.regenerate import main
from ssa_book.reruns.comparison import number_differences, timeless
from ssa_book.results.cache import cached
from ssa_book.results.errors import EntryError
from ssa_book.results.keys import entry_path
from ssa_book.results.store import captured_writes, read_entry, store_entry_text
from ssa_book.results.validate import list_entries

SMOKE = ["icl_linear", "--profile", "smoke", "--seeds", "0", "--device", "cpu"]  # two runs: softmax and ssa, seed 0


@pytest.fixture
def caches(tmp_path, monkeypatch):
    monkeypatch.setenv("SSA_CHECKPOINT_DIR", str(tmp_path / "checkpoints"))
    monkeypatch.setenv("SSA_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.delenv("SSA_RESULTS_MIRROR", raising=False)
    monkeypatch.delenv("SSA_REQUIRE_CACHE", raising=False)
    return tmp_path


def _use_cache(monkeypatch, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("SSA_RESULTS_DIR", str(folder))
    return folder


def _entries(root: Path) -> dict[str, dict]:
    return {path.relative_to(root).as_posix(): json.loads(path.read_text()) for path in sorted(root.rglob("*.json"))}


def _assert_valid_and_whole(root: Path, count: int) -> None:
    """``count`` entries, each valid for its place, and no temporary of a half-written one."""
    listed = list_entries(root)
    assert len(listed) == count and all(not entry.problems for entry in listed), [(e.path, e.problems) for e in listed]
    assert not [path for path in root.rglob("*") if path.is_file() and path.suffix != ".json"]


def test_a_local_cluster_of_two_workers_gives_the_numbers_of_jobs_1_bit_for_bit(caches, monkeypatch, capsys):
    one = _use_cache(monkeypatch, caches / "jobs1")
    assert main(SMOKE) == 0
    capsys.readouterr()
    two = _use_cache(monkeypatch, caches / "jobs2")
    assert main(SMOKE + ["--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 runs at profile smoke: 0 cached, 2 to compute (2 at a time)" in out
    assert "Dask: a local cluster of 2 worker processes, one torch thread each; dashboard http" in out
    assert "2 runs computed, 0 failed, 0 not started" in out and "2 done, 0 running, 0 left" in out
    in_process, on_workers = _entries(one), _entries(two)
    assert sorted(in_process) == sorted(on_workers) and len(in_process) >= 2  # the same keys: the same configs and code
    numbers = 0
    for name, entry in in_process.items():  # the same numbers, to the last bit of their JSON text; timings aside
        assert json.dumps(timeless(entry["result"])) == json.dumps(timeless(on_workers[name]["result"])), name
        compared = number_differences(entry["result"], on_workers[name]["result"])
        assert compared["differing"] == compared["mismatches"] == 0, (name, compared)
        numbers += compared["numbers"]
    assert numbers > 1000
    _assert_valid_and_whole(two, len(on_workers))
    assert main(SMOKE + ["--dry-run"]) == 0
    assert "2 cached, 0 to compute" in capsys.readouterr().out
    assert main(["icl_collapse", "--profile", "smoke", "--seeds", "0", "--dry-run"]) == 0
    assert "6 runs at profile smoke: 2 cached, 4 to compute" in capsys.readouterr().out


def _start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(command, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)


def test_a_scheduler_over_tcp_with_a_worker_killed_mid_run_leaves_a_complete_valid_cache(caches):
    """A real `dask scheduler` and two `dask worker` processes on localhost; one worker is killed
    while it computes a run, which another worker computes again. Workers have their own (empty)
    cache folder: the command is the only writer of its cache."""
    import distributed

    env = {**os.environ, "OMP_NUM_THREADS": "1", "SSA_CHECKPOINT_DIR": str(caches / "checkpoints")}
    worker_env = {**env, "SSA_RESULTS_DIR": str(_folder(caches / "worker_results"))}
    scheduler_file = caches / "scheduler.json"
    dask = str(Path(sys.executable).with_name("dask"))
    started = []
    try:
        started.append(
            _start(
                [
                    dask,
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                env,
                caches / "scheduler.log",
            )
        )
        for index in range(2):  # --no-nanny: a killed worker stays dead
            started.append(
                _start(
                    [
                        dask,
                        "worker",
                        "--scheduler-file",
                        str(scheduler_file),
                        "--nthreads",
                        "1",
                        "--no-nanny",
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                    ],
                    worker_env,
                    caches / f"worker{index}.log",
                )
            )
        _wait_for(scheduler_file.exists, 60, "the scheduler's file")
        address = json.loads(scheduler_file.read_text())["address"]
        with distributed.Client(address, timeout=30) as watcher:
            watcher.wait_for_workers(2, timeout=60)
            pids = watcher.run(os.getpid)
            cache = _folder(caches / "results")
            command = subprocess.Popen(
                [sys.executable, "-m", "ssa_book", "regenerate", *SMOKE, "--cluster", address],
                env={**env, "SSA_RESULTS_DIR": str(cache)},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            started.append(command)
            busy = _wait_for(
                lambda: next((worker for worker, keys in watcher.processing().items() if keys), None),
                120,
                "a run in progress",
            )
            os.kill(pids[busy], signal.SIGKILL)  # one of the workers this test started
            out, _ = command.communicate(timeout=300)
        assert command.returncode == 0, out
        assert "2 runs computed, 0 failed, 0 not started" in out, out
        _assert_valid_and_whole(cache, len(_entries(cache)))
        assert len(_entries(cache)) >= 2 and not _entries(caches / "worker_results")
        assert all(f"on {busy}" not in line for line in out.splitlines() if line.startswith("[")), out
    finally:
        for process in reversed(started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)  # each was started in its own session, by this test
                process.wait(timeout=30)


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _wait_for(found, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"no {what} after {seconds} s")


def test_cluster_arguments_are_checked_up_front(caches, monkeypatch, capsys):
    def refused(argv, words):
        with pytest.raises(SystemExit) as exited:
            regenerate_command.parse_arguments(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.count("\n") == 1 and words in err, err

    refused(["decoder", "--jobs", "2", "--cluster", "tcp://127.0.0.1:8786"], "argument --jobs: not with --cluster")
    refused(
        ["decoder", "--cluster", "tcp://127.0.0.1:1"],
        "argument --cluster: no Dask scheduler answers at tcp://127.0.0.1:1",
    )
    refused(
        ["decoder", "--cluster", "slurmm"],
        "argument --cluster: expected a scheduler's tcp://HOST:PORT or a batch system",
    )
    assert regenerate_command.parse_arguments(["decoder", "--cluster", "tcp://127.0.0.1:1", "--dry-run"])[0].jobs == 1
    monkeypatch.setattr(runner.importlib.util, "find_spec", lambda name: None)
    refused(
        ["decoder", "--cluster", "slurm", "--jobs", "4"],
        "slurm needs dask-jobqueue, which is not installed: pip install",
    )


def test_a_batch_job_is_one_worker_of_one_thread_and_asks_for_a_gpu_for_cuda_runs():
    pytest.importorskip("dask_jobqueue")
    with runner.batch_cluster("slurm", "cuda") as cluster:
        script = cluster.job_script()
    assert "#SBATCH --gres=gpu:1" in script and "--resources GPU=1" in script
    assert "--nthreads 1" in script and "#SBATCH -t 24:00:00" in script
    with runner.batch_cluster("pbs", "cpu") as cluster:
        assert "ngpus" not in cluster.job_script() and "--nthreads 1" in cluster.job_script()


# ----------------------------------------------------------------------------------------------
# The one writer: what a worker computes stays in memory; the command checks it and writes it.

REGENERATE = "python -m ssa_book regenerate demo --profile smoke"


def test_a_captured_run_writes_nothing_and_its_entries_are_checked_before_they_are_written(caches, monkeypatch):
    root = _use_cache(monkeypatch, caches / "results")
    with captured_writes() as written:
        first = cached("demo/run", {"seed": 0}, lambda: {"loss": 0.5}, profile="smoke", regenerate=REGENERATE)
        again = cached(
            "demo/run",
            {"seed": 0},
            lambda: pytest.fail("read back, not computed again"),
            profile="smoke",
            regenerate=REGENERATE,
        )
    assert first == again == {"loss": 0.5} and not list(root.rglob("*")) and len(written) == 1
    ((path, text),) = written.items()
    relative = path.relative_to(root).as_posix()
    for place, changed, problem in [
        ("../outside.json", text, "not a place of the cache"),
        (relative, text[:-5], "not JSON"),
        (relative.replace("smoke/", "cpu/"), text, "stored profile 'smoke' does not match its folder 'cpu'"),
        (relative, text.replace('"seed":0', '"seed":1'), "file name does not match the key of its config"),
    ]:
        with pytest.raises(EntryError, match=problem):
            store_entry_text(place, changed)
    assert not list(root.rglob("*.json"))
    store_entry_text(relative, text)
    assert path.read_text() == text and read_entry(path).result == {"loss": 0.5}


def test_an_interrupted_command_leaves_a_valid_cache_and_the_next_computes_only_what_is_missing(
    caches, monkeypatch, capsys
):
    root = _use_cache(monkeypatch, caches / "results")
    monkeypatch.setattr(regenerate, "single_thread", lambda: None)
    computed, interrupted = [], []

    def loss(seed):
        if seed == 1 and not interrupted:
            interrupted.append(seed)
            raise KeyboardInterrupt  # Ctrl-C in the middle of the second run
        computed.append(seed)
        return {"loss": seed / 2}

    def demo(profile, device, progress, seed):
        return str(cached("demo/run", {"seed": seed}, lambda: loss(seed), profile=profile, regenerate=REGENERATE))

    monkeypatch.setitem(regenerate.KINDS, "demo", RunKind(demo))
    runs = [Run("demo", (seed,), f"demo / seed {seed}") for seed in (0, 1, 2)]
    monkeypatch.setattr(
        regenerate_command,
        "parse_arguments",
        lambda argv: (
            regenerate_command.parser().parse_args(["decoder", "--profile", "smoke", "--jobs", "1", "--device", "cpu"]),
            runs,
        ),
    )
    assert main([]) == 130
    assert "interrupted: every run reported above is stored" in capsys.readouterr().err
    _assert_valid_and_whole(root, 1)
    assert entry_path("demo/run", {"seed": 0}, profile="smoke", results_dir=root).is_file()
    assert main([]) == 0 and computed == [0, 1, 2]
    assert "3 runs at profile smoke: 1 cached, 2 to compute" in capsys.readouterr().out
    _assert_valid_and_whole(root, 3)


def test_the_time_left_comes_from_the_cached_runs_of_the_same_kind():
    runs = [Run("demo", (seed,), f"demo / seed {seed}") for seed in range(4)]
    progress = runner.Progress(runs[2:], {runs[2].key: 60.0, runs[3].key: 60.0})
    assert progress.line(2) == "0 done, 0 running, 2 left, about 60 s left"
    progress.started(runs[2])
    progress.finished(runs[2], 600.0)  # measured: the estimate of its kind follows
    assert progress.line(1) == "1 done, 0 running, 1 left, about 10 min left"
    assert (
        runner.Progress(runs, {}).line(1)
        == "0 done, 0 running, 4 left, time left unknown until a run of each kind is done"
    )
