#!/usr/bin/env bash
# `make demo`: the main job end to end on the offline defaults. Grows as parts land.
set -euo pipefail
cd "$(dirname "$0")/.."
CW=.venv/bin/cworld
export CWORLD_WORKSPACE=${CWORLD_WORKSPACE:-.cworld/demo}
echo "== cworld doctor"
$CW doctor --no-ping
echo "== sandbox apps"
$CW sandbox list
echo "demo finished; workspace: $CWORLD_WORKSPACE"
