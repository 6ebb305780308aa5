//! Traces as ITF, the Informal Trace Format that Quint and Apalache read:
//! `{"#meta": {...}, "vars": [...], "states": [...]}`, integers as
//! `{"#bigint": "N"}`, sets as `{"#set": [...]}`, maps as
//! `{"#map": [[k, v], ...]}`. Each state also carries `action`: the words of
//! the step that led to it (`init` for the first), which is what a replay
//! reads back.

use serde_json::{json, Map, Value as Json};
use slotcheck_models::{Narrated, Value};
use std::io::Write;
use std::path::Path;

/// The variable that names the step leading to each state.
pub const ACTION_VAR: &str = "action";

pub fn value(v: &Value) -> Json {
    match v {
        Value::Int(n) => json!({ "#bigint": n.to_string() }),
        Value::Str(s) => Json::String(s.clone()),
        Value::Bool(b) => Json::Bool(*b),
        Value::Set(items) => json!({ "#set": items.iter().map(value).collect::<Vec<_>>() }),
        Value::Map(pairs) => json!({
            "#map": pairs.iter().map(|(k, v)| json!([value(k), value(v)])).collect::<Vec<_>>()
        }),
        Value::Record(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), value(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::List(items) => Json::Array(items.iter().map(value).collect()),
    }
}

/// A path as an ITF document. `meta` is merged into `#meta` (the model, its
/// design, bounds and options, the property, the seed...): what a replay
/// needs to rebuild the model.
pub fn trace<M: Narrated>(model: &M, meta: Json, init: &M::State, actions: &[M::Action]) -> Json
where
    M::State: Clone,
    M::Action: Clone,
{
    let words = model.words(init, actions);
    let mut states = vec![init.clone()];
    for action in actions {
        let last = states.last().expect("a path has a first state");
        let next = model
            .next_state(last, action.clone())
            .expect("every action of a path has a next state");
        states.push(next);
    }
    let mut vars = vec![ACTION_VAR.to_string()];
    vars.extend(model.values(init).into_iter().map(|(name, _)| name));
    let states: Vec<Json> = states
        .iter()
        .enumerate()
        .map(|(i, state)| {
            let mut object = Map::new();
            object.insert("#meta".into(), json!({ "index": i }));
            let action = if i == 0 {
                "init".to_string()
            } else {
                words[i - 1].clone()
            };
            object.insert(ACTION_VAR.into(), Json::String(action));
            for (name, v) in model.values(state) {
                object.insert(name, value(&v));
            }
            Json::Object(object)
        })
        .collect();
    let mut head = Map::new();
    head.insert("format".into(), json!("ITF"));
    head.insert(
        "format-description".into(),
        json!("https://apalache-mc.org/docs/adr/015adr-trace.html"),
    );
    head.insert("source".into(), json!("slotcheck"));
    if let Json::Object(extra) = meta {
        head.extend(extra);
    }
    json!({ "#meta": Json::Object(head), "vars": vars, "states": states })
}

/// The `#meta` object and the scripted steps of an ITF trace written by
/// [`trace`]; the error says what is missing.
pub fn read(document: &Json) -> Result<(Map<String, Json>, Vec<String>), String> {
    let meta = document
        .get("#meta")
        .and_then(Json::as_object)
        .ok_or("no `#meta` object: not an ITF trace")?
        .clone();
    let states = document
        .get("states")
        .and_then(Json::as_array)
        .ok_or("no `states` array: not an ITF trace")?;
    let mut words = Vec::new();
    for (i, state) in states.iter().enumerate().skip(1) {
        let action = state
            .get(ACTION_VAR)
            .and_then(Json::as_str)
            .ok_or_else(|| format!("state {i} has no `{ACTION_VAR}` string"))?;
        words.push(action.to_string());
    }
    Ok((meta, words))
}

/// Writes a file whole or not at all: to a temporary file beside it, then a
/// rename.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&temporary)?;
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotcheck_models::stovepipe::{design_named, Action, Bounds, MessageKind, Stovepipe};

    #[test]
    fn a_trace_is_itf_and_reads_back_to_its_steps() {
        let model = Stovepipe::new(design_named("owner-keyed").unwrap(), Bounds::default());
        let actions = [
            Action::Arrive,
            Action::Deliver {
                request: 0,
                kind: MessageKind::Process,
            },
            Action::Step(0),
            Action::Step(0),
        ];
        let init = model.initial_state();
        let doc = trace(&model, json!({ "design": "owner-keyed" }), &init, &actions);
        assert_eq!(doc["#meta"]["format"], "ITF");
        assert_eq!(doc["#meta"]["design"], "owner-keyed");
        assert_eq!(doc["states"].as_array().unwrap().len(), 5);
        assert_eq!(doc["vars"][0], ACTION_VAR);
        // Integers are bigints, sets are #set, maps are #map.
        assert_eq!(doc["states"][0]["crashes_left"], json!({ "#bigint": "1" }));
        assert_eq!(
            doc["states"][4]["queue"]["in_flight_request_ids"],
            json!({ "#set": ["R1"] })
        );
        assert!(doc["states"][1]["requests"]["#map"].is_array());
        let (meta, words) = read(&doc).unwrap();
        assert_eq!(meta["source"], "slotcheck");
        assert_eq!(model.parse(&init, &words).unwrap(), actions);
    }

    #[test]
    fn an_atomic_write_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("slotcheck-itf-{}", std::process::id()));
        let path = dir.join("t.json");
        write_atomically(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
