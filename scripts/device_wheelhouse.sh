#!/usr/bin/env bash
# Builds .device/ for scripts/device_check.sh, here, where the package registry is: the wheels a
# bare GPU machine (torch and transformers only) needs for the intervention service, for the
# Python versions given (default 3.11 and 3.12), then checks that everything carried fits.
#   bash scripts/device_wheelhouse.sh [--python 3.11 3.12] [--budget-mib 64]
# Carry .device/wheelhouse (and .device/circuits when it exists) beside the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 benchmarks/device_wheelhouse.py build --dest .device/wheelhouse "$@"
carried=()
# the circuits family's hook: its export_weights(dest) writes the compiled models' .npz weights
if python3 -c "import interp_harness.function_store.circuits.device_check" 2>/dev/null; then
  rm -rf .device/circuits
  python3 -c "import sys, pathlib; from interp_harness.function_store.circuits.device_check import export_weights; export_weights(pathlib.Path(sys.argv[1]))" .device/circuits
  carried+=(.device/circuits)
fi
python3 benchmarks/device_wheelhouse.py check --dest .device/wheelhouse --carried "${carried[@]}"
