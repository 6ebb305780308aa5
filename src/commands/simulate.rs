//! `slotcheck simulate` and `slotcheck merge`: the flags, the settings they
//! make, and the report printed and written.

use super::simulate_bench;
use crate::models::whole;
use crate::models::ModelBounds;
use crate::models::{self, ForModel, ModelArgs, ToolModel};
use crate::report::itf;
use crate::simulate::{
    merge_named, runs_of, simulate_all, swarm_ranges, text, PctSettings, Report, Settings, Shard,
    Timing,
};
use clap::Args;
use std::path::PathBuf;

// ---------------------------------------------------------------- CLI

/// `slotcheck simulate`: the model and its bounds, and the simulation's own flags.
#[derive(Args)]
pub struct SimulateCommand {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub simulate: SimulateArgs,
}

impl ForModel for SimulateCommand {
    type Out = Result<u8, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let args = self;
        // Measurements of fixed numbers of runs, within the command's
        // budgets: cut, they print the rows they finished and exit 3.
        let budget = super::args::budget(args.simulate.timeout, args.simulate.max_memory);
        if args.simulate.bench {
            return simulate_bench::run::<M>(&args.model, args.simulate.seed, &budget);
        }
        if args.simulate.power {
            let (text, cut) = simulate_bench::findings_power(args.simulate.seed, &budget)?;
            print!("{text}");
            return Ok(if cut.is_some() { 3 } else { 0 });
        }
        let designs: Vec<&str> = if args.simulate.design.is_empty() {
            M::source_design_names()
        } else {
            args.simulate.design.iter().map(String::as_str).collect()
        };
        let models = designs
            .iter()
            .map(|d| M::from_flags(&args.model, d))
            .collect::<Result<Vec<_>, _>>()?;
        // The flags that rebuild the model, for the reproduction commands;
        // swarm runs draw their bounds.
        let mut flags: Vec<String> = Vec::new();
        let model_flag = models::model_flag(M::NAME);
        if !model_flag.is_empty() {
            flags.push(model_flag.trim_start().to_string());
        }
        if args.simulate.swarm {
            let options = models[0].option_names();
            flags.extend(options.iter().map(|o| format!("--option {o}")));
        } else {
            flags.push(models[0].bounds_flags());
        }
        run_cli(&models, &flags.join(" "), &args.simulate)
    }
}

/// `simulate`'s own flags; the bounds are `check`'s.
#[derive(clap::Args, Clone, Debug)]
pub struct SimulateArgs {
    /// The design to simulate (repeatable); default: every design of the model.
    #[arg(long, value_name = "DESIGN")]
    pub design: Vec<String>,
    /// The seed every run's generator derives from (printed in every report).
    #[arg(long, value_name = "S", default_value_t = 0, value_parser = whole(0u64, None))]
    pub seed: u64,
    /// Runs 0..N.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = whole(1u64, None))]
    pub runs: u64,
    /// Only run N (reproduces it exactly, with the same other options).
    #[arg(long, value_name = "N", value_parser = whole(0u64, None))]
    pub run: Option<u64>,
    /// Steps per walk at most (a walk also ends where nothing is enabled).
    #[arg(long, value_name = "STEPS", default_value_t = 500, value_parser = whole(1usize, None))]
    pub depth: usize,
    /// Each run draws its own bounds and weights over action kinds.
    #[arg(long)]
    pub swarm: bool,
    /// A swarm range (repeatable): NAME=LOW..=HIGH or NAME=N, e.g. stalls=0.
    #[arg(long, value_name = "NAME=LOW..=HIGH", requires = "swarm")]
    pub range: Vec<String>,
    /// Schedule every walk by PCT (probabilistic concurrency testing) of this
    /// depth: each actor gets a random priority, the highest enabled one acts,
    /// and at DEPTH-1 random steps the acting one drops below all others.
    /// Finds orderings that uniform walks rarely take; works with --swarm.
    #[arg(long, value_name = "DEPTH", value_parser = whole(1u32, Some(16)))]
    pub pct: Option<u32>,
    /// With --pct: the change points fall on steps 1..=STEPS (about a walk's length).
    #[arg(long, value_name = "STEPS", default_value_t = crate::simulate::pct::DEFAULT_HORIZON, value_parser = whole(1usize, None), requires = "pct")]
    pub pct_horizon: usize,
    /// A liveness phase: each walk takes faults only in its first 0..=STEPS
    /// steps (drawn per run), then must settle (every request or ask at its
    /// end) before it ends (nothing enabled, or --depth steps); one that
    /// does not is reported as `settles-after-faults`, told as found.
    #[arg(long, value_name = "STEPS", value_parser = whole(1usize, None))]
    pub liveness: Option<usize>,
    /// Coverage-guided runs: a run may resume from a state that an earlier
    /// run reached first (replaying the path to it) and walk on from there,
    /// so that walks crowd out from the states already covered. Works with
    /// --swarm and --pct; each run depends on those before it, so --run N
    /// walks runs 0..N first, and --shard is refused.
    #[arg(long, conflicts_with = "shard")]
    pub guided: bool,
    /// Take the runs r with r mod N = I-1 (1 <= I <= N).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Show the walks' counterexamples as found, unshrunk.
    #[arg(long)]
    pub no_shrink: bool,
    /// States the exhaustive stage of shrinking may generate.
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = whole(0usize, None))]
    pub shrink_states: usize,
    /// Where counterexamples are saved as ITF traces.
    #[arg(long, value_name = "DIR", default_value = "slotcheck-traces")]
    pub out: PathBuf,
    /// Do not save counterexamples.
    #[arg(long)]
    pub no_save: bool,
    // `--json` (the report as JSON: input for `slotcheck merge`) and `--json-out FILE`.
    #[command(flatten)]
    pub json: crate::report::JsonArgs,
    /// Measure runs per second and time to first violation of each claim.
    #[arg(long)]
    pub bench: bool,
    /// The simulator's power: for every finding (each scenario file naming
    /// one) and each design expected to violate it, the runs from --seed to
    /// the first violation on the finding's bounds, plain, swarm, PCT and
    /// guided.
    #[arg(long, conflicts_with = "bench")]
    pub power: bool,
    /// Stop this many seconds (more than 0) after the command starts, whatever it runs (every
    /// design, the shrinking); the runs not done are inconclusive (exit 3 unless a violation
    /// was found).
    #[arg(long, value_name = "SECONDS", value_parser = super::args::budget_seconds)]
    pub timeout: Option<f64>,
    /// Stop before the process holds more memory than this (512M, 8G...); the runs not done
    /// are inconclusive. Default: four fifths of the memory available when the run starts, or
    /// of the memory cgroup's limit (a container's) when that is less.
    /// (--bench and --power keep both budgets: cut, they print the rows they finished whole
    /// and exit 3, never a cut figure.)
    #[arg(long, value_name = "SIZE", value_parser = crate::check::memory::parse_size)]
    pub max_memory: Option<u64>,
}

/// `slotcheck simulate` of `models` (one per design, on the bounds and
/// options given; `--bench` is the caller's). `model_flags` are the model's
/// flags as given, for reproduction commands.
pub fn run_cli<M: ToolModel>(
    models: &[M],
    model_flags: &str,
    args: &SimulateArgs,
) -> Result<u8, String> {
    let swarm = if args.swarm {
        Some(swarm_ranges(
            models.first().ok_or("no design to simulate")?,
            &args.range,
        )?)
    } else {
        None
    };
    let settings = Settings {
        seed: args.seed,
        runs: args.runs,
        only_run: args.run,
        depth: args.depth,
        swarm,
        shard: match &args.shard {
            Some(text) => Shard::parse(text)?,
            None => Shard::WHOLE,
        },
        shrink: !args.no_shrink,
        shrink_states: args.shrink_states,
        out: (!args.no_save).then(|| args.out.clone()),
        pct: args.pct.map(|depth| PctSettings {
            depth,
            horizon: args.pct_horizon,
        }),
        liveness: args.liveness,
        guided: args.guided,
        budget: super::args::budget(args.timeout, args.max_memory),
    };
    if runs_of(&settings).next().is_none() {
        let which = match settings.only_run {
            Some(r) => format!("run {r}"),
            None => format!("runs 0..{}", settings.runs),
        };
        return Err(format!(
            "--shard {}/{}: no run of {which} belongs to it (run r belongs to shard r mod {} + 1)",
            settings.shard.index, settings.shard.count, settings.shard.count
        ));
    }
    let mut outputs = Vec::new();
    if let Some(dir) = &settings.out {
        outputs.push(itf::Output::dir("--out", dir));
    }
    if let Some(file) = &args.json.json_out {
        outputs.push(itf::Output::file("--json-out", file));
    }
    itf::check_outputs(&outputs, &[])?;
    let mut timing = Timing::default();
    let (report, runs) = simulate_all(models, &settings, &mut timing)?;
    let json = crate::report::json_text(&report);
    if args.json.json {
        print!("{json}");
    } else {
        print!(
            "{}",
            text::report_text(&report, &runs, &settings, model_flags)
        );
    }
    eprintln!("{}", text::timing_line(&report, &timing));
    let mut errors: Vec<String> = runs.iter().flat_map(|r| r.write_errors.clone()).collect();
    if let Some(file) = &args.json.json_out {
        if let Err(e) = itf::write_reports(&[(file.clone(), json.into_bytes())], |_| {}) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\nerror: "));
    }
    Ok(exit_code(&report))
}

/// 1 a violation found; 3 the runs were cut short (a budget, a signal)
/// before the last; else 0.
fn exit_code(report: &Report) -> u8 {
    if report.designs.iter().any(|d| !d.violations.is_empty()) {
        1
    } else if report.designs.iter().any(|d| d.cut.is_some()) {
        3
    } else {
        0
    }
}

/// `slotcheck merge FILE...`: prints the merged JSON report.
pub fn merge_files(files: &[PathBuf], partial: bool) -> Result<u8, String> {
    let mut reports = Vec::new();
    for file in files {
        let text = crate::report::read_small(file, crate::report::SMALL_INPUT)?;
        let report: Report = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a `slotcheck simulate --json` report: {e}",
                file.display()
            )
        })?;
        reports.push(report);
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let merged = merge_named(&reports, &names)?;
    print!("{}", crate::report::json_text(&merged));
    let code = exit_code(&merged);
    match &merged.shard {
        Some(cover) if !partial => {
            let missing: Vec<String> = (1..=cover.of)
                .filter(|s| !cover.covered.contains(s))
                .map(|s| format!("{s}/{}", cover.of))
                .collect();
            eprintln!(
                "merge: shard(s) {} missing: the runs they hold are not in this report (inconclusive; --partial if that is meant)",
                missing.join(", ")
            );
            Ok(if code == 1 { 1 } else { 3 })
        }
        _ => Ok(code),
    }
}
