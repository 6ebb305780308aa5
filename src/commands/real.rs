//! `--on sqlite|mariadb|postgres`: the stovepipe designs on a real database (crate
//! `slotcheck-sql`, reached through the `real` feature). `replay --on`
//! runs a saved trace statement by statement; `check --design D --on` runs
//! the story of each violation found. Both compare the database's rows with
//! the model's after every step.

use crate::check::{Limits, Verdict};
use crate::models::ToolModel;
use crate::report::itf;
use serde_json::Value as Json;
use slotcheck_models::stovepipe::{Action, State, Stovepipe};
use slotcheck_models::Narrated;
use slotcheck_sql::replay::{self, Failure};
use slotcheck_sql::{Backend, EngineName};
use stateright::Model;
use std::path::Path;
use std::time::Instant;

/// Exit status when the database's rows differ from the model's: the SQL
/// or the model is wrong (documented in the README's exit codes).
pub const EXIT_CONFORMANCE: u8 = 4;

/// A budget or a signal stopped the run before a verdict.
const EXIT_INCONCLUSIVE: u8 = 3;

/// A backend on the engine `--on` names (a private server for MariaDB);
/// `None` when the deadline passed or a signal came while it started.
pub fn backend(on: &str, deadline: Option<Instant>) -> Result<Option<Backend>, String> {
    let engine = EngineName::parse(on)?;
    Backend::start_until(engine, &|| stopped(deadline).is_some())
}

/// Why the run must stop now: a signal, or the deadline passed.
pub fn stopped(deadline: Option<Instant>) -> Option<&'static str> {
    if crate::check::budget::cancelled() {
        return Some("a signal (SIGINT or SIGTERM) stopped the run");
    }
    if deadline.is_some_and(|d| Instant::now() >= d) {
        return Some("the time budget (--timeout) ran out");
    }
    None
}

/// Replays one path and says how it went: the story with the SQL's log
/// lines, the final rows, and what they show. Returns whether the rows
/// agreed at every step.
fn replay_and_tell(
    backend: &Backend,
    model: &Stovepipe,
    init: &State,
    actions: &[Action],
    property: &str,
    out: &mut String,
) -> Result<bool, String> {
    match replay::replay(backend, model, init, actions) {
        Ok(done) => {
            out.push_str(&replay::story_text(&done.steps));
            out.push_str(&format!(
                "the database's rows equal the model's after each of the {} steps; its rows now:\n",
                done.steps.len()
            ));
            for (row, value) in &done.rows {
                out.push_str(&format!("  {row}: {value}\n"));
            }
            let shown = if done.violations.is_empty() {
                "none".to_string()
            } else {
                done.violations.join(", ")
            };
            out.push_str(&format!(
                "violations the rows show by themselves: {shown} (the trace's: {property})\n"
            ));
            Ok(true)
        }
        Err(Failure::Conformance(c)) => {
            out.push_str(&c.text());
            Ok(false)
        }
        Err(Failure::Database(e)) => Err(format!("{}: {e}", backend.engine.name())),
    }
}

/// `slotcheck replay --on ENGINE FILE`: 1 when the rows agree and the trace
/// still violates its property, 0 when it no longer does, 4 on a
/// conformance failure.
pub fn replay_on(path: &Path, on: &str, deadline: Option<Instant>) -> Result<u8, String> {
    let text = crate::report::read_small(path, crate::report::SMALL_INPUT)?;
    let document: Json =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    let (meta, script) = itf::read(&document).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.get("model").and_then(Json::as_str) != Some("stovepipe") {
        return Err(format!(
            "{}: --on replays stovepipe traces (the designs as SQL); this one's `#meta` names another model",
            path.display()
        ));
    }
    let model = Stovepipe::from_meta(&meta).map_err(|e| format!("{}: {e}", path.display()))?;
    let property = meta
        .get("property")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    let init = model.initial_state();
    let actions = model
        .parse(&init, &script)
        .map_err(|e| format!("{}: cannot replay {}", path.display(), e.message))?;
    let Some(backend) = backend(on, deadline)? else {
        let why = stopped(deadline).unwrap_or("stopped");
        println!("slotcheck replay --on {on}: {why} before the replay (the server was starting): inconclusive");
        return Ok(EXIT_INCONCLUSIVE);
    };
    // The replay is a few dozen statements: only its start is worth a
    // stop (a server's start takes seconds).
    if let Some(why) = stopped(deadline) {
        println!("slotcheck replay --on {on}: {why} before the replay: inconclusive");
        return Ok(EXIT_INCONCLUSIVE);
    }
    let mut out = format!(
        "slotcheck replay --on {}: stovepipe {}, {} steps\n",
        backend.engine.name(),
        model.design.name,
        actions.len()
    );
    let agreed = replay_and_tell(&backend, &model, &init, &actions, &property, &mut out)?;
    print!("{out}");
    if !agreed {
        return Ok(EXIT_CONFORMANCE);
    }
    let last = crate::simulate::last_state(&model, &init, &actions);
    let violated = model
        .properties()
        .iter()
        .any(|p| p.name == property && !(p.condition)(&model, &last));
    if violated {
        println!("{}", model.explain(&property, &last));
    }
    Ok(if violated { 1 } else { 0 })
}

/// `slotcheck check --design D --on ENGINE`: checks the design, then
/// replays the story of each violated property on the database. 1 when a
/// property is violated (and the rows agreed), 4 on a conformance failure.
pub fn check_design_on(
    model: Stovepipe,
    properties: &[String],
    limits: &Limits,
    on: &str,
) -> Result<u8, String> {
    let names: Vec<&'static str> = model
        .properties()
        .iter()
        .map(|p| p.name)
        .filter(|n| properties.is_empty() || properties.iter().any(|p| p == n))
        .collect();
    let outcome = crate::check::check(model, &names, limits);
    let violated = outcome
        .results
        .iter()
        .any(|r| r.verdict == Verdict::Violated);
    let undecided = outcome
        .results
        .iter()
        .any(|r| r.verdict == Verdict::Inconclusive);
    // What the budget (or a signal) left: exit 3, or 1 when a property
    // was already found violated.
    let cut_code = if violated { 1 } else { EXIT_INCONCLUSIVE };
    let Some(backend) = backend(on, limits.deadline)? else {
        let why = stopped(limits.deadline).unwrap_or("stopped");
        println!(
            "{} on {on}: {why} while the server started, before any story ran on it: inconclusive",
            model.design.name
        );
        return Ok(cut_code);
    };
    let mut code = 0;
    for result in &outcome.results {
        let Some(trace) = &result.trace else { continue };
        if result.verdict != Verdict::Violated {
            continue;
        }
        if let Some(why) = stopped(limits.deadline) {
            println!(
                "{} on {}: {why} before the story of {} ran: inconclusive",
                model.design.name,
                backend.engine.name(),
                result.name
            );
            return Ok(if code == EXIT_CONFORMANCE {
                code
            } else {
                cut_code
            });
        }
        let mut out = format!(
            "{} on {}: {} violated in {} steps; its story on the database:\n",
            model.design.name,
            backend.engine.name(),
            result.name,
            trace.steps()
        );
        let agreed = replay_and_tell(
            &backend,
            &model,
            &trace.init,
            &trace.actions,
            result.name,
            &mut out,
        )?;
        out.push_str(&format!("{}\n", model.explain(result.name, &trace.last)));
        // A blank line between stories, none after the last.
        if code > 0 {
            println!();
        }
        print!("{out}");
        code = if !agreed {
            EXIT_CONFORMANCE
        } else {
            code.max(1)
        };
        if !agreed {
            break;
        }
    }
    if code == 0 && undecided {
        println!(
            "{} on {}: no property found violated, but a budget ran out before every verdict: inconclusive",
            model.design.name,
            backend.engine.name()
        );
        return Ok(EXIT_INCONCLUSIVE);
    }
    if code == 0 {
        println!(
            "{} on {}: no property violated, nothing to replay",
            model.design.name,
            backend.engine.name()
        );
    }
    Ok(code)
}
