//! The link model as the tool runs it: the [`ToolModel`] (how flags and a
//! scenario file give a model, what the simulator draws and lowers, its
//! mutants); its table of bounds is in `link_bounds.rs`.

use super::bounds::{meta_bounds_and_options, Bound};
pub use super::link_bounds::{options, DEFAULT_BOUNDS};
use super::{ModelArgs, ToolModel};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};
use slotcheck_models::link::{
    all_designs, compose, composition_help, coverage, design_named, Action, Bounds, Link, Options,
    State, DESIGNS, REPAIR_PARTS,
};
use slotcheck_models::NamedOptions;

pub fn model_for(design: &str, bounds: Bounds, options: Options) -> Result<Link, String> {
    // A composition's error says which part is wrong; a plain name's lists
    // the names, as before compositions.
    let composed = design.contains('+').then(|| compose(design));
    let design = match composed {
        Some(composed) => composed.map_err(|e| format!("--model link: {e}"))?,
        None => design_named(design).ok_or_else(|| {
            let known: Vec<&str> = all_designs().map(|d| d.name).collect();
            format!(
                "--model link: unknown design `{design}` (known: {})",
                known.join(", ")
            )
        })?,
    };
    let mut model = Link::new(design, bounds);
    model.options = options;
    Ok(model)
}

/// The kinds of link actions swarm weights are drawn for, in the order of
/// [`Action`]'s variants.
const LINK_KINDS: &[&str] = &[
    "fetch",
    "fetch-late",
    "land",
    "take",
    "heartbeat",
    "finish",
    "tick",
    "crash",
    "delay",
    "read",
    "start",
    "drop",
];

/// The initial state of `model` with these clock offsets (in ticks,
/// non-decreasing from b1, as [`Link::initial_states`] names them): only the
/// offsets depend on the skew.
fn init_with_offsets(model: &Link, offsets: &[i8]) -> State {
    let mut no_skew = *model;
    no_skew.bounds.skew = 0;
    let mut state = no_skew.initial_states().swap_remove(0);
    for (builder, &offset) in state.builders.iter_mut().zip(offsets) {
        builder.offset = offset;
    }
    state
}

/// Time bounds are counted in ticks here, so that swarm draws and shrinking's
/// `-1` always give a valid bound; the CLI and the stories say seconds.
impl ToolModel for Link {
    const NAME: &'static str = "link";
    type Bounds = Bounds;
    const DEFAULT_BOUNDS: Bounds = DEFAULT_BOUNDS;

    fn bound_table() -> &'static [Bound<Bounds>] {
        super::link_bounds::BOUNDS
    }

    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn on_bounds(&self, bounds: Bounds) -> Self {
        Link { bounds, ..*self }
    }

    fn validate_bounds(bounds: &Bounds) -> Result<(), String> {
        bounds.validate()
    }

    fn first_design(bounds: Bounds) -> Self {
        Link::new(&DESIGNS[0], bounds)
    }

    fn design_names() -> Vec<&'static str> {
        all_designs().map(|d| d.name).collect()
    }

    /// The source's four: the repairs are compared on the findings
    /// (`compare --findings`) and checked by name.
    fn source_design_names() -> Vec<&'static str> {
        DESIGNS.iter().map(|d| d.name).collect()
    }

    fn design_notes() -> Vec<(&'static str, &'static str, &'static str)> {
        all_designs().map(|d| (d.name, d.change, d.cost)).collect()
    }

    fn stories_page() -> &'static str {
        "docs/findings-link.md"
    }

    fn designs_help() -> String {
        super::designs_help_text(
            "Link designs (--model link), each as what it changes in the contract's steps (1 fetch, 2 read, 3 decide, 4 run, 5 finish), and its cost:",
            all_designs().map(|d| (d.name, d.change, d.cost)),
            &composition_help(),
            "docs/link-repairs.md",
            REPAIR_PARTS.iter().map(|r| (r.name, r.change)),
        )
    }

    fn design_note(name: &str) -> Result<(&'static str, &'static str, &'static str), String> {
        // A named design or a composition: compose reads both.
        compose(name).map(|d| (d.name, d.change, d.cost))
    }

    fn from_flags(flags: &ModelArgs, design: &str) -> Result<Self, String> {
        let bounds = flags.bounds.bounds::<Self>()?;
        bounds
            .validate()
            .map_err(|e| format!("--model link: {e}"))?;
        model_for(design, bounds, options(&flags.bounds.options)?)
    }

    fn with_design(&self, design: &str) -> Result<Self, String> {
        if design.contains('+') {
            let mut model = Link::new(compose(design)?, self.bounds);
            model.options = self.options;
            return Ok(model);
        }
        let d = design_named(design).ok_or_else(|| {
            format!(
                "unknown design `{design}` (known: {})",
                Self::design_names().join(", ")
            )
        })?;
        let mut model = Link::new(d, self.bounds);
        model.options = self.options;
        Ok(model)
    }

    fn set_option(&mut self, name: &str) -> Result<(), String> {
        self.options.set(name)
    }

    fn variant(&self) -> &'static str {
        self.design.name
    }

    fn action_kinds(&self) -> &'static [&'static str] {
        LINK_KINDS
    }

    fn action_kind(&self, action: &Action) -> usize {
        match action {
            Action::Fetch(_) => 0,
            Action::FetchLate(_) => 1,
            Action::Land(_) => 2,
            // The client's fetch's steps weigh as the fetch and the landing
            // they stand beside, so swarm draws keep their kinds.
            Action::FetchEarlier(_) => 0,
            Action::Answer(_) => 2,
            Action::Take(_) => 3,
            Action::Heartbeat(_) => 4,
            Action::Finish(_) => 5,
            Action::Tick => 6,
            // `redelivery-queue`'s server order weighs as time, whose
            // running out of ack waits it orders.
            Action::Queue(_) => 6,
            Action::Crash(_) => 7,
            Action::Delay(_) => 8,
            Action::Read(_) => 9,
            Action::Start(_) => 10,
            Action::Drop(_) => 11,
            // The faults beyond the contract weigh as the step each stands
            // in for, so that swarm draws (a weight per kind) stay those of
            // the contract's reading, whose budgets are zero there anyway.
            Action::SlowAnswer(_) => 1,
            Action::FinishAckLost(_) => 5,
            Action::Nak(_) => 9,
            Action::Rewind(_) => 0,
        }
    }

    /// A builder is one actor for all its steps; the clock is one; each
    /// builder's faults are actors of their own.
    fn actor(&self, _s: &State, action: &Action) -> u64 {
        let kind = match *action {
            Action::Tick => 1,
            Action::Crash(_) => 2,
            Action::Delay(_) => 3,
            Action::SlowAnswer(_) => 4,
            Action::FinishAckLost(_) => 5,
            Action::Nak(_) => 6,
            // The server's order of its redelivery queue: one actor.
            Action::Queue(_) => 7,
            Action::Rewind(_) => 8,
            // A builder's own steps, listed so that a new action must be
            // placed here (the match is exhaustive).
            Action::Fetch(_)
            | Action::FetchLate(_)
            | Action::Land(_)
            | Action::FetchEarlier(_)
            | Action::Answer(_)
            | Action::Take(_)
            | Action::Read(_)
            | Action::Start(_)
            | Action::Drop(_)
            | Action::Heartbeat(_)
            | Action::Finish(_) => 0,
        };
        kind << 32 | action.builder().map_or(0, u64::from)
    }

    /// Every ask has its result; a walk that ends with time stopped at the
    /// horizon while something still runs or waits is not judged (the
    /// bound, not the design, ended it).
    fn settled(&self, s: &State) -> bool {
        s.results.iter().all(|&r| r) || !s.is_settled()
    }

    fn unsettled(&self, s: &State) -> String {
        let open: Vec<String> = (0..s.messages.len())
            .filter(|&a| !s.results[a])
            .map(|a| slotcheck_models::link::ask_name(a as _))
            .collect();
        format!("{} without a result", open.join(", "))
    }

    fn fault_on(&self, s: &State, action: &Action) -> Option<u64> {
        match *action {
            Action::Crash(b)
            | Action::Delay(b)
            | Action::SlowAnswer(b)
            | Action::FinishAckLost(b)
            | Action::Nak(b)
            | Action::Rewind(b) => Some(self.actor(s, &Action::Fetch(b))),
            _ => None,
        }
    }

    fn option_names(&self) -> Vec<&'static str> {
        self.options.names()
    }

    fn from_meta(meta: &Map<String, Value>) -> Result<Self, String> {
        let design = meta
            .get("design")
            .and_then(Value::as_str)
            .ok_or("`#meta` has no `design`")?;
        let design = design_named(design)
            .or_else(|| compose(design).ok())
            .ok_or_else(|| format!("unknown link design `{design}`"))?;
        let (mut model, names) = meta_bounds_and_options(&Link::new(design, DEFAULT_BOUNDS), meta)?;
        for name in names {
            model.options.set(&name)?;
        }
        Ok(model)
    }

    /// Each builder's offset uniform in the skew, then sorted: the canonical
    /// naming of [`Link::initial_states`], without listing its
    /// `(2 skew + 1)^builders / builders!` states every run.
    fn pick_init(&self, rng: &mut ChaCha8Rng) -> State {
        let s = self.bounds.skew_ticks() as i8;
        let mut offsets: Vec<i8> = (0..self.bounds.builders)
            .map(|_| rng.random_range(-s..=s))
            .collect();
        offsets.sort_unstable();
        init_with_offsets(self, &offsets)
    }

    /// The offsets of the builders kept, each brought within the skew (a
    /// lower skew pulls the furthest clocks in, keeping their order), so
    /// that shrinking can lower the skew to what the path needs.
    fn init_like(&self, like: &State) -> Option<State> {
        let s = self.bounds.skew_ticks() as i8;
        let offsets: Vec<i8> = like
            .builders
            .iter()
            .map(|b| b.offset.clamp(-s, s))
            .take(self.bounds.builders as usize)
            .collect();
        if offsets.len() < self.bounds.builders as usize {
            return None;
        }
        Some(init_with_offsets(self, &offsets))
    }

    fn on_bounds_of(&self, other: &Self) -> Self {
        Link {
            bounds: other.bounds,
            options: other.options,
            ..*self
        }
    }

    /// The link design's mutants are listed, not found: no budget to spend.
    fn mutants_within(
        &self,
        _go_on: &mut dyn FnMut(usize) -> bool,
    ) -> Option<Vec<(String, String, Self)>> {
        Some(
            slotcheck_models::link::mutation::mutations(self.design)
                .into_iter()
                .map(|m| {
                    let mutant = Link {
                        mutation: Some(m),
                        ..*self
                    };
                    (m.name(self.design.name), m.describe().to_string(), mutant)
                })
                .collect(),
        )
    }

    fn paths(&self) -> Vec<String> {
        coverage::paths(self.design)
            .into_iter()
            .map(|p| p.name().to_string())
            .collect()
    }

    fn reach_within(
        &self,
        go_on: &mut dyn FnMut(usize) -> bool,
        reached: &mut std::collections::BTreeSet<String>,
    ) -> Option<()> {
        super::reach_by_name(
            |marks| coverage::reach_within(self, go_on, marks),
            |p| p.name().to_string(),
            reached,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::ModelBounds;
    use rand::SeedableRng;
    use stateright::Model;

    #[test]
    fn a_drawn_initial_state_is_one_of_the_models_and_every_one_can_be_drawn() {
        let mut bounds = DEFAULT_BOUNDS;
        bounds.builders = 3;
        bounds.skew = 10;
        let model = model_for("after-1649", bounds, Options::default()).unwrap();
        let inits = model.init_states();
        let mut drawn = std::collections::BTreeSet::new();
        for run in 0..2000 {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            rng.set_stream(run);
            let init = model.pick_init(&mut rng);
            assert!(inits.contains(&init));
            drawn.insert(init);
        }
        assert_eq!(drawn.len(), inits.len());
    }

    #[test]
    fn a_lower_skew_pulls_the_furthest_clocks_in() {
        let mut bounds = DEFAULT_BOUNDS;
        bounds.skew = 35;
        let model = model_for("after-1649", bounds, Options::default()).unwrap();
        let like = init_with_offsets(&model, &[-7, 3]);
        let lower = model.with_bounds(&[("skew_ticks", 2)]).unwrap();
        let init = lower.init_like(&like).unwrap();
        let offsets: Vec<i8> = init.builders.iter().map(|b| b.offset).collect();
        assert_eq!(offsets, [-2, 2]);
        assert!(lower.init_states().contains(&init));
        let fewer = model.with_bounds(&[("builders", 1)]).unwrap();
        assert_eq!(fewer.init_like(&like).unwrap().builders.len(), 1);
        assert!(model.with_bounds(&[("skew_ticks", 25)]).is_err());
    }
}
