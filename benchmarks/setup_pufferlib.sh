#!/usr/bin/env bash
# Create benchmarks/.puffer-venv: PufferLib 2.0.2 (cp311 wheel) beside spacealg, for
# benchmarks/bench_ops.py's side-by-side emulate/nativize timings. Optional (not run in CI).
#
# PufferLib 2.0.2 pins numpy 1.x, gymnasium<=0.29.1 and gym<=0.23, so it gets its own
# virtual environment. Only the packages its emulation layer imports are installed
# (pufferlib itself with --no-deps: its full requirement list pulls in opencv, pettingzoo,
# shimmy, ...). spacealg is installed from this repository, also with --no-deps, because
# its own requirement gymnasium>=1.0 would replace 0.29.1.
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
$pip install --quiet "numpy<2" "gymnasium==0.29.1" "gym==0.23.1" psutil "multipledispatch>=0.6"
$pip install --quiet --no-deps --only-binary=:all: "pufferlib==2.0.2"
$pip install --quiet --no-deps -e "$repo"

"$venv/bin/python" - <<'EOF'
import warnings
warnings.filterwarnings("ignore")
import numpy, gymnasium, pufferlib, pufferlib.emulation, spacealg
print("puffer venv ready: pufferlib", pufferlib.__version__, "numpy", numpy.__version__,
      "gymnasium", gymnasium.__version__)
EOF
