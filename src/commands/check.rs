//! `slotcheck check`: over scenario files (the regression guard), or with
//! `--design` one design ad hoc, a mutant of it, or (link) a range of skews.

use super::adhoc;
use super::args::LimitArgs;
use super::skew;
use crate::check::Limits;
use crate::models::link::options;
use crate::models::{ForModel, ModelArgs, ModelName, ToolModel};
use crate::report::see::{CheckOutputArgs, Format};
use crate::report::{JsonArgs, Style};
use crate::scenario;
use clap::{ArgMatches, Args};
use slotcheck_models::link::Link;
use std::path::{Path, PathBuf};

/// A budget ran out before a verdict.
const EXIT_INCONCLUSIVE: u8 = 3;

#[derive(Args)]
pub struct CheckArgs {
    /// Scenario files or directories to run (default: every file under
    /// `scenarios/`). Without PATH and with --design, check that design
    /// ad hoc on the bounds given.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The design to check ad hoc; with scenarios, run only this design.
    #[arg(long, value_name = "DESIGN", value_parser = crate::models::design_names())]
    pub design: Option<String>,
    /// With --design: check this mutant of the design instead (a name that `slotcheck mutate`
    /// prints, `owner-keyed/claim/cas-ignores-version`), to read its stories.
    #[arg(long, value_name = "NAME", requires = "design")]
    pub mutant: Option<String>,
    /// Check only this property (repeatable); default: all of them.
    #[arg(long, value_name = "NAME")]
    pub property: Vec<String>,
    /// Link, with --design: check the design at every skew from FROM to TO seconds (`0..60`),
    /// a tick (5 s) apart, on the other bounds given, and say the largest skew under which
    /// every property holds, with the story of the first skew that breaks one.
    #[arg(long, value_name = "FROM..TO", requires = "design", conflicts_with_all = ["mutant", "property"])]
    pub skew_range: Option<String>,
    /// Stovepipe, with --design: replay each violation's story on a real database too, statement
    /// by statement, comparing the rows with the model's after every step: `sqlite`, `mariadb`
    /// or `postgres` (a private server started for the run). Exit 4: the rows differ.
    #[arg(long, value_name = "ENGINE", requires = "design", conflicts_with_all = ["mutant", "skew_range"])]
    pub on: Option<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub scenarios: ScenarioArgs,
    // `--json` (one JSON object, verdicts, stories and statistics, or for
    // scenario runs the whole run's report, instead of the text) and
    // `--json-out FILE` (the same written to FILE; the text is still printed).
    #[command(flatten)]
    pub json: JsonArgs,
    /// Write each counterexample here: an ITF trace (.itf.json, for
    /// `slotcheck replay`), and for scenario runs a story (.txt) too.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub output: CheckOutputArgs,
}

/// What only scenario runs take.
#[derive(Args, Default)]
pub struct ScenarioArgs {
    /// Scenario runs: run only the scenario with this ID (repeatable).
    #[arg(long, value_name = "ID")]
    pub only: Vec<String>,
    /// Scenario runs: leave out scenarios marked `slow = true` (the nightly one).
    #[arg(long)]
    pub skip_slow: bool,
    /// Scenario runs: write a JUnit XML report here (a testsuite per scenario).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Scenario runs: print only the regressions and story changes (each with its story) and
    /// the summary, not a line per check (what CI reads); the reports written are whole.
    #[arg(long)]
    pub regressions_only: bool,
    /// Scenario runs: a story change (a pinned step count differs while the verdict is as
    /// pinned) fails the run with exit 4; without it, a story change is a warning and exits 0.
    #[arg(long)]
    pub strict_lengths: bool,
    /// Scenario runs: run nothing; print which cells of each model's coverage grid (slots,
    /// faults, deliveries, requests; link: asks, faults, skew) the scenario files cover, and
    /// which they leave out and why. Exit 1: a cell the grid wants covered is not.
    #[arg(long)]
    pub grid: bool,
    /// Scenario runs: check no property; explore each scenario's bounds for every design of its
    /// model and print which handler paths (a step, and where it went) no scenario reaches.
    /// Exit 1: an unreached path that coverage/unreached.toml does not list, or a listed one
    /// reached.
    #[arg(long, conflicts_with_all = ["grid", "bless"])]
    pub coverage: bool,
    /// Scenario runs: run every design of each file's model on every property and write the
    /// expectations into the files (new designs and properties added, changed verdicts and
    /// lengths rewritten), printing each change as a diff line; comments and stories stay.
    /// With --design, --property, --only: only those; with --skip-slow, not the slow files.
    #[arg(long)]
    pub bless: bool,
}

impl ScenarioArgs {
    /// The scenario-only flags given, as typed.
    pub fn given(&self) -> Vec<&'static str> {
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
        if self.regressions_only {
            given.push("--regressions-only");
        }
        if self.strict_lengths {
            given.push("--strict-lengths");
        }
        if self.grid {
            given.push("--grid");
        }
        if self.coverage {
            given.push("--coverage");
        }
        if self.bless {
            given.push("--bless");
        }
        given
    }
}

/// `check --design D`: the design, or the mutant `--mutant` names, on the
/// bounds given; with `--skew-range`, the link design at each skew.
pub fn check_design(args: CheckArgs, design: String) -> Result<u8, String> {
    if args.skew_range.is_some() {
        return check_skew_range(args, design);
    }
    if let Some(on) = args.on.clone() {
        return check_design_on(args, design, &on);
    }
    super::on_model(args.model.model, CheckDesign(args, design))
}

struct CheckDesign(CheckArgs, String);

impl ForModel for CheckDesign {
    type Out = Result<u8, String>;

    fn run<M: ToolModel>(self) -> Self::Out {
        let CheckDesign(args, design) = self;
        let limits = args.limits.limits()?;
        let model = M::from_flags(&args.model, &design)?;
        let Some(model) = maybe_mutant(model, args.mutant.as_deref(), &limits)? else {
            return Ok(EXIT_INCONCLUSIVE);
        };
        adhoc::check_design(
            model,
            &args.property,
            &limits,
            &args.json,
            args.out.as_deref(),
            &args.output,
        )
    }
}

/// `check --design D --on ENGINE`: the stovepipe model's stories on a
/// real database.
fn check_design_on(args: CheckArgs, design: String, on: &str) -> Result<u8, String> {
    if args.model.model != ModelName::Stovepipe {
        return Err("--on runs the stovepipe designs as SQL: leave out --model link".to_string());
    }
    // Refused rather than ignored: `--on` prints the stories on the
    // database as text, and writes no report.
    let mut reports = Vec::new();
    if args.json.json {
        reports.push("--json");
    }
    if args.json.json_out.is_some() {
        reports.push("--json-out");
    }
    if args.output.html.is_some() {
        reports.push("--html");
    }
    if args.out.is_some() {
        reports.push("--out");
    }
    if args.output.format != Format::Text {
        reports.push("--format");
    }
    if !reports.is_empty() {
        return Err(format!(
            "{} with --on: the stories on the database are printed as text, no report is written; run `check --design {design}` without --on for {}",
            reports.join(", "),
            if reports.len() == 1 { "it" } else { "them" }
        ));
    }
    #[cfg(feature = "real")]
    {
        let model =
            <slotcheck_models::stovepipe::Stovepipe as crate::models::ToolModel>::from_flags(
                &args.model,
                &design,
            )?;
        super::real::check_design_on(model, &args.property, &args.limits.limits()?, on)
    }
    #[cfg(not(feature = "real"))]
    Err(format!(
        "--on {on}: this slotcheck was built without the `real` feature; cannot run {design} on it"
    ))
}

/// `check --model link --design D --skew-range FROM..TO`.
fn check_skew_range(args: CheckArgs, design: String) -> Result<u8, String> {
    if args.model.model != ModelName::Link {
        return Err(
            "--skew-range is for the link model's clock skew: add --model link".to_string(),
        );
    }
    let bounds = args.model.bounds.bounds::<Link>()?;
    bounds
        .validate()
        .map_err(|e| format!("--model link: {e}"))?;
    let options = options(&args.model.bounds.options)?;
    let range = args.skew_range.as_deref().expect("--skew-range given");
    if args.model.bounds.has("skew") {
        return Err("--skew-range varies the skew: leave out --skew".to_string());
    }
    let range = skew::parse_range(range)?;
    let points = skew::measure(&design, bounds, options, range, &args.limits.limits()?)?;
    print!("{}", skew::text(&design, &points, Style::for_stdout()));
    Ok(skew::exit_code(&points))
}

/// The model, or with `--mutant` the mutant of it that has that name;
/// `None` (said on stderr) when a budget ran out while finding the mutants.
fn maybe_mutant<M: ToolModel>(
    model: M,
    mutant: Option<&str>,
    limits: &Limits,
) -> Result<Option<M>, String> {
    let Some(name) = mutant else {
        return Ok(Some(model));
    };
    // Finding the mutants explores the design: the run's budgets hold.
    let mutants = match crate::check::budget::within(limits, |go_on| model.mutants_within(go_on)) {
        Ok(mutants) => mutants,
        Err(cut) => {
            eprintln!(
                "inconclusive: the mutants of {} could not be listed: {}",
                model.variant(),
                cut.describe()
            );
            return Ok(None);
        }
    };
    let known: Vec<&str> = mutants.iter().map(|(n, _, _)| n.as_str()).collect();
    match mutants.iter().find(|(n, _, _)| n == name) {
        Some((_, _, m)) => Ok(Some(m.clone())),
        None => Err(format!(
            "--mutant: `{name}` is no mutant of {} on these bounds (its mutants: {})",
            model.variant(),
            known.join(", ")
        )),
    }
}

/// The report flags given, which a run that writes no report refuses.
fn report_flags(args: &CheckArgs) -> Vec<&'static str> {
    [
        (args.json.json_out.is_some(), "--json-out"),
        (args.output.html.is_some(), "--html"),
        (args.scenarios.junit.is_some(), "--junit"),
        (args.out.is_some(), "--out"),
    ]
    .into_iter()
    .filter(|(given, _)| *given)
    .map(|(_, flag)| flag)
    .collect()
}

/// `check` over scenario files; refuses what only an ad-hoc check takes
/// (bounds, the model, diagrams), saying what made it a scenario run.
pub fn check_scenarios(args: CheckArgs, matches: &ArgMatches) -> Result<u8, String> {
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
    let bounds = args.model.given(Some(matches), true);
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
    if args.scenarios.coverage {
        // Refused rather than ignored: --coverage checks no property and
        // writes no report; it prints the coverage (as JSON with --json).
        let mut reports = report_flags(&args);
        if !args.property.is_empty() {
            reports.push("--property");
        }
        if !reports.is_empty() {
            return Err(format!(
                "{} with --coverage: the coverage checks no property and writes no report; it prints the paths reached (as JSON with --json)",
                reports.join(", ")
            ));
        }
        let selection = scenario::Selection {
            designs: args.design.into_iter().collect(),
            properties: Vec::new(),
            only: args.scenarios.only,
            skip_slow: args.scenarios.skip_slow,
        };
        return Ok(scenario::coverage::coverage_command(
            &args.paths,
            &selection,
            &args.limits.limits()?,
            Path::new(scenario::coverage::KNOWN),
            args.json.json,
        ));
    }
    if args.scenarios.grid {
        // Refused rather than ignored: --grid runs nothing and writes no
        // report; it prints the coverage, as text or (--json) as JSON.
        let reports = report_flags(&args);
        if !reports.is_empty() {
            return Err(format!(
                "{} with --grid: the grid runs nothing and writes no report; it prints the coverage (as JSON with --json)",
                reports.join(", ")
            ));
        }
    }
    if args.scenarios.grid && args.json.json {
        let (json, missing) = super::grid::report_json(&args.paths)?;
        println!(
            "{}",
            serde_json::to_string_pretty(&json).expect("the grid is JSON")
        );
        return Ok(u8::from(missing > 0));
    }
    if args.scenarios.grid {
        let (text, missing) = super::grid::report(&args.paths)?;
        print!("{text}");
        return Ok(u8::from(missing > 0));
    }
    // The grid's coverage is the whole guard's: said after a run of every
    // scenario file, with no filter.
    let whole_guard = args.paths.is_empty()
        && args.scenarios.only.is_empty()
        && args.design.is_none()
        && args.property.is_empty();
    let coverage = (whole_guard && !args.json.json).then(|| super::grid::summary(&args.paths));
    if args.scenarios.bless {
        let selection = scenario::Selection {
            designs: args.design.into_iter().collect(),
            properties: args.property,
            only: args.scenarios.only,
            skip_slow: args.scenarios.skip_slow,
        };
        return Ok(scenario::bless_command(
            &args.paths,
            &selection,
            &args.limits.limits()?,
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
        regressions_only: args.scenarios.regressions_only,
        strict_lengths: args.scenarios.strict_lengths,
    };
    let code = scenario::check_command(run);
    // The grid's coverage after the summary (a run that could not start
    // has said why already).
    if let (Some(Ok(lines)), false) = (coverage, code == scenario::EXIT_INVALID) {
        print!("{lines}");
    }
    Ok(code)
}

pub fn new_scenario(id: &str, dir: &Path) -> Result<u8, String> {
    let path = scenario::write_template(id, dir)?;
    println!(
        "wrote {}: fill in the bounds and expectations, then run `slotcheck check {}`",
        path.display(),
        path.display()
    );
    Ok(0)
}
