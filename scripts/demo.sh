#!/usr/bin/env bash
# `make demo`: the main job end to end on the offline defaults (no model configured, no network):
# registry build -> synth -> run live and synthesized -> judge -> fidelity -> report -> export-sft.
# Each step prints one line (what it did, its key number, its time); its whole output goes to a log in
# $WS/logs/demo-$DEMO_ID/. A failing step prints the tail of its log and the demo stops with its exit code.
# The closing block (`cworld demo-summary`) gives the headline figures, read from the JSON the steps wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
CW=${DEMO_CWORLD:-.venv/bin/cworld}   # another cworld executable (the tests give a stand-in)
export CWORLD_WORKSPACE=${CWORLD_WORKSPACE:-.cworld}
WS=$CWORLD_WORKSPACE
N_TASKS=${DEMO_TASKS:-20}
N_FIDELITY=${DEMO_FIDELITY_TASKS:-12}
DEMO_ID=$(date +%Y%m%d-%H%M%S)   # every demo writes new folders: earlier outputs are never overwritten
PREFIX="$WS/runs/demo-$DEMO_ID"
LOGS="$WS/logs/demo-$DEMO_ID"
SFT="$WS/sft/demo-$DEMO_ID"
AGENTS=(scripted:oracle scripted:noisy-0.2 scripted:no-retry heuristic:careful heuristic:thorough)

for pair in "DEMO_TASKS=$N_TASKS" "DEMO_FIDELITY_TASKS=$N_FIDELITY"; do
  [[ ${pair#*=} =~ ^[1-9][0-9]*$ ]] || { echo "demo: ${pair%%=*} must be a whole number above 0, not '${pair#*=}'" >&2; exit 2; }
done
mkdir -p "$LOGS"

T0=$SECONDS
# quietly LOG CMD...: CMD with all its output appended to LOG; when it fails, the end of LOG and its exit code.
quietly() {
  local log=$1 rc=0
  shift
  "$@" >>"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    {
      printf 'FAILED (exit %d): %s\n' "$rc" "$*"
      printf 'the last lines of %s:\n' "$log"
      tail -n 25 "$log" | sed 's/^/  | /'
    } >&2
    exit "$rc"
  fi
}
# done_step NAME WHAT: the step's one line, with the seconds since the previous step ended.
done_step() {
  printf '%-12s %4ss  %s\n' "$1" $((SECONDS - T0)) "$2"
  T0=$SECONDS
}
records() { cat "$@" 2>/dev/null | grep -c . || true; }

echo "cworld demo $DEMO_ID: each step's whole output is in $LOGS/<step>.log"
quietly "$LOGS/doctor.log" "$CW" doctor --no-ping
done_step doctor "environment, packages and real servers checked"
quietly "$LOGS/registry.log" "$CW" registry build
done_step registry "$(records "$WS/registry/tools.jsonl") tools: every server started, every tool validated, indexed, dependency graph"
QUERY="book a hotel room in Lisbon for next week"
quietly "$LOGS/search.log" "$CW" search "$QUERY" -k 5 --with-prereqs
done_step search "top 5 tools for '$QUERY', with the tools to run first"
quietly "$LOGS/synth.log" "$CW" synth --n "$N_TASKS" --seed 0
TASKS=$(cat "$WS/LATEST_TASKS")
done_step synth "$(records "$TASKS") long-horizon tasks with interacting constraints (offline synthesizer)"
for agent in "${AGENTS[@]}"; do
  name=${agent//:/-}
  for mode in live synthesized; do
    quietly "$LOGS/run-$name.log" "$CW" run --agent "$agent" --mode "$mode" --policy default \
      --out "$PREFIX-$mode-$name" --no-progress
  done
  done_step run "$agent, live and synthesized: $(records "$PREFIX"-*-"$name"/trajectories.jsonl) episodes (run-$name.log)"
done
quietly "$LOGS/judge.log" "$CW" judge "$PREFIX"-*
done_step judge "$(records "$PREFIX"-*/scores.jsonl) episodes scored on the verifiable metrics (no judge model offline)"
quietly "$LOGS/fidelity.log" "$CW" fidelity experiment --limit "$N_FIDELITY" --out "$WS/fidelity/demo-$DEMO_ID" --no-progress
done_step fidelity "the experiment's agents on $N_FIDELITY tasks, live and synthesized: do both rank them alike?"
quietly "$LOGS/report.log" "$CW" report "$PREFIX"-* --out "$WS/reports/demo-$DEMO_ID"
done_step report "leaderboard with confidence intervals, personas, drill-down, fidelity"
quietly "$LOGS/export-sft.log" "$CW" export-sft "$PREFIX"-live-* --format openai --out "$SFT/train.openai.jsonl"
quietly "$LOGS/export-sft.log" "$CW" export-sft "$PREFIX"-live-* --format sharegpt --first-round --out "$SFT/first_round.sharegpt.jsonl"
quietly "$LOGS/export-sft.log" "$CW" export-sft "$PREFIX"-live-* --format hf --out "$SFT/train.hf"
done_step export-sft "training data from the live runs: OpenAI, ShareGPT (first round) and HF datasets"

echo
quietly "$LOGS/summary.log" "$CW" demo-summary "$PREFIX"-* --tasks "$TASKS" --fidelity "$WS/fidelity/demo-$DEMO_ID" \
  --report "$WS/reports/demo-$DEMO_ID" --sft "$SFT"
cat "$LOGS/summary.log"
