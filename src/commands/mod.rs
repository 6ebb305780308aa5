//! The command line: each command's flags, and what it runs. A command
//! parses its arguments, builds the model through the registry
//! (`models::for_model`), runs a checker or the simulator, and hands the
//! results to a reporter. This room is the top of the house: it may use
//! every other room, and none uses it.
//!
//! `mod.rs` the commands and their dispatch; `args.rs` the budget flags;
//! `compare.rs`, `check.rs`, `mutate.rs`, `explore.rs`, `simulate.rs` a
//! command each; `signals.rs` what SIGINT and SIGTERM do to a run; `adhoc.rs`
//! `compare` and `check --design` for every model;
//! `schemas.rs` every `--json` output's schema file; `skew.rs` the link model's `check --skew-range`; `real.rs` `--on
//! sqlite|mariadb` and `live.rs` `slotcheck live` (its flags in
//! `live_args.rs`, its stovepipe runs in `live_stovepipe.rs`, its link runs
//! in `live_link.rs`); `replay_nats.rs`
//! `replay --on nats` (a link story on a real nats-server); `bench.rs` and
//! `simulate_bench.rs` the stovepipe model's measurements, `bench_spin.rs`
//! bench's run of the same bounds under SPIN.

pub mod adhoc;
pub mod args;
pub mod bench;
pub mod bench_spin;
pub mod check;
pub mod compare;
pub mod explore;
pub mod grid;
pub mod live;
pub mod live_args;
pub mod live_link;
#[cfg(feature = "real")]
pub mod live_stovepipe;
pub mod mutate;
#[cfg(feature = "real")]
pub mod real;
pub mod replay_nats;
pub mod schemas;
pub mod signals;
pub mod simulate;
pub mod simulate_bench;
pub mod skew;
pub mod validate;

use crate::models::{self, ForModel, ModelName};
use check::CheckArgs;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use compare::CompareArgs;
use explore::ExploreArgs;
use mutate::MutateArgs;
use simulate::SimulateCommand;
use std::path::PathBuf;
use std::process::ExitCode;

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
A first SIGINT or SIGTERM during `check`, `compare`, `mutate` or `simulate` stops the run as a \
reached --timeout does: what was decided is printed and written, the rest is inconclusive \
(exit 3, or 1 if a violation was already found); a second ends the process at once \
(exit 130 or 143, nothing written).\n\n\
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
    Simulate(SimulateCommand),
    /// Re-run a saved ITF trace step by step and tell its story (exit 1: it still violates).
    Replay {
        /// The trace file (from `simulate` or `check --out`).
        file: std::path::PathBuf,
        /// Run the trace on a real system instead of the model. Stovepipe traces: `sqlite`
        /// (embedded), `mariadb` or `postgres` (a private server started for the run), statement by
        /// statement, the rows compared with the model's after every step (exit 4: they
        /// differ). Link traces: `nats` (a private nats-server with JetStream; exit 1
        /// reproduced, 0 not, 3 the server did otherwise than the story).
        #[arg(long, value_name = "SYSTEM")]
        on: Option<String>,
        /// With --on: stop this many seconds after the command starts, the server's start
        /// included; what is not yet replayed is inconclusive (exit 3).
        #[arg(long, value_name = "SECONDS", requires = "on", value_parser = args::budget_seconds)]
        timeout: Option<f64>,
        #[command(flatten)]
        nats: replay_nats::NatsReplayArgs,
    },
    /// Run a design live on a real system: stovepipe on SQLite or a private MariaDB (worker
    /// threads with their own connections, many queues, seeded crashes and stalls; the
    /// invariants judged on the rows), link on a private nats-server (`--model link`; builders
    /// under seeded faults, the properties judged from the server). Exit 1: one broke; 3: a
    /// run was cut short.
    Live(live_args::LiveArgs),
    /// Check a real system's event log (NDJSON) against the model: conforms (0), conforms with
    /// a violation told as a story (1), a bad log (2), inconclusive (3), departs at a line (4).
    Validate(validate::ValidateArgs),
    /// Combine `simulate --json` reports of shards into the report of one run.
    Merge {
        /// The shards' JSON reports.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Shards missing are expected: without it, a merge of some of the shards says which are
        /// missing on stderr and exits 3 (inconclusive), as a run cut short does.
        #[arg(long)]
        partial: bool,
    },
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
    /// Seconds, not minutes: the first bounds of the matrix only (mutate on them too), logs
    /// of a thousand lines, no --timeout runs and no simulator table. Checks the command and
    /// its report; its figures are not worth quoting.
    #[arg(long, conflicts_with = "large")]
    quick: bool,
    /// Only what the progress properties cost: the recommended design on three requests, K 1,
    /// a crash, a stall and two deliveries, with one thread and two, checked with its always
    /// and sometimes properties alone, then with every property (about a minute).
    #[arg(long, conflicts_with_all = ["large", "quick"])]
    progress_cost: bool,
    /// Only how the search scales: the two-slot bounds (N 3, K 2, two crashes, a stall) for
    /// the four designs, with one thread and two, then two one-thread searches side by side
    /// (what the machine gives two threads that share nothing), and where the time goes in
    /// each run (about five minutes a run).
    #[arg(long, conflicts_with_all = ["large", "quick", "progress_cost", "spin"])]
    scaling: bool,
    /// Measure each search row N times, the rows taken in turn, and show each row's fastest
    /// run: on a shared machine one run can be a tenth or more slower than the next.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100), conflicts_with_all = ["quick", "progress_cost", "spin"])]
    runs: u16,
    /// Only slotcheck against SPIN (spin/README.md): owner-keyed and the recommended design
    /// on three requests, K 1, a crash, a stall and two deliveries (two requests with
    /// --quick), one run each, with both times, the ratio and whether every safety verdict
    /// agrees (exit 1 if one does not). Needs spin and gcc on PATH.
    #[arg(long, conflicts_with_all = ["large", "progress_cost"])]
    spin: bool,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    quiet: bool,
}

/// `--design`'s long help (`--help`): its short help, then every design and
/// what it changes, as a diff of the contract's admit table.
fn with_designs(arg: clap::Arg) -> clap::Arg {
    let short = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    arg.long_help(format!("{short}\n\n{}", models::designs_help()))
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
                    models::designs_help()
                ))
            })
        })
        .get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let sub = matches.subcommand().map(|(_, m)| m);
    // The commands that run checks, walks or real systems keep their
    // verdicts when cancelled, and stop the servers they started; `explore`
    // serves until a signal ends it.
    if matches!(
        cli.command,
        Command::Check(_)
            | Command::Compare(_)
            | Command::Mutate(_)
            | Command::Simulate(_)
            | Command::Live(_)
            | Command::Replay { on: Some(_), .. }
            | Command::Validate(_)
            | Command::Bench(_)
    ) {
        signals::stop_runs_on_signals();
    }
    if matches!(
        &cli.command,
        Command::Live(_) | Command::Replay { on: Some(_), .. }
    ) || matches!(&cli.command, Command::Check(args) if args.on.is_some())
    {
        signals::clean_up_on_a_closed_pipe();
    }
    let result = match cli.command {
        Command::Compare(args) if args.findings => compare::compare_findings(args, sub),
        Command::Compare(args) => args
            .model
            .check_flags(sub)
            .and_then(|()| on_model(args.model.model, compare::Compare(args))),
        Command::Check(args) => match args.design.clone() {
            Some(design) if args.paths.is_empty() && args.scenarios.given().is_empty() => args
                .model
                .check_flags(sub)
                .and_then(|()| check::check_design(args, design)),
            _ if args.skew_range.is_some() => {
                Err("--skew-range checks one design ad hoc: give no scenario PATH".to_string())
            }
            _ => check::check_scenarios(args, sub.expect("check's arguments")),
        },
        Command::Scenario(ScenarioCommand::New { id, dir }) => check::new_scenario(&id, &dir),
        Command::Explore(args) => args
            .model
            .check_flags(sub)
            .and_then(|()| on_model(args.model.model, explore::Explore(args))),
        Command::Mutate(args) => args
            .model
            .check_flags(sub)
            .and_then(|()| on_model(args.model.model, mutate::Mutate(args))),
        Command::Bench(args) if args.spin => crate::commands::bench_spin::run(
            args.quick,
            args.json,
            crate::check::progress::wanted(args.quiet),
        ),
        Command::Bench(args) => bench::run(
            args.large,
            args.quick,
            args.progress_cost,
            args.scaling,
            usize::from(args.runs),
            args.json,
            crate::check::progress::wanted(args.quiet),
        ),
        Command::Simulate(args) => args
            .model
            .check_flags(sub)
            .and_then(|()| on_model(args.model.model, args)),
        Command::Replay { on, nats, .. }
            if on.as_deref() != Some("nats") && !nats.given().is_empty() =>
        {
            Err(format!(
                "{}: only `replay --on nats` takes {}; this replay runs on {}, which writes no event log and runs no builder",
                nats.given().join(", "),
                if nats.given().len() == 1 { "it" } else { "them" },
                on.as_deref().unwrap_or("the model"),
            ))
        }
        Command::Replay { file, on: None, .. } => crate::simulate::replay::run_cli(&file),
        Command::Replay {
            file,
            on: Some(on),
            timeout,
            nats,
        } => {
            let deadline = timeout
                .map(|t| std::time::Instant::now() + std::time::Duration::from_secs_f64(t));
            match on.as_str() {
                "nats" => replay_nats::run(&file, &on, &nats, deadline),
                _ => replay_on(&file, &on, deadline),
            }
        }
        Command::Merge { files, partial } => simulate::merge_files(&files, partial),
        Command::Live(args) => live::run(args),
        Command::Validate(args) => validate::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// `replay --on ENGINE FILE`, when built with the `real` feature.
fn replay_on(
    file: &std::path::Path,
    on: &str,
    deadline: Option<std::time::Instant>,
) -> Result<u8, String> {
    #[cfg(feature = "real")]
    return real::replay_on(file, on, deadline);
    #[cfg(not(feature = "real"))]
    let _ = deadline;
    #[cfg(not(feature = "real"))]
    return Err(format!(
        "--on {on}: this slotcheck was built without the `real` feature (cargo build --features real); cannot replay {}",
        file.display()
    ));
}

/// Runs a command's job on the model `--model` names.
fn on_model<J: ForModel<Out = Result<u8, String>>>(model: ModelName, job: J) -> Result<u8, String> {
    models::for_model(model.name(), job).expect("every --model value is in the registry")
}
