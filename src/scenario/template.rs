//! `slotcheck scenario new ID`: a commented template.

use super::*;
use crate::report::itf;
use std::path::{Path, PathBuf};

/// Writes the template for `id` to `dir/ID.toml`, never over an existing file.
pub fn write_template(id: &str, dir: &Path) -> Result<PathBuf, String> {
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "`{id}` is not an ID: use letters, digits, `-`, `_` and `.`"
        ));
    }
    let path = dir.join(format!("{id}.toml"));
    if path.exists() {
        return Err(format!(
            "{}: already exists; not overwritten",
            path.display()
        ));
    }
    itf::write_atomically(&path, template(id).as_bytes())
        .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(path)
}

/// A commented template for `slotcheck scenario new ID`.
pub fn template(id: &str) -> String {
    format!(
        r#"# Scenario {id}: one audit finding, checked by `slotcheck check`.
# Fill in every field; `slotcheck check {SCENARIO_DIR}/{id}.toml` runs it.
id = "{id}"
title = "What the finding says, in one line"
source = "Where it comes from: document, section, PR"
# notes = "What the model found beyond the source's claim, and why it stands."
model = "stovepipe"          # or "link" (other bounds: see the README)
# slow = true                # leave out of `--skip-slow` runs (tests); for big bounds
# options = ["split-read"]   # model options (see the README)

# The smallest bounds that show the finding: every bound is required.
[bounds]
requests = 1        # N: requests arriving, in ID order
max_concurrent = 1  # K: the queue's limit
crashes = 0         # worker deaths
stalls = 0          # visibility expiries while a worker still runs
max_deliveries = 2  # attempts before a message is dead-lettered

# What each design must give, from the source's claims AND a run of the model
# (the model is the truth; a contradiction is a finding: say so in `notes`).
# Verdicts: "holds" / "violated" for properties, "reached" / "not-reached" for
# witnesses; {{ verdict = "violated", steps = N }} pins the shortest path too.
[expect.claim-first]
# no-wedge = "holds"
# count-not-high = {{ verdict = "violated", steps = 8 }}

[expect.fail-open]
# no-wedge = "holds"

[expect.owner-keyed]
# no-wedge = "holds"

# Optional: the finding's own telling, replayed literally. Every step must be
# enabled where it stands, and the last state must violate `violates`.
# [[story]]
# design = "claim-first"
# violates = "no-wedge"
# steps = [
#     "arrive R1",
#     "deliver process R1",
#     "step worker 1",
#     "crash worker 1",
# ]
"#
    )
}
