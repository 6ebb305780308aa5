//! `slotcheck replay FILE`: rebuild the model a trace's `#meta` names,
//! re-run its scripted steps (refusing one that is not enabled), tell the
//! story and say which property the last state violates.

use crate::models::{self, ForModel, ToolModel};
use crate::report;
use crate::report::itf;
use crate::simulate::{discovered, model_meta};
use serde_json::{Map, Value as Json};
use stateright::Expectation;
use std::path::Path;

/// What a replay found.
#[derive(Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The story, the ending and what it means, as printed.
    pub text: String,
    /// Whether the last state still violates the recorded property.
    pub violates: bool,
}

/// Replays `path`; the error (a bad file, a refused step, states that do
/// not match the trace's own `#meta`) means exit 2.
pub fn replay_file(path: &Path) -> Result<Replayed, String> {
    let text = crate::report::read_small(path, crate::report::SMALL_INPUT)?;
    let document: Json =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    replay_document(&document).map_err(|e| format!("{}: {e}", path.display()))
}

/// Replays an ITF document, by the model its `#meta` names.
pub fn replay_document(document: &Json) -> Result<Replayed, String> {
    let (meta, script) = itf::read(document)?;
    match meta.get("model").and_then(Json::as_str) {
        Some(name) => models::for_model(
            name,
            Replay {
                meta: &meta,
                script: &script,
                document,
            },
        )
        .unwrap_or_else(|| Err(format!("unknown model `{name}` in `#meta`"))),
        None => Err("`#meta` names no `model`".into()),
    }
}

/// A replay of the model the registry finds by name.
struct Replay<'a> {
    meta: &'a Map<String, Json>,
    script: &'a [String],
    document: &'a Json,
}

impl ForModel for Replay<'_> {
    type Out = Result<Replayed, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        replay_with(
            &M::from_meta(self.meta)?,
            self.meta,
            self.script,
            self.document,
        )
    }
}

fn replay_with<M: ToolModel>(
    model: &M,
    meta: &Map<String, Json>,
    script: &[String],
    document: &Json,
) -> Result<Replayed, String> {
    let property = meta
        .get("property")
        .and_then(Json::as_str)
        .ok_or("`#meta` names no `property`")?;
    if let Some(progress) = model.progress().into_iter().find(|p| p.name == property) {
        return replay_lasso(model, property, progress.pending, script, document);
    }
    let properties = model.properties();
    let recorded = properties
        .iter()
        .find(|p| p.name == property)
        .ok_or_else(|| format!("the model has no property `{property}`"))?;
    if recorded.expectation != Expectation::Always {
        return Err(format!(
            "`#meta.property` is `{property}`, a witness (a `sometimes` property): a trace that reaches it is no counterexample, and replay takes a violation"
        ));
    }
    let mut inits = model.init_states();
    let init = inits.swap_remove(recorded_init(model, document)?);
    let actions = model
        .parse(&init, script)
        .map_err(|e| format!("cannot replay {e} (`{}`)", script[e.index]))?;
    let last = crate::simulate::last_state(model, &init, &actions);
    let mut out = format!(
        "slotcheck replay: {} {}, {}; {}{}\n",
        model.model_name(),
        model.variant(),
        crate::simulate::bounds_words(model),
        report::count(actions.len() as u64, "step"),
        match (meta.get("seed"), meta.get("run")) {
            (Some(seed), Some(run)) => format!(" (seed {seed}, run {run})"),
            _ => String::new(),
        }
    );
    // The rows recorded in the file are what the model gave when it was
    // saved; if the model has changed since, say so.
    // The step words may name one of two equal workers either way; compare
    // the states' variables alone.
    let variables = |doc: &Json| -> Vec<Json> {
        let states = doc.get("states").and_then(Json::as_array);
        states
            .into_iter()
            .flatten()
            .map(|s| {
                let mut s = s.clone();
                if let Some(object) = s.as_object_mut() {
                    object.remove(itf::ACTION_VAR);
                    // A state's `#meta` (its index) is no state: a file
                    // with it deleted is the same trace, not another model.
                    object.remove("#meta");
                }
                s
            })
            .collect()
    };
    let again = itf::trace(model, model_meta(model), &init, &actions);
    let model_unchanged = variables(&again) == variables(document);
    if !model_unchanged {
        out.push_str(
            "note: the states recorded in the file differ from what the model gives now\n",
        );
    }
    let violates = discovered(model, recorded, &last);
    if !violates && model_unchanged {
        // Every recorded state is the model's own: not the model changed,
        // the file (a state dropped, the property renamed).
        return Err(format!(
            "every recorded state is what the model gives, yet the last does not violate `{property}`: the file is inconsistent (a state dropped, `#meta` edited), not a trace of a fixed model"
        ));
    }
    let others: Vec<&str> = properties
        .iter()
        .filter(|p| p.expectation == Expectation::Always && p.name != property)
        .filter(|p| discovered(model, p, &last))
        .map(|p| p.name)
        .collect();
    let ending = if violates {
        model.explain(property, &last)
    } else {
        format!("{property} is no longer violated by this trace's last state: the model or the design has changed since it was saved")
    };
    out.push_str(&report::story_text(&model.tell(&init, &actions), &ending));
    if !others.is_empty() {
        out.push_str(&format!(
            "The last state also violates: {}\n",
            others.join(", ")
        ));
    }
    Ok(Replayed {
        text: out,
        violates,
    })
}

/// The index among the model's initial states of the one the trace's
/// first state records (a link trace starts from one assignment of clock
/// offsets among many). A first state that is none of them does not match
/// the trace's own `#meta` (its bounds, its design): the file was edited,
/// or written by a slotcheck whose model differs, and it is refused rather
/// than replayed from some other state.
pub fn recorded_init<M: ToolModel>(model: &M, document: &Json) -> Result<usize, String> {
    let first = document
        .get("states")
        .and_then(|s| s.get(0))
        .ok_or("no states: a trace starts with its initial state")?;
    let recorded = |s: &M::State| {
        model
            .values(s)
            .iter()
            .all(|(name, v)| first.get(name) == Some(&itf::value(v)))
    };
    model
        .init_states()
        .iter()
        .position(recorded)
        .ok_or_else(|| {
            format!(
                "its first state is not an initial state of the model its `#meta` describes \
({} {}, {}): the file was edited, or written by a slotcheck whose model differs",
                model.model_name(),
                model.variant(),
                crate::simulate::bounds_words(model)
            )
        })
}

/// `slotcheck replay FILE`: 1 when the trace violates as recorded, 0 when
/// it no longer does.
pub fn run_cli(path: &Path) -> Result<u8, String> {
    let replayed = replay_file(path)?;
    print!("{}", replayed.text);
    Ok(if replayed.violates { 1 } else { 0 })
}

/// A progress property's lasso: replayed, it still violates when its last
/// state owes what the property asks and, with a loop, the loop's states
/// all owe one same thing (a fair loop is what the check found; the replay
/// checks what a file can say: the path, and what is pending along it).
fn replay_lasso<M: ToolModel>(
    model: &M,
    property: &str,
    pending: fn(&M, &M::State) -> u64,
    script: &[String],
    document: &Json,
) -> Result<Replayed, String> {
    let mut inits = model.init_states();
    let init = inits.swap_remove(recorded_init(model, document)?);
    let actions = model
        .parse(&init, script)
        .map_err(|e| format!("cannot replay {e} (`{}`)", script[e.index]))?;
    let mut states = vec![init.clone()];
    for a in &actions {
        let next = model
            .next_state(states.last().expect("a first state"), a.clone())
            .ok_or("a step with no next state")?;
        states.push(next);
    }
    let steps = actions.len();
    // ITF's `loop`: the state after the last one; the loop's states run
    // from it to the last (which is, as stored, the one before it).
    let next = document
        .get("loop")
        .and_then(Json::as_u64)
        .map_or(steps, |i| (i as usize).min(steps));
    let loop_from = if next >= steps {
        steps
    } else {
        next.saturating_sub(1)
    };
    let owed = states[next..]
        .iter()
        .fold(u64::MAX, |acc, s| acc & pending(model, s));
    let violates = owed != 0;
    let trace = crate::check::Trace {
        init,
        actions,
        last: states.pop().expect("a last state"),
        loop_from: Some(loop_from),
    };
    let (told, ending) = report::told(model, property, &trace);
    let ending = if violates {
        ending
    } else {
        format!("{property} is no longer owed all along this trace's loop: the model or the design has changed since it was saved")
    };
    let mut text = format!(
        "slotcheck replay: {} {}, {}; {}\n",
        model.model_name(),
        model.variant(),
        crate::simulate::bounds_words(model),
        report::count(steps as u64, "step"),
    );
    text.push_str(&report::story_text(&told, &ending));
    Ok(Replayed { text, violates })
}
