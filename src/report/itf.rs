//! Traces as ITF, the Informal Trace Format that Quint and Apalache read:
//! `{"#meta": {...}, "vars": [...], "states": [...]}`, integers as
//! `{"#bigint": "N"}`, sets as `{"#set": [...]}`, maps as
//! `{"#map": [[k, v], ...]}`. Each state also carries `action`: the words of
//! the step that led to it (`init` for the first), which is what a replay
//! reads back.

use serde_json::{json, Map, Value as Json};
use slotcheck_models::{Narrated, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    // What a reader checks the states against: a trace cut short is then a
    // bad file rather than a path that no longer violates.
    head.insert("steps".into(), json!(actions.len()));
    json!({ "#meta": Json::Object(head), "vars": vars, "states": states })
}

/// Marks an ITF document as a lasso whose loop starts after `loop_from`
/// of its steps (ITF's `loop`: the index of the state that follows the
/// last one). The last state is, as stored, the state after `loop_from`
/// steps, so the state after it is the one at `loop_from + 1`; with no
/// loop steps the last state follows itself.
pub fn set_loop(document: &mut Json, loop_from: usize) {
    let steps = document["states"].as_array().map_or(1, Vec::len) - 1;
    let index = if loop_from >= steps {
        steps
    } else {
        loop_from + 1
    };
    document["loop"] = json!(index);
}

/// [`trace`], and for a lasso its `loop`.
pub fn lasso<M: Narrated>(model: &M, meta: Json, trace: &crate::check::Trace<M>) -> Json
where
    M::State: Clone,
    M::Action: Clone,
{
    let mut document = self::trace(model, meta, &trace.init, &trace.actions);
    if let Some(from) = trace.loop_from {
        set_loop(&mut document, from);
    }
    document
}

/// The `#meta` object and the scripted steps of an ITF trace written by
/// [`trace`]; the error says what is missing or does not add up (a trace
/// emptied, truncated or with states taken out is a bad file, not a
/// shorter path).
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
    if states.is_empty() {
        return Err("no states: a trace starts with its initial state (emptied?)".into());
    }
    if let Some(steps) = meta.get("steps") {
        let steps = steps
            .as_u64()
            .ok_or("`#meta.steps` is not a number of steps")?;
        let has = states.len() as u64 - 1;
        if has != steps {
            return Err(format!(
                "`#meta.steps` says {}, but it has {has}: truncated or edited",
                count(steps, "step")
            ));
        }
    }
    let vars: Vec<&str> = document
        .get("vars")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    for (i, state) in states.iter().enumerate() {
        let index = state.get("#meta").and_then(|m| m.get("index"));
        if let Some(index) = index {
            if index.as_u64() != Some(i as u64) {
                return Err(format!(
                    "state {i} is numbered {index}: states were taken out or reordered"
                ));
            }
        }
        if let Some(var) = vars.iter().find(|v| state.get(**v).is_none()) {
            return Err(format!("state {i} has no `{var}`, which `vars` lists"));
        }
    }
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

fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Writes a file whole or not at all: to a temporary file beside it, then a
/// rename. On failure nothing is left behind, the temporary file included;
/// a directory in the way is named as such rather than as whatever the
/// rename would say. A symbolic link is followed, and its target written;
/// a file that is not a regular one (a device, a FIFO, `/proc/self/fd/1`)
/// is written in place, never replaced by a rename, so that a full device
/// says so.
pub fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("is a directory: give a file's path"));
    }
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
        file.write_all(contents)?;
        return file.flush();
    }
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return write_atomically(&link_target(path)?, contents);
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir {
        if let Some(file) = dir.ancestors().find(|p| p.is_file()) {
            return Err(std::io::Error::other(format!(
                "{} is a file, not a directory",
                file.display()
            )));
        }
        std::fs::create_dir_all(dir)?;
    }
    let temporary = temporary_beside(path);
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// The file a symbolic link names at the end of its chain, whether or not
/// it exists yet.
fn link_target(link: &Path) -> std::io::Result<PathBuf> {
    let mut path = link.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(target) => {
                path = match path.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                }
            }
            Err(_) => return Ok(path),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// `.NAME.PID.tmp` beside `path`.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

// ---------------------------------------------------------------- outputs

/// A path a command will write: a report file (`--html FILE`) or a
/// directory of files (`--out DIR`), with the flag that named it.
#[derive(Clone, Debug)]
pub struct Output {
    pub flag: &'static str,
    pub path: PathBuf,
    pub is_dir: bool,
}

impl Output {
    pub fn file(flag: &'static str, path: &Path) -> Self {
        Output {
            flag,
            path: path.to_path_buf(),
            is_dir: false,
        }
    }

    pub fn dir(flag: &'static str, path: &Path) -> Self {
        Output {
            flag,
            path: path.to_path_buf(),
            is_dir: true,
        }
    }

    fn named(&self) -> String {
        format!("{} {}", self.flag, self.path.display())
    }
}

/// Checks, before a run, that every output can be written, so that a long
/// run does not end in a failed write: not a directory where a file goes
/// (or a file where a directory goes), inside a directory that exists or
/// can be made, where a file can be created. The one rule of every command
/// for what it writes: an output may not be one of `inputs` (every file the
/// run reads; a directory given stands for every file under it) under any
/// spelling (`..`, a symbolic link, a hard link), nor the path of another
/// output, nor lie inside an output directory (`--out`), where the files a
/// run writes depend on its verdicts. Leaves nothing behind.
pub fn check_outputs(outputs: &[Output], inputs: &[PathBuf]) -> Result<(), String> {
    for output in outputs {
        check_output(output)?;
        let resolved = resolve(&output.path);
        let read = inputs.iter().find(|input| {
            let input_resolved = resolve(input);
            input_resolved == resolved
                || same_file(input, &output.path)
                || (input.is_dir() && resolved.starts_with(&input_resolved))
        });
        if let Some(input) = read {
            let what = if input.is_dir() {
                format!(" (under {}, which it reads)", input.display())
            } else {
                String::new()
            };
            return Err(format!(
                "{}: is an input of this run{what}; slotcheck never writes over what it reads",
                output.named()
            ));
        }
    }
    for (i, a) in outputs.iter().enumerate() {
        for b in &outputs[i + 1..] {
            let (ra, rb) = (resolve(&a.path), resolve(&b.path));
            if ra == rb {
                return Err(format!(
                    "{} and {} both write {}: give each its own path",
                    a.flag,
                    b.flag,
                    a.path.display()
                ));
            }
            if same_file(&a.path, &b.path) {
                return Err(format!(
                    "{} and {} both write one file ({} and {}): give each its own path",
                    a.flag,
                    b.flag,
                    a.path.display(),
                    b.path.display()
                ));
            }
            for (outer, inner, outer_path, inner_path) in [(a, b, &ra, &rb), (b, a, &rb, &ra)] {
                let inside = inner_path.ancestors().skip(1).any(|p| p == outer_path);
                if !outer.is_dir && inside {
                    return Err(format!(
                        "{}: is inside {}, a file",
                        inner.named(),
                        outer.named()
                    ));
                }
                if outer.is_dir && inside {
                    return Err(format!(
                        "{}: is inside {}, where the run writes files named by what it finds: give it a path outside",
                        inner.named(),
                        outer.named()
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_output(output: &Output) -> Result<(), String> {
    let named = output.named();
    if !output.is_dir {
        // Written in place (a device, a FIFO): opening it to try could
        // block, and a failed write says so after the run (exit 2).
        if std::fs::metadata(&output.path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return Ok(());
        }
        // A link is followed: its target's directory is where it is written.
        if std::fs::symlink_metadata(&output.path).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = link_target(&output.path).map_err(|e| format!("{named}: {e}"))?;
            return check_output(&Output::file(output.flag, &target));
        }
    }
    let path = &output.path;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() && !output.is_dir => {
            return Err(format!("{named}: is a directory: give a file's path"))
        }
        Ok(m) if !m.is_dir() && output.is_dir => {
            return Err(format!("{named}: is a file, not a directory"))
        }
        _ => {}
    }
    // The directory the first new entry goes into: the output directory
    // itself if it exists, else the nearest existing ancestor.
    let start = if output.is_dir {
        path.as_path()
    } else {
        path.parent().unwrap_or(Path::new(""))
    };
    let existing = start
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| p.exists())
        .unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return Err(format!(
            "{named}: {} is not a directory",
            existing.display()
        ));
    }
    // Whether a file can be created there, by creating one (permissions
    // alone do not tell: a read-only mount, /proc, root).
    let probe_name = match path.file_name() {
        Some(name) if !output.is_dir => name.to_string_lossy().into_owned(),
        _ => "slotcheck-probe".to_string(),
    };
    let probe = temporary_beside(&existing.join(probe_name));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!(
            "{named}: cannot write in {}: {e}",
            existing.display()
        )),
    }
}

/// Whether two paths that both exist are one file (a hard link too).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    let _ = (a, b);
    false
}

/// The absolute path, with `.` and `..` resolved and symbolic links
/// followed as far as the path exists: two spellings of one file resolve
/// alike.
fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut rest = Vec::new();
    let mut base = absolute.as_path();
    let canonical = loop {
        if let Ok(c) = base.canonicalize() {
            break c;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => break base.to_path_buf(),
        }
    };
    let mut resolved = canonical;
    for name in rest.into_iter().rev() {
        match name.to_str() {
            Some("..") => {
                resolved.pop();
            }
            Some(".") => {}
            _ => resolved.push(name),
        }
    }
    resolved
}

/// Writes every report after a run has printed its results, each whole or
/// not at all, and goes on past a failure so that the others are still
/// written; `written` hears of each file written. The error names every
/// file that could not be written.
pub fn write_reports(
    writes: &[(PathBuf, Vec<u8>)],
    mut written: impl FnMut(&Path),
) -> Result<(), String> {
    let mut failed = Vec::new();
    for (path, contents) in writes {
        match write_atomically(path, contents) {
            Ok(()) => written(path),
            Err(e) => failed.push(format!("cannot write {}: {e}", path.display())),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\nerror: "))
    }
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

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = std::env::temp_dir().join(format!("slotcheck-itf-fail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("taken")).unwrap();
        std::fs::write(dir.join("file"), b"x").unwrap();
        let error = write_atomically(&dir.join("taken"), b"{}").unwrap_err();
        assert!(error.to_string().starts_with("is a directory"), "{error}");
        let error = write_atomically(&dir.join("file").join("t.json"), b"{}").unwrap_err();
        assert!(
            error.to_string().ends_with("is a file, not a directory"),
            "{error}"
        );
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["file", "taken"]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn outputs_are_checked_against_inputs_each_other_and_the_file_system() {
        let dir = std::env::temp_dir().join(format!("slotcheck-itf-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let input = dir.join("in.toml");
        std::fs::write(&input, b"x").unwrap();
        let check = |outputs: &[Output]| check_outputs(outputs, std::slice::from_ref(&input));
        // A new file in a new directory is fine, and nothing is made yet.
        assert!(check(&[Output::file("--html", &dir.join("new/r.html"))]).is_ok());
        assert!(!dir.join("new").exists());
        let other_spelling = dir.join("sub").join("..").join("in.toml");
        let error = check(&[Output::file("--junit", &other_spelling)]).unwrap_err();
        assert!(error.contains("is an input of this run"), "{error}");
        let error = check(&[Output::file("--html", &dir.join("sub"))]).unwrap_err();
        assert!(error.contains("is a directory"), "{error}");
        let error = check(&[Output::dir("--out", &input)]).unwrap_err();
        assert!(error.contains("is a file, not a directory"), "{error}");
        let error = check(&[Output::file("--html", &input.join("r.html"))]).unwrap_err();
        assert!(error.contains("is not a directory"), "{error}");
        let same = dir.join("r");
        let error = check(&[
            Output::file("--junit", &same),
            Output::file("--html", &same),
        ])
        .unwrap_err();
        assert!(error.contains("--junit and --html both write"), "{error}");
        let error = check(&[
            Output::file("--html", &same),
            Output::dir("--out", &same.join("traces")),
        ])
        .unwrap_err();
        assert!(error.contains("is inside --html"), "{error}");
        // The probe files are gone.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["in.toml", "sub"]);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
