#!/usr/bin/env bash
# The library as pip installs it: build an sdist from the working tree and a wheel from that sdist,
# check both carry every source of the C++ kernels, install the wheel into a fresh virtual
# environment (torch and what torch needs, then the wheel with its dependencies, ninja among them,
# at the versions of requirements/lock.txt), check that ninja came with the wheel, and check
# there that the kernels build and load without falling back to PyTorch operations, that SSA
# attention's output and gradients are bit-identical to the checkout's editable .venv, that
# ssa_book, without the [book] extra, refuses in one line naming it, and that the library's own
# tests (tests/library) pass against the installed copy. Exits non-zero on any failure.
#
#   scripts/check_wheel.sh                  REFERENCE=.venv/bin/python, PYTHON=the one it was made with
#   KEEP=1 scripts/check_wheel.sh           keep the temporary folder (printed) for a look
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REFERENCE=${REFERENCE:-$ROOT/.venv/bin/python}
PYTHON=${PYTHON:-$("$REFERENCE" -c 'import sys; print(sys._base_executable)')}
TORCH_VERSION=$(sed -n 's/^TORCH_VERSION := //p' Makefile)

work=$(mktemp -d "${TMPDIR:-/tmp}/ssa-wheel.XXXXXX")
if [[ "${KEEP:-0}" == 1 ]]; then echo "keeping $work"; else trap 'rm -rf "$work"' EXIT; fi
# A fresh build of the kernels, from the installed sources; one torch thread in both interpreters,
# so that the matrix products sum in the same order.
export OMP_NUM_THREADS=1

step() { echo "--- $* (at $SECONDS s)"; }

step "sdist from the working tree, wheel from the sdist (as pip builds an sdist)"
mkdir -p "$work/source" "$work/dist"
git ls-files -z -- pyproject.toml README.md 'LICENSE*' ssa ssa_book \
    | while IFS= read -r -d '' file; do [[ -e "$file" ]] && printf '%s\0' "$file"; done \
    | xargs -0 cp --parents -t "$work/source"
(cd "$work/source" && "$REFERENCE" -c "from setuptools import build_meta; build_meta.build_sdist('$work/dist')" >/dev/null)
sdist=$(ls "$work"/dist/*.tar.gz)
tar -xzf "$sdist" -C "$work"
unpacked=$(ls -d "$work"/ssa_book-*/)
(cd "$unpacked" && "$REFERENCE" -c "from setuptools import build_meta; build_meta.build_wheel('$work/dist')" >/dev/null)
wheel=$(ls "$work"/dist/*.whl)

step "both carry every file of ssa/kernels/csrc"
# Listed into files first: grep -q quits at the first match, which under pipefail fails the lister.
tar -tzf "$sdist" | sed 's|^[^/]*/||' >"$work/sdist.txt"
"$REFERENCE" -c "import sys, zipfile; print(*zipfile.ZipFile(sys.argv[1]).namelist(), sep='\n')" "$wheel" >"$work/wheel.txt"
for file in $(git ls-files ssa/kernels/csrc); do
    grep -qx "$file" "$work/sdist.txt" || { echo "the sdist lacks $file"; exit 1; }
    grep -qx "$file" "$work/wheel.txt" || { echo "the wheel lacks $file"; exit 1; }
done

step "a fresh environment: torch $TORCH_VERSION (CPU build, as the Makefile installs it) and the wheel"
"$PYTHON" -m venv "$work/env"
pip=("$work/env/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" --no-index --no-deps "torch==$TORCH_VERSION+cpu" 2>/dev/null \
    || "${pip[@]}" --no-deps "torch==$TORCH_VERSION+cpu" --extra-index-url https://download.pytorch.org/whl/cpu
# The wheel with its dependencies (torch, installed above, and what torch needs; ninja, which the
# kernels' build runs) at the lock's versions, and the library's two extras, which its tests
# exercise: the sparse scorers' and the transformers plug-in's; not the book's.
"${pip[@]}" -c requirements/lock.txt "$wheel[sparse,hf]"

step "without the [book] extra, ssa_book refuses in one line naming it (import, python -m, the ssa-book command)"
refusal_line="ssa_book is the book's machinery and needs the [book] extra: pip install \"ssa-book[book]\""
refusal=$(cd "$work" && env/bin/python -c "import ssa_book" 2>&1) && { echo "import ssa_book ran without the [book] extra"; exit 1; }
[[ $(tail -n 1 <<<"$refusal") == "ImportError: $refusal_line"* && $refusal != *ModuleNotFoundError* ]] \
    || { echo "import ssa_book without the [book] extra said: $refusal"; exit 1; }
refusal=$(cd "$work" && env/bin/python -m ssa_book --help 2>&1) && { echo "python -m ssa_book ran without the [book] extra"; exit 1; }
[[ $refusal == "$refusal_line"* && $refusal != *$'\n'* ]] || { echo "python -m ssa_book without the [book] extra said: $refusal"; exit 1; }
refusal=$(cd "$work" && env/bin/ssa-book --help 2>&1) && { echo "the ssa-book command ran without the [book] extra"; exit 1; }
[[ $refusal == "$refusal_line"* && $refusal != *$'\n'* ]] || { echo "the ssa-book command without the [book] extra said: $refusal"; exit 1; }

step "the wheel brought the kernels' build tool: ninja beside the environment's Python"
# Beside Python, where ssa.kernels.native finds it without the environment activated (and without
# a ninja of the system's on the PATH).
[[ -x "$work/env/bin/ninja" ]] || { echo "installing the wheel did not install ninja into $work/env/bin"; exit 1; }
"$work/env/bin/python" -c "from importlib import metadata; print('ninja', metadata.version('ninja'))"

step "the kernels build and load in the fresh environment; numbers bit-identical to .venv's"
cp scripts/check_wheel_numbers.py "$work/"
# The wheel's two libraries built at once, one process each (as make kernels does), while the
# checkout computes its numbers; compute then loads them and fails on any fallback.
build=(env TORCH_EXTENSIONS_DIR="$work/torch_extensions" "$work/env/bin/python" -c)
(cd "$work" && "${build[@]}" "from ssa.kernels import native; native.cpu_kernels()") & rows=$!
(cd "$work" && "$REFERENCE" check_wheel_numbers.py compute checkout.pt) & reference=$!
(cd "$work" && "${build[@]}" "from ssa.kernels import native; native.vector_tile_kernels()")
wait "$rows"
wait "$reference"
(cd "$work" && TORCH_EXTENSIONS_DIR="$work/torch_extensions" env/bin/python check_wheel_numbers.py compute wheel.pt --expect-site-packages)
(cd "$work" && "$REFERENCE" check_wheel_numbers.py compare wheel.pt checkout.pt)

step "the library's tests against the installed wheel: tests/library, with the shared tests/conftest.py"
"${pip[@]}" -c requirements/lock.txt pytest pytest-timeout pytest-xdist hypothesis numpy
mkdir "$work/tests"
# tests/library/test_hf.py runs the README's example of the plug-in.
cp -r tests/conftest.py tests/library "$work/tests/"
cp README.md "$work/"
# From the temporary folder: neither the checkout nor its pyproject.toml is in sight. ssa_book is
# installed but refuses to import without the [book] extra, so a library test importing it fails.
(cd "$work" && TORCH_EXTENSIONS_DIR="$work/torch_extensions" env/bin/python -m pytest -q -p no:cacheprovider -n 2 \
    -W error::RuntimeWarning tests/library)
echo "--- the wheel checks passed in $SECONDS s"
