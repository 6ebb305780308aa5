#!/usr/bin/env bash
# Builds scripts/two-threads.c into a temporary folder and runs it: how
# much of twice one thread's work two threads do in the same time on this
# machine, for plain arithmetic and for random reads of a large table (the
# ceiling docs/checking.md sets the search's two threads against).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/slotcheck-two-threads-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/two-threads" two-threads.c
"$tmp/two-threads"
