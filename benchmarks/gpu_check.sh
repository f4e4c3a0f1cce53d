#!/usr/bin/env bash
# The device check of a session lent a GPU, in one call: the backend benchmark on CUDA (this
# checkout, then each BASE folder holding an older spacealg/ package, with this checkout's
# benchmark script), then the backend, adapter and JAX-env tests with JAX on the GPU.
# Output goes to $OUT (or ./gpu_out).
#
#   Here, once: fill .whl with the wheels the GPU image lacks (gymnasium, farama-notifications,
#   array-api-compat, torchrl, tensordict, pyvers, hoptorch, orjson, importlib_metadata, gymnax;
#   python 3.12, manylinux x86_64, --no-deps; see the device README), and put older packages in
#   .base/<name>/spacealg (git archive <commit> spacealg | tar -x -C .base/<name>).
#   There:      bash benchmarks/gpu_check.sh [.base/<name>[:SIZES] ...]     (carry .whl and .base)
#   Variables:  SIZES (default "4096 65536 1000000"), BENCH_TIMEOUT, TEST_TIMEOUT (seconds), TESTS=0 to skip them.
set -u
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
SIZES=${SIZES:-4096 65536 1000000}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
# a torchrl wheel built for another torch may fail to load: then its rows and tests are skipped
python3 -c "import torchrl.data" 2>"$OUT/torchrl_import.txt" || rm -rf /tmp/site/torchrl /tmp/site/tensordict
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch, jax, numpy; print('torch', torch.__version__, torch.cuda.get_device_name(), '| jax', jax.__version__, jax.devices(), '| numpy', numpy.__version__)" | tee -a "$OUT/gpu.txt"
bench() {  # bench NAME DIR SIZES...: this checkout's benchmark script over DIR's spacealg
  local name=$1 dir=$2; shift 2
  [ "$dir" = . ] || { mkdir -p "$dir/benchmarks"; cp benchmarks/bench_backends.py "$dir/benchmarks/"; }
  echo "== $name (N = $*)" | tee "$OUT/bench_$name.txt"
  timeout "${BENCH_TIMEOUT:-200}" python3 "$dir/benchmarks/bench_backends.py" --torchrl-limit 65536 --sizes "$@" \
    2>&1 | tee -a "$OUT/bench_$name.txt"
}
# shellcheck disable=SC2086
bench this . $SIZES
for base in "$@"; do
  dir=${base%%:*}; sizes=$SIZES; [ "$dir" = "$base" ] || sizes=${base#*:}
  # shellcheck disable=SC2086
  bench "$(basename "$dir")" "$dir" $sizes
done
[ "${TESTS:-1}" = 0 ] && exit 0
PYTHONPATH=/tmp/site:$PWD timeout "${TEST_TIMEOUT:-200}" python3 -m pytest -p no:cacheprovider -p spacealg.pytest_plugin -n 8 -q -rs \
  tests/test_backends.py tests/test_backends_devices.py tests/test_backends_exact.py tests/test_backends_plan.py \
  tests/test_masks_backends.py tests/test_adapters_jax.py tests/test_adapters_torchrl.py tests/test_check_jax_env.py \
  >"$OUT/pytest_gpu.txt" 2>&1
echo "pytest exit $?"; tail -25 "$OUT/pytest_gpu.txt"
