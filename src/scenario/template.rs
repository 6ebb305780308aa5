//! `slotcheck scenario new ID`: a commented template.

use super::*;
use crate::models;
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

/// Every registered design of a model, in its order.
pub(super) fn designs_of(model: &str) -> Vec<&'static str> {
    struct Designs;
    impl models::ForModel for Designs {
        type Out = Vec<&'static str>;
        fn run<M: models::ToolModel>(self) -> Self::Out {
            M::design_names()
        }
    }
    models::for_model(model, Designs).unwrap_or_default()
}

/// Every property of a model (safety properties and witnesses), in its
/// order.
pub(super) fn properties_of(model: &str) -> Vec<&'static str> {
    struct Properties;
    impl models::ForModel for Properties {
        type Out = Vec<&'static str>;
        fn run<M: models::ToolModel>(self) -> Self::Out {
            let model = M::first_design(M::DEFAULT_BOUNDS);
            let mut names: Vec<&'static str> = stateright::Model::properties(&model)
                .iter()
                .map(|p| p.name)
                .collect();
            names.extend(model.progress().iter().map(|p| p.name));
            names
        }
    }
    models::for_model(model, Properties).unwrap_or_default()
}

/// A commented template for `slotcheck scenario new ID`: every key, each
/// with what it means, and a table for every design of the default model
/// (the registry's, so that a new design is in it at once).
pub fn template(id: &str) -> String {
    let model = models::MODELS[0];
    let mut tables = String::new();
    for (i, design) in designs_of(model).iter().enumerate() {
        tables.push_str(&format!("\n[expect.{design}]\n"));
        if i == 0 {
            tables.push_str("# no-wedge = \"holds\"\n# count-not-high = { verdict = \"violated\", steps = 8 }\n");
        } else {
            tables.push_str("# no-wedge = \"holds\"\n");
        }
    }
    let others: Vec<String> = models::MODELS[1..]
        .iter()
        .map(|m| format!("# {m}: {}", designs_of(m).join(", ")))
        .collect();
    let head = format!(
        r#"# Scenario {id}: one audit finding, checked by `slotcheck check`.
# Fill in the fields not commented out, uncomment the others you need;
# `slotcheck check {SCENARIO_DIR}/{id}.toml` runs it.
id = "{id}"                  # the finding's ID: file names and --only
title = "What the finding says, in one line"   # the reports' heading
source = "Where it comes from: document, section, PR"   # the claim checked
# notes = "What the model found beyond the source's claim, and why it stands."   # the reports show it
model = "{model}"          # the model (other models and their bounds: docs/commands.md)
# slow = true                # leave out of `--skip-slow` runs (tests); for big bounds
# options = ["split-read"]   # model options (each model's page: docs/stovepipe.md, docs/link.md)
# finding = "no-wedge"       # the `always` property that shows the finding: its column of "What to merge" (`compare --findings`)

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
# A table for every design of the model: the scenario check guards only the
# designs some scenario expects something of. The other models' designs:
{others}
"#,
        others = others.join("\n")
    );
    let tail = r#"
# Optional: the finding's own telling, replayed literally. Every step must be
# enabled where it stands, and the last state must violate `violates`.
# [[story]]
# design = "claim-first"     # the design the story runs on
# violates = "no-wedge"      # the property its last state must violate
# steps = [                  # one step a line, as `check --design` tells them
#     "arrive R1",
#     "deliver process R1",
#     "step worker 1",
#     "crash worker 1",
# ]
"#;
    format!("{head}{tables}{tail}")
}
