"""Every argument of every command of ``python -m ssa_book`` is checked up front: a value a command
cannot use ends in one line on stderr that names the argument, exit status 2, no traceback, before
any work starts; and every command the book tells a reader to run parses.

The commands are found from the top-level parser (ssa_book.__main__), their arguments by walking
each command's parser; each argument gets the wrong values its type or choices imply. The parsers
run in this process (``parse_arguments`` where a command checks more right after parsing); nothing
trains, downloads or measures."""

import argparse
import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ssa_book.cli import COMMANDS, command_parser, parser as top_parser
from read_only import make_read_only

ROOT = Path(__file__).resolve().parent.parent

# The arguments a valid call of each (sub)command needs: its positionals, then options.
VALID = {
    ("book", "run"): (["run"], ["--no-html", "--root", str(ROOT)]),
    ("regenerate",): (["decoder"], ["--dry-run"]),
    ("bench",): ([], []),
    ("results",): (["list"], []),
    ("data", "fetch"): (["fetch"], []),
    ("data", "verify"): (["verify"], []),
    ("data", "list"): (["list"], []),
    ("code-versions",): (["check"], []),
    ("paper-check",): ([], []),
    ("decoder", "train"): (["train"], []),
    ("decoder", "evaluate"): (["evaluate"], ["--checkpoint", "{checkpoint}"]),
    ("decoder", "params"): (["params"], []),
    ("decoder", "lm-eval"): (["lm-eval"], ["--model_args", "pretrained={checkpoint}", "--tasks", "hellaswag"]),
    ("encoder", "corpus"): (["corpus"], []),
    ("reruns", "run"): (["run"], []),
    ("reruns", "table"): (["table"], []),
    ("reruns", "bitwise"): (["bitwise"], []),
}

# Arguments whose values are checked right after parsing, against what the command knows
# (chapters' scorers, the study's arms, the book's notebooks, the cache's folders): their wrong values.
CHECKED_AFTER_PARSING = {
    (("regenerate",), "--scorers"): ["softermax"],
    (("regenerate",), "--arms"): ["ssa_turbo"],
    (("book", "run"), "--only"): ["no_such_notebook"],
}
EXTRA_WRONG = {
    (("results",), "--experiment"): ["no/such/folder/"],
    (("decoder", "lm-eval"), "--tasks"): ["no_such_task", "hellaswag,no_such"],
}
# lm-eval's tasks as the tests see them: indexing lm-eval's own takes a minute (ssa_book.cli.decoder.lm_eval_tasks).
LM_EVAL_TASKS = {"hellaswag", "arc_easy"}


# A folder no one can write in, not even root, whatever its permissions say (Linux).
SYSTEM_FOLDER = ["/proc/new"] if Path("/proc/self").is_dir() else []


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """A cache with one profile folder, a data folder, a checkpoint, a file, a read-only folder."""
    (tmp_path / "results" / "cpu" / "icl").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "config.json").write_text("{}")
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "something").write_text("x")
    make_read_only(tmp_path / "read_only", monkeypatch)
    for name, folder in (
        ("SSA_RESULTS_DIR", "results"),
        ("SSA_DATA_DIR", "data"),
        ("SSA_RUNS_DIR", "runs"),
        ("SSA_CHECKPOINT_DIR", "checkpoints"),
    ):
        monkeypatch.setenv(name, str(tmp_path / folder))
    for name in ("SSA_DATA_MIRROR", "SSA_REQUIRE_CACHE", "SSA_RESULTS_MIRROR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(
        "ssa_book.cli.decoder.lm_eval_tasks", lambda include_path=None: argparse.Namespace(all_tasks=LM_EVAL_TASKS)
    )
    return tmp_path


def wrong_values(action: argparse.Action, where: Path) -> list[str]:
    """The values ``action`` must refuse, from its choices or its type; ``[]`` for a flag."""
    if action.nargs == 0:
        return []
    if action.choices is not None:
        return ["no-such-choice", ""]
    name = getattr(action.type, "__name__", None)
    missing, a_file, read_only, full = (
        str(where / "no" / "such" / "folder"),
        str(where / "a_file"),
        str(where / "read_only"),
        str(where / "full"),
    )
    checkpoint = where / "checkpoint"
    if name is not None and name.startswith("whole number >= "):
        minimum = int(name.removeprefix("whole number >= "))
        return sorted({str(minimum - 1), "-1", "x", "1.5"})
    by_type = {
        "minutes": ["0", "-1", "x", "nan"],
        "available_device": ["tpu", *([] if torch.cuda.is_available() else ["cuda"])],
        "resolved_device": ["tpu", *([] if torch.cuda.is_available() else ["cuda"])],
        "existing_folder": [missing, a_file],
        "writable_folder": [a_file, f"{a_file}/below", read_only, f"{read_only}/below", *SYSTEM_FOLDER],
        "output_file": [str(where), str(where / "no" / "out.json"), str(where / "read_only" / "out.json")],
        "output_file_creating_folder": [
            str(where),
            f"{a_file}/below/out.json",
            str(where / "read_only" / "out.json"),
            *(f"{folder}/out.json" for folder in SYSTEM_FOLDER),
        ],
        "dataset": ["imagenet"],
        "computation": ["nonsense"],
        "_experiment_folder": ["../up", "/absolute", "/"],
        "_text_source": ["nonsense", str(where / "missing.jsonl")],
        "_fresh_folder": [full, read_only, a_file],
        "cluster_address": [
            "nonsense",
            "",
            "tcp://",
            "tcp://host",
            "tcp://host:0",
            "tcp://host:70000",
            "http://host:8786",
            "SLURM",
        ],
        "_model_args": [
            f"pretrained={missing}",
            f"pretrained={a_file}",
            f"pretrained={full}",
            "device=cpu",
            "pretrained",
            f"pretrained={checkpoint},batch_size=4",
            f"pretrained={checkpoint},colour=red",
            f"pretrained={checkpoint},max_length=0",
            f"pretrained={checkpoint},device=tpu",
            f"pretrained={checkpoint},=1",
        ],
        "_task_list": ["", "hellaswag,,arc_easy"],
        "_limit": ["0", "-1", "1.5", "x", "inf", "nan"],
    }
    assert name in by_type, (
        f"{action.option_strings or action.dest}: no wrong values known for its type {action.type!r}: add them here"
    )
    return by_type[name]


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    """(command path, action) of every argument of ``parser`` and its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def every_argument():
    (command,) = [action for action in top_parser()._actions if action.dest == "command"]
    assert set(command.choices) == set(COMMANDS)
    return [(path, action) for name in command.choices for path, action in walk(command_parser(name), (name,))]


def parse(path: tuple[str, ...], argv: list[str]):
    """``argv`` through command ``path[0]``'s own checks: ``parse_arguments`` if it has one, else its parser."""
    module = importlib.import_module(COMMANDS[path[0]])
    return module.parse_arguments(argv) if hasattr(module, "parse_arguments") else module.parser().parse_args(argv)


def argv_with(path, action, value, where):
    positionals, options = VALID[path]
    options = [option.format(checkpoint=where / "checkpoint") for option in options]
    if path == ("regenerate",) and "--arms" in action.option_strings:
        positionals = ["icl_study"]
    if action.option_strings:
        return positionals + options + [action.option_strings[0], value]
    index = [each.dest for each in parse_target(path) if not each.option_strings].index(action.dest)
    command_words = len(path) - 1  # the subcommand's name comes first
    return positionals[: command_words + index] + [value] + positionals[command_words + index + 1 :] + options


def parse_target(path):
    sub = command_parser(path[0])
    for name in path[1:]:
        (subparsers,) = [action for action in sub._actions if isinstance(action, argparse._SubParsersAction)]
        sub = subparsers.choices[name]
    return sub._actions


def assert_refused(path, argv, action, capsys):
    with pytest.raises(SystemExit) as exited:
        parse(path, argv)
    err = capsys.readouterr().err
    named = action.option_strings or [action.metavar or action.dest]
    assert exited.value.code == 2, (argv, err)
    assert err.count("\n") == 1, f"{argv}: not one line:\n{err}"
    assert "Traceback" not in err and any(f"argument {name}" in err or name in err for name in named), (argv, err)


def test_every_command_is_listed_and_its_valid_call_parses(folders, capsys):
    paths = {path for path, _ in every_argument()}
    assert paths <= set(VALID), paths - set(VALID)
    for path, valid in VALID.items():
        if valid is not None:
            positionals, options = valid
            parse(path, positionals + [option.format(checkpoint=folders / "checkpoint") for option in options])


def test_every_argument_refuses_what_it_cannot_use_in_one_line(folders, capsys):
    tried = 0
    for path, action in every_argument():
        if VALID[path] is None:
            continue
        key = (path, (action.option_strings or [action.dest])[0])
        values = CHECKED_AFTER_PARSING.get(key) or wrong_values(action, folders)
        if action.nargs != 0 and action.type is None and action.choices is None:
            assert key in CHECKED_AFTER_PARSING, f"{key}: a free-form argument nothing checks"
        for value in values + EXTRA_WRONG.get(key, []):
            assert_refused(path, argv_with(path, action, value, folders), action, capsys)
            tried += 1
    assert tried > 100


@pytest.mark.parametrize(
    "path, argv, named",
    [
        (("bench",), ["--force"], "--force"),
        (("bench",), ["--profile", "smoke"], "--profile"),
        (("book", "run"), ["run", "--drafts", "--root", str(ROOT)], "--drafts"),
        (("decoder", "train"), ["train", "--global-batch", "3", "--micro-batch", "2"], "--global-batch"),
        (("data", "fetch"), ["fetch", "zorro", "--mirror", "{empty}"], "--mirror"),
        (("decoder", "evaluate"), ["evaluate", "--checkpoint", "{empty}"], "--checkpoint"),
        (("results",), ["list", "--experiment", "icl/", "--profile", "paper"], "--experiment"),
        (
            ("decoder", "lm-eval"),
            [
                "lm-eval",
                "--model_args",
                "pretrained={checkpoint},device=cpu",
                "--device",
                "cpu",
                "--tasks",
                "hellaswag",
            ],
            "--device",
        ),
        (
            ("decoder", "lm-eval"),
            ["lm-eval", "--model_args", "pretrained={checkpoint}", "--tasks", "hellaswag", "--log_samples"],
            "--log_samples",
        ),
        # lm-eval's arguments that the command does not take are refused, not passed on unchecked
        (
            ("decoder", "lm-eval"),
            ["lm-eval", "--model_args", "pretrained={checkpoint}", "--tasks", "hellaswag", "--write_out"],
            "unrecognized arguments: --write_out",
        ),
    ],
)
def test_arguments_that_do_not_go_together_are_refused_in_one_line(folders, capsys, path, argv, named):
    (folders / "empty").mkdir()
    argv = [value.format(empty=folders / "empty", checkpoint=folders / "checkpoint") for value in argv]
    with pytest.raises(SystemExit) as exited:
        parse(path, argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and named in err and "Traceback" not in err, err


def test_commands_that_write_refuse_a_folder_they_cannot_write(folders, monkeypatch, capsys):
    make_read_only(folders / "results" / "cpu", monkeypatch)
    make_read_only(folders / "results", monkeypatch)
    for path, argv in (
        (("results",), ["format"]),
        (("reruns", "run"), ["run"]),
        (("reruns", "bitwise"), ["bitwise"]),
        (("book", "run"), ["run", "--no-html", "--root", str(ROOT)]),
    ):
        with pytest.raises(SystemExit) as exited:
            parse(path, argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.count("\n") == 1 and "not writable" in err, (argv, err)
    make_read_only(folders / "data", monkeypatch)
    with pytest.raises(SystemExit):
        parse(("data", "fetch"), ["fetch"])
    assert "SSA_DATA_DIR" in capsys.readouterr().err
    assert parse(("reruns", "table"), ["table"]).profile == "cpu"  # reading needs no write
    make_read_only(folders / "runs", monkeypatch)  # $SSA_RUNS_DIR: decoder train's run folder, without --out
    with pytest.raises(SystemExit) as exited:
        parse(("decoder", "train"), ["train"])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "SSA_RUNS_DIR" in err and "not writable" in err, err
    assert parse(("decoder", "train"), ["train", "--out", str(folders / "elsewhere")]).out == folders / "elsewhere"


# ----------------------------------------------------------------------------------------------
# The advice the book gives names commands that run.

PLACEHOLDERS = {
    "CHAPTER": "decoder",
    "[NAMES]": "zorro",
    "NAME": "lm",
    " P": " cpu",
    "[--jobs 2]": "--jobs 2",
    "...": "",
    "{chapter}": "decoder",
}


def parse_command(text: str):
    words = shlex.split(text)
    assert words[:3] == ["python", "-m", "ssa_book"] and words[3] in COMMANDS, text
    module = importlib.import_module(COMMANDS[words[3]])
    argv = words[4:]
    return module.parse_arguments(argv) if hasattr(module, "parse_arguments") else module.parser().parse_args(argv)


def test_every_command_the_chapters_name_parses(folders):
    from ssa_book import bench, data, reproduce
    from ssa_book.studies import CHAPTERS
    from ssa_book.profiles import PROFILES

    commands = [
        bench.REGENERATE.format(profile="cpu"),
        *(data.fix_command(name).split("   (")[0] for name in data.DATASET_NAMES),
    ]
    for chapter in CHAPTERS.values():
        for profile in PROFILES:
            commands += [
                chapter.command(profile),
                chapter.command(profile, seeds=[0, 99]),
                chapter.command(profile, scorers=chapter.accepted_scorers()[-1:], seeds=[7]),
            ]
            if chapter.has_arms:
                commands.append(chapter.command(profile, arms=["ssa_b1"], seeds=[104]))
    commands += [
        row[kind] for row in reproduce.chapter_commands("cpu", ROOT) for kind in ("run", "regenerate") if row[kind]
    ]
    for command in commands:
        parse_command(command)


def test_every_command_the_code_names_parses(folders):
    """Every `python -m ssa_book ...` in backticks in the package (messages and docs), its placeholders filled."""
    quoted = {
        match
        for path in (ROOT / "ssa_book").rglob("*.py")
        for match in re.findall(r"`(python -m ssa_book [^`]*)`", path.read_text(encoding="utf-8"))
    }
    tried = 0
    for command in sorted(quoted):
        for placeholder, value in {**PLACEHOLDERS, "{folder}": str(folders / "checkpoint")}.items():
            command = command.replace(placeholder, value)
        words = command.split()
        if len(words) <= 4 or words[3] not in COMMANDS or "--help" in words:
            continue  # the name of a command, not a call of it
        parse_command(command)
        tried += 1
    assert tried >= 15


# ----------------------------------------------------------------------------------------------
# The real entry point.


@pytest.mark.parametrize(
    "argv, named",
    [
        (["book", "run", "--seed", "-1"], "argument --seed: must be >= 0; got -1"),
        (
            ["results", "validate", "--results-dir", "/no/such/folder"],
            "argument --results-dir: no folder /no/such/folder",
        ),
        (["nonsense"], "argument COMMAND: invalid choice: 'nonsense'"),
        (
            ["decoder", "lm-eval", "--model_args", "pretrained=/no/such/folder", "--tasks", "hellaswag"],
            "argument --model_args: pretrained: no folder /no/such/folder",
        ),
    ],
)
def test_the_entry_point_refuses_in_one_line_without_a_traceback(argv, named):
    done = subprocess.run(
        [sys.executable, "-m", "ssa_book", *argv], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert (
        done.returncode == 2
        and done.stderr.count("\n") == 1
        and named in done.stderr
        and "Traceback" not in done.stderr
    ), done.stderr
