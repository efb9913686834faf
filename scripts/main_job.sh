#!/usr/bin/env bash
# The main job on the embedded default (SQLite + bubblewrap target services, no GPU, no API key):
# the offline scripted interpreters on a seeded sample of find-gen numeric, string, entity and
# relation targets, scored by the evaluator, then ONE report in FIND's Table 2 layout for all of
# them, with the interpolation floor and the judge ceiling next to chance. The numeric targets
# are also run by `scripted-numeric-code` in protocol mode `code` (the same samples taken in one
# lab cell; docs/code-mode.md), reported beside the text baseline with the same counts.
#
# Model server: the project's own (SmolLM2-135M, `python -m interp_harness.model_services.backbone`) is started
# on a free loopback port and stopped on exit, unless the ones named below answer:
#   HARNESS_BACKBONE_URL  the entity/relation targets' backbone (reused when /health answers)
#   HARNESS_JUDGE_URL     the unit-test judge, e.g. vicuna-evaluator on vLLM (reused when
#                         GET {url}/models answers; HARNESS_JUDGE_MODEL etc. are then yours)
# On the project's server the judge runs in forced-choice mode (docs/evaluator.md).
# Sample sizes: MAIN_JOB_N (numeric, strings; default 10), MAIN_JOB_WORDS_N (entities,
# relations; default 4). Targets' per-call limit: HARNESS_SERVICE_CALL_TIMEOUT_S (default here
# 120 s, the service's own default is 10 s: 16 words through SmolLM2 on a busy CPU need more) and
# HARNESS_BACKBONE_TIMEOUT (one backbone request, default here 110 s) and
# HARNESS_BACKBONE_RELATION_MAX_TOKENS (default here 16, else 48); with the project's server as
# judge, HARNESS_JUDGE_CEILING_TESTS (default here 5, else all). Operator settings only.
set -euo pipefail
export HARNESS_HOME="${HARNESS_HOME:-$PWD/.harness}"
# reference data (FIND's entity/relation concepts and unit tests): a local copy when there is one
# (../shared/data, as the test command uses), else the cache `harness data fetch` fills
if [[ -z "${HARNESS_DATA_DIR:-}" && -d ../shared/data ]]; then export HARNESS_DATA_DIR="$(cd ../shared/data && pwd)"; fi
export COLUMNS="${COLUMNS:-200}"  # wide enough for the report tables when not on a terminal
export HARNESS_SERVICE_CALL_TIMEOUT_S="${HARNESS_SERVICE_CALL_TIMEOUT_S:-120}"
export HARNESS_BACKBONE_TIMEOUT="${HARNESS_BACKBONE_TIMEOUT:-110}"  # one backbone request
# relation replies: SmolLM2 writes on to the limit (48 tokens) where Vicuna answers a word; the
# reply's first words are what the agent reads. 16 cuts the relation probes' generation by 3x.
export HARNESS_BACKBONE_RELATION_MAX_TOKENS="${HARNESS_BACKBONE_RELATION_MAX_TOKENS:-16}"
N="${MAIN_JOB_N:-10}"
WORDS_N="${MAIN_JOB_WORDS_N:-4}"
mkdir -p "$HARNESS_HOME"
t0=$(date +%s)

answers() {  # URL PATH: true when GET URL/PATH answers 200 within 5 s
  python3 - "$1" "$2" <<'PY'
import sys, httpx
try:
    ok = httpx.get(sys.argv[1].rstrip("/") + sys.argv[2], timeout=5).status_code == 200
except httpx.HTTPError:
    ok = False
sys.exit(0 if ok else 1)
PY
}

server_pid=""
pids=()  # the family runs under way
kill_tree() {  # PID and every process under it
  local c
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done
  kill -TERM "$1" 2>/dev/null || true
}
stop_server() {
  for pid in "${pids[@]}"; do kill_tree "$pid"; done
  [[ -n "$server_pid" ]] || return 0
  kill "$server_pid" 2>/dev/null || true
  # a busy server finishes its queue before it exits on TERM: give it 10 s, then kill it
  for _ in $(seq 1 20); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}
trap stop_server EXIT
trap 'stop_server; exit 143' INT TERM  # an interrupted job stops its server (and runs) too

run_family() {  # AGENT FAMILY N [OPTION...]: runs it, prints its run id (timing on stderr)
  local t id
  t=$(date +%s)
  # a run whose episodes all ended in error exits 1 but still reports: keep going, show it
  id=$( (harness run --agent "$1" --dataset find-gen --family "$2" --limit "$3" --seed 0 \
    "${@:4}" --json || true) | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  echo "$2 ($1): run $id ($(( $(date +%s) - t )) s)" >&2
  echo "$id"
}

# Numeric targets need no model server: their runs start now, while the server loads (the code
# run without a floor of its own: the text run's is the same floor on the same targets).
run_family scripted-numeric numeric "$N" >"$HARNESS_HOME/main-job-numeric.id" &
pids=($!)
run_family scripted-numeric-code numeric "$N" --mode code --no-floor \
  >"$HARNESS_HOME/main-job-numeric-code.id" &
pids+=($!)

own_url=""
start_server() {
  local port log
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  log="$HARNESS_HOME/model-server.log"
  echo "starting the project's model server on 127.0.0.1:$port (log: $log)" >&2
  python3 -m interp_harness.model_services.backbone --port "$port" >"$log" 2>&1 &
  server_pid=$!
  own_url="http://127.0.0.1:$port"
  for _ in $(seq 1 600); do
    if answers "$own_url" /health; then return 0; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then echo "the model server exited:" >&2; tail -20 "$log" >&2; exit 1; fi
    sleep 1
  done
  echo "the model server did not start in 600 s" >&2; exit 1
}

if [[ -n "${HARNESS_BACKBONE_URL:-}" ]] && answers "$HARNESS_BACKBONE_URL" /health; then
  echo "backbone: reusing $HARNESS_BACKBONE_URL" >&2
else
  start_server
  export HARNESS_BACKBONE_URL="$own_url"
fi
if [[ -n "${HARNESS_JUDGE_URL:-}" ]] && answers "$HARNESS_JUDGE_URL" /models; then
  echo "judge: $HARNESS_JUDGE_URL (yours)" >&2
else
  base="${HARNESS_BACKBONE_URL%/}"; base="${base%/v1}"
  if [[ -z "$own_url" ]] && ! answers "$base" /v1/models; then start_server; base="$own_url"; fi
  export HARNESS_JUDGE_PROVIDER=openai-compatible HARNESS_JUDGE_URL="$base/v1"
  HARNESS_JUDGE_MODEL=$(python3 -c 'import httpx, sys; print(httpx.get(sys.argv[1] + "/models", timeout=10).json()["data"][0]["id"])' "$HARNESS_JUDGE_URL")
  export HARNESS_JUDGE_MODEL
  # episodes' batches queue on one small CPU server: a 60 s read timeout expired for 8 of 10
  # string episodes here (loaded machine); retrying would only queue the same work again
  export HARNESS_JUDGE_TIMEOUT_S="${HARNESS_JUDGE_TIMEOUT_S:-900}" HARNESS_JUDGE_MAX_RETRIES="${HARNESS_JUDGE_MAX_RETRIES:-0}"
  # the ceiling on 5 of each target's 10 unit tests: 90 triplets still tell a judge at chance
  # from a useful one, and the ground truth's triplets were half of this server's judge work
  export HARNESS_JUDGE_CEILING_TESTS="${HARNESS_JUDGE_CEILING_TESTS:-5}"
  echo "judge: the project's model server at $HARNESS_JUDGE_URL ($HARNESS_JUDGE_MODEL; ceiling on $HARNESS_JUDGE_CEILING_TESTS unit tests per target)" >&2
fi

# The other three share the one model server and run side by side: the server batches their
# requests, and their start-up and agent work overlap its compute (319-326 s one after another,
# 287 s side by side, same hour). Side by side they once queued until the judge timed out: the
# sandbox's forwarder cut every reply slower than 30 s and the retries piled up (fixed).
for spec in "scripted-strings strings $N" "scripted-entities entities $WORDS_N" \
            "scripted-relations relations $WORDS_N"; do
  set -- $spec
  run_family "$@" >"$HARNESS_HOME/main-job-$2.id" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done; pids=()
runs=()
for f in numeric numeric-code strings entities relations; do
  runs+=("$(cat "$HARNESS_HOME/main-job-$f.id")")
done
harness report "${runs[@]}"  # one report of the five runs, with the numeric floor
echo "main job: $(( $(date +%s) - t0 )) s wall (runs: ${runs[*]})" >&2
