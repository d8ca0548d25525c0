# The SSA book. Two commands do everything, each setting itself up on a fresh machine:
#
#   make book              execute every notebook at the cpu profile, build _build/html/index.html
#   make test              unit tests + every notebook at the smoke profile + the book from the cache
#
# Options (on the command line, e.g. `make book TORCH=cuda DEVICE=cuda`):
#   TORCH=cpu|cuda         which torch build .venv gets (default cpu; cuda = the PyPI build, which
#                          bundles CUDA on Linux). Switching rebuilds the install step only.
#   DEVICE=auto|cpu|cuda|mps   the device the notebooks use for `make book` (default auto)
#   PROFILE=cpu|paper|smoke    the profile `make book` runs (default cpu; paper = the paper's sizes, for GPUs)
#   PYTHON=python3.11      the interpreter that creates .venv (3.11 or newer)
#   TEST_JOBS=N            notebooks `make test` executes at once (default: the number of cores)
#
# `make browser` opens the built HTML in headless Chromium and checks every page (make test runs it).
# Other targets: `make data` (datasets into data/, from $SSA_DATA_MIRROR or the public sources),
# `make regenerate CHAPTER=icl_linear JOBS=2` (a chapter's missing cached results at $(PROFILE), on
# $(DEVICE); CHAPTER=all for every chapter: python -m ssa_book regenerate --help),
# `make lock` (rewrite requirements/lock.txt from the current .venv), `make clean`, `make distclean`.

PYTHON ?= python3
VENV ?= .venv
TORCH ?= cpu
DEVICE ?= auto
PROFILE ?= cpu
CHAPTER ?= all
JOBS ?= 1
TORCH_VERSION := 2.13.0

VENV_PYTHON := $(VENV)/bin/python
PIP := $(VENV_PYTHON) -m pip

ifeq ($(TORCH),cpu)
  # Linux needs the CPU-only wheel from PyTorch's index (PyPI's Linux wheel bundles CUDA);
  # macOS wheels on PyPI are CPU builds already.
  ifeq ($(shell uname -s),Darwin)
    TORCH_REQUIREMENT := torch==$(TORCH_VERSION)
    TORCH_INDEX_ARGS :=
  else
    TORCH_REQUIREMENT := torch==$(TORCH_VERSION)+cpu
    TORCH_INDEX_ARGS := --extra-index-url https://download.pytorch.org/whl/cpu
  endif
  # torch's own dependencies are pinned in the lock file (installed next), so the PyTorch index
  # is asked about torch alone.
  TORCH_INSTALL_ARGS := --no-deps $(TORCH_INDEX_ARGS)
  TORCH_LOCAL_ARGS := --no-deps
else ifeq ($(TORCH),cuda)
  TORCH_REQUIREMENT := torch==$(TORCH_VERSION)
  # With its dependencies: the CUDA build brings the nvidia-* libraries, which the lock lacks.
  TORCH_INSTALL_ARGS :=
  TORCH_LOCAL_ARGS :=
else
  $(error TORCH must be cpu or cuda, got '$(TORCH)')
endif

# The install step re-runs only when the lock file, pyproject.toml or TORCH change.
INSTALL_KEY := $(shell cat requirements/lock.txt pyproject.toml | sha256sum | cut -c1-16)-$(TORCH)
STAMP := $(VENV)/.installed-$(INSTALL_KEY)

.PHONY: test kernels book browser chromium data regenerate lock clean distclean venv

venv: $(STAMP)

$(STAMP):
	@test -x $(VENV_PYTHON) || $(PYTHON) -m venv $(VENV)
	@# Replace a torch of the other build (cpu vs cuda); `pip install` alone keeps a matching version.
	@$(VENV_PYTHON) -c "import importlib.metadata as m, sys; v = m.version('torch'); sys.exit(0 if ('+cpu' in v) == ('$(TORCH_REQUIREMENT)'.endswith('+cpu')) else 1)" 2>/dev/null \
		|| $(PIP) uninstall -y -q torch 2>/dev/null || true
	@# A wheel of that torch already on disk (pip's find-links) first, without asking any index:
	@# where PyTorch's index is unreachable, pip would otherwise retry it for minutes first.
	$(PIP) install -q --no-index $(TORCH_LOCAL_ARGS) "$(TORCH_REQUIREMENT)" 2>/dev/null \
		|| $(PIP) install -q "$(TORCH_REQUIREMENT)" $(TORCH_INSTALL_ARGS)
	$(PIP) install -q -r requirements/lock.txt
	$(PIP) install -q -e . --no-deps
	@rm -f $(VENV)/.installed-*
	@touch $@

# In tests no cell may run long: a smoke cell is seconds, and a cpu cell reads the result cache.
TEST_CELL_TIMEOUT_S := 600
# make test executes the notebooks one per core, each kernel with its share of the cores' threads.
TEST_JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1)

test: kernels
	@# The linter and the formatter first (seconds): ruff's rules and layout, pyproject's [tool.ruff].
	$(VENV_PYTHON) -m ruff check .
	$(VENV_PYTHON) -m ruff format --check .
	@# The book's tests (tests/) and the library's (tests/library), one worker process per core.
	$(VENV_PYTHON) -m pytest -q -n auto --durations=15 tests
	@# Committed results must come from a clean commit, computed by the current code version.
	$(VENV_PYTHON) -m ssa_book results validate --clean --profile cpu --profile paper
	$(VENV_PYTHON) -m ssa_book book run --profile smoke --device cpu --no-html --drafts --timeout $(TEST_CELL_TIMEOUT_S) --jobs $(TEST_JOBS)
	$(VENV_PYTHON) -m ssa_book book run --profile cpu --device cpu --require-cache --timeout $(TEST_CELL_TIMEOUT_S) --jobs $(TEST_JOBS)
	$(MAKE) browser

# The C++ kernels of ssa.kernels.native, built (or found built) before the tests: the row kernels
# and this CPU's vectorised tiles at once, one process each. Otherwise the first tests to use them
# build one after the other while the other test workers wait on the build lock. Where they
# cannot be built, a warning says why and the tests that need them skip, as without this step.
kernels: $(STAMP)
	$(VENV_PYTHON) -c "from ssa.kernels import native; native.cpu_kernels()" & rows=$$!; \
		$(VENV_PYTHON) -c "from ssa.kernels import native; native.vector_tile_kernels()"; tiles=$$?; \
		wait $$rows && test $$tiles = 0

# The built book in a real browser: Debian's chromium, driven by Playwright (tests/test_browser.py).
# The front page's screenshot is kept in _build/artifacts/front-page.png.
CHROMIUM ?= /usr/bin/chromium

chromium:
	@test -x $(CHROMIUM) || { echo "installing Debian's chromium (needs root)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

browser: $(STAMP) chromium
	SSA_BOOK_HTML=_build/html SSA_BOOK_ARTIFACTS=_build/artifacts SSA_CHROMIUM=$(CHROMIUM) \
		$(VENV_PYTHON) -m pytest -q tests/test_browser.py

book: $(STAMP)
	$(VENV_PYTHON) -m ssa_book book run --profile $(PROFILE) --device $(DEVICE)

data: $(STAMP)
	$(VENV_PYTHON) -m ssa_book data fetch

regenerate: $(STAMP)
	$(VENV_PYTHON) -m ssa_book regenerate $(CHAPTER) --profile $(PROFILE) --device $(DEVICE) --jobs $(JOBS)

lock: $(STAMP)
	{ echo '# Exact versions that make installs: pip freeze of a working .venv, rewritten by make lock.'; \
	  echo '# torch is installed first by the Makefile, as the CPU or CUDA build of this version (TORCH=cpu|cuda).'; \
	  $(PIP) freeze --exclude-editable --exclude ssa-book | sed 's/^torch==.*/torch==$(TORCH_VERSION)/'; \
	} > requirements/lock.txt.tmp && mv requirements/lock.txt.tmp requirements/lock.txt

clean:
	rm -rf _build results/smoke .pytest_cache .hypothesis

distclean: clean
	rm -rf $(VENV) data
