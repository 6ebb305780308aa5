//! A path as an ITF trace, and what rebuilds its model: the one bounds
//! encoding (`#meta`) that every trace writer uses and replay reads back.

use crate::check::Verdict;
use crate::models::ModelBounds;
use crate::models::ToolModel;
use crate::report::itf;
use serde_json::{json, Value as Json};
use stateright::Model;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `{"model", "design", "bounds": {name: value}, "options"}`: what rebuilds
/// a model from a trace.
pub fn model_meta<M: ToolModel>(model: &M) -> Json {
    json!({
        "model": model.model_name(),
        "design": model.variant(),
        "bounds": bounds_map(model),
        "options": model.option_names(),
    })
}

pub fn bounds_map<M: ToolModel>(model: &M) -> BTreeMap<String, u32> {
    model
        .bound_values()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

/// `requests 2, max_concurrent 1, ...`.
pub fn bounds_words<M: ToolModel>(model: &M) -> String {
    let mut words: Vec<String> = model
        .bound_values()
        .iter()
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    words.extend(model.option_names().iter().map(|o| format!("option {o}")));
    words.join(", ")
}

/// The state a path ends in.
pub fn last_state<M: Model>(model: &M, init: &M::State, actions: &[M::Action]) -> M::State
where
    M::State: Clone,
    M::Action: Clone,
{
    actions.iter().fold(init.clone(), |s, a| {
        model
            .next_state(&s, a.clone())
            .expect("every action of a path has a next state")
    })
}

/// A path as the text of an ITF trace whose `#meta` rebuilds the model
/// ([`model_meta`], the one bounds encoding every trace writer uses and
/// [`ToolModel::from_meta`] reads), plus `extra` (property, seed, run...).
pub fn trace_text<M: ToolModel>(
    model: &M,
    extra: Json,
    init: &M::State,
    actions: &[M::Action],
) -> Vec<u8> {
    let mut meta = model_meta(model);
    if let (Json::Object(meta), Json::Object(extra)) = (&mut meta, extra) {
        meta.extend(extra);
    }
    let document = itf::trace(model, meta, init, actions);
    (serde_json::to_string_pretty(&document).expect("JSON") + "\n").into_bytes()
}

/// Saves a path as an ITF trace ([`trace_text`]).
pub fn save_trace<M: ToolModel>(
    path: &Path,
    model: &M,
    extra: Json,
    init: &M::State,
    actions: &[M::Action],
) -> Result<PathBuf, String> {
    itf::write_atomically(path, &trace_text(model, extra, init, actions))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.to_path_buf())
}

/// Each violation of an exhaustive check as an ITF trace in `dir`, to be
/// written once the results are printed.
pub fn check_trace_files<M: ToolModel>(
    dir: &Path,
    model: &M,
    outcome: &crate::check::Outcome<M>,
) -> Vec<(PathBuf, Vec<u8>)> {
    outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .map(|r| {
            let trace = r.trace.as_ref().expect("a violation has a trace");
            let file = dir.join(format!("{}-{}-check.itf.json", model.variant(), r.name));
            let meta = json!({ "property": r.name, "command": "check" });
            let mut text = trace_text(model, meta, &trace.init, &trace.actions);
            if let Some(from) = trace.loop_from {
                let mut document: Json = serde_json::from_slice(&text).expect("our own JSON");
                itf::set_loop(&mut document, from);
                text = (serde_json::to_string_pretty(&document).expect("JSON") + "\n").into_bytes();
            }
            (file, text)
        })
        .collect()
}
