#!/usr/bin/env bash
# The whole test suite. Reference data comes from ../shared/data unless HARNESS_DATA_DIR says otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
export HARNESS_DATA_DIR="${HARNESS_DATA_DIR:-$(cd .. && pwd)/shared/data}"
python3 -m pytest -q -rs "$@"
rc=$?
if [ $rc -eq 5 ]; then echo "no tests collected: failing" >&2; exit 1; fi
exit $rc
