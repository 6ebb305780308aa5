#!/usr/bin/env bash
# Regenerates the generated parts of README.md and of every page of the book
# under docs/ from the release binary: each block between a
# `<!-- generated: COMMAND -->`, `<!-- timing: COMMAND -->` or
# `<!-- counts: COMMAND -->` marker and `<!-- end -->` becomes what COMMAND
# prints now, and each `<!-- generated verdicts -->` table gets its verdicts
# column refilled. `cargo test` checks the fast parts (times masked; a live
# run's counts too) and fails with a diff when they differ; the slow parts
# and the times are refreshed only here.
#
#   scripts/readme.sh            rewrite every part that changed, slow ones too
#                                (not the big ones: see --big)
#   scripts/readme.sh --fast     the same, leaving the slow parts
#   scripts/readme.sh --timings  also refresh the times of timing blocks whose
#                                other figures did not change
#   scripts/readme.sh --check    rewrite nothing; fail with a diff if any part,
#                                slow ones included, big ones not, differs
#                                (the nightly run)
#   scripts/readme.sh --big      with either: the big parts too (most of an
#                                hour each, several GB)
#   scripts/readme.sh --page P   with any: only page P (README.md, docs/x.md)
#
# The work is done by tests/readme.rs (one parser and one runner for the test
# and for this script); this script only chooses its mode. Times come from the
# machine that runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=write
timings=keep
big=0
page=""
while [ $# -gt 0 ]; do
  arg="$1"
  shift
  case "$arg" in
    --page) page="${1:?--page needs a page}"; shift ;;
    --fast) mode=write-fast ;;
    --timings) timings=refresh ;;
    --check) mode=check-all ;;
    --big) big=1 ;;
    *) echo "usage: scripts/readme.sh [--fast] [--timings] [--big] [--page P] | --check [--big] [--page P]" >&2; exit 2 ;;
  esac
done

SLOTCHECK_README=$mode SLOTCHECK_README_TIMINGS=$timings SLOTCHECK_README_BIG=$big SLOTCHECK_README_PAGE=$page \
  cargo test --release --test model \
  readme::every_generated_part_of_the_readme_is_what_its_command_prints -- --exact --nocapture
