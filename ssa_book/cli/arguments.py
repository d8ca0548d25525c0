"""The types of the book's command-line arguments: a value a command cannot use is refused by argparse
itself, before any work starts, in one line that names the argument and what it accepts (exit 2).

Each function here is an argparse ``type=``: it returns the value or raises
:class:`argparse.ArgumentTypeError`, whose message argparse prints after ``argument NAME:``. A
check that needs more than one argument (or the environment) is made right after parsing with
``parser.error``, in the same one-line form.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable, Iterable

from ssa_book.files import folder_problem
from ssa_book.profiles import DEVICES, resolve_device


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose error is one line, ``PROG: error: MESSAGE``: the usage it
    would print first is what ``--help`` shows. Its subcommands' parsers are of this class too."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def at_least(minimum: int) -> Callable[[str], int]:
    """A whole number >= ``minimum``."""

    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}; got {value}")
        return value

    whole_number.__name__ = f"whole number >= {minimum}"
    return whole_number


def number(name: str, what: str, accepted: Callable[[float], bool]) -> Callable[[str], float]:
    """A number that ``accepted`` accepts (NaN never is), described as ``what`` when refused; the
    type is called ``name``."""

    def checked(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}; got {text!r}") from None
        if value != value or not accepted(value):
            raise argparse.ArgumentTypeError(f"must be {what}; got {text}")
        return value

    checked.__name__ = name
    return checked


minutes = number("minutes", "a number of minutes > 0", lambda value: 0 < value < float("inf"))


def available_device(text: str) -> str:
    """A device of :data:`ssa_book.profiles.DEVICES` that this machine has, as given (``auto``
    stays ``auto``: the notebooks and the benchmark resolve it themselves)."""
    resolved_device(text)
    return text


def resolved_device(text: str) -> str:
    """A device of :data:`ssa_book.profiles.DEVICES` that this machine has, ``auto`` resolved."""
    try:
        return resolve_device(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error} (choose from {', '.join(DEVICES)})") from None


def one_of(choices: Iterable[str], what: str) -> Callable[[str], str]:
    """One of ``choices`` (for a list of names, where argparse's ``choices`` would refuse an empty one)."""
    choices = tuple(choices)

    def name(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r}; choose from {', '.join(choices)}")
        return text

    name.__name__ = what
    return name


def existing_folder(text: str) -> Path:
    """A folder that exists."""
    folder = Path(text).expanduser()
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder" if folder.exists() else f"no folder {text}")
    return folder


def existing_file(text: str) -> Path:
    """A file that exists."""
    file = Path(text).expanduser()
    if not file.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a file" if file.exists() else f"no file {text}")
    return file


def existing_path(text: str) -> Path:
    """A file or folder that exists."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no file or folder {text}")
    return path


def writable_folder(text: str) -> Path:
    """A folder files can be written in, created with the folders above it by the command that
    takes it: one that exists and is writable, or a new one below a writable folder
    (:func:`ssa_book.files.folder_problem`)."""
    folder = Path(text).expanduser()
    problem = folder_problem(folder, new_parents=True)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"must be a writable folder; {problem}")
    return folder


def output_file(text: str) -> Path:
    """A file that can be written: not a folder, in a folder that exists and is writable."""
    return _output_file(text, create_folder=False)


def output_file_creating_folder(text: str) -> Path:
    """A file that can be written by a command that creates its folder: not a folder, in a
    writable folder or a new one in a writable folder."""
    return _output_file(text, create_folder=True)


def _output_file(text: str, *, create_folder: bool) -> Path:
    file = Path(text).expanduser()
    if file.is_dir() or text.endswith(("/", "\\")):
        raise argparse.ArgumentTypeError(f"must be a file to write; {text} is a folder")
    folder = file.absolute().parent
    problem = (
        folder_problem(folder, new_parents=True)
        if folder.is_dir() or create_folder
        else f"its folder {folder} does not exist"
    )
    if problem is not None:
        raise argparse.ArgumentTypeError(f"must be a file in a writable folder; {problem}")
    return file
