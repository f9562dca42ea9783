#!/usr/bin/env bash
# `make demo`: the main job end to end on the offline defaults (no model configured, no network):
# registry build -> synth -> run live and synthesized -> judge -> report -> fidelity -> export-sft.
set -euo pipefail
cd "$(dirname "$0")/.."
CW=.venv/bin/cworld
export CWORLD_WORKSPACE=${CWORLD_WORKSPACE:-.cworld}
WS=$CWORLD_WORKSPACE
N_TASKS=${DEMO_TASKS:-20}
DEMO_ID=$(date +%Y%m%d-%H%M%S)   # every demo writes new folders: earlier outputs are never overwritten
RUNS="$WS/runs"
PREFIX="$RUNS/demo-$DEMO_ID"

step() { printf '\n== %s\n' "$*"; }

step "doctor"
$CW doctor --no-ping
step "registry build: start every server, validate every tool, index, dependency graph"
$CW registry build
step "search: an intent in plain words, with prerequisites"
$CW search "book a hotel room in Lisbon for next week" -k 5 --with-prereqs
step "synth: $N_TASKS long-horizon tasks with interacting constraints (offline synthesizer)"
$CW synth --n "$N_TASKS" --seed 0
step "run: three scripted agents (privileged: they follow the gold plan) and two heuristic ones (plan from the request alone), live and synthesized, policy default"
for agent in scripted:oracle scripted:noisy-0.2 scripted:no-retry heuristic:careful heuristic:thorough; do
  name=${agent//:/-}
  for mode in live synthesized; do
    $CW run --agent "$agent" --mode "$mode" --policy default --out "$PREFIX-$mode-$name" --no-progress
  done
done
step "judge: verifiable metrics (judge dimensions unscored offline)"
for run in "$PREFIX"-*; do $CW judge "$run"; done
step "fidelity: does synthesized execution rank agents as live execution does? First line: the eight non-privileged agents (an order nobody designed); then episode-by-episode agreement"
$CW fidelity experiment --limit "${DEMO_FIDELITY_TASKS:-12}" --out "$WS/fidelity/demo-$DEMO_ID" --no-progress
step "report: leaderboard with confidence intervals, personas, drill-down, fidelity"
$CW report "$PREFIX"-* --out "$WS/reports/demo-$DEMO_ID"
step "export-sft: training data from the live runs"
SFT="$WS/sft/demo-$DEMO_ID"
$CW export-sft "$PREFIX"-live-* --format openai --out "$SFT/train.openai.jsonl"
$CW export-sft "$PREFIX"-live-* --format sharegpt --first-round --out "$SFT/first_round.sharegpt.jsonl"
$CW export-sft "$PREFIX"-live-* --format hf --out "$SFT/train.hf"

cat <<DONE

demo finished. Outputs:
  tools, validation, index:  $WS/registry/
  tasks:                     $(cat "$WS/LATEST_TASKS" 2>/dev/null || echo "$WS/tasks/")
  runs (trajectories):       $PREFIX-*/trajectories.jsonl
  scores:                    $PREFIX-*/scores.jsonl
  report:                    $WS/reports/demo-$DEMO_ID/report.html  (leaderboard.md beside it)
  fidelity:                  $WS/fidelity/demo-$DEMO_ID/
  SFT data:                  $SFT/
DONE
