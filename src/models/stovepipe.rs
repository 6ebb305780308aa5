//! The stovepipe model as the tool runs it: its default bounds and its
//! table of bounds (from which its flags, scenario `[bounds]`, JSON, words
//! and swarm ranges are made), and the rest of [`ToolModel`] (what the
//! simulator draws and lowers, its mutants).

use super::bounds::{meta_bounds_and_options, Bound, ModelBounds, Swarm};
use super::{model_of_design, ModelArgs, ToolModel};
use serde_json::{Map, Value};
use slotcheck_models::stovepipe::{
    compose, composition_help, request_name, Action, Bounds, State, Stovepipe, DESIGNS, REPAIRS,
};
use slotcheck_models::stovepipe::{coverage, mutation};
use slotcheck_models::NamedOptions;

/// The bounds `compare` uses when given none: the richest on which every
/// design finishes in a few seconds on a 2-core machine (measured; see the
/// README), and on which every finding of one or two requests shows.
pub const DEFAULT_BOUNDS: Bounds = Bounds {
    requests: 2,
    max_concurrent: 1,
    crashes: 2,
    stalls: 1,
    max_deliveries: 2,
};

/// The stovepipe model's bounds (see `docs/stovepipe.md`, "Bounds"), in
/// the order every form lists them. Every one is always told, so a scenario
/// gives every one.
const BOUNDS: &[Bound<Bounds>] = &[
    Bound {
        words: "requests {}",
        help: "how many requests arrive (at any time, in ID order)",
        range: 1..=32,
        swarm: Swarm::Drawn(1, 8),
        ..Bound::count(
            "requests",
            "requests",
            |b| b.requests.into(),
            |b, v| b.requests = v as u8,
        )
    },
    Bound {
        words: "max_concurrent {}",
        value_name: "K",
        help: "the queue's limit on concurrent builds",
        range: 1..=32,
        swarm: Swarm::Drawn(1, 3),
        ..Bound::count(
            "max_concurrent",
            "max-concurrent",
            |b| b.max_concurrent.into(),
            |b, v| b.max_concurrent = v as u8,
        )
    },
    Bound {
        words: "crashes {}",
        help: "how many times a worker may crash (its message becomes visible again, attempt +1)",
        swarm: Swarm::Drawn(0, 4),
        ..Bound::count(
            "crashes",
            "crashes",
            |b| b.crashes.into(),
            |b, v| b.crashes = v as u8,
        )
    },
    Bound {
        words: "stalls {}",
        help: "how many times a message's visibility may expire while its worker still runs",
        swarm: Swarm::Drawn(0, 2),
        ..Bound::count(
            "stalls",
            "stalls",
            |b| b.stalls.into(),
            |b, v| b.stalls = v as u8,
        )
    },
    Bound {
        words: "max_deliveries {}",
        help: "attempts before a message is dead-lettered",
        range: 1..=255,
        swarm: Swarm::Drawn(1, 3),
        ..Bound::count(
            "max_deliveries",
            "max-deliveries",
            |b| b.max_deliveries.into(),
            |b, v| b.max_deliveries = v as u8,
        )
    },
];

/// The worker a scripted stovepipe step names, if any; deliveries create
/// workers 1, 2, ... in order.
fn worker_number(tokens: &[&str]) -> Option<usize> {
    match tokens {
        [verb, "worker", n] if matches!(*verb, "step" | "crash" | "stall") => n.parse().ok(),
        _ => None,
    }
}

/// `script` without worker `k` (its delivery and its steps), later workers
/// renumbered.
fn without_worker(script: &[String], k: usize) -> Vec<String> {
    let mut delivered = 0;
    let mut out = Vec::new();
    for line in script {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.first() == Some(&"deliver") {
            delivered += 1;
            if delivered == k {
                continue;
            }
        }
        match worker_number(&tokens) {
            Some(n) if n == k => continue,
            Some(n) if n > k => out.push(format!("{} worker {}", tokens[0], n - 1)),
            _ => out.push(line.clone()),
        }
    }
    out
}

/// The request number of `R3`.
fn request_number(token: &str) -> Option<usize> {
    token.strip_prefix('R')?.parse().ok()
}

/// `script` without request `r` (its arrival, its workers, its builds),
/// later requests renamed.
fn without_request(script: &[String], r: usize) -> Vec<String> {
    let mut script = script.to_vec();
    // Its workers, last first so that the numbers still match.
    let mut delivered = 0;
    let mut workers = Vec::new();
    for line in &script {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.first() == Some(&"deliver") {
            delivered += 1;
            if tokens.last().and_then(|t| request_number(t)) == Some(r) {
                workers.push(delivered);
            }
        }
    }
    for k in workers.into_iter().rev() {
        script = without_worker(&script, k);
    }
    script
        .into_iter()
        .filter(|line| {
            !line
                .split_whitespace()
                .any(|t| request_number(t) == Some(r))
        })
        .map(|line| {
            line.split_whitespace()
                .map(|t| match request_number(t) {
                    Some(n) if n > r => format!("R{}", n - 1),
                    _ => t.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

const STOVEPIPE_KINDS: &[&str] = &[
    "arrive",
    "deliver",
    "step",
    "finish-build",
    "crash",
    "stall",
];

impl ToolModel for Stovepipe {
    const NAME: &'static str = "stovepipe";
    type Bounds = Bounds;
    const DEFAULT_BOUNDS: Bounds = DEFAULT_BOUNDS;

    fn bound_table() -> &'static [Bound<Bounds>] {
        BOUNDS
    }

    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn on_bounds(&self, bounds: Bounds) -> Self {
        Stovepipe { bounds, ..*self }
    }

    fn validate_bounds(bounds: &Bounds) -> Result<(), String> {
        bounds.validate()
    }

    fn first_design(bounds: Bounds) -> Self {
        Stovepipe::new(DESIGNS[0], bounds)
    }

    fn design_names() -> Vec<&'static str> {
        DESIGNS.iter().map(|d| d.name).collect()
    }

    fn design_notes() -> Vec<(&'static str, &'static str, &'static str)> {
        DESIGNS.iter().map(|d| (d.name, d.change, d.cost)).collect()
    }

    fn design_note(name: &str) -> Result<(&'static str, &'static str, &'static str), String> {
        compose(name).map(|d| (d.name, d.change, d.cost))
    }

    fn designs_help() -> String {
        super::designs_help_text(
            "Stovepipe designs, each as what it changes in the contract's admit table (a gate, b claim, c processing write, d submit, and the release rules), and its cost:",
            DESIGNS.iter().map(|d| (d.name, d.change, d.cost)),
            &composition_help(),
            "docs/designs.md",
            REPAIRS.iter().map(|r| (r.name, r.change)),
        )
    }

    fn from_flags(flags: &ModelArgs, design: &str) -> Result<Self, String> {
        let design = compose(design).map_err(|e| match model_of_design(design) {
            Some(other) if other != Self::NAME => {
                format!("`{design}` is a design of the {other} model: add --model {other}")
            }
            _ => e,
        })?;
        let b = flags.bounds.bounds::<Self>()?;
        b.validate()?;
        let mut model = Stovepipe::new(design, b);
        for name in &flags.bounds.options {
            model
                .options
                .set(name)
                .map_err(|e| format!("--option: {e}"))?;
        }
        Ok(model)
    }

    fn with_design(&self, design: &str) -> Result<Self, String> {
        compose(design).map(|d| {
            let mut model = Stovepipe::new(d, self.bounds);
            model.options = self.options;
            model
        })
    }

    fn set_option(&mut self, name: &str) -> Result<(), String> {
        self.options.set(name)
    }

    fn variant(&self) -> &'static str {
        self.design.name
    }

    fn action_kinds(&self) -> &'static [&'static str] {
        STOVEPIPE_KINDS
    }

    fn action_kind(&self, action: &Action) -> usize {
        match action {
            Action::Arrive => 0,
            Action::Deliver { .. } => 1,
            Action::Step(_) => 2,
            Action::FinishBuild(_) => 3,
            Action::Crash(_) => 4,
            Action::Stall(_) => 5,
            // A worker's step the database refused: of the step kind, so
            // that swarm draws the same weights with or without aborts.
            Action::Abort(_) => 2,
        }
    }

    /// A worker is known by its message (kind and request) and whether it
    /// still holds it, which stay the same while it steps (the state keeps workers sorted, so its index
    /// does not); its faults are actors of their own, so that a crash can
    /// fall between any two of its steps.
    fn actor(&self, s: &State, action: &Action) -> u64 {
        // A stalled worker (no longer holding its message) is another actor
        // than the worker its message was redelivered to.
        self.actor_of(s, action)
    }

    fn settled(&self, s: &State) -> bool {
        s.arrived() == self.bounds.requests && s.requests().all(|(_, r)| r.is_terminal())
    }

    fn unsettled(&self, s: &State) -> String {
        let open: Vec<String> = s
            .requests()
            .filter(|(_, r)| !r.is_terminal())
            .map(|(r, state)| format!("{} is {}", request_name(r), state.name()))
            .collect();
        let unarrived = self.bounds.requests - s.arrived();
        match (open.is_empty(), unarrived) {
            (false, _) => format!("{}, not terminal", open.join(", ")),
            (true, n) => format!("{n} request(s) not yet arrived"),
        }
    }

    fn fault_on(&self, s: &State, action: &Action) -> Option<u64> {
        match *action {
            Action::Crash(i) | Action::Stall(i) => Some(self.actor(s, &Action::Step(i))),
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
        let design = compose(design)?;
        let (mut model, names) =
            meta_bounds_and_options(&Stovepipe::new(design, Bounds::default()), meta)?;
        for name in names {
            model.options.set(&name)?;
        }
        Ok(model)
    }

    fn removals(&self, script: &[String]) -> Vec<(Self, Vec<String>)> {
        let workers = script.iter().filter(|l| l.starts_with("deliver ")).count();
        let requests = script.iter().filter(|l| l.starts_with("arrive ")).count();
        let mut candidates = Vec::new();
        for r in (1..=requests).rev() {
            let fewer = self.with_bounds(&[("requests", self.bounds.requests as u32 - 1)]);
            for model in fewer.into_iter().chain([*self]) {
                candidates.push((model, without_request(script, r)));
            }
        }
        candidates.extend(
            (1..=workers)
                .rev()
                .map(|k| (*self, without_worker(script, k))),
        );
        candidates
    }

    fn on_bounds_of(&self, other: &Self) -> Self {
        Stovepipe {
            bounds: other.bounds,
            options: other.options,
            ..*self
        }
    }

    fn paths(&self) -> Vec<String> {
        coverage::paths(&self.design)
            .iter()
            .map(coverage::Path::name)
            .collect()
    }

    fn reach_within(
        &self,
        go_on: &mut dyn FnMut(usize) -> bool,
        reached: &mut std::collections::BTreeSet<String>,
    ) -> Option<()> {
        super::reach_by_name(
            |paths| coverage::reach_within(self, go_on, paths),
            coverage::Path::name,
            reached,
        )
    }

    fn mutants_within(
        &self,
        go_on: &mut dyn FnMut(usize) -> bool,
    ) -> Option<Vec<(String, String, Self)>> {
        let found = mutation::mutations_within(self, go_on)?;
        Some(
            found
                .into_iter()
                .map(|m| (m.name(self.design.name), m.describe(), self.mutant(m)))
                .collect(),
        )
    }

    /// One to three requests, one or two slots, up to two crashes and two
    /// stalls, one or two deliveries, smallest first (three requests with at
    /// most two faults: richer takes minutes per mutant).
    fn ladder(&self) -> Vec<Self> {
        let mut ladder = Vec::new();
        for requests in 1..=3u8 {
            for max_concurrent in 1..=requests.min(2) {
                for crashes in 0..=2u8 {
                    for stalls in 0..=2u8 {
                        for max_deliveries in 1..=2u8 {
                            if requests == 3 && crashes + stalls > 2 {
                                continue;
                            }
                            let bounds = Bounds {
                                requests,
                                max_concurrent,
                                crashes,
                                stalls,
                                max_deliveries,
                            };
                            let size = requests as u32 * 4
                                + max_concurrent as u32
                                + crashes as u32 * 3
                                + stalls as u32 * 4
                                + max_deliveries as u32;
                            ladder.push((size, Stovepipe { bounds, ..*self }));
                        }
                    }
                }
            }
        }
        ladder.sort_by_key(|(size, m)| (*size, m.bounds.requests));
        ladder.into_iter().map(|(_, m)| m).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn taking_out_a_worker_renumbers_the_later_ones() {
        let script = lines(&[
            "arrive R1",
            "deliver process R1",
            "deliver process R1",
            "step worker 1",
            "step worker 2",
            "crash worker 2",
        ]);
        assert_eq!(
            without_worker(&script, 1),
            lines(&[
                "arrive R1",
                "deliver process R1",
                "step worker 1",
                "crash worker 1"
            ])
        );
    }

    #[test]
    fn taking_out_a_request_renames_the_later_ones_and_drops_its_workers() {
        let script = lines(&[
            "arrive R1",
            "arrive R2",
            "deliver process R1",
            "deliver process R2",
            "step worker 2",
            "step worker 1",
            "finish build R2",
        ]);
        assert_eq!(
            without_request(&script, 1),
            lines(&[
                "arrive R1",
                "deliver process R1",
                "step worker 1",
                "finish build R1"
            ])
        );
    }
}
