#!/usr/bin/env bash
# The whole test suite. Reference data comes from ../shared/data unless HARNESS_DATA_DIR says otherwise.
#   bash scripts/test.sh                 the whole suite (what CI runs)
#   bash scripts/test.sh --quick         the development loop: no slow, Docker or model-server tests
#   bash scripts/test.sh tests/some/file.py -k name     any pytest arguments
# HARNESS_TEST_WORKERS: pytest-xdist workers (default: one per core; 0 runs in this one process).
# Workers share the session's model servers (tests/support/shared_services.py); tests that share an
# expensive build or one server's sinks stay on one worker (--dist loadgroup).
set -uo pipefail
cd "$(dirname "$0")/.."
export HARNESS_DATA_DIR="${HARNESS_DATA_DIR:-$(cd .. && pwd)/shared/data}"
args=()
for a in "$@"; do
  if [ "$a" = "--quick" ]; then args+=(-m "not slow and not docker and not model_server"); else args+=("$a"); fi
done
workers="${HARNESS_TEST_WORKERS:-$(nproc)}"
parallel=()
if [ "$workers" != "0" ]; then parallel=(-n "$workers" --dist loadgroup); fi
python3 -m pytest -q -rs --durations=30 "${parallel[@]}" "${args[@]}"
rc=$?
if [ $rc -eq 5 ]; then echo "no tests collected: failing" >&2; exit 1; fi
exit $rc
