#!/usr/bin/env bash
# Regenerates the link traces the real-server tests replay
# (nats/tests/traces/): each finding's shortest counterexample, from the
# model, on its scenario's bounds. tests/nats_traces.rs checks that each
# still replays on the model; run this when it says they drifted.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
out=nats/tests/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
trace() { # NAME DESIGN PROPERTY BOUNDS...
  local name=$1 design=$2 property=$3
  shift 3
  ./target/release/slotcheck check --model link --design "$design" --property "$property" "$@" \
    --out "$tmp/$name" >/dev/null || true
  cp "$tmp/$name/$design-$property-check.itf.json" "$out/$name.itf.json"
}
two="--asks 2 --builders 2 --skew 0 --horizon 60 --longest-build 60 --late-heartbeats 0"
# link-before-1649-double-run: the late answer, no fault.
trace before-1649-late-answer-double-run before-1649 no-double-run $two --crashes 0
# link-heartbeat-50s-late-double-run: one heartbeat 50 s late.
trace before-1649-late-heartbeat-double-run before-1649 no-double-run \
  --asks 1 --builders 2 --skew 0 --horizon 60 --longest-build 60 --crashes 1 --late-heartbeats 1 --late-by 50
# link-check-only-loses-late-started-ask, and its double run between get and put.
trace check-only-loses-late-started-ask check-only no-lost-ask $two --crashes 1
trace check-only-get-put-double-run check-only no-double-run $two --crashes 0
# link-skew-40-loses-ask: after-1649 past its 35 s boundary.
trace after-1649-skew-40-loses-ask after-1649 no-lost-ask \
  --asks 1 --builders 2 --skew 40 --horizon 60 --longest-build 60 --crashes 1 --late-heartbeats 0
one="--asks 1 --builders 2 --skew 0 --horizon 60 --longest-build 60"
# link-check-only-skew-15-double-run: a clock 15 s ahead, no crash.
trace check-only-skew-15-double-run check-only no-double-run \
  --asks 2 --builders 2 --skew 15 --horizon 60 --longest-build 60 --crashes 0 --late-heartbeats 0
# link-heartbeat-50s-late-double-run and -loses-ask, in after-1649.
trace after-1649-late-heartbeat-double-run after-1649 no-double-run $one --crashes 1 --late-heartbeats 1 --late-by 50
trace after-1649-late-heartbeat-loses-ask after-1649 no-lost-ask $one --crashes 1 --late-heartbeats 1 --late-by 50
# link-lost-ack-rebuild: the finish's ack is not sent.
trace after-1649-lost-ack-rebuild after-1649 no-run-after-result $one --crashes 0 --late-heartbeats 0 --lost-acks 1
# link-naks-exhaust-deliveries: a crash and two naks at max_deliver 3.
trace after-1649-naks-exhaust-deliveries after-1649 no-lost-ask $one --crashes 1 --late-heartbeats 0 --naks 2
# link-slow-answer-*: an answer later than after-1649's margin.
for property in double-run lost-ask run-after-result; do
  name=${property/lost-ask/loses-ask}
  trace "after-1649-slow-answer-$name" after-1649 "no-$property" $two --crashes 1 --slow-answers 1
done
# link-after-1649-ack-wait-15-drops: an ack wait under the freshness window.
trace after-1649-ack-wait-15-run-after-result after-1649 no-run-after-result \
  --asks 2 --builders 2 --skew 0 --horizon 75 --longest-build 75 --crashes 0 --late-heartbeats 1 --late-by 10 --ack-wait 15
# The recommendation, after-1649-repaired, on the server: its two findings
# (the heartbeat 50 s late, the naks that exhaust the deliveries).
trace after-1649-repaired-late-heartbeat-double-run after-1649-repaired no-double-run $one --crashes 1 --late-heartbeats 1 --late-by 50
trace after-1649-repaired-naks-exhaust-deliveries after-1649-repaired no-lost-ask $one --crashes 1 --late-heartbeats 0 --naks 2
# link-rewind-*: nats-server 2.9's failed redelivery, which the replay
# steers (a pull request expired when the consumer takes the redelivery).
trace after-1649-rewind-rebuild after-1649 no-run-after-result $two --crashes 1 --rewinds 1
trace after-1649-rewind-skew-35-double-run after-1649 no-double-run \
  --asks 2 --builders 2 --skew 35 --horizon 60 --longest-build 60 --late-heartbeats 0 --crashes 1 --rewinds 1
trace after-1649-rewind-nak-double-run after-1649 no-double-run $two --crashes 0 --naks 1 --rewinds 1
ls "$out"
