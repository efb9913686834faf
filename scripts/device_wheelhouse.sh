#!/usr/bin/env bash
# Builds .device/ for scripts/device_check.sh, here, where the package registry is: the wheels a
# bare GPU machine (torch and transformers only) needs for the intervention service, for the
# Python versions given (default 3.11 and 3.12), then checks that everything carried fits.
#   bash scripts/device_wheelhouse.sh [--python 3.11 3.12] [--budget-mib 64]
# Carry .device/wheelhouse and .device/circuits (when built) beside the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 benchmarks/device_wheelhouse.py build --dest .device/wheelhouse "$@"
carried=()
# the circuits family's compiled models: 12 targets' .npz weights (a few MiB), built by the
# family's own build into a scratch cache and copied for the device check's circuits step
rm -rf .device/circuits
if python3 -c "import interp_harness.function_store.circuits.build" 2>/dev/null; then
  scratch="$(mktemp -d)"
  HARNESS_CACHE_DIR="$scratch" python3 -c "from interp_harness.function_store.circuits.build import BuildOptions, build; build(BuildOptions(gen_count=2))"
  mkdir -p .device/circuits
  find "$scratch" -name '*.npz' -exec cp {} .device/circuits/ \;
  rm -rf "$scratch"
  carried+=(.device/circuits)
  echo "circuits: $(ls .device/circuits | wc -l) .npz weights in .device/circuits ($(du -sh .device/circuits | cut -f1))"
else
  echo "circuits family not landed: no weights carried"
fi
python3 benchmarks/device_wheelhouse.py check --dest .device/wheelhouse --carried "${carried[@]}"
