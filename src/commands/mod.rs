//! The command line: `compare`, `check`, `bench`.

pub mod adhoc;
pub mod bench;
pub mod simulate;
pub mod simulate_bench;
pub mod skew;

use crate::check::Limits;
use crate::commands::adhoc::Described;
use crate::explore;
use crate::models::link::{self as link_cli, LinkArgs, ModelName};
use crate::models::stovepipe::{bounds_line, DEFAULT_BOUNDS};
use crate::report::see::{CheckOutputArgs, CompareOutputArgs, Format};
use crate::report::{whole, JsonArgs, Style};
use crate::scenario;
use crate::scenario::findings;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use slotcheck_models::stovepipe::{design_named, Bounds, Options, Stovepipe, DESIGNS};
use slotcheck_models::NamedOptions;
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
1 a property is violated or a witness not reached; 2 bad arguments, or a report that could \
not be written; 3 inconclusive (a state or time budget ran out before a verdict; compare: a \
run was cut short). `check` over scenario files: 0 every verdict as expected; 1 a \
regression; 2 an invalid file; 3 inconclusive.\n\n\
JSON: `--json` prints it instead of the text, `--json-out FILE` writes it to a file and the \
text is still printed. Every output path is checked before a run, and none may be an input.",
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
    /// Mutation testing: check every mutant of each design (one step changed: a CAS that ignores
    /// its version, a write skipped, two writes swapped...) and say whether the properties kill it.
    Mutate(MutateArgs),
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
struct MutateArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Only this design's mutants (repeatable); default: every design of the model.
    #[arg(long, value_name = "DESIGN", value_parser = design_names())]
    design: Vec<String>,
    /// Also check every mutant on the bounds of each scenario file of the model under PATH
    /// (repeatable; `--scenarios scenarios` for the shipped ones), smallest first: a mutant is
    /// killed on any. Scenarios marked `slow` are left out.
    #[arg(long, value_name = "PATH")]
    scenarios: Vec<PathBuf>,
    /// The list of equivalent mutants (that cannot change behaviour) and of known survivors,
    /// each with why (default: mutants/equivalent.toml, if it exists). One that is killed is
    /// reported: the list must stay true.
    #[arg(long, value_name = "FILE")]
    equivalent: Option<PathBuf>,
    /// Exit 0 when every survivor is listed as a known one (a nightly run: it fails only on a
    /// new survivor, or a listed mutant killed). Without it any survivor exits 1.
    #[arg(long)]
    allow_known_survivors: bool,
    /// For each survivor, look for the smallest bounds that kill it on a ladder of richer
    /// bounds (one to three requests, one or two slots, up to two crashes and two stalls):
    /// what says the given bounds were too small.
    #[arg(long)]
    search: bool,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    json: JsonArgs,
    /// Also write the report as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Args)]
struct SimulateArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    simulate: simulate::SimulateArgs,
}

/// The stovepipe model's bounds (see `docs/stovepipe.md`, "Bounds").
#[derive(Args, Clone, Debug)]
struct BoundsArgs {
    /// N: how many requests arrive (at any time, in ID order).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.requests,
          value_parser = whole(1u8, Some(32)))]
    requests: u8,
    /// K: the queue's limit on concurrent builds.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_BOUNDS.max_concurrent,
          value_parser = whole(1u8, Some(32)))]
    max_concurrent: u8,
    /// How many times a worker may crash (its message becomes visible again, attempt +1);
    /// link: a builder [default: 2; link: 1].
    #[arg(long, value_name = "N", value_parser = whole(0u8, Some(u8::MAX)))]
    crashes: Option<u8>,
    /// How many times a message's visibility may expire while its worker still runs.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.stalls,
          value_parser = whole(0u8, Some(u8::MAX)))]
    stalls: u8,
    /// Attempts before a message is dead-lettered.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BOUNDS.max_deliveries,
          value_parser = whole(1u8, Some(u8::MAX)))]
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
            crashes: self.crashes.unwrap_or(DEFAULT_BOUNDS.crashes),
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

/// How far a run may go. Every budget is refused at zero alike (it would
/// cut the run before its first state), by the parsers below, so that each
/// budget flag is one field and one parser.
#[derive(Args, Clone, Debug)]
struct LimitArgs {
    /// Checker threads; the verdicts, counts and traces do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = whole(1u16, Some(256)))]
    threads: u16,
    /// Stop after generating this many states (at least 1); what is not yet decided is inconclusive.
    #[arg(long, value_name = "N", value_parser = budget_count)]
    max_states: Option<usize>,
    /// Stop this many seconds (more than 0) after the command starts, whatever it runs (every
    /// design of a compare, every scenario); what is not yet decided is inconclusive.
    #[arg(long, value_name = "SECONDS", value_parser = budget_seconds)]
    timeout: Option<f64>,
    /// Stop before the process holds more memory than this (512M, 8G...);
    /// what is not yet decided is inconclusive. Default: four fifths of what
    /// the machine has available when the run starts.
    #[arg(long, value_name = "SIZE", value_parser = crate::check::memory::parse_size)]
    max_memory: Option<u64>,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    quiet: bool,
}

/// A budget counted in units (states...): a whole number, at least 1.
fn budget_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("a budget of 0 would stop before the first state: give at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number, 1 or more".into()),
    }
}

/// A budget in seconds: a number above 0 (fractions allowed).
fn budget_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err("must be a positive number of seconds".into()),
    }
}

impl LimitArgs {
    fn limits(&self) -> Result<Limits, String> {
        Ok(Limits {
            threads: self.threads as usize,
            max_states: self.max_states,
            // One deadline for every run of the command: a wall-clock promise.
            timeout: None,
            deadline: self
                .timeout
                .map(|t| std::time::Instant::now() + Duration::from_secs_f64(t)),
            max_memory: self
                .max_memory
                .or_else(crate::check::memory::default_budget),
            stop_once_found: false,
            progress: crate::check::progress::wanted(self.quiet),
        })
    }
}

#[derive(Args)]
struct CompareArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    limits: LimitArgs,
    // `--json` (one JSON object instead of the table) and `--json-out FILE`.
    #[command(flatten)]
    json: JsonArgs,
    #[command(flatten)]
    output: CompareOutputArgs,
    /// What to merge: instead of the bounds given, every design on every
    /// finding's own bounds (each scenario file that names one, `finding =
    /// "PROPERTY"`): a row per design, a column per finding, each cell the
    /// verdict and its story, and what each design costs.
    #[arg(long)]
    findings: bool,
    /// With --findings: the scenario files or directories to take the
    /// findings from (default: scenarios/).
    #[arg(long = "scenarios", value_name = "PATH", requires = "findings")]
    scenario_paths: Vec<PathBuf>,
    /// With --findings: print the table as Markdown (as the README shows it).
    #[arg(long, requires = "findings", conflicts_with = "stories")]
    markdown: bool,
    /// With --findings: print every violation's story as Markdown (the page
    /// the Markdown table's cells link to).
    #[arg(long, requires = "findings")]
    stories: bool,
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
    /// With --design: check this mutant of the design instead (a name that `slotcheck mutate`
    /// prints, `owner-keyed/claim/cas-ignores-version`), to read its stories.
    #[arg(long, value_name = "NAME", requires = "design")]
    mutant: Option<String>,
    /// Check only this property (repeatable); default: all of them.
    #[arg(long, value_name = "NAME")]
    property: Vec<String>,
    /// Link, with --design: check the design at every skew from FROM to TO seconds (`0..60`),
    /// a tick (5 s) apart, on the other bounds given, and say the largest skew under which
    /// every property holds, with the story of the first skew that breaks one.
    #[arg(long, value_name = "FROM..TO", requires = "design", conflicts_with_all = ["mutant", "property"])]
    skew_range: Option<String>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    limits: LimitArgs,
    #[command(flatten)]
    scenarios: ScenarioArgs,
    // `--json` (one JSON object, verdicts, stories and statistics, or for
    // scenario runs the whole run's report, instead of the text) and
    // `--json-out FILE` (the same written to FILE; the text is still printed).
    #[command(flatten)]
    json: JsonArgs,
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
    /// Scenario runs: run only the scenario with this ID (repeatable).
    #[arg(long, value_name = "ID")]
    only: Vec<String>,
    /// Scenario runs: leave out scenarios marked `slow = true` (the nightly one).
    #[arg(long)]
    skip_slow: bool,
    /// Scenario runs: write a JUnit XML report here (a testsuite per scenario).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

impl ScenarioArgs {
    /// The scenario-only flags given, as typed.
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if !self.only.is_empty() {
            given.push("--only");
        }
        if self.skip_slow {
            given.push("--skip-slow");
        }
        if self.junit.is_some() {
            given.push("--junit");
        }
        given
    }
}

#[derive(Subcommand)]
enum ScenarioCommand {
    /// Write a commented template to scenarios/ID.toml (or --dir).
    New {
        /// The finding's ID, e.g. SP-OCT-007.
        id: String,
        /// Where to write it.
        #[arg(long, value_name = "DIR", default_value = crate::scenario::SCENARIO_DIR)]
        dir: PathBuf,
    },
}

#[derive(Args)]
struct BenchArgs {
    /// Print the measurements as JSON.
    #[arg(long)]
    json: bool,
    /// Add the large bounds (N 3 with a crash and a stall; N 3, K 2 with two crashes and a
    /// stall), each with one thread and two, and how far past a --timeout a run stops (about
    /// a quarter of an hour).
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
    #[arg(long, value_name = "PORT", default_value_t = 3000, value_parser = whole(0u16, Some(u16::MAX)))]
    port: u16,
    /// A saved counterexample (ITF, as written by slotcheck): print the Explorer address that walks it.
    #[arg(long, value_name = "TRACE.itf.json")]
    from: Option<std::path::PathBuf>,
}

/// `--design`'s long help (`--help`): its short help, then every design and
/// what it changes, as a diff of the contract's admit table.
fn with_designs(arg: clap::Arg) -> clap::Arg {
    let short = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    arg.long_help(format!("{short}\n\n{}", designs_help()))
}

fn designs_help() -> String {
    let mut text = String::from(
        "Stovepipe designs, each as what it changes in the contract's admit table (a gate, b claim, c processing write, d submit, and the release rules), and its cost:",
    );
    for d in DESIGNS {
        text.push_str(&format!(
            "\n\n  {}: {}\n    cost: {}",
            d.name(),
            d.change(),
            d.cost()
        ));
    }
    text.push_str("\n\nLink designs (--model link):");
    for d in &slotcheck_models::link::DESIGNS {
        text.push_str(&format!("\n  {}: {}", d.name, d.summary));
    }
    text
}

fn design_names() -> clap::builder::PossibleValuesParser {
    let link = slotcheck_models::link::DESIGNS.iter().map(|d| d.name);
    clap::builder::PossibleValuesParser::new(DESIGNS.iter().map(|d| d.name()).chain(link))
}

/// Parses the command line, runs the command and says how it ended.
pub fn run() -> ExitCode {
    // `--requests -1` is a bad value, and says so, rather than an unknown flag.
    let matches = Cli::command()
        .mut_subcommands(|c| c.allow_negative_numbers(true))
        .mut_subcommand("check", |c| c.mut_arg("design", with_designs))
        .mut_subcommand("explore", |c| c.mut_arg("design", with_designs))
        .mut_subcommand("compare", |c| {
            c.mut_arg("findings", |a| {
                a.long_help(format!(
                    "{}\n\n{}",
                    "What to merge: instead of the bounds given, every design on every finding's own bounds (each scenario file that names one, `finding = \"PROPERTY\"`): a row per design, a column per finding, each cell the verdict and its story, and what each design costs.",
                    designs_help()
                ))
            })
        })
        .get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    let result = match cli.command {
        Command::Compare(args) if args.findings => compare_findings(args, sub),
        Command::Compare(args) => match one_model(&args.model, sub) {
            Err(e) => Err(e),
            Ok(false) => compare(args),
            Ok(true) => compare_link(args),
        },
        Command::Check(args) => match args.design.clone() {
            Some(design) if args.paths.is_empty() && args.scenarios.given().is_empty() => {
                match one_model(&args.model, sub) {
                    Err(e) => Err(e),
                    Ok(false) => check_design(args, design),
                    Ok(true) => check_link_design(args, design),
                }
            }
            _ if args.skew_range.is_some() => {
                Err("--skew-range checks one design ad hoc: give no scenario PATH".to_string())
            }
            _ => check_scenarios(args, sub.expect("check's arguments")),
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
                explore_model(model, &args, &heading)
            }),
            Ok(true) => args
                .model
                .link
                .bounds(args.model.bounds.crashes)
                .and_then(|bounds| {
                    let options = link_cli::options(&args.model.bounds.options)?;
                    let model = link_cli::model_for(&args.design, bounds, options)?;
                    let heading = format!(
                        "{} on link, {}",
                        args.design,
                        link_cli::bounds_line(&bounds, &options)
                    );
                    explore_model(model, &args, &heading)
                }),
        },
        Command::Mutate(args) => mutate(args, sub),
        Command::Bench(args) => crate::commands::bench::run(
            args.large,
            args.json,
            crate::check::progress::wanted(args.quiet),
        ),
        Command::Simulate(args) => match one_model(&args.model, sub) {
            Err(e) => Err(e),
            Ok(false) => simulate(args),
            Ok(true) => args
                .model
                .link
                .bounds(args.model.bounds.crashes)
                .and_then(|bounds| {
                    let options = link_cli::options(&args.model.bounds.options)?;
                    link_cli::simulate(bounds, options, &args.simulate)
                }),
        },
        Command::Replay { file } => crate::simulate::replay::run_cli(&file),
        Command::Merge { files } => simulate::merge_files(&files),
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
/// Explorer address that walks it (refusing a trace of other bounds).
fn explore_model<M: Described>(model: M, args: &ExploreArgs, heading: &str) -> Result<u8, String> {
    let fragment = match &args.from {
        None => None,
        Some(path) => {
            let (init, actions) = explore::trace_actions(&model, path)?;
            Some(explore::steps_fragment(&model, init, &actions)?)
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
        print!(
            "{}",
            crate::commands::simulate_bench::bench(args.simulate.seed)?
        );
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
    // The flags that rebuild this model, for the reproduction commands;
    // swarm runs draw their bounds.
    let flags = if args.simulate.swarm {
        let options = args.model.bounds.options.iter();
        options
            .map(|o| format!("--option {o}"))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        models[0].bounds_flags()
    };
    simulate::run_cli(&models, &flags, &args.simulate)
}

fn compare(args: CompareArgs) -> Result<u8, String> {
    let models = DESIGNS
        .iter()
        .map(|d| model_for(&args.model.bounds, d.name()))
        .collect::<Result<Vec<_>, _>>()?;
    adhoc::compare(models, &args.limits.limits()?, &args.json, &args.output)
}

/// `compare --findings`: the what-to-merge table. Each finding brings its
/// own bounds, so bound flags are refused.
fn compare_findings(args: CompareArgs, matches: Option<&ArgMatches>) -> Result<u8, String> {
    let given = model_flags_given(&args.model, matches);
    if !given.is_empty() {
        return Err(format!(
            "--findings checks each finding on its own bounds (its scenario file's): leave out {}",
            given.join(", ")
        ));
    }
    let model = match args.model.model {
        ModelName::Stovepipe => "stovepipe",
        ModelName::Link => "link",
    };
    let paths = if args.scenario_paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.scenario_paths.clone()
    };
    let mut outputs = Vec::new();
    if let Some(file) = &args.json.json_out {
        outputs.push(crate::report::itf::Output::file("--json-out", file));
    }
    if let Some(file) = &args.output.html {
        outputs.push(crate::report::itf::Output::file("--html", file));
    }
    crate::report::itf::check_outputs(&outputs, &paths)?;
    let table = findings::run(&paths, model, &args.limits.limits()?)?;
    let json = serde_json::to_string_pretty(&findings::json(&table)).expect("JSON") + "\n";
    if args.json.json {
        print!("{json}");
    } else if args.markdown {
        print!("{}", findings::markdown(&table));
    } else if args.stories {
        print!("{}", findings::stories(&table));
    } else {
        let style = Style::for_stdout();
        println!(
            "{}\n",
            style.bold(&format!(
                "slotcheck compare --findings: {model}, {} findings",
                table.columns.len()
            ))
        );
        print!("{}", findings::text(&table, style));
        println!(
            "\nA cell's story: slotcheck check --design DESIGN [the finding's bounds] --property PROPERTY"
        );
    }
    let mut writes = Vec::new();
    if let Some(file) = &args.json.json_out {
        writes.push((file.clone(), json.into_bytes()));
    }
    if let Some(file) = &args.output.html {
        let page = crate::report::html::render(&findings::page(&table));
        writes.push((file.clone(), page.into_bytes()));
    }
    crate::report::itf::write_reports(&writes, |_| {})?;
    Ok(if table.cut() { 3 } else { 0 })
}

/// The model and bound flags typed on the command line.
fn model_flags_given(args: &ModelArgs, matches: Option<&ArgMatches>) -> Vec<String> {
    let command = ModelArgs::augment_args(clap::Command::new("bounds"));
    let mut given: Vec<String> = command
        .get_arguments()
        .filter(|a| a.get_id() != "model")
        .filter(|a| {
            matches.and_then(|m| m.value_source(a.get_id().as_str()))
                == Some(ValueSource::CommandLine)
        })
        .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
        .collect();
    for flag in args.link.given() {
        if !given.iter().any(|g| g == flag) {
            given.push(flag.to_string());
        }
    }
    given
}

fn compare_link(args: CompareArgs) -> Result<u8, String> {
    let bounds = args.model.link.bounds(args.model.bounds.crashes)?;
    let options = link_cli::options(&args.model.bounds.options)?;
    let models = slotcheck_models::link::DESIGNS
        .iter()
        .map(|d| link_cli::model_for(d.name, bounds, options))
        .collect::<Result<Vec<_>, _>>()?;
    adhoc::compare(models, &args.limits.limits()?, &args.json, &args.output)
}

/// The flags of an ad-hoc check given on the command line, as typed: the
/// model and its bounds (scenario files bring their own).
fn bounds_given(args: &CheckArgs, matches: &ArgMatches) -> Vec<String> {
    let command = ModelArgs::augment_args(clap::Command::new("bounds"));
    let mut given: Vec<String> = command
        .get_arguments()
        .filter(|a| matches.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine))
        .filter_map(|a| a.get_long().map(|long| format!("--{long}")))
        .collect();
    // Link bounds have no default value, so clap cannot tell where they
    // came from; they are set only when given.
    for flag in args.model.link.given() {
        if !given.iter().any(|g| g == flag) {
            given.push(flag.to_string());
        }
    }
    given
}

/// `check` over scenario files; refuses what only an ad-hoc check takes
/// (bounds, the model, diagrams), saying what made it a scenario run.
fn check_scenarios(args: CheckArgs, matches: &ArgMatches) -> Result<u8, String> {
    let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
    let scenario_flags = args.scenarios.given();
    let why = if !paths.is_empty() {
        match paths.as_slice() {
            [one] => format!("{one} is a scenario file to run"),
            many => format!("{} are scenario files to run", many.join(", ")),
        }
    } else if !scenario_flags.is_empty() {
        format!("{} asks for a scenario run", scenario_flags.join(", "))
    } else {
        "without --design `check` runs the scenario files".to_string()
    };
    let mut drop: Vec<&str> = Vec::new();
    if !paths.is_empty() {
        drop.push("the PATH");
    }
    drop.extend(&scenario_flags);
    let fix = match (args.design.is_some(), drop.is_empty()) {
        (true, _) => format!("leave out {}", drop.join(", ")),
        (false, true) => "add --design DESIGN".to_string(),
        (false, false) => format!("give --design DESIGN and leave out {}", drop.join(", ")),
    };
    let bounds = bounds_given(&args, matches);
    if !bounds.is_empty() {
        return Err(format!(
            "{}: scenario files bring their own model and bounds, and {why}; for an ad-hoc check on these bounds, {fix}",
            bounds.join(", ")
        ));
    }
    if args.output.format != Format::Text {
        return Err(format!(
            "--format: diagrams are drawn by an ad-hoc check, and {why}; a scenario run draws them in its --html report (or, for an ad-hoc check, {fix})"
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
        json: args.json.json,
        json_out: args.json.json_out,
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
/// `slotcheck mutate`: every mutant of each design, on the bounds given and
/// (with `--scenarios`) on each scenario's.
fn mutate(args: MutateArgs, matches: Option<&ArgMatches>) -> Result<u8, String> {
    let link = one_model(&args.model, matches)?;
    let names: Vec<String> = if args.design.is_empty() {
        if link {
            slotcheck_models::link::DESIGNS
                .iter()
                .map(|d| d.name.to_string())
                .collect()
        } else {
            DESIGNS.iter().map(|d| d.name().to_string()).collect()
        }
    } else {
        args.design.clone()
    };
    if link {
        let bounds = args.model.link.bounds(args.model.bounds.crashes)?;
        let options = link_cli::options(&args.model.bounds.options)?;
        let models = names
            .iter()
            .map(|d| link_cli::model_for(d, bounds, options))
            .collect::<Result<Vec<_>, _>>()?;
        run_mutate(models, &args)
    } else {
        let models = names
            .iter()
            .map(|d| model_for(&args.model.bounds, d))
            .collect::<Result<Vec<_>, _>>()?;
        run_mutate(models, &args)
    }
}

fn run_mutate<M: crate::mutate::Mutable>(designs: Vec<M>, args: &MutateArgs) -> Result<u8, String> {
    use crate::mutate::{self as mutation, Equivalents};
    let default_list = PathBuf::from("mutants/equivalent.toml");
    let equivalents = match &args.equivalent {
        Some(file) => Equivalents::load(file)?,
        None if default_list.exists() => Equivalents::load(&default_list)?,
        None => Equivalents::default(),
    };
    let mut outputs = Vec::new();
    if let Some(file) = &args.json.json_out {
        outputs.push(crate::report::itf::Output::file("--json-out", file));
    }
    if let Some(file) = &args.html {
        outputs.push(crate::report::itf::Output::file("--html", file));
    }
    let mut inputs = args.scenarios.clone();
    inputs.extend(args.equivalent.clone());
    crate::report::itf::check_outputs(&outputs, &inputs)?;
    let model_name = designs[0].model_name();
    let mut sets: Vec<Vec<M>> = designs.iter().map(|d| vec![d.clone()]).collect();
    let mut heading = designs[0].bounds_line();
    if !args.scenarios.is_empty() {
        let files = scenario::files(&args.scenarios).map_err(|e| e.to_string())?;
        let scenarios = scenario::load_all(&files, &scenario::Selection::default())
            .map_err(|e| e.to_string())?;
        let mut mine: Vec<_> = scenarios
            .iter()
            .filter(|s| s.heading.model == model_name && !s.slow)
            .collect();
        // Smallest first: most mutants die on the first bounds that show them.
        let states = |s: &&scenario::Scenario| {
            let meta = s.meta();
            meta["bounds"]
                .as_object()
                .map_or(0u64, |b| b.values().filter_map(|v| v.as_u64()).sum())
        };
        mine.sort_by_key(states);
        for s in &mine {
            let mut meta = s.meta();
            for (set, design) in sets.iter_mut().zip(&designs) {
                meta["design"] = serde_json::json!(design.variant());
                let object = meta.as_object().expect("meta is an object");
                let model = M::from_meta(object)?;
                // Bounds already in the set would check the same mutants again.
                if !set.iter().any(|m| m.bounds_flags() == model.bounds_flags()) {
                    set.push(model);
                }
            }
        }
        heading.push_str(&format!(
            ", and the bounds of {}",
            crate::report::count(mine.len() as u64, "scenario")
        ));
    }
    let reports = mutation::run(&sets, &equivalents, &args.limits.limits()?, args.search);
    let listed: Vec<&String> = equivalents
        .reasons
        .keys()
        .filter(|name| {
            designs
                .iter()
                .any(|d| name.starts_with(&format!("{}/", d.variant())))
                && !reports
                    .iter()
                    .any(|r| r.mutants.iter().any(|m| &m.name == *name))
        })
        .collect();
    let json = serde_json::to_string_pretty(&mutation::json(&reports)).expect("JSON") + "\n";
    if args.json.json {
        print!("{json}");
    } else {
        let style = Style::for_stdout();
        println!(
            "{}\n",
            style.bold(&format!("slotcheck mutate: {model_name}, {heading}"))
        );
        let model_flag = match model_name {
            "stovepipe" => String::new(),
            other => format!(" --model {other}"),
        };
        print!(
            "{}",
            mutation::text(&reports, &designs[0].bounds_line(), &model_flag, style)
        );
    }
    for name in &listed {
        eprintln!(
            "warning: the equivalent list names `{name}`, which is no mutant on these bounds"
        );
    }
    let mut writes = Vec::new();
    if let Some(file) = &args.json.json_out {
        writes.push((file.clone(), json.into_bytes()));
    }
    if let Some(file) = &args.html {
        writes.push((
            file.clone(),
            mutation::html(&reports, &heading).into_bytes(),
        ));
    }
    crate::report::itf::write_reports(&writes, |_| {})?;
    Ok(mutation::exit_code(&reports, args.allow_known_survivors))
}

/// The model, or with `--mutant` the mutant of it that has that name.
fn maybe_mutant<M: crate::mutate::Mutable>(model: M, mutant: Option<&str>) -> Result<M, String> {
    let Some(name) = mutant else {
        return Ok(model);
    };
    let mutants = model.mutants();
    let known: Vec<&str> = mutants.iter().map(|(n, _, _)| n.as_str()).collect();
    match mutants.iter().find(|(n, _, _)| n == name) {
        Some((_, _, m)) => Ok(m.clone()),
        None => Err(format!(
            "--mutant: `{name}` is no mutant of {} on these bounds (its mutants: {})",
            model.variant(),
            known.join(", ")
        )),
    }
}

fn check_link_design(args: CheckArgs, design: String) -> Result<u8, String> {
    let bounds = args.model.link.bounds(args.model.bounds.crashes)?;
    let options = link_cli::options(&args.model.bounds.options)?;
    if let Some(range) = &args.skew_range {
        if args.model.link.skew.is_some() {
            return Err("--skew-range varies the skew: leave out --skew".to_string());
        }
        let range = crate::commands::skew::parse_range(range)?;
        let points = crate::commands::skew::measure(
            &design,
            bounds,
            options,
            range,
            &args.limits.limits()?,
        )?;
        print!(
            "{}",
            crate::commands::skew::text(&design, &points, Style::for_stdout())
        );
        return Ok(crate::commands::skew::exit_code(&points));
    }
    adhoc::check_design(
        maybe_mutant(
            link_cli::model_for(&design, bounds, options)?,
            args.mutant.as_deref(),
        )?,
        &args.property,
        &args.limits.limits()?,
        &args.json,
        args.out.as_deref(),
        &args.output,
    )
}

fn check_design(args: CheckArgs, design: String) -> Result<u8, String> {
    if args.skew_range.is_some() {
        return Err(
            "--skew-range is for the link model's clock skew: add --model link".to_string(),
        );
    }
    adhoc::check_design(
        maybe_mutant(
            model_for(&args.model.bounds, &design)?,
            args.mutant.as_deref(),
        )?,
        &args.property,
        &args.limits.limits()?,
        &args.json,
        args.out.as_deref(),
        &args.output,
    )
}
