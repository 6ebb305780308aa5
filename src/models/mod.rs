//! The models as the tool runs them. [`ToolModel`] is everything the tool
//! needs of a model beyond stateright's `Model` and the models crate's
//! `Narrated` and `Packed`: its designs, how it is built from flags, a
//! scenario file or a trace, how its bounds read, what the simulator draws
//! and lowers, and its mutants. `stovepipe.rs` and `link.rs` implement it;
//! each model's bounds are a table of rows ([`bounds::Bound`]), from which
//! `bounds.rs` makes every form of them (flags, scenario `[bounds]`, JSON,
//! words, swarm ranges) the same way for every model.
//!
//! This file is also the registry: the one place that names every model
//! ([`ModelName`], [`MODELS`], [`for_model`], [`ModelArgs`]). The rooms
//! that run models (`check`, `simulate`, `scenario`, `report`, `mutate`) are
//! generic over [`ToolModel`] and reach a model by name only through
//! [`for_model`]; a third model is a new file here and a line in each list
//! below, with no edit in them.
//!
//! This room may use the models crate and nothing else of the tool: every
//! other room uses it, never the other way.

pub mod bounds;
pub mod link;
mod link_bounds;
pub mod stovepipe;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value as Json};
use slotcheck_models::link::Link;
use slotcheck_models::stovepipe::Stovepipe;
use slotcheck_models::{Narrated, Packed};
use std::fmt::Debug;
use std::hash::Hash;

pub use bounds::{whole, Bound, BoundError, ModelBounds, Swarm};

/// What the tool needs of a model, in one trait: its name and designs; its
/// bounds as a table (every form of them, flags, scenario `[bounds]`, JSON,
/// words, names and swarm ranges, is made from it: [`ModelBounds`]); how it
/// is built from the command line and a trace's `#meta`; the kind of each
/// action (for the simulator, which draws, lowers and records them); and
/// its mutants.
pub trait ToolModel:
    Packed
    + Narrated<
        State: Clone + Eq + Hash + Debug + Send + Sync + 'static,
        Action: Clone + PartialEq + Debug + Send + Sync + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
    /// `stovepipe`: the name `--model` and scenario files give, and the
    /// `model` field of a trace's `#meta`.
    const NAME: &'static str;

    /// The model's bounds, as its table reads and sets them.
    type Bounds: Copy + Debug + 'static;

    /// The bounds a command uses when given none.
    const DEFAULT_BOUNDS: Self::Bounds;

    /// The model's bounds, one row each, in the order every form lists
    /// them: the flags, the scenario `[bounds]`, the JSON, the one-line
    /// form and the swarm ranges are made from it ([`ModelBounds`]).
    fn bound_table() -> &'static [Bound<Self::Bounds>];
    /// This model's bounds.
    fn bounds(&self) -> Self::Bounds;
    /// The same design and options on other bounds (checked already).
    fn on_bounds(&self, bounds: Self::Bounds) -> Self;
    /// The model's own check of its bounds, beyond each row's range (a
    /// bound that must be a whole number of ticks, or depends on another);
    /// the message starts with the bound's key, or the key in words
    /// (`longest build`), so that a scenario's error points at it.
    fn validate_bounds(bounds: &Self::Bounds) -> Result<(), String>;

    // ------------------------------------------------ designs and building

    /// The model's name (its [`Self::NAME`]).
    fn model_name(&self) -> &'static str {
        Self::NAME
    }
    /// The design (or variant) of the model: `claim-first`.
    fn variant(&self) -> &'static str;
    /// Every design's name, in the model's order.
    fn design_names() -> Vec<&'static str>;
    /// The designs a plain `compare`, `simulate` and `mutate` run when none
    /// is named: every design unless the model keeps some to be named.
    fn source_design_names() -> Vec<&'static str> {
        Self::design_names()
    }
    /// Each design's name, what it changes and what it costs (empty when the
    /// model does not say), for the what-to-merge table.
    fn design_notes() -> Vec<(&'static str, &'static str, &'static str)>;
    /// The name, change and cost of the design `name` (a named design, or
    /// a composition where the model has them); the error says why there
    /// is none.
    fn design_note(name: &str) -> Result<(&'static str, &'static str, &'static str), String> {
        Self::design_notes()
            .into_iter()
            .find(|(n, _, _)| *n == name)
            .ok_or_else(|| {
                format!(
                    "unknown design `{name}` (known: {})",
                    Self::design_names().join(", ")
                )
            })
    }
    /// The page of the what-to-merge table's stories (`compare --findings
    /// --stories` prints it), as the Markdown table links to it.
    fn stories_page() -> &'static str {
        "docs/findings.md"
    }
    /// The designs as `--design`'s long help lists them.
    fn designs_help() -> String;
    /// The model of `design` on the bounds and options the command line gives.
    fn from_flags(flags: &ModelArgs, design: &str) -> Result<Self, String>;
    /// The model of its first design, no option set, on these bounds
    /// (checked already): what a scenario file's `[bounds]` gives.
    fn first_design(bounds: Self::Bounds) -> Self;
    /// The same bounds and options with another design (a name, or for a
    /// model that composes designs a composition); the error says why not.
    fn with_design(&self, design: &str) -> Result<Self, String>;
    /// Turns a model option on by name (`split-read`); the error lists the known ones.
    fn set_option(&mut self, name: &str) -> Result<(), String>;
    /// The model a trace's `#meta` describes (`design`, `bounds`, `options`).
    fn from_meta(meta: &Map<String, Json>) -> Result<Self, String>;

    // ------------------------------------------------ what the simulator needs

    /// The kinds of actions swarm weights are drawn for.
    fn action_kinds(&self) -> &'static [&'static str];
    /// The index in [`Self::action_kinds`] of an action.
    fn action_kind(&self, action: &Self::Action) -> usize;
    /// Who takes `action` in `state`, as a number that stays the same from
    /// one step to the next while that actor lives (a worker on a message, a
    /// builder, the clock): what the PCT scheduler gives priorities to.
    /// Default: the action's kind.
    fn actor(&self, _state: &Self::State, action: &Self::Action) -> u64 {
        self.action_kind(action) as u64
    }
    /// The actor a fault strikes (as [`Self::actor`] names it), or `None`
    /// for an action that is no fault: PCT takes faults only at its fault
    /// points, on the actor that has just acted. Default: no faults.
    fn fault_on(&self, _state: &Self::State, _action: &Self::Action) -> Option<u64> {
        None
    }
    /// Whether every request (ask) has reached its end, as the simulator's
    /// liveness phase requires of a walk's last state once faults are off
    /// (true too where the model's own bounds, not the design, stopped it).
    fn settled(&self, state: &Self::State) -> bool;
    /// What is not settled in `state`, in words.
    fn unsettled(&self, state: &Self::State) -> String;
    /// The model's options by name (`split-read`).
    fn option_names(&self) -> Vec<&'static str>;
    /// The initial state a walk starts from: uniform among the model's
    /// initial states, drawing nothing when there is one (so that such a
    /// model's walks stay as they were). A model with many overrides this to
    /// draw one without listing them all.
    fn pick_init(&self, rng: &mut ChaCha8Rng) -> Self::State {
        let mut inits = self.init_states();
        let k = if inits.len() == 1 {
            0
        } else {
            rng.random_range(0..inits.len())
        };
        inits.swap_remove(k)
    }
    /// The initial state of this model that keeps what the path needs of
    /// `like`, an initial state of the same model on other bounds (a
    /// builder's clock offset): where shrinking starts once it has lowered a
    /// bound; `None` when this model has no such state. Default: the first.
    fn init_like(&self, _like: &Self::State) -> Option<Self::State> {
        self.init_states().into_iter().next()
    }
    /// Scripts with one actor taken out whole (a worker, a request), renamed
    /// so that the rest still parses, each with the model to run it on (a
    /// request taken out lowers the request bound, or a wedge that needs
    /// every request to have arrived is lost): what removing chunks of
    /// steps cannot do when later steps name actors by number. Default:
    /// none.
    fn removals(&self, _script: &[String]) -> Vec<(Self, Vec<String>)> {
        Vec::new()
    }

    // ------------------------------------------------ mutants

    /// The design's mutants on these bounds: each its stable name, what it
    /// changes in one sentence, and its model. Finding them may explore
    /// every state: `go_on` is asked, with the states visited, every few
    /// hundred states (the caller's budgets); `None` when it said stop.
    fn mutants_within(
        &self,
        go_on: &mut dyn FnMut(usize) -> bool,
    ) -> Option<Vec<(String, String, Self)>>;
    /// [`Self::mutants_within`] with no budget.
    fn mutants(&self) -> Vec<(String, String, Self)> {
        self.mutants_within(&mut |_| true)
            .expect("no budget to run out")
    }
    /// The same design on a ladder of bounds, smallest first, where a
    /// survivor is looked for (`mutate --search`): the smallest that kills
    /// it says the bounds were too small. Default: none.
    fn ladder(&self) -> Vec<Self> {
        Vec::new()
    }
    /// This mutant on the bounds and options of `other`, a model of the same
    /// design: checked where its step may not be taken, it behaves as the
    /// design and is not killed there.
    fn on_bounds_of(&self, other: &Self) -> Self;

    // ------------------------------------------------ coverage marks

    /// Every path the design's handlers can take, by name, in the model's
    /// order (`check --coverage`); empty for a model without marks.
    fn paths(&self) -> Vec<String> {
        Vec::new()
    }
    /// Adds to `reached` the paths the design's steps take on these bounds,
    /// every state explored (`go_on` as for [`Self::mutants_within`]);
    /// `None` when it said stop, `reached` then holding those taken so far.
    fn reach_within(
        &self,
        _go_on: &mut dyn FnMut(usize) -> bool,
        _reached: &mut std::collections::BTreeSet<String>,
    ) -> Option<()> {
        Some(())
    }
}

/// [`ToolModel::reach_within`] for a model whose marks are typed: the walk
/// `reach` fills a set of marks, and their names go into `reached`.
pub(crate) fn reach_by_name<P: Ord>(
    reach: impl FnOnce(&mut std::collections::BTreeSet<P>) -> Option<()>,
    name: impl Fn(&P) -> String,
    reached: &mut std::collections::BTreeSet<String>,
) -> Option<()> {
    let mut marks = std::collections::BTreeSet::new();
    let done = reach(&mut marks);
    reached.extend(marks.iter().map(name));
    done
}

// ---------------------------------------------------------------- registry

/// Which model a command runs (`--model`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelName {
    #[default]
    Stovepipe,
    Link,
}

impl ModelName {
    /// The model's name: `stovepipe`.
    pub fn name(self) -> &'static str {
        match self {
            ModelName::Stovepipe => Stovepipe::NAME,
            ModelName::Link => Link::NAME,
        }
    }
}

/// Every model by name, in the order errors list them.
pub const MODELS: &[&str] = &[Stovepipe::NAME, Link::NAME];

/// Something to do with a model chosen by name: [`for_model`] calls `run`
/// with the model's type.
pub trait ForModel {
    type Out;
    fn run<M: ToolModel>(self) -> Self::Out;
}

/// Runs `job` with the model named `name`; `None` when no model has that name.
pub fn for_model<J: ForModel>(name: &str, job: J) -> Option<J::Out> {
    if name == Stovepipe::NAME {
        Some(job.run::<Stovepipe>())
    } else if name == Link::NAME {
        Some(job.run::<Link>())
    } else {
        None
    }
}

/// The model that has a design of this name, if any; a composition's is
/// its base's (`after-1649+hand-back` is link's).
pub fn model_of_design(design: &str) -> Option<&'static str> {
    let design = design.split('+').next().unwrap_or_default();
    struct Has<'a>(&'a str);
    impl ForModel for Has<'_> {
        type Out = bool;
        fn run<M: ToolModel>(self) -> bool {
            M::design_names().contains(&self.0)
        }
    }
    MODELS
        .iter()
        .copied()
        .find(|m| for_model(m, Has(design)) == Some(true))
}

/// ` --model link` for the commands slotcheck suggests; empty for the
/// default model.
pub fn model_flag(name: &str) -> String {
    if name == ModelName::default().name() {
        String::new()
    } else {
        format!(" --model {name}")
    }
}

/// A model's part of `--design`'s long help: a heading, each design as its
/// change and its cost, then how to compose one (`composition`, the book's
/// `page`) from `repairs`, each as its name and change.
pub fn designs_help_text<'a>(
    heading: &str,
    designs: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    composition: &str,
    page: &str,
    repairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut text = heading.to_string();
    for (name, change, cost) in designs {
        text.push_str(&format!("\n\n  {name}: {change}\n    cost: {cost}"));
    }
    text.push_str(&format!("\n\n  Or compose one, {composition} ({page}):"));
    for (name, change) in repairs {
        text.push_str(&format!("\n    +{name}: {change}"));
    }
    text
}

/// `--design`'s long help: every model's designs.
pub fn designs_help() -> String {
    [Stovepipe::designs_help(), Link::designs_help()].join("\n\n")
}

/// `--design`'s value: a design of some model, or a composition
/// (`owner-keyed+atomic-admit`, checked in full once the model is known).
pub fn design_names() -> impl clap::builder::TypedValueParser<Value = String> {
    |text: &str| -> Result<String, String> {
        let named = Stovepipe::design_names()
            .into_iter()
            .chain(Link::design_names())
            .any(|d| d == text);
        if named || text.contains('+') {
            Ok(text.to_string())
        } else {
            Err(format!(
                "unknown design `{text}` (stovepipe: {}; link: {}; or {})",
                Stovepipe::design_names().join(", "),
                Link::design_names().join(", "),
                slotcheck_models::stovepipe::composition_help()
            ))
        }
    }
}

/// `--option`'s help: every model's options.
const OPTIONS_HELP: &str = "A model option (repeatable): split-read (R, Q and the head read in three steps); link: stale-ack-ignored (an ack or in-progress from a builder not holding the message does nothing), atomic-start (a builder reads the running key and puts it, or acks the duplicate, in one step), single-late-answer (the contract's first reading of the fetch: one late answer per builder, a fetch meanwhile gets the next ask; the default is nats.go's fetch, which returns an earlier request's answer and leaves its own pull request open), expiry-less-10ms (the pull request expires 10 ms before the fetch gives up, as nats.go up to 1.36.0 does, instead of a tenth of the wait), redelivery-queue (the server hands out messages whose ack wait ran out or that were naked in the order they did, before any never delivered, as nats-server's redelivery queue does; the default hands out the lowest-numbered available)";

/// Which model a command runs, and its bounds: every model's bound flags,
/// made from the models' tables.
#[derive(Args, Clone, Debug)]
pub struct ModelArgs {
    /// The model: stovepipe (the admission queue) or link (the builders).
    #[arg(long, value_enum, default_value_t = ModelName::Stovepipe)]
    pub model: ModelName,
    #[command(flatten)]
    pub bounds: bounds::BoundFlags,
}

impl ModelArgs {
    /// A flag of another model than the one chosen is an error that names it.
    pub fn check_flags(&self, _matches: Option<&ArgMatches>) -> Result<(), String> {
        struct Foreign<'a>(&'a bounds::BoundFlags);
        impl ForModel for Foreign<'_> {
            type Out = (Vec<String>, Vec<String>);
            fn run<M: ToolModel>(self) -> Self::Out {
                let own = M::bound_table()
                    .iter()
                    .map(|row| format!("--{}", row.flag))
                    .collect();
                (self.0.not_of::<M>(), own)
            }
        }
        let chosen = self.model.name();
        let (foreign, own) = for_model(chosen, Foreign(&self.bounds)).expect("a model");
        let Some(first) = foreign.first() else {
            return Ok(());
        };
        // The model whose flag the first one is.
        struct Has<'a>(&'a str);
        impl ForModel for Has<'_> {
            type Out = bool;
            fn run<M: ToolModel>(self) -> bool {
                M::bound_table()
                    .iter()
                    .any(|row| format!("--{}", row.flag) == self.0)
            }
        }
        let owner = MODELS
            .iter()
            .find(|m| for_model(m, Has(first)) == Some(true))
            .expect("every flag is some model's");
        Err(format!(
            "{} only for --model {owner} ({chosen}: {})",
            foreign.join(", "),
            own.join(", ")
        ))
    }

    /// The model and bound flags typed on the command line, as typed;
    /// `--model` itself only with `with_model`.
    pub fn given(&self, matches: Option<&ArgMatches>, with_model: bool) -> Vec<String> {
        let command = ModelArgs::augment_args(clap::Command::new("bounds"));
        command
            .get_arguments()
            .filter(|a| with_model || a.get_id() != "model")
            .filter(|a| {
                matches.and_then(|m| m.value_source(a.get_id().as_str()))
                    == Some(ValueSource::CommandLine)
            })
            .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
            .collect()
    }
}
