//! The command line: `compare`, `check`, `bench`.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use slotcheck::adhoc;
use slotcheck::check::Limits;
use slotcheck::explore;
use slotcheck::link::{self as link_cli, LinkArgs, ModelName};
use slotcheck::scenario;
use slotcheck::see::{CheckOutputArgs, CompareOutputArgs};
use slotcheck::stovepipe::{bounds_line, DEFAULT_BOUNDS};
use slotcheck_models::stovepipe::{design_named, Bounds, Options, Stovepipe, DESIGNS};
use slotcheck_models::NamedOptions;
use slotcheck_models::Narrated;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Exit status for bad arguments, as CI reads it (clap exits 2 too).
const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "slotcheck",
    version,
    about = "Model-check and compare designs of a queue that hands out build slots under at-least-once delivery",
    long_about = "Model-check and compare designs of a queue that hands out build slots under \
at-least-once delivery.\n\n\
`compare` runs every design on the same bounds and prints one table; `check --design D` \
tells each violated property of one design as a numbered story (the shortest counterexample).\n\n\
Exit status: 0 every property holds and every witness is reached (compare: the runs finished); \
1 a property is violated or a witness not reached; 2 bad arguments; 3 inconclusive (a state \
or time budget ran out before a verdict). `check` over scenario files: 0 every verdict as \
expected; 1 a regression; 2 an invalid file; 3 inconclusive.",
    after_help = "Examples:\n  slotcheck compare\n  slotcheck compare --requests 1 --stalls 0 --json\n  slotcheck check --design claim-first --requests 1 --stalls 0\n  slotcheck check --design owner-keyed --property count-not-low --stalls 1\n  slotcheck check                      (every scenario under scenarios/)\n  slotcheck check --skip-slow --junit junit.xml --out traces\n  slotcheck scenario new SP-OCT-007"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every design on the same bounds and print one table, design by property.
    Compare(CompareArgs),
    /// Run scenario files against their expectations (the regression guard), or
    /// with --design check one design ad hoc and tell each violation as a story.
    Check(CheckArgs),
    /// Scenario files: `scenario new ID` writes a commented template.
    #[command(subcommand)]
    Scenario(ScenarioCommand),
    /// Measure states per second, unique states, peak memory and time to verdict on a fixed matrix.
    Bench(BenchArgs),
    /// Serve stateright's Explorer on 127.0.0.1 to walk one design's states by hand (Ctrl-C stops it).
    Explore(ExploreArgs),
    /// Seeded random walks (plain or swarm) for bounds too large to exhaust; shrinks and saves what they find.
    Simulate(SimulateArgs),
    /// Re-run a saved ITF trace step by step and tell its story (exit 1: it still violates).
    Replay {
        /// The trace file (from `simulate` or `check --out`).
        file: std::path::PathBuf,
    },
    /// Combine `simulate --json` reports of shards into the report of one run.
    Merge {
        /// The shards' JSON reports.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
}

#[derive(Args)]
struct SimulateArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    simulate: slotcheck::simulate::SimulateArgs,
}

/// The stovepipe model's bounds (see `shared/docs/stovepipe-model.md`).
#[derive(Args, Clone, Debug)]
struct BoundsArgs {
    /// N: how many requests arrive (at any time, in ID order).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.requests,
          value_parser = clap::value_parser!(u8).range(1..=32))]
    requests: u8,
    /// K: the queue's limit on concurrent builds.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_BOUNDS.max_concurrent,
          value_parser = clap::value_parser!(u8).range(1..=32))]
    max_concurrent: u8,
    /// How many times a worker may crash (its message becomes visible again, attempt +1).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.crashes)]
    crashes: u8,
    /// How many times a message's visibility may expire while its worker still runs.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.stalls)]
    stalls: u8,
    /// Attempts before a message is dead-lettered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.max_deliveries,
          value_parser = clap::value_parser!(u8).range(1..))]
    max_deliveries: u8,
    /// A model option (repeatable): split-read (R, Q and the head read in three steps);
    /// link: stale-ack-ignored (an ack or in-progress from a builder not holding the message does nothing).
    #[arg(long = "option", value_name = "NAME")]
    options: Vec<String>,
}

impl BoundsArgs {
    fn bounds(&self) -> Bounds {
        Bounds {
            requests: self.requests,
            max_concurrent: self.max_concurrent,
            crashes: self.crashes,
            stalls: self.stalls,
            max_deliveries: self.max_deliveries,
        }
    }

    fn model_options(&self) -> Result<Options, String> {
        let mut options = Options::default();
        for name in &self.options {
            options.set(name).map_err(|e| format!("--option: {e}"))?;
        }
        Ok(options)
    }
}

/// Which model a command runs, and its bounds (each model's own flags).
#[derive(Args, Clone, Debug)]
struct ModelArgs {
    /// The model: stovepipe (the admission queue) or link (the builders).
    #[arg(long, value_enum, default_value_t = ModelName::Stovepipe)]
    model: ModelName,
    #[command(flatten)]
    bounds: BoundsArgs,
    #[command(flatten)]
    link: LinkArgs,
}

/// How far a run may go.
#[derive(Args, Clone, Debug)]
struct LimitArgs {
    /// Checker threads; the verdicts, counts and traces do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    threads: u16,
    /// Stop after generating this many states; what is not yet decided is inconclusive.
    #[arg(long, value_name = "N")]
    max_states: Option<usize>,
    /// Stop after this many seconds; what is not yet decided is inconclusive.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Stop before the process holds more memory than this (512M, 8G...);
    /// what is not yet decided is inconclusive. Default: four fifths of what
    /// the machine has available when the run starts.
    #[arg(long, value_name = "SIZE", value_parser = slotcheck::memory::parse_size)]
    max_memory: Option<u64>,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    quiet: bool,
}

impl LimitArgs {
    fn limits(&self) -> Result<Limits, String> {
        let timeout = match self.timeout {
            Some(t) if !(t > 0.0 && t.is_finite()) => {
                return Err(format!(
                    "--timeout: must be a positive number of seconds, not {t}"
                ))
            }
            t => t.map(Duration::from_secs_f64),
        };
        Ok(Limits {
            threads: self.threads as usize,
            max_states: self.max_states,
            timeout,
            max_memory: self.max_memory.or_else(slotcheck::memory::default_budget),
            stop_once_found: false,
            progress: slotcheck::progress::wanted(self.quiet),
        })
    }
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    limits: LimitArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    output: CompareOutputArgs,
}

#[derive(Args)]
struct CheckArgs {
    /// Scenario files or directories to run (default: every file under
    /// `scenarios/`). Without PATH and with --design, check that design
    /// ad hoc on the bounds given.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The design to check ad hoc; with scenarios, run only this design.
    #[arg(long, value_name = "DESIGN", value_parser = design_names())]
    design: Option<String>,
    /// Check only this property (repeatable); default: all of them.
    #[arg(long, value_name = "NAME")]
    property: Vec<String>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    scenarios: ScenarioArgs,
    /// Print one JSON object (verdicts, stories, statistics) instead of text;
    /// with a FILE, write it there (scenario runs: the whole run's report).
    #[arg(long, value_name = "FILE", num_args = 0..=1)]
    json: Option<Option<PathBuf>>,
    /// Write each counterexample here: an ITF trace (.itf.json, for
    /// `slotcheck replay`), and for scenario runs a story (.txt) too.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    output: CheckOutputArgs,
}

/// What only scenario runs take.
#[derive(Args, Default)]
struct ScenarioArgs {
    /// Run only the scenario with this ID (repeatable).
    #[arg(long, value_name = "ID")]
    only: Vec<String>,
    /// Leave out scenarios marked `slow = true` (the nightly one).
    #[arg(long)]
    skip_slow: bool,
    /// Write a JUnit XML report here (a testsuite per scenario).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

impl ScenarioArgs {
    fn given(&self) -> bool {
        !self.only.is_empty() || self.skip_slow || self.junit.is_some()
    }
}

#[derive(Subcommand)]
enum ScenarioCommand {
    /// Write a commented template to scenarios/ID.toml (or --dir).
    New {
        /// The finding's ID, e.g. SP-OCT-007.
        id: String,
        /// Where to write it.
        #[arg(long, value_name = "DIR", default_value = slotcheck::scenario::SCENARIO_DIR)]
        dir: PathBuf,
    },
}

#[derive(Args)]
struct BenchArgs {
    /// Print the measurements as JSON.
    #[arg(long)]
    json: bool,
    /// Checker threads for every run of the matrix.
    #[arg(long, value_name = "N", default_value_t = 1)]
    threads: usize,
    /// Add the larger bounds (a few minutes).
    #[arg(long)]
    large: bool,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct ExploreArgs {
    /// The design to explore.
    #[arg(long, value_name = "DESIGN", value_parser = design_names())]
    design: String,
    #[command(flatten)]
    model: ModelArgs,
    /// The port on 127.0.0.1 (0: any free port; the address is printed).
    #[arg(long, value_name = "PORT", default_value_t = 3000)]
    port: u16,
    /// A saved counterexample (ITF, as written by slotcheck): print the Explorer address that walks it.
    #[arg(long, value_name = "TRACE.itf.json")]
    from: Option<std::path::PathBuf>,
}

fn design_names() -> clap::builder::PossibleValuesParser {
    let link = slotcheck_models::link::DESIGNS.iter().map(|d| d.name);
    clap::builder::PossibleValuesParser::new(DESIGNS.iter().map(|d| d.name()).chain(link))
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    let result = match cli.command {
        Command::Compare(args) => match one_model(&args.model, sub) {
            Err(e) => Err(e),
            Ok(false) => compare(args),
            Ok(true) => compare_link(args),
        },
        Command::Check(args) => match args.design.clone() {
            Some(design) if args.paths.is_empty() && !args.scenarios.given() => {
                match one_model(&args.model, sub) {
                    Err(e) => Err(e),
                    Ok(false) => check_design(args, design),
                    Ok(true) => check_link_design(args, design),
                }
            }
            _ => check_scenarios(args, bounds_given(sub.expect("check's arguments"))),
        },
        Command::Scenario(ScenarioCommand::New { id, dir }) => new_scenario(&id, &dir),
        Command::Explore(args) => match one_model(&args.model, sub) {
            Err(e) => Err(e),
            Ok(false) => model_for(&args.model.bounds, &args.design).and_then(|model| {
                let heading = format!(
                    "{} on stovepipe, {}",
                    args.design,
                    bounds_line(&model.bounds, &model.options)
                );
                explore_model(model, "stovepipe", &args, &heading)
            }),
            Ok(true) => args
                .model
                .link
                .bounds(Some(args.model.bounds.crashes))
                .and_then(|bounds| {
                    let options = link_cli::options(&args.model.bounds.options)?;
                    let model = link_cli::model_for(&args.design, bounds, options)?;
                    let heading = format!(
                        "{} on link, {}",
                        args.design,
                        link_cli::bounds_line(&bounds, &options)
                    );
                    explore_model(model, "link", &args, &heading)
                }),
        },
        Command::Bench(args) => slotcheck::bench::run(
            args.threads,
            args.large,
            args.json,
            slotcheck::progress::wanted(args.quiet),
        ),
        Command::Simulate(args) => match one_model(&args.model, sub) {
            Err(e) => Err(e),
            Ok(false) => simulate(args),
            Ok(true) => args
                .model
                .link
                .bounds(Some(args.model.bounds.crashes))
                .and_then(|bounds| {
                    let options = link_cli::options(&args.model.bounds.options)?;
                    link_cli::simulate(bounds, options, &args.simulate)
                }),
        },
        Command::Replay { file } => slotcheck::replay::run_cli(&file),
        Command::Merge { files } => slotcheck::simulate::merge_files(&files),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Whether the command runs the link model; a flag of the other model is an
/// error that names it.
fn one_model(args: &ModelArgs, matches: Option<&ArgMatches>) -> Result<bool, String> {
    if args.model == ModelName::Stovepipe {
        return match args.link.given().as_slice() {
            [] => Ok(false),
            given => Err(format!("{} only for --model link", given.join(", "))),
        };
    }
    let stovepipe_only = ["requests", "max_concurrent", "stalls", "max_deliveries"];
    let given: Vec<String> = stovepipe_only
        .iter()
        .filter(|id| matches.and_then(|m| m.value_source(id)) == Some(ValueSource::CommandLine))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !given.is_empty() {
        return Err(format!(
            "{} only for --model stovepipe (link: --asks, --builders, --skew, --horizon, --longest-build, --late-heartbeats, --late-by, --max-deliver, --crashes)",
            given.join(", ")
        ));
    }
    Ok(true)
}

/// Serves the Explorer; with `--from`, first turns the trace into the
/// Explorer address that walks it.
fn explore_model<M>(model: M, name: &str, args: &ExploreArgs, heading: &str) -> Result<u8, String>
where
    M: Narrated + Send + Sync + 'static,
    M::State: Clone + std::fmt::Debug + std::hash::Hash + PartialEq + Send + Sync,
    M::Action: Clone + std::fmt::Debug + PartialEq + Send + Sync,
{
    let fragment = match &args.from {
        None => None,
        Some(path) => {
            let actions = explore::trace_actions(&model, name, &args.design, path)?;
            Some(explore::steps_fragment(&model, &actions)?)
        }
    };
    explore::serve(model, args.port, heading, fragment.as_deref())
}

fn model_for(bounds: &BoundsArgs, design: &str) -> Result<Stovepipe, String> {
    let design = design_named(design).ok_or_else(|| {
        if slotcheck_models::link::design_named(design).is_some() {
            format!("`{design}` is a design of the link model: add --model link")
        } else {
            format!("unknown design `{design}`")
        }
    })?;
    let b = bounds.bounds();
    b.validate()?;
    let mut model = Stovepipe::new(design, b);
    model.options = bounds.model_options()?;
    Ok(model)
}

fn simulate(args: SimulateArgs) -> Result<u8, String> {
    if args.simulate.bench {
        print!("{}", slotcheck::simulate::bench(args.simulate.seed)?);
        return Ok(0);
    }
    let designs: Vec<&str> = if args.simulate.design.is_empty() {
        DESIGNS.iter().map(|d| d.name()).collect()
    } else {
        args.simulate.design.iter().map(String::as_str).collect()
    };
    let models = designs
        .iter()
        .map(|d| model_for(&args.model.bounds, d))
        .collect::<Result<Vec<_>, _>>()?;
    let b = &args.model.bounds;
    // The flags that rebuild this model, for the reproduction commands;
    // swarm runs draw their bounds.
    let mut flags: Vec<String> = Vec::new();
    if !args.simulate.swarm {
        flags.push(format!(
            "--requests {} --max-concurrent {} --crashes {} --stalls {} --max-deliveries {}",
            b.requests, b.max_concurrent, b.crashes, b.stalls, b.max_deliveries
        ));
    }
    flags.extend(b.options.iter().map(|o| format!("--option {o}")));
    let flags = flags.join(" ");
    slotcheck::simulate::run_cli(&models, &flags, &args.simulate)
}

fn compare(args: CompareArgs) -> Result<u8, String> {
    let models = DESIGNS
        .iter()
        .map(|d| model_for(&args.model.bounds, d.name()))
        .collect::<Result<Vec<_>, _>>()?;
    adhoc::compare(models, &args.limits.limits()?, args.json, &args.output)
}

fn compare_link(args: CompareArgs) -> Result<u8, String> {
    let bounds = args.model.link.bounds(Some(args.model.bounds.crashes))?;
    let options = link_cli::options(&args.model.bounds.options)?;
    let models = slotcheck_models::link::DESIGNS
        .iter()
        .map(|d| link_cli::model_for(d.name, bounds, options))
        .collect::<Result<Vec<_>, _>>()?;
    adhoc::compare(models, &args.limits.limits()?, args.json, &args.output)
}

/// The bound flags given on the command line (scenarios bring their own).
fn bounds_given(matches: &clap::ArgMatches) -> Vec<String> {
    BoundsArgs::augment_args(clap::Command::new("bounds"))
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect()
}

fn check_scenarios(args: CheckArgs, mut bounds_given: Vec<String>) -> Result<u8, String> {
    // Link scenarios bring their own link bounds too.
    bounds_given.extend(args.model.link.given().iter().map(|f| f.to_string()));
    if !bounds_given.is_empty() {
        return Err(format!(
            "{}: scenario files bring their own bounds; for an ad-hoc check give --design and no PATH",
            bounds_given.join(", ")
        ));
    }
    let run = scenario::CheckRun {
        paths: args.paths,
        selection: scenario::Selection {
            designs: args.design.into_iter().collect(),
            properties: args.property,
            only: args.scenarios.only,
            skip_slow: args.scenarios.skip_slow,
        },
        limits: args.limits.limits()?,
        junit: args.scenarios.junit,
        json: args.json,
        out: args.out,
        html: args.output.html,
    };
    Ok(scenario::check_command(run))
}

fn new_scenario(id: &str, dir: &Path) -> Result<u8, String> {
    let path = scenario::write_template(id, dir)?;
    println!(
        "wrote {}: fill in the bounds and expectations, then run `slotcheck check {}`",
        path.display(),
        path.display()
    );
    Ok(0)
}

/// `check --model link --design D`.
fn check_link_design(args: CheckArgs, design: String) -> Result<u8, String> {
    let bounds = args.model.link.bounds(Some(args.model.bounds.crashes))?;
    let options = link_cli::options(&args.model.bounds.options)?;
    adhoc::check_design(
        link_cli::model_for(&design, bounds, options)?,
        &args.property,
        &args.limits.limits()?,
        &args.json,
        args.out.as_deref(),
        &args.output,
    )
}

fn check_design(args: CheckArgs, design: String) -> Result<u8, String> {
    adhoc::check_design(
        model_for(&args.model.bounds, &design)?,
        &args.property,
        &args.limits.limits()?,
        &args.json,
        args.out.as_deref(),
        &args.output,
    )
}
