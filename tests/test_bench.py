"""The benchmark's measuring tools (the benchmark itself runs in the performance notebook)."""

import dataclasses

import pytest
import torch

from ssa_book import bench, measure
from ssa_book.cli import bench as cli_bench


def test_peak_memory_counts_what_a_call_allocates():
    def allocate():
        first = torch.ones(2**20)  # 4 MiB
        second = first * 2  # 4 MiB more while the first is alive
        del first, second

    peak = measure.peak_memory_bytes(allocate, "cpu")
    assert 8 * 2**20 <= peak < 9 * 2**20


def test_interleaved_medians_time_every_function():
    medians = measure.interleaved_medians({"a": lambda: None, "b": lambda: sum(range(1000))}, 0.0, 1)
    assert set(medians) == {"a", "b"} and all(calls == 3 and seconds >= 0 for seconds, calls in medians.values())


def test_configs():
    config = bench.bench_config("cpu", "cpu")
    assert (config.icl.batch, config.icl.heads, config.icl.tokens, config.icl.head_dim) == (64, 8, 82, 32)
    assert 1024 in config.lm_tokens and config.lm_target_tokens == (1024,)
    with pytest.raises(ValueError, match="profile must be one of"):
        bench.bench_config("huge")


def test_peak_memory_is_not_inflated_by_earlier_profiles():
    kept = []
    measure.peak_memory_bytes(lambda: kept.append(torch.ones(2**21)), "cpu")  # 8 MiB outlives its profile
    kept.clear()
    peak = measure.peak_memory_bytes(lambda: torch.ones(2**20), "cpu")
    assert 4 * 2**20 <= peak < 5 * 2**20


def test_peak_memory_excludes_frees_of_earlier_profiled_tensors():
    holder = {}
    measure.peak_memory_bytes(lambda: holder.update(old=torch.ones(2**21)), "cpu")  # 8 MiB, allocated while profiled
    peak = measure.peak_memory_bytes(lambda: torch.ones(2**20), "cpu", setup=holder.clear)
    assert 4 * 2**20 <= peak < 5 * 2**20


def test_the_default_run_is_the_quick_one_and_the_cache_flags_need_full(capsys):
    quick = bench.quick_config("cpu")
    assert quick.training_profile is None and quick.reference_max_tokens < max(quick.lm_tokens)
    assert quick.lm_target_tokens == (1024,) and 1024 in quick.lm_tokens and quick.min_run_time <= 1.0
    for flags in (["--force"], ["--profile", "smoke"]):
        with pytest.raises(SystemExit):
            cli_bench.main(flags)
        assert "add --full" in capsys.readouterr().err


def test_a_run_prints_one_progress_line_per_size_and_nothing_from_the_profiler(capfd):
    config = bench.bench_config("smoke", "cpu")
    config = dataclasses.replace(config, lm_tokens=config.lm_target_tokens, training_profile=None)
    lines = []
    result = bench.run_benchmark(config, log=lines.append)
    assert [line.split("]")[0] for line in lines] == ["[1/2", "[2/2"] and "x softmax's time" in lines[0]
    assert len(result["attention"]) == 2
    assert "USDT" not in capfd.readouterr().err  # the memory profiler's start and stop lines are silenced


def test_target_checks_read_every_size_against_the_targets_of_today():
    row = lambda size, tokens, time, memory: {
        "size": size,
        "tokens": tokens,
        "fast_path": "direct" if tokens <= 96 else "blockwise",
        "ssa_fast": {"time_ratio": time, "memory_ratio": memory},
    }
    result = {
        "machine": {"device": "cpu"},
        "attention": [row("icl", 82, 1.25, 2.9), row("lm", 256, 1.1, 1.1), row("lm", 1024, 1.05, 1.19)],
        "training": {"schedule_ratio": 1.04},
    }
    checks = {(c["what"], c["tokens"]): c for c in bench.target_checks(result)}
    assert len(checks) == 3 * 2 + 1
    assert not checks[("attention time", 82)]["met"] and checks[("attention time", 82)]["at most"] == 1.2
    assert (
        checks[("attention time", 256)]["met"] and not checks[("attention time", 1024)]["met"]
    )  # 1.0 from 512 tokens on
    assert checks[("attention peak memory", 1024)]["met"] and not checks[("attention peak memory", 82)]["met"]
    assert (
        checks[("in-context training time", None)]["met"]
        and checks[("in-context training time", None)]["at most"] == 1.05
    )
    assert bench.target_label(checks[("attention time", 1024)]) == "attention time, lm size, 1024 tokens"
    gpu = bench.target_checks(
        {**result, "machine": {"device": "cuda"}}
    )  # on a GPU: time alone, at most 1.3 x at every size
    assert [(c["what"], c["at most"]) for c in gpu if c["tokens"]] == [("attention time", 1.3)] * 3


def test_every_missed_target_says_which_path_ran_and_why():
    row = {
        "size": "lm",
        "tokens": 1024,
        "label": "B=1 H=1 T=1024 D=8",
        "fast_path": "blockwise",
        "ssa_fast": {"time_ratio": 0.9, "memory_ratio": 1.5},
    }
    short = {
        **row,
        "size": "icl",
        "tokens": 82,
        "fast_path": "direct",
        "ssa_fast": {"time_ratio": 1.3, "memory_ratio": 1.0},
    }
    result = {"machine": {"device": "cpu"}, "attention": [row, short], "training": {"schedule_ratio": 1.2}}
    unmet = bench.unmet_targets(result)
    assert [(item["target"], item["path"]) for item in unmet] == [
        ("attention peak memory, lm size, 1024 tokens", "blockwise"),
        ("attention time, icl size, 82 tokens", "direct"),
        ("in-context training time", "direct (the whole run)"),
    ]
    assert all(item["why"] for item in unmet)
    assert bench.unmet_targets({**result, "attention": [], "training": {"schedule_ratio": 1.0}}) == []
    on_gpu = bench.unmet_targets(
        {"machine": {"device": "cuda"}, "attention": [{**row, "fast_path": "flex", "ssa_fast": {"time_ratio": 1.5}}]}
    )
    assert [item["path"] for item in on_gpu] == ["flex"] and on_gpu[0]["why"]
