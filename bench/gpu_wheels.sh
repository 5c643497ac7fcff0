#!/usr/bin/env bash
# bench/gpu_wheels.sh -- the wheels bench/gpu_check.sh installs on a GPU machine that has no network: tinygrad (pinned) and
# uopcheck itself (the conformance subset needs no z3), for that machine's Python 3.12, into .whl/ (ignored by git: `echo /.whl/ >> .git/info/exclude`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
  tinygrad==0.14.0
rm -f .whl/uopcheck-*.whl
$PY -m pip wheel -q --no-deps . -w .whl
ls -la .whl
