#!/usr/bin/env bash
# The intervention service's device check on a bare GPU machine (docs/intervention.md, "On a GPU"):
# installs what torch and transformers do not bring from the carried wheelhouse, then runs
# benchmarks/device_check.py, which prints one line of figures per step and writes
# OUT_DIR/device_check.json.
#   bash scripts/device_check.sh OUT_DIR [benchmarks/device_check.py options]
# Needs python3 with torch (CUDA) and transformers, and .device/wheelhouse beside this checkout
# (built where the package registry is: bash scripts/device_wheelhouse.sh). No registry, no hub.
# DEVICE_CHECK_SECONDS: the whole run's limit (default 450); DEVICE_CHECK_PYTHON: the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/device_check.sh OUT_DIR [device_check.py options]}"
shift
mkdir -p "$out"
total="${DEVICE_CHECK_SECONDS:-450}"
py="${DEVICE_CHECK_PYTHON:-python3}"
site="$PWD/.device/site"
start=$SECONDS

# a run that cannot start still leaves its result file, saying why
fail() {
  "$py" - "$out/device_check.json" "$1" "$out/install.json" <<'PY'
import json, pathlib, sys
path, why, report = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
doc = {"schema": 1, "status": "not run", "cause": why, "steps": []}
if report.is_file():
    doc["install"] = json.loads(report.read_text())
pathlib.Path(path).write_text(json.dumps(doc, indent=1) + "\n")
PY
  echo "device check not run: $1" >&2
  exit 1
}

[ -f .device/wheelhouse/manifest.json ] || fail "no .device/wheelhouse (bash scripts/device_wheelhouse.sh, then carry it)"
rm -rf "$site"
timeout 120 "$py" benchmarks/device_wheelhouse.py install --wheelhouse .device/wheelhouse \
  --target "$site" --report "$out/install.json"
rc=$?
[ $rc -eq 0 ] || fail "installing the wheelhouse failed (exit $rc; $out/install.json)"

left=$((total - (SECONDS - start)))
export PYTHONPATH="$site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
# the script keeps 30 s in hand for its last write; timeout is the backstop for a hang
timeout --kill-after=10 $((left - 5)) "$py" benchmarks/device_check.py --out "$out" \
  --budget-s $((left - 30)) --install-report "$out/install.json" "$@"
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  "$py" - "$out/device_check.json" <<'PY'
import json, pathlib, sys
p = pathlib.Path(sys.argv[1])
doc = json.loads(p.read_text()) if p.is_file() else {"schema": 1, "steps": []}
doc["status"] = "killed: over the run's time limit (the steps listed are those it finished)"
p.write_text(json.dumps(doc, indent=1) + "\n")
PY
fi
exit $rc
