//! The link model as the tool runs it: the [`ToolModel`] (how flags and a
//! scenario file give a model, what the simulator draws and lowers, its
//! mutants); its bounds as flags, JSON and words are in `link_bounds.rs`.

use super::bounds::{meta_bounds_and_options, scenario_whole, BoundError, Whole};
pub use super::link_bounds::{
    bounds_json, bounds_line, options, LinkArgs, ScenarioBounds, DEFAULT_BOUNDS,
};
use super::link_bounds::{extra_faults, timings};
use super::{ModelArgs, ToolModel};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};
use slotcheck_models::link::{
    all_designs, design_named, Action, Bounds, Link, Options, State, DESIGNS, TICK_SECONDS,
};
use slotcheck_models::NamedOptions;
use std::ops::RangeInclusive;
use toml::Spanned;

pub fn model_for(design: &str, bounds: Bounds, options: Options) -> Result<Link, String> {
    let design = design_named(design).ok_or_else(|| {
        let known: Vec<&str> = all_designs().map(|d| d.name).collect();
        format!(
            "--model link: unknown design `{design}` (known: {})",
            known.join(", ")
        )
    })?;
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

fn optional_whole(value: &Option<Spanned<Whole>>, field: &str) -> Result<u8, BoundError> {
    value.as_ref().map_or(Ok(0), |v| scenario_whole(v, field))
}

fn timing_or(value: &Option<Spanned<Whole>>, field: &str, or: u16) -> Result<u16, BoundError> {
    value.as_ref().map_or(Ok(or), |v| scenario_whole(v, field))
}

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
    type ScenarioBounds = ScenarioBounds;

    fn design_names() -> Vec<&'static str> {
        all_designs().map(|d| d.name).collect()
    }

    /// The source's four: the repairs are compared on the findings
    /// (`compare --findings`) and checked by name.
    fn source_design_names() -> Vec<&'static str> {
        DESIGNS.iter().map(|d| d.name).collect()
    }

    fn design_notes() -> Vec<(&'static str, &'static str, &'static str)> {
        all_designs().map(|d| (d.name, d.summary, d.cost)).collect()
    }

    fn stories_page() -> &'static str {
        "docs/findings-link.md"
    }

    fn designs_help() -> String {
        let mut text = String::from("Link designs (--model link):");
        for d in all_designs() {
            text.push_str(&format!("\n  {}: {}", d.name, d.summary));
        }
        text
    }

    fn from_flags(flags: &ModelArgs, design: &str) -> Result<Self, String> {
        let bounds = flags.link.bounds(flags.bounds.crashes)?;
        model_for(design, bounds, options(&flags.bounds.options)?)
    }

    fn from_scenario(raw: &Spanned<ScenarioBounds>) -> Result<Self, BoundError> {
        let b = raw.get_ref();
        let bounds = Bounds {
            asks: scenario_whole(&b.asks, "asks")?,
            builders: scenario_whole(&b.builders, "builders")?,
            skew: scenario_whole(&b.skew, "skew")?,
            horizon: scenario_whole(&b.horizon, "horizon")?,
            longest_build: scenario_whole(&b.longest_build, "longest_build")?,
            crashes: scenario_whole(&b.crashes, "crashes")?,
            late_heartbeats: scenario_whole(&b.late_heartbeats, "late_heartbeats")?,
            late_by: scenario_whole(&b.late_by, "late_by")?,
            max_deliver: scenario_whole(&b.max_deliver, "max_deliver")?,
            slow_answers: optional_whole(&b.slow_answers, "slow_answers")?,
            lost_acks: optional_whole(&b.lost_acks, "lost_acks")?,
            naks: optional_whole(&b.naks, "naks")?,
            ack_wait: timing_or(&b.ack_wait, "ack_wait", DEFAULT_BOUNDS.ack_wait)?,
            heartbeat_every: timing_or(
                &b.heartbeat_every,
                "heartbeat_every",
                DEFAULT_BOUNDS.heartbeat_every,
            )?,
            fresh_for: timing_or(&b.fresh_for, "fresh_for", DEFAULT_BOUNDS.fresh_for)?,
        };
        if let Err(message) = bounds.validate() {
            // The model's messages name the bound in words (`longest build must
            // ...`); point at the key that holds it.
            let keyed = [
                ("asks", "asks", b.asks.span()),
                ("builders", "builders", b.builders.span()),
                ("skew", "skew", b.skew.span()),
                ("horizon", "horizon", b.horizon.span()),
                ("longest build", "longest_build", b.longest_build.span()),
                ("late by", "late_by", b.late_by.span()),
                ("max deliver", "max_deliver", b.max_deliver.span()),
            ];
            let timing_keys = [
                ("ack wait", "ack_wait", &b.ack_wait),
                ("heartbeat every", "heartbeat_every", &b.heartbeat_every),
                ("fresh for", "fresh_for", &b.fresh_for),
            ];
            let keyed = keyed.into_iter().chain(
                timing_keys
                    .into_iter()
                    .filter_map(|(w, k, v)| v.as_ref().map(|v| (w, k, v.span()))),
            );
            let (field, span) = keyed
                .into_iter()
                .find(|(words, _, _)| message.starts_with(words))
                .map_or(("bounds".to_string(), raw.span()), |(_, key, span)| {
                    (format!("bounds.{key}"), span)
                });
            return Err(BoundError {
                span,
                field,
                message,
            });
        }
        Ok(Link::new(&DESIGNS[0], bounds))
    }

    fn with_design(&self, design: &str) -> Result<Self, String> {
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
            Action::Take(_) => 3,
            Action::Heartbeat(_) => 4,
            Action::Finish(_) => 5,
            Action::Tick => 6,
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
        }
    }

    /// A builder is one actor for all its steps; the clock is one; each
    /// builder's faults are actors of their own.
    fn actor(&self, _s: &State, action: &Action) -> u64 {
        let (kind, who) = match *action {
            Action::Fetch(b)
            | Action::FetchLate(b)
            | Action::Land(b)
            | Action::Take(b)
            | Action::Read(b)
            | Action::Start(b)
            | Action::Drop(b)
            | Action::Heartbeat(b)
            | Action::Finish(b) => (0, b as u64),
            Action::Tick => (1, 0),
            Action::Crash(b) => (2, b as u64),
            Action::Delay(b) => (3, b as u64),
            Action::SlowAnswer(b) => (4, b as u64),
            Action::FinishAckLost(b) => (5, b as u64),
            Action::Nak(b) => (6, b as u64),
        };
        kind << 32 | who
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
            | Action::Nak(b) => Some(self.actor(s, &Action::Fetch(b))),
            _ => None,
        }
    }

    /// Small enough that one walk stays well under a hundred steps: at most
    /// 24 ticks, three asks, three builders.
    fn swarm_ranges(&self) -> Vec<(&'static str, RangeInclusive<u32>)> {
        vec![
            ("asks", 1..=3),
            ("builders", 2..=3),
            // Up to 60 s, past the source's 35 s.
            ("skew_ticks", 0..=12),
            // 30 s to 120 s: an ack wait (60 s) and a redelivery fit.
            ("horizon_ticks", 6..=24),
            ("longest_build_ticks", 1..=18),
            ("crashes", 0..=2),
            ("late_heartbeats", 0..=2),
            // 5 s to 50 s: the README's late-heartbeat finding needs 50.
            ("late_by_ticks", 1..=10),
            // Above the crashes: fewer deliveries than crashes lose an ask in
            // every design, which would bury the rest (`--range` lowers it).
            ("max_deliver", 3..=4),
        ]
    }

    fn bound_values(&self) -> Vec<(&'static str, u32)> {
        let b = self.bounds;
        let mut values = vec![
            ("asks", b.asks as u32),
            ("builders", b.builders as u32),
            ("skew_ticks", b.skew_ticks() as u32),
            ("horizon_ticks", b.horizon_ticks() as u32),
            ("longest_build_ticks", b.longest_build_ticks() as u32),
            ("crashes", b.crashes as u32),
            ("late_heartbeats", b.late_heartbeats as u32),
            ("late_by_ticks", b.late_by_ticks() as u32),
            ("max_deliver", b.max_deliver as u32),
        ];
        // The budgets beyond the contract only where given, so that every
        // trace and report of the contract's reading reads as it did.
        for (key, _, _, n) in extra_faults(&b) {
            values.push((key, n as u32));
        }
        if !b.timings_are_the_sources() {
            values.extend([
                ("ack_wait_ticks", b.ack_wait_ticks() as u32),
                ("heartbeat_ticks", b.heartbeat_ticks() as u32),
                ("fresh_for_ticks", b.fresh_for_ticks() as u32),
            ]);
        }
        values
    }

    /// The timings: the source's unless `--range` widens them.
    fn swarm_kept(&self) -> Vec<(&'static str, RangeInclusive<u32>)> {
        let b = self.bounds;
        let kept = |t: u8| t as u32..=t as u32;
        vec![
            ("ack_wait_ticks", kept(b.ack_wait_ticks())),
            ("heartbeat_ticks", kept(b.heartbeat_ticks())),
            ("fresh_for_ticks", kept(b.fresh_for_ticks())),
        ]
    }

    fn with_bounds(&self, values: &[(&str, u32)]) -> Result<Self, String> {
        let mut b = self.bounds;
        for &(name, value) in values {
            let too_large = || format!("{name} {value} is too large");
            let count = || u8::try_from(value).map_err(|_| too_large());
            let seconds = || {
                u16::try_from(value)
                    .ok()
                    .and_then(|v| v.checked_mul(TICK_SECONDS))
                    .ok_or_else(too_large)
            };
            match name {
                "asks" => b.asks = count()?,
                "builders" => b.builders = count()?,
                "skew_ticks" => b.skew = seconds()?,
                "horizon_ticks" => b.horizon = seconds()?,
                "longest_build_ticks" => b.longest_build = seconds()?,
                "crashes" => b.crashes = count()?,
                "late_heartbeats" => b.late_heartbeats = count()?,
                "late_by_ticks" => b.late_by = seconds()?,
                "max_deliver" => b.max_deliver = count()?,
                "slow_answers" => b.slow_answers = count()?,
                "lost_acks" => b.lost_acks = count()?,
                "naks" => b.naks = count()?,
                "ack_wait_ticks" => b.ack_wait = seconds()?,
                "heartbeat_ticks" => b.heartbeat_every = seconds()?,
                "fresh_for_ticks" => b.fresh_for = seconds()?,
                other => return Err(format!("unknown link bound `{other}`")),
            }
        }
        // The CLI's own check, so a drawn or lowered bound is never one the
        // CLI would refuse.
        b.validate()?;
        Ok(Link { bounds: b, ..*self })
    }

    fn option_names(&self) -> Vec<&'static str> {
        self.options.names()
    }

    fn from_meta(meta: &Map<String, Value>) -> Result<Self, String> {
        let design = meta
            .get("design")
            .and_then(Value::as_str)
            .ok_or("`#meta` has no `design`")?;
        let design =
            design_named(design).ok_or_else(|| format!("unknown link design `{design}`"))?;
        let (mut model, names) = meta_bounds_and_options(&Link::new(design, DEFAULT_BOUNDS), meta)?;
        // The budgets beyond the contract are in `#meta` only when not zero.
        let bounds = meta.get("bounds").and_then(Value::as_object);
        let extra = |key: &str| -> Result<u8, String> {
            bounds.and_then(|b| b.get(key)).map_or(Ok(0), |v| {
                v.as_u64()
                    .and_then(|n| u8::try_from(n).ok())
                    .ok_or_else(|| format!("`#meta.bounds.{key}` is not a small whole number"))
            })
        };
        model.bounds.slow_answers = extra("slow_answers")?;
        model.bounds.lost_acks = extra("lost_acks")?;
        model.bounds.naks = extra("naks")?;
        // So are the timings, where they are not the source's.
        for key in ["ack_wait_ticks", "heartbeat_ticks", "fresh_for_ticks"] {
            if let Some(v) = bounds.and_then(|b| b.get(key)) {
                let ticks = v
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| format!("`#meta.bounds.{key}` is not a small whole number"))?;
                model = model.with_bounds(&[(key, ticks)])?;
            }
        }
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

    fn bounds_json(&self) -> Value {
        bounds_json(&self.bounds, &self.options)
    }

    fn bounds_line(&self) -> String {
        bounds_line(&self.bounds, &self.options)
    }

    fn bounds_flags(&self) -> String {
        let b = self.bounds;
        let mut flags = format!(
            "--asks {} --builders {} --skew {} --horizon {} --longest-build {} --crashes {} --late-heartbeats {} --late-by {} --max-deliver {}",
            b.asks, b.builders, b.skew, b.horizon, b.longest_build, b.crashes, b.late_heartbeats, b.late_by, b.max_deliver
        );
        for (_, _, flag, n) in extra_faults(&b) {
            flags.push_str(&format!(" {flag} {n}"));
        }
        for (_, _, flag, s) in timings(&b) {
            flags.push_str(&format!(" {flag} {s}"));
        }
        for option in self.options.names() {
            flags.push_str(&format!(" --option {option}"));
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
