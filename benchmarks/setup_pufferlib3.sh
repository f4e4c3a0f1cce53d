#!/usr/bin/env bash
# Create benchmarks/.puffer3-venv: PufferLib 3.0.0 built from its source distribution, beside
# this checkout's spacealg (for tests/test_vector_pufferlib.py and benchmarks/bench_vector.py).
# Optional (not run in CI).
#
# PufferLib 3.0.0 is on PyPI only as an sdist whose setup.py (a) downloads raylib and box2d
# from GitHub at build time unless NO_OCEAN=1, and (b) under NO_OCEAN=1 fails with
# "NameError: name 'c_extension_paths' is not defined". Its pufferlib.vector, emulation and
# pufferlib.pufferlib are pure Python, so we build without the Ocean C environments
# (NO_OCEAN=1) and without the torch extension (NO_TRAIN=1), after defining the missing name.
# Its metadata pins numpy<2 and gymnasium<=0.29.1; pufferlib.vector runs on the numpy 2 and
# gymnasium 1.x spacealg needs, so it is installed with --no-deps into a venv that sees the
# system's packages (numpy, gymnasium, torch, psutil).
#
# Usage: bash benchmarks/setup_pufferlib3.sh
#        benchmarks/.puffer3-venv/bin/python -m pytest tests/test_vector_pufferlib.py
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.puffer3-venv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv --system-site-packages "$venv"
pip="$venv/bin/python -m pip"
$pip install --quiet cython setuptools wheel psutil
# pip download builds the sdist's metadata, which fails here (setup.py's downloads or its
# NameError); --no-clean keeps the unpacked source under TMPDIR, which is all we need.
TMPDIR="$work" $pip download --quiet --no-clean --no-deps --no-build-isolation pufferlib==3.0.0 -d "$work" \
    >/dev/null 2>&1 || true
src="$(dirname "$(find "$work" -path '*pufferlib_*/setup.py' | head -1)")"
if [ ! -f "$src/setup.py" ]; then
    echo "setup_pufferlib3.sh: could not fetch pufferlib 3.0.0's source distribution" >&2
    exit 1
fi
sed -i 's/^c_extensions = \[\]$/c_extensions = []\nc_extension_paths = []/' "$src/setup.py"
(cd "$src" && NO_OCEAN=1 NO_TRAIN=1 "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps .)
(cd "$here" && "$venv/bin/python" -c 'import pufferlib, pufferlib.vector; print("pufferlib", pufferlib.__version__, "ready")')
