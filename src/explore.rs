//! `slotcheck explore`: stateright's Explorer, a web page on loopback for
//! walking a model's state space by hand, with the states, steps and paths
//! shown as a person reads them rather than as `Debug` dumps.
//!
//! The Explorer renders a state with `{:#?}`, an action with
//! `format_action`, a step with `format_step` and a path with `as_svg`, none
//! of which see the path that led to the state, while a story's names (which
//! worker is `worker 2`) depend on it. So the model is wrapped: each state
//! carries the path from the initial state (left out of its hash and
//! equality, so the state space and its fingerprints are the model's own),
//! and the wrapper tells that path with [`Narrated::tell`].
//!
//! A room of its own at the top of `src/` because the Explorer shows the
//! wrapper's type name (`slotcheck::explore::Readable<...>`), which the
//! browser tests read. It may use `models`' trait, `report` (diagrams, ITF)
//! and `simulate` (a saved trace's first state); the `explore` command in
//! `commands/` serves it.

use crate::models::ModelBounds;
use crate::models::ToolModel;
use crate::report::diagram::Diagram;
use crate::report::itf;
use slotcheck_models::{Narrated, Value};
use stateright::{Model, Path, Property};
use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// A model state as the Explorer shows it.
pub struct Shown<M: Model> {
    pub state: M::State,
    /// The initial state the path starts from, and the path.
    origin: Arc<M::State>,
    path: Arc<Vec<M::Action>>,
    model: Arc<M>,
}

impl<M: Model> Clone for Shown<M>
where
    M::State: Clone,
{
    fn clone(&self) -> Self {
        Shown {
            state: self.state.clone(),
            origin: Arc::clone(&self.origin),
            path: Arc::clone(&self.path),
            model: Arc::clone(&self.model),
        }
    }
}

impl<M: Model> PartialEq for Shown<M>
where
    M::State: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.state == other.state
    }
}

impl<M: Model> Hash for Shown<M>
where
    M::State: Hash,
{
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        self.state.hash(hasher)
    }
}

/// `{a, b}`, `{R1: {state: accepted, version: 1}}`, `[..]`: a value on one line.
fn compact(value: &Value) -> String {
    let join = |items: Vec<String>| items.join(", ");
    match value {
        Value::Int(n) => n.to_string(),
        Value::Str(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Set(items) => format!("{{{}}}", join(items.iter().map(compact).collect())),
        Value::List(items) => format!("[{}]", join(items.iter().map(compact).collect())),
        Value::Map(pairs) => format!(
            "{{{}}}",
            join(
                pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", compact(k), compact(v)))
                    .collect()
            )
        ),
        Value::Record(fields) => format!(
            "{{{}}}",
            join(
                fields
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", compact(v)))
                    .collect()
            )
        ),
    }
}

/// The rows, then the model's variables that are not rows (the workers, the
/// fault budgets...), one per line.
impl<M: Narrated> Debug for Shown<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows = self.model.rows(&self.state);
        for (row, value) in &rows {
            writeln!(f, "{row}: {value}")?;
        }
        let mut first = true;
        for (name, value) in self.model.values(&self.state) {
            if rows.iter().any(|(row, _)| *row == name) {
                continue;
            }
            if first {
                writeln!(f, "--")?;
                first = false;
            }
            match &value {
                Value::List(items) if !items.is_empty() => {
                    writeln!(f, "{name}:")?;
                    for item in items {
                        writeln!(f, "  {}", compact(item))?;
                    }
                }
                other => writeln!(f, "{name}: {}", compact(other))?,
            }
        }
        Ok(())
    }
}

/// An action, with the state it is taken from (to name its actor).
pub struct Step<M: Model> {
    pub action: M::Action,
    from: Shown<M>,
}

impl<M: Model> Clone for Step<M>
where
    M::State: Clone,
    M::Action: Clone,
{
    fn clone(&self) -> Self {
        Step {
            action: self.action.clone(),
            from: self.from.clone(),
        }
    }
}

impl<M: Model> PartialEq for Step<M>
where
    M::Action: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.action == other.action
    }
}

impl<M: Model> Debug for Step<M>
where
    M::Action: Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.action.fmt(f)
    }
}

/// The model as the Explorer sees it.
pub struct Readable<M: Model> {
    model: Arc<M>,
    properties: Vec<Property<M>>,
}

impl<M: Narrated> Readable<M>
where
    M::State: Clone,
    M::Action: Clone,
{
    pub fn new(model: M) -> Self {
        let properties = model.properties();
        assert!(properties.len() <= MAX_PROPERTIES);
        Readable {
            model: Arc::new(model),
            properties,
        }
    }

    /// The story step of `action` taken at the end of `from`'s path.
    fn told(&self, from: &Shown<M>, action: &M::Action) -> slotcheck_models::StoryStep {
        let mut path = from.path.as_ref().clone();
        path.push(action.clone());
        self.model
            .tell(&from.origin, &path)
            .pop()
            .expect("a story has a step per action")
    }
}

const MAX_PROPERTIES: usize = 16;

fn holds<M: Narrated, const K: usize>(readable: &Readable<M>, shown: &Shown<M>) -> bool {
    (readable.properties[K].condition)(&readable.model, &shown.state)
}

type Condition<M> = fn(&Readable<M>, &Shown<M>) -> bool;

fn conditions<M: Narrated>() -> [Condition<M>; MAX_PROPERTIES] {
    [
        holds::<M, 0>,
        holds::<M, 1>,
        holds::<M, 2>,
        holds::<M, 3>,
        holds::<M, 4>,
        holds::<M, 5>,
        holds::<M, 6>,
        holds::<M, 7>,
        holds::<M, 8>,
        holds::<M, 9>,
        holds::<M, 10>,
        holds::<M, 11>,
        holds::<M, 12>,
        holds::<M, 13>,
        holds::<M, 14>,
        holds::<M, 15>,
    ]
}

impl<M: Narrated> Model for Readable<M>
where
    M::State: Clone + Debug,
    M::Action: Clone + Debug,
{
    type State = Shown<M>;
    type Action = Step<M>;

    fn init_states(&self) -> Vec<Self::State> {
        self.model
            .init_states()
            .into_iter()
            .map(|state| Shown {
                origin: Arc::new(state.clone()),
                state,
                path: Arc::new(Vec::new()),
                model: Arc::clone(&self.model),
            })
            .collect()
    }

    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        let mut inner = Vec::new();
        self.model.enabled_actions(&state.state, &mut inner);
        actions.extend(inner.into_iter().map(|action| Step {
            action,
            from: state.clone(),
        }));
    }

    fn next_state(&self, state: &Self::State, step: Self::Action) -> Option<Self::State> {
        let next = self.model.next_state(&state.state, step.action.clone())?;
        let mut path = state.path.as_ref().clone();
        path.push(step.action);
        Some(Shown {
            state: next,
            origin: Arc::clone(&state.origin),
            path: Arc::new(path),
            model: Arc::clone(&self.model),
        })
    }

    fn properties(&self) -> Vec<Property<Self>> {
        self.properties
            .iter()
            .zip(conditions::<M>())
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: p.name,
                condition,
            })
            .collect()
    }

    /// `worker 1 (process R1, delivery 1): CAS queue in_flight_count 0 -> 1`.
    fn format_action(&self, step: &Self::Action) -> String {
        let told = self.told(&step.from, &step.action);
        format!("{}: {}", told.actor, told.action)
    }

    /// The rows the step changes.
    fn format_step(&self, last: &Self::State, step: Self::Action) -> Option<String> {
        self.model.next_state(&last.state, step.action.clone())?;
        let told = self.told(last, &step.action);
        let mut out = String::new();
        for change in &told.changes {
            let line = match (&change.before, &change.after) {
                (None, Some(after)) => format!("{}: {after} (new)", change.row),
                (Some(before), Some(after)) => format!("{}: {before} -> {after}", change.row),
                (Some(_), None) => format!("{}: gone", change.row),
                (None, None) => continue,
            };
            out.push_str(&line);
            out.push('\n');
        }
        if out.is_empty() {
            out.push_str("(no row changes)\n");
        }
        Some(out)
    }

    /// The path so far as a sequence diagram.
    fn as_svg(&self, path: Path<Self::State, Self::Action>) -> Option<String> {
        let last = path.last_state();
        if last.path.is_empty() {
            return None;
        }
        let steps = self.model.tell(&last.origin, &last.path);
        let n = steps.len();
        let title = format!("the path so far, {n} step{}", if n == 1 { "" } else { "s" });
        Some(Diagram::of(self.model.as_ref(), &title, &steps, None).svg())
    }
}

/// The Explorer's address path that walks `actions` from initial state
/// `init` (its index among the model's): `#/steps/INIT/i/j/...`, each index
/// the action's position among those enabled where it stands.
pub fn steps_fragment<M: Narrated>(
    model: &M,
    init: usize,
    actions: &[M::Action],
) -> Result<String, String>
where
    M::State: Clone,
    M::Action: PartialEq + Clone,
{
    let mut state = model
        .init_states()
        .into_iter()
        .nth(init)
        .ok_or_else(|| format!("the model has no initial state {init}"))?;
    let mut fragment = format!("#/steps/{init}");
    for (i, action) in actions.iter().enumerate() {
        let mut enabled = Vec::new();
        // As the Explorer lists them: every step enabled.
        model.enabled_actions(&state, &mut enabled);
        let index = enabled
            .iter()
            .position(|a| a == action)
            .ok_or_else(|| format!("step {} is not enabled where it stands", i + 1))?;
        fragment.push_str(&format!("/{index}"));
        state = model
            .next_state(&state, action.clone())
            .ok_or_else(|| format!("step {} leads nowhere", i + 1))?;
    }
    Ok(fragment)
}

/// The initial state (its index among the model's) and the actions of a
/// saved ITF trace, refused when the trace names another model, design,
/// bounds or options than `model`: the Explorer would otherwise walk
/// another state space than the one the trace was found in, or fail on a
/// step with a message about the step rather than the bounds.
pub fn trace_actions<M: ToolModel>(
    model: &M,
    path: &std::path::Path,
) -> Result<(usize, Vec<M::Action>), String> {
    let from = |e: String| format!("--from {}: {e}", path.display());
    let text = std::fs::read_to_string(path).map_err(|e| from(e.to_string()))?;
    let document: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| from(format!("not JSON: {e}")))?;
    let (meta, words) = itf::read(&document).map_err(from)?;
    for (key, ours) in [("model", model.model_name()), ("design", model.variant())] {
        if let Some(theirs) = meta.get(key).and_then(|v| v.as_str()) {
            if theirs != ours {
                return Err(from(format!(
                    "the trace is of {key} `{theirs}`, not `{ours}`"
                )));
            }
        }
    }
    if meta.contains_key("bounds") {
        let recorded = M::from_meta(&meta).map_err(from)?;
        if recorded.bound_values() != model.bound_values()
            || recorded.option_names() != model.option_names()
        {
            return Err(from(format!(
                "the trace was recorded on {}, not {}: give the same bounds: {}",
                recorded.bounds_line(),
                model.bounds_line(),
                recorded.bounds_flags()
            )));
        }
    }
    let k = crate::simulate::replay::recorded_init(model, &document).map_err(from)?;
    let init = model.init_states().swap_remove(k);
    let actions = model
        .parse(&init, &words)
        .map_err(|e| from(e.to_string()))?;
    Ok((k, actions))
}

/// Reserves `127.0.0.1:port` (0: any free port) and returns the address, or
/// a clear error where stateright's server would panic.
pub fn free_address(port: u16) -> Result<SocketAddr, String> {
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("--port {port}: cannot listen on 127.0.0.1:{port}: {e}"))?;
    listener
        .local_addr()
        .map_err(|e| format!("--port {port}: {e}"))
    // The listener closes here; the Explorer binds the same address next.
}

/// Serves the Explorer for `model` until the process is stopped (Ctrl-C).
/// `heading` says what is explored; `fragment` (from [`steps_fragment`])
/// opens a saved path. Writes no file, so stopping leaves nothing behind.
pub fn serve<M: Narrated + Send + Sync + 'static>(
    model: M,
    port: u16,
    heading: &str,
    fragment: Option<&str>,
) -> Result<u8, String>
where
    M::State: Clone + Debug + Hash + PartialEq + Send + Sync,
    M::Action: Clone + Debug + PartialEq + Send + Sync,
{
    let address = free_address(port)?;
    println!("slotcheck explore: {heading}");
    // The address is printed once the server accepts connections, so a
    // person or a script that reads it can use it at once.
    let links = match fragment {
        Some(fragment) => format!(
            "serving the Explorer at http://{address}/\nthe saved counterexample, step by step: http://{address}/{fragment}"
        ),
        None => format!("serving the Explorer at http://{address}/"),
    };
    std::thread::spawn(move || {
        let started = std::time::Instant::now();
        while TcpStream::connect(address).is_err() {
            if started.elapsed() > std::time::Duration::from_secs(30) {
                eprintln!("error: the Explorer did not start listening on {address}");
                std::process::exit(2);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        println!("{links}\nCtrl-C stops it.");
    });
    Readable::new(model).checker().serve(address);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
    use stateright::Checker;

    fn model() -> Stovepipe {
        let bounds = Bounds {
            requests: 1,
            stalls: 0,
            ..Bounds::default()
        };
        Stovepipe::new(design_named("claim-first").unwrap(), bounds)
    }

    #[test]
    fn states_and_steps_read_as_rows_and_stories() {
        let readable = Readable::new(model());
        let init = readable.init_states().remove(0);
        // A state shows as checked: without versions, which only a path has.
        assert!(format!("{init:#?}").starts_with("queue: in_flight_count 0\n"));
        let mut actions = Vec::new();
        readable.actions(&init, &mut actions);
        let arrive = actions.remove(0);
        assert!(readable
            .format_action(&arrive)
            .starts_with("client: R1 arrives"));
        let after = readable.next_state(&init, arrive.clone()).unwrap();
        let shown = format!("{after:#?}");
        assert!(shown.contains("R1: accepted\n"), "{shown}");
        assert!(shown.contains("process(R1): visible, 0/2 attempts\n"));
        assert!(
            shown.contains("\nworkers: []\ncrashes_left: 1\n"),
            "{shown}"
        );
        let changes = readable.format_step(&init, arrive).unwrap();
        assert!(changes.starts_with("R1: accepted (v1) (new)\n"));
    }

    #[test]
    fn the_wrapper_keeps_the_models_state_space() {
        let plain = model().checker().spawn_bfs().join();
        let readable = Readable::new(model()).checker().spawn_bfs().join();
        assert_eq!(plain.unique_state_count(), readable.unique_state_count());
        assert_eq!(plain.state_count(), readable.state_count());
    }

    #[test]
    fn a_path_becomes_the_explorers_address() {
        let model = model();
        let init = model.initial_state();
        let script: Vec<String> = ["arrive R1", "deliver process R1", "step worker 1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let actions = model.parse(&init, &script).unwrap();
        let fragment = steps_fragment(&model, 0, &actions).unwrap();
        assert!(fragment.starts_with("#/steps/0/"));
        assert_eq!(fragment.matches('/').count(), 2 + actions.len());
    }

    #[test]
    fn a_taken_port_is_an_error_not_a_panic() {
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = free_address(port).unwrap_err();
        assert!(error.starts_with(&format!("--port {port}: cannot listen")));
    }
}
