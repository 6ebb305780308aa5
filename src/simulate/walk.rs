//! One walk: from the model's initial state (or from a path already
//! walked, for guided runs), each step picked by the run's [`Schedule`],
//! every property judged on every state.

use super::Schedule;
use crate::models::ToolModel;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use stateright::{Expectation, Model, Property};

/// One walk: its steps, and where each property was first violated or
/// reached (the number of steps before that state).
pub struct Walk<M: Model> {
    /// The initial state it started from.
    pub init: M::State,
    pub actions: Vec<M::Action>,
    pub states: u64,
    /// Whether the walk stopped at `depth` with actions still enabled.
    pub cut_at_depth: bool,
    pub violated: Vec<Option<usize>>,
    pub reached: Vec<bool>,
    /// With a liveness phase: the steps of its fault phase, and where the
    /// walk ended (its bound spent, or nothing enabled) with something not
    /// yet settled.
    pub fault_phase: Option<usize>,
    pub unsettled: Option<usize>,
}

/// Whether property `p` is broken (an `always`) or met (a `sometimes`) in `s`.
pub(crate) fn discovered<M: Model>(model: &M, p: &Property<M>, s: &M::State) -> bool {
    let holds = (p.condition)(model, s);
    match p.expectation {
        Expectation::Always => !holds,
        Expectation::Sometimes => holds,
        // `eventually` is judged on whole paths; walks do not judge it.
        Expectation::Eventually => false,
    }
}

/// A random walk from the model's first initial state, checking every
/// property on every state, until no action is enabled or `depth` steps.
pub fn walk<M: ToolModel>(
    model: &M,
    properties: &[Property<M>],
    schedule: &mut Schedule,
    depth: usize,
    rng: &mut ChaCha8Rng,
) -> Walk<M> {
    walk_live(model, properties, schedule, depth, None, rng)
}

/// [`walk`] with a liveness phase (TigerBeetle's simulator has one): faults
/// are taken only during the first `0..=liveness` steps (drawn now), and
/// the walk must then reach a settled state ([`ToolModel::settled`]) before
/// nothing more can happen or `depth` steps.
pub fn walk_live<M: ToolModel>(
    model: &M,
    properties: &[Property<M>],
    schedule: &mut Schedule,
    depth: usize,
    liveness: Option<usize>,
    rng: &mut ChaCha8Rng,
) -> Walk<M> {
    walk_from(
        model,
        properties,
        schedule,
        depth,
        liveness,
        None,
        &mut |_| {},
        rng,
    )
}

/// [`walk_live`] from `start` (an initial state and a path from it, already
/// walked by an earlier run) when given: the path is replayed and judged as
/// the walk's first steps, then the schedule picks the rest. `observe` sees
/// the state the schedule starts from and each state it reaches. A fault
/// phase ends no earlier than the path: faults in it were taken already.
#[allow(clippy::too_many_arguments)]
pub fn walk_from<M: ToolModel>(
    model: &M,
    properties: &[Property<M>],
    schedule: &mut Schedule,
    depth: usize,
    liveness: Option<usize>,
    start: Option<(M::State, Vec<M::Action>)>,
    observe: &mut dyn FnMut(&M::State),
    rng: &mut ChaCha8Rng,
) -> Walk<M> {
    let fault_phase = liveness.map(|l| rng.random_range(0..=l));
    let (init, path) = match start {
        Some(start) => start,
        None => (model.pick_init(rng), Vec::new()),
    };
    let begun = path.len();
    let fault_phase = fault_phase.map(|f| f.max(begun));
    let mut state = init.clone();
    let mut walk = Walk {
        init,
        actions: Vec::new(),
        states: 1,
        cut_at_depth: false,
        violated: vec![None; properties.len()],
        reached: vec![false; properties.len()],
        fault_phase,
        unsettled: None,
    };
    let judge = |walk: &mut Walk<M>, state: &M::State, at: usize| {
        for (k, p) in properties.iter().enumerate() {
            let open = match p.expectation {
                Expectation::Always => walk.violated[k].is_none(),
                _ => !walk.reached[k],
            };
            if open && discovered(model, p, state) {
                match p.expectation {
                    Expectation::Always => walk.violated[k] = Some(at),
                    _ => walk.reached[k] = true,
                }
            }
        }
    };
    judge(&mut walk, &state, 0);
    for (at, action) in path.into_iter().enumerate() {
        state = model
            .next_state(&state, action.clone())
            .expect("a guided run's path replays");
        walk.actions.push(action);
        judge(&mut walk, &state, at + 1);
    }
    observe(&state);
    let mut enabled = Vec::new();
    let mut kind_weight = vec![0u32; model.action_kinds().len()];
    for step in begun + 1..=depth {
        enabled.clear();
        model.enabled_actions(&state, &mut enabled);
        if fault_phase.is_some_and(|f| step > f) {
            enabled.retain(|a| model.fault_on(&state, a).is_none());
        }
        if enabled.is_empty() {
            break;
        }
        let pick = match schedule {
            Schedule::Uniform => rng.random_range(0..enabled.len()),
            Schedule::Weights(w) => choose(model, &enabled, w, &mut kind_weight, rng),
            // PCT's change points count the steps it schedules.
            Schedule::Pct(pct) => pct.choose(model, &state, &enabled, step - begun, rng),
        };
        let action = enabled.swap_remove(pick);
        state = model
            .next_state(&state, action.clone())
            .expect("an enabled action has a next state");
        walk.actions.push(action);
        walk.states += 1;
        judge(&mut walk, &state, step);
        observe(&state);
    }
    if fault_phase.is_some() && !model.settled(&state) {
        walk.unsettled = Some(walk.actions.len());
    }
    if walk.actions.len() == depth {
        enabled.clear();
        model.enabled_actions(&state, &mut enabled);
        walk.cut_at_depth = !enabled.is_empty();
    }
    walk
}

/// The index of the next action by swarm weights: a kind by its weight
/// among the kinds enabled, then uniform within it (when every enabled kind
/// weighs 0, uniform, so that no walk stops early).
fn choose<M: ToolModel>(
    model: &M,
    enabled: &[M::Action],
    weights: &[u32],
    kind_weight: &mut [u32],
    rng: &mut ChaCha8Rng,
) -> usize {
    kind_weight.fill(0);
    for a in enabled {
        let k = model.action_kind(a);
        kind_weight[k] = weights[k];
    }
    let total: u32 = kind_weight.iter().sum();
    if total == 0 {
        return rng.random_range(0..enabled.len());
    }
    let mut ticket = rng.random_range(0..total);
    let kind = kind_weight
        .iter()
        .position(|&w| {
            if ticket < w {
                true
            } else {
                ticket -= w;
                false
            }
        })
        .expect("the ticket falls in some kind");
    let of_kind = enabled
        .iter()
        .filter(|a| model.action_kind(a) == kind)
        .count();
    let nth = rng.random_range(0..of_kind);
    enabled
        .iter()
        .enumerate()
        .filter(|(_, a)| model.action_kind(a) == kind)
        .nth(nth)
        .map(|(i, _)| i)
        .expect("the kind is enabled")
}
