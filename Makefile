# uopcheck: two commands do all set-up on a fresh machine.
#   make demo   venv + install + run ref vs fast on the real graphs and print the report
#   make test   venv + install + ruff check + mypy + pytest -n auto conformance/
#   make quick  the same without the tests marked slow (the edit loop; .pre-commit-config.yaml runs it)
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.uopcheck-installed

.PHONY: demo test quick lint clang browser redis amdllvm install bench train clean

# tinygrad's CPU backend shells out to clang. Debian's clang 14 can't build __bf16 kernels, so clang-19 is added when apt can.
clang:
	@command -v clang >/dev/null 2>&1 || { \
	  command -v apt-get >/dev/null 2>&1 || { echo "uopcheck: clang is missing and apt-get is not available: install clang (Debian package 'clang') by hand" >&2; exit 1; }; \
	  echo "installing clang (Debian package)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null) || \
	    { echo "uopcheck: could not install the Debian package 'clang' (need root and the Debian mirror)" >&2; exit 1; }; }
	@{ command -v clang-17 || command -v clang-18 || command -v clang-19 || command -v clang-20 || command -v clang-21; } >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 >/dev/null 2>&1 && echo "installed clang-19 (bfloat16 kernels)") || \
	  echo "note: clang-19 not installed; bfloat16 conformance cases will be skipped with a reason"; }

# headless Chromium renders the rule-coverage HTML in a test; without it that one test skips with the reason
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 && echo "installed chromium") || \
	  echo "note: chromium not installed; the rule-coverage HTML rendering test will be skipped"; }

# a real redis-server for the distributed-campaign test (shared hypothesis example database); without it that test skips
redis:
	@command -v redis-server >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>&1 && echo "installed redis-server") || \
	  echo "note: redis-server not installed; the Redis part of the distributed-campaign test will be skipped"; }

# MI350X (gfx950) in emulation: tinygrad's mock GPU compiles for the AMD target with libLLVM, and only LLVM >= 20 knows gfx950.
# Debian's libllvm22 (uopcheck finds it, or LLVM_PATH); without it the gfx950 tests skip with that reason
amdllvm:
	@ls /usr/lib/*/libLLVM-22.so >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libllvm22 >/dev/null 2>&1 && echo "installed libllvm22 (gfx950)") || \
	  echo "note: libllvm22 not installed; the emulated MI350X (gfx950) tests will be skipped"; }

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e ".[training,dev,cluster]"
	$(PY) -c "import uopcheck.ref, uopcheck.fast, uopcheck.spec, wandb, matplotlib" && touch $(STAMP)

install: clang $(STAMP)

demo: install
	@mkdir -p reports
	$(VENV)/bin/uopcheck check --json reports/demo.json
	@echo; echo "report written to reports/demo.json"

# pytest-xdist: one worker per core (bench/pytest_parallel.py measures -n 2 against -n 0)
test: install browser redis amdllvm lint
	$(PY) -m pytest conformance -q -n auto

# the edit loop (and what .pre-commit-config.yaml runs): lint, then every test not marked slow (no campaign, training run
# or wheel build in a subprocess)
quick: install lint
	$(PY) -m pytest conformance -q -n auto -m "not slow"

# ruff at tinygrad's rule selection (pyproject [tool.ruff]) and mypy (pyproject [tool.mypy]); make test runs both first
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: install
	$(PY) bench/ref_vs_fast.py

# the Llama run behind the CPU gate (tiny config, CPU-HCQ2 here); see README "Training"
train: install
	$(VENV)/bin/uopcheck train --config tiny --steps 50 --validate --out reports/train

clean:
	rm -rf $(VENV) reports *.egg-info
