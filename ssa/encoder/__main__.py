"""``python -m ssa.encoder regenerate --profile cpu``: train and probe every missing run.

Each (variant, seed) run is cached on its own under ``results/<profile>/encoder/runs/`` and
checkpoints while it trains, so the command can be interrupted and re-run at any time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from ssa.encoder import experiment
from ssa.profiles import PROFILES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ssa.encoder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    regenerate = commands.add_parser("regenerate", help="compute every missing cached result of a profile")
    regenerate.add_argument("--profile", choices=PROFILES, required=True)
    regenerate.add_argument("--variants", nargs="+", choices=experiment.VARIANTS, default=list(experiment.VARIANTS))
    regenerate.add_argument("--seeds", nargs="+", type=int, help="default: the profile's seeds (cpu: 0 1 2)")
    regenerate.add_argument("--device", default="auto")
    regenerate.add_argument("--threads", type=int, default=1, help="torch threads on CPU (default 1: the machine is shared)")
    corpus = commands.add_parser("corpus", help="print what the AO-CHILDES corpus contains")
    corpus.add_argument("--profile", choices=PROFILES, default="smoke")
    arguments = parser.parse_args(argv)

    if arguments.command == "corpus":
        print(json.dumps(experiment.data_summary(arguments.profile)["corpus"], indent=1))
        return 0
    experiment.data_summary(arguments.profile)
    seeds = arguments.seeds if arguments.seeds is not None else experiment.seeds_for(arguments.profile)
    for variant in arguments.variants:
        for seed in seeds:
            started = time.perf_counter()
            result = experiment.run(arguments.profile, variant, seed, device=arguments.device, threads=arguments.threads)
            mean = sum(entry["accuracy"] for entry in result["holistic"].values()) / len(result["holistic"])
            print(f"{variant:9} seed {seed}: mean Zorro accuracy {100 * mean:.1f}% ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
