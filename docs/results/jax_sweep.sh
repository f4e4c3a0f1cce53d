#!/usr/bin/env bash
# Regenerate docs/results/jax_sweep.jsonl (a sweep of every gymnax and Jumanji environment)
# and the generated section of docs/jax_sweep.md, from the repository root or anywhere:
#
#     bash docs/results/jax_sweep.sh
#
# The old results are moved aside to jax_sweep.jsonl.old (their seconds order the new sweep:
# the longest first) and removed at the end. Stopped at any point (Ctrl-C, kill -9) and run
# again, it resumes: the sweeps check only the environments the new file lacks.
set -euo pipefail
cd "$(dirname "$0")/../.."
results=docs/results/jax_sweep.jsonl
if [ ! -e "$results.old" ] && [ -e "$results" ]; then
    mv "$results" "$results.old"
fi
estimates=()
if [ -e "$results.old" ]; then
    estimates=(--estimates "$results.old")
fi
# exit status 1 or 2: an environment failed or could not be checked, which the page reports
spacealg check 'gymnax:*' -n 5 --max-steps 50 --budget 60 -j 2 --results "$results" "${estimates[@]}" || true
spacealg check 'jumanji:*' -n 2 --max-steps 20 --budget 30 -j 2 --results "$results" "${estimates[@]}" || true
written=$(spacealg report "$results" --write docs/jax_sweep.md) || true
echo "$written"
[[ $written == "docs/jax_sweep.md: "* ]]
rm -f "$results.old"
