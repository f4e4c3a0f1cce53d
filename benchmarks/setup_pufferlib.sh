#!/usr/bin/env bash
# Create benchmarks/.puffer-venv: PufferLib 2.0.2 (cp311 wheel) beside spacealg, for
# benchmarks/bench_ops.py's side-by-side emulate/nativize timings. Optional (not run in CI).
#
# PufferLib 2.0.2's cp311 wheel is a Cython build against numpy 1.x, so it gets its own
# virtual environment with numpy<2. pufferlib itself is installed with --no-deps (its full
# requirement list pins opencv, pettingzoo, shimmy, ...): its emulation layer needs only
# numpy, gym and gymnasium. Its metadata also pins gymnasium<=0.29.1 and gym<=0.23, but
# spacealg cannot import under those (it needs gymnasium>=1.0 for OneOf, Discrete dtypes and
# MultiDiscrete starts, and its Gym adapters target gym 0.26), while PufferLib's emulation runs
# unchanged on gymnasium 1.x and gym 0.26: so both live in one interpreter, as the benchmark
# needs, with gymnasium>=1.0 and gym==0.26.2. spacealg is installed from this repository.
#
# Usage: bash benchmarks/setup_pufferlib.sh [python3.11]
#        benchmarks/.puffer-venv/bin/python benchmarks/bench_ops.py
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
venv="$here/.puffer-venv"
python="${1:-python3.11}"

if ! "$python" -c 'import sys; assert sys.version_info[:2] == (3, 11)' 2>/dev/null; then
    echo "setup_pufferlib.sh: needs CPython 3.11 (the pufferlib 2.0.2 wheel is cp311); got $python" >&2
    exit 1
fi

"$python" -m venv "$venv"
pip="$venv/bin/python -m pip"
$pip install --quiet --upgrade pip
$pip install --quiet "numpy<2" "gymnasium>=1.0" "gym==0.26.2" psutil "multipledispatch>=0.6"
$pip install --quiet --no-deps --only-binary=:all: "pufferlib==2.0.2"
$pip install --quiet --no-deps -e "$repo"

"$venv/bin/python" - <<'EOF'
import warnings
warnings.filterwarnings("ignore")
import numpy, gymnasium, pufferlib, pufferlib.emulation, spacealg, spacealg.emulation
print("puffer venv ready: pufferlib", pufferlib.__version__, "numpy", numpy.__version__,
      "gymnasium", gymnasium.__version__, "spacealg", spacealg.__version__)
EOF
