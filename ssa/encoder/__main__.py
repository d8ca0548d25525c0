"""``python -m ssa.encoder``: the encoder chapter's command line.

    python -m ssa.encoder regenerate --profile cpu   # the same as: python -m ssa regenerate encoder --profile cpu
    python -m ssa.encoder corpus --profile smoke     # what the AO-CHILDES corpus contains

``regenerate`` takes the flags of ``python -m ssa regenerate`` (:mod:`ssa.regenerate`);
``--variants`` is the old spelling of ``--scorers``.
"""

from __future__ import annotations

import argparse
import json
import sys

from ssa.profiles import PROFILES


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["regenerate"]:
        from ssa import regenerate

        return regenerate.main(["encoder", *("--scorers" if word == "--variants" else word for word in argv[1:])])
    parser = argparse.ArgumentParser(prog="python -m ssa.encoder", description="The encoder chapter: regenerate its cached results, describe its corpus.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("regenerate", help="compute every missing cached result: python -m ssa regenerate encoder --help")
    corpus = commands.add_parser("corpus", help="print what the AO-CHILDES corpus contains")
    corpus.add_argument("--profile", choices=PROFILES, default="smoke")
    arguments = parser.parse_args(argv)

    from ssa.encoder import experiment

    print(json.dumps(experiment.data_summary(arguments.profile)["corpus"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
