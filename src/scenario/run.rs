//! Running: the selected scenarios one by one, a line per check as it is
//! decided, and the `slotcheck check` command over scenario files (its
//! filters, its exit statuses, the reports written whole after the run).

use super::load::*;
use super::*;
use crate::check::Limits;
use crate::report::results::{RunFigures, ScenarioResult, ScenarioRun};
use crate::report::table::{Cell, Column, TextTable};
use crate::report::{html, itf, junit, Style};
use std::path::PathBuf;
use std::time::Instant;

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Runs the selected scenarios, printing one line per check as it is
/// decided (and the story under each regression).
pub fn run_all(
    scenarios: &[Scenario],
    selection: &Selection,
    limits: &Limits,
    regressions_only: bool,
    mut print: impl FnMut(&str),
) -> ScenarioRun {
    let started = Instant::now();
    let mut out = Vec::new();
    // Every line laid out on the same least widths (the longest id, the
    // longest registered design), so that lines printed as each check is
    // decided align.
    let id_width = scenarios
        .iter()
        .map(|s| s.heading.id.len())
        .max()
        .unwrap_or(0);
    let design_width = crate::models::MODELS
        .iter()
        .flat_map(|m| super::template::designs_of(m))
        .map(str::len)
        .max()
        .unwrap_or(12);
    let lines = TextTable::new(vec![
        Column::left("scenario").at_least(id_width),
        Column::left("design").at_least(design_width),
        Column::left("property").at_least(28),
        Column::left("result"),
    ]);
    let line = |cells: Vec<Cell>| {
        let text = lines.line(cells, Style::plain());
        text.trim_end_matches('\n').to_string()
    };
    for scenario in scenarios {
        if !selection.only.is_empty() && !selection.only.contains(&scenario.heading.id) {
            continue;
        }
        let skipped = (selection.skip_slow && scenario.slow).then_some("slow (--skip-slow)");
        let scenario_started = Instant::now();
        let (findings, runs) = if skipped.is_some() {
            if !regressions_only {
                print(&line(vec![
                    scenario.heading.id.as_str().into(),
                    "skipped: slow (--skip-slow)".into(),
                ]));
            }
            (Vec::new(), Vec::new())
        } else {
            let (findings, runs) = scenario.run(selection, limits);
            for f in &findings {
                let flagged = matches!(f.status, Status::Regression | Status::StoryChange);
                if regressions_only && !flagged {
                    continue;
                }
                print(&line(vec![
                    scenario.heading.id.as_str().into(),
                    f.design.as_str().into(),
                    f.subject.as_str().into(),
                    f.describe().into(),
                ]));
                if flagged {
                    if let Some(story) = &f.story {
                        print(&indent(story, "      "));
                    }
                }
            }
            (findings, runs)
        };
        let heading = &scenario.heading;
        out.push(ScenarioResult {
            bounds: heading.bounds.clone(),
            file: heading.file.display().to_string(),
            id: heading.id.clone(),
            model: heading.model.to_string(),
            notes: heading.notes.clone(),
            results: findings.into_iter().map(Finding::into_result).collect(),
            seconds: scenario_started.elapsed().as_secs_f64(),
            skipped: skipped.map(String::from),
            source: heading.source.clone(),
            title: heading.title.clone(),
            bounds_line: heading.bounds_line.clone(),
            runs: runs
                .into_iter()
                .map(|r| RunFigures {
                    design: r.design,
                    stats: r.stats,
                })
                .collect(),
        });
    }
    ScenarioRun::new(out, started.elapsed().as_secs_f64())
}

pub(super) fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Everything `slotcheck check` was asked for, in scenario mode.
pub struct CheckRun {
    pub paths: Vec<PathBuf>,
    pub selection: Selection,
    pub limits: Limits,
    pub junit: Option<PathBuf>,
    /// `--json`: the report on standard output instead of the lines.
    pub json: bool,
    /// `--json-out FILE`: the report written there too.
    pub json_out: Option<PathBuf>,
    pub out: Option<PathBuf>,
    /// The HTML report's file.
    pub html: Option<PathBuf>,
    /// Print only the regressions' lines and the story changes' (and the
    /// summary).
    pub regressions_only: bool,
    /// `--strict-lengths`: a story change fails the run (exit 4) instead
    /// of a warning.
    pub strict_lengths: bool,
}

impl CheckRun {
    /// Every file or directory the run will write, with its flag.
    pub(super) fn outputs(&self) -> Vec<itf::Output> {
        let mut outputs = Vec::new();
        if let Some(file) = &self.junit {
            outputs.push(itf::Output::file("--junit", file));
        }
        if let Some(file) = &self.json_out {
            outputs.push(itf::Output::file("--json-out", file));
        }
        if let Some(file) = &self.html {
            outputs.push(itf::Output::file("--html", file));
        }
        if let Some(dir) = &self.out {
            outputs.push(itf::Output::dir("--out", dir));
        }
        outputs
    }
}

/// Exit statuses of a scenario run.
pub use crate::report::results::{
    EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_OK, EXIT_REGRESSION, EXIT_STORY_CHANGE,
};

/// Refuses a selection that leaves nothing to check: each filter must
/// select something among the scenarios the others leave, and together
/// they must leave at least one check. A run of "0 checks" that passes
/// would tell CI that a typo is a success.
pub fn check_selection(scenarios: &[Scenario], selection: &Selection) -> Result<(), String> {
    let chosen: Vec<&Scenario> = scenarios
        .iter()
        .filter(|s| selection.only.is_empty() || selection.only.contains(&s.heading.id))
        .collect();
    let running: Vec<&Scenario> = chosen
        .iter()
        .copied()
        .filter(|s| !(selection.skip_slow && s.slow))
        .collect();
    if running.is_empty() && !chosen.is_empty() {
        let ids: Vec<&str> = chosen.iter().map(|s| s.heading.id.as_str()).collect();
        return Err(format!(
            "--skip-slow leaves out every selected scenario ({}: `slow = true`)",
            ids.join(", ")
        ));
    }
    let flags = |flag: &str, names: &[String]| -> String {
        names
            .iter()
            .map(|n| format!("{flag} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for design in &selection.designs {
        if !running.iter().any(|s| s.plan.has_design(design)) {
            return Err(format!(
                "--design {design}: no selected scenario expects anything of it"
            ));
        }
    }
    for property in &selection.properties {
        if !running.iter().any(|s| s.plan.expects(property)) {
            return Err(format!(
                "--property {property}: no selected scenario expects anything of it"
            ));
        }
    }
    if running
        .iter()
        .map(|s| s.plan.selected(selection))
        .sum::<usize>()
        == 0
    {
        return Err(format!(
            "{} with {} select no check: no selected scenario expects these properties of these designs",
            flags("--design", &selection.designs),
            flags("--property", &selection.properties)
        ));
    }
    Ok(())
}

/// The registered designs that no scenario of their model expects anything
/// of, as `model/design`: the scenario check would not guard them.
pub fn unguarded_designs(scenarios: &[Scenario]) -> Vec<String> {
    let mut unguarded = Vec::new();
    for model in crate::models::MODELS {
        for design in super::template::designs_of(model) {
            let guarded = scenarios
                .iter()
                .any(|s| s.heading.model == *model && s.plan.has_design(design));
            if !guarded {
                unguarded.push(format!("{model}/{design}"));
            }
        }
    }
    unguarded
}

/// The properties of each model that no scenario of it expects anything
/// of (`model/property`): like a design, a property no scenario pins is a
/// property the nightly guard never checks.
fn unexpected_properties(scenarios: &[Scenario]) -> Vec<String> {
    let mut unexpected = Vec::new();
    for model in crate::models::MODELS {
        for property in super::template::properties_of(model) {
            let guarded = scenarios
                .iter()
                .any(|s| s.heading.model == *model && s.plan.expects(property));
            if !guarded {
                unexpected.push(format!("{model}/{property}"));
            }
        }
    }
    unexpected
}

/// `slotcheck check [PATH...]`: loads every file (any invalid one stops the
/// run with exit 2 before anything runs or is written), checks the filters
/// and that every report can be written, runs, prints a line per check and
/// a summary, then writes the reports, each whole or not at all. A report
/// that cannot be written after all is an error (exit 2) once the results
/// are printed.
pub fn check_command(run: CheckRun) -> u8 {
    let fail = |message: String| {
        eprintln!("error: {message}");
        EXIT_INVALID
    };
    let files = match files(&run.paths) {
        Ok(f) => f,
        Err(e) if run.json && e.message == NO_SUCH_FILE => {
            // `--json FILE` wrote a file before `--json-out` existed.
            return fail(format!(
                "{e} (--json prints the report on standard output; --json-out FILE writes it to a file)"
            ));
        }
        Err(e) => return fail(e.to_string()),
    };
    let scenarios = match load_all(&files, &run.selection) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    if scenarios.is_empty() {
        return fail(format!(
            "no scenario files in {}",
            if run.paths.is_empty() {
                SCENARIO_DIR.to_string()
            } else {
                run.paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    if let Err(e) = check_selection(&scenarios, &run.selection) {
        return fail(e);
    }
    // The whole guard (every scenario file, no filter) must cover every
    // registered design: a design added without expectations would pass
    // every night unchecked.
    let whole_guard =
        run.paths.is_empty() && run.selection.only.is_empty() && run.selection.designs.is_empty();
    let unguarded = unguarded_designs(&scenarios);
    if whole_guard && !unguarded.is_empty() {
        return fail(format!(
            "{} {} in no scenario under {SCENARIO_DIR}: the scenario check would not guard {}; add its `[expect.DESIGN]` table to the scenarios of its model (the book, docs/designs.md: \"Adding a part or a repair\")",
            unguarded.join(", "),
            if unguarded.len() == 1 { "is" } else { "are" },
            if unguarded.len() == 1 { "it" } else { "them" },
        ));
    }
    let unexpected = unexpected_properties(&scenarios);
    if whole_guard && !unexpected.is_empty() {
        return fail(format!(
            "{} {} expected by no scenario under {SCENARIO_DIR}: the scenario check would not guard {}; `slotcheck check --bless --skip-slow --property NAME` writes {} into the scenarios of {} model (docs/scenarios.md: Blessing)",
            unexpected.join(", "),
            if unexpected.len() == 1 { "is" } else { "are" },
            if unexpected.len() == 1 { "it" } else { "them" },
            if unexpected.len() == 1 { "its expectations" } else { "their expectations" },
            if unexpected.len() == 1 { "its" } else { "their" },
        ));
    }
    if let Err(e) = itf::check_outputs(&run.outputs(), &files) {
        return fail(e);
    }
    let report = run_all(
        &scenarios,
        &run.selection,
        &run.limits,
        run.regressions_only,
        |line| {
            if !run.json {
                println!("{line}");
            }
        },
    )
    .strict_lengths(run.strict_lengths);
    let json_text = report.json();
    if run.json {
        print!("{json_text}");
    } else {
        println!("\n{}", report.summary_line());
    }
    let changes = report.summary.story_changes;
    if changes > 0 && !run.strict_lengths {
        eprintln!(
            "warning: {}: a shortest story's length differs from the pinned steps while its verdict is as pinned; not a regression (exit 0 unless something else fails); re-pin the steps, or pass --strict-lengths to fail on it (exit 4)",
            crate::report::count(changes as u64, "story change")
        );
    }
    let mut writes: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    if let Some(file) = &run.junit {
        writes.push((file.clone(), junit::scenario_run(&report).into_bytes()));
    }
    if let Some(file) = &run.json_out {
        writes.push((file.clone(), json_text.into_bytes()));
    }
    if let Some(dir) = &run.out {
        writes.extend(report.counterexample_files(dir));
    }
    if let Some(file) = &run.html {
        let from = if run.paths.is_empty() {
            format!("{SCENARIO_DIR}/")
        } else {
            run.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let page = html::scenario::page(&report, &from);
        writes.push((file.clone(), html::render(&page).into_bytes()));
    }
    if let Err(e) = itf::write_reports(&writes, |_| {}) {
        return fail(e);
    }
    report.summary.exit
}

/// `slotcheck check --bless [PATH...]`: each scenario file's expectations
/// written from a run of every design on every property (the `--design`,
/// `--property`, `--only` and `--skip-slow` filters narrow it), each change
/// printed as a diff line; a file is rewritten only where something
/// changed, and whole or not at all. Exit 0, 3 when some check was cut
/// short (its expectation left as written), 2 on an invalid file.
pub fn bless_command(paths: &[PathBuf], selection: &Selection, limits: &Limits) -> u8 {
    let fail = |message: String| {
        eprintln!("error: {message}");
        EXIT_INVALID
    };
    let files = match files(paths) {
        Ok(f) => f,
        Err(e) => return fail(e.to_string()),
    };
    let scenarios = match load_all(&files, selection) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let (mut changed, mut changes, mut inconclusive, mut skipped) = (0, 0, 0, 0);
    for scenario in &scenarios {
        let file = &scenario.heading.file;
        if selection.skip_slow && scenario.slow {
            println!("{}: skipped: slow (--skip-slow)", file.display());
            skipped += 1;
            continue;
        }
        // Only the designs asked for are run.
        let mut blessed = scenario.plan.bless(limits, &|d| selection.design(d));
        for b in &mut blessed {
            b.results
                .retain(|(property, _)| selection.property(property));
        }
        let text = match crate::report::read_text(file) {
            Ok(t) => t,
            Err((_, message)) => return fail(format!("{}: {message}", file.display())),
        };
        let blessing = match super::bless::bless_text(&text, &blessed) {
            Ok(b) => b,
            Err(e) => return fail(format!("{}: {e}", file.display())),
        };
        for line in &blessing.changes {
            println!("{}: {line}", file.display());
        }
        inconclusive += blessing.inconclusive;
        if blessing.text != text {
            if let Err(e) =
                itf::write_reports(&[(file.clone(), blessing.text.into_bytes())], |_| {})
            {
                return fail(e);
            }
            changed += 1;
            changes += blessing.changes.len() - blessing.inconclusive;
        }
    }
    println!(
        "blessed {}: {} rewritten, {}{}{}",
        crate::report::count((scenarios.len() - skipped) as u64, "scenario file"),
        changed,
        crate::report::count(changes as u64, "changed line"),
        if skipped > 0 {
            format!(", {skipped} slow skipped")
        } else {
            String::new()
        },
        if inconclusive > 0 {
            format!(
                ", {} left as written (cut short)",
                crate::report::count(inconclusive as u64, "expectation")
            )
        } else {
            String::new()
        }
    );
    if inconclusive > 0 {
        EXIT_INCONCLUSIVE
    } else {
        EXIT_OK
    }
}
