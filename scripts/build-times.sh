#!/usr/bin/env bash
# The README's "How long it takes": a fresh clone of HEAD in a temporary
# folder, with a target folder of its own, built and tested as the README
# says, one command after the other; prints each one's wall time and CPU
# time, and which packages the second command compiled (only slotcheck's
# test targets when the two builds share their features). With --nightly,
# also the nightly guard's run of every scenario (an hour or more).
#
# The README's block is `<!-- timing, big: scripts/build-times.sh -->`:
# `scripts/readme.sh --big --page README.md` refreshes it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
nightly=0
case "${1:-}" in
  "") ;;
  --nightly) nightly=1 ;;
  *) echo "usage: scripts/build-times.sh [--nightly]" >&2; exit 2 ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slotcheck-build-times-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
git clone -q --no-hardlinks . "$tmp/clone"
cd "$tmp/clone"
export CARGO_TARGET_DIR="$tmp/target" CARGO_TERM_COLOR=never
# As a new user runs them: none of our own switches inherited. Run from
# `scripts/readme.sh --big`, the clone's README test would otherwise see
# SLOTCHECK_README_BIG and run this script again, inside itself, for ever.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^SLOTCHECK_' || true)

# step NAME COMMAND...: runs it, its output in $tmp/out, and prints a line.
step() {
  local name=$1
  shift
  if ! /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" >"$tmp/out" 2>&1; then
    tail -40 "$tmp/out" >&2
    echo "build-times: $name failed" >&2
    exit 1
  fi
  read -r wall user sys <"$tmp/time"
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" \
    'BEGIN { printf "%-44s %6.1f min wall %6.1f CPU-min\n", n, w / 60, (u + s) / 60 }'
}

echo "on $(nproc) cores, from a fresh clone with an empty target folder:"
# Each package compiled, as name and version (a dev-dependency may be
# another version of a crate the binary uses, compiled for the tests only).
compiled() { sed -n 's/^ *Compiling \([^ ]*\) \(v[^ ]*\).*/\1 \2/p' "$1" | sort -u; }
step "cargo run --release -- compare" cargo run --release --locked -- compare
compiled "$tmp/out" >"$tmp/first"
step "cargo test --release --no-run (then)" cargo test --release --locked --no-run
compiled "$tmp/out" >"$tmp/second"
# Our own packages are compiled again as test targets; any other package
# the first command built, compiled again, is a rebuild the two builds'
# features caused.
ours='^slotcheck(-models|-sql|-nats)? '
again=$(comm -12 "$tmp/first" "$tmp/second" | { grep -Ev "$ours" || true; } | tr '\n' ' ')
tests_only=$(comm -13 "$tmp/first" "$tmp/second" | { grep -Ev "$ours" || true; } | wc -l)
echo "  it compiled our packages' test targets, $tests_only packages only the tests use,"
echo "  and again of what the first built: ${again:-nothing}"
step "cargo test --release (the tests run)" cargo test --release --locked
if [ "$nightly" = 1 ]; then
  step "the nightly guard (check --threads 2)" \
    "$CARGO_TARGET_DIR/release/slotcheck" check --threads 2 --regressions-only
fi
