//! The simulation report as text: a summary per design, then each
//! violation told as its shrunk story with the command that reproduces it.

use super::{bounds_words, DesignRun, Report, Settings, Shard, Timing};
use crate::models::ToolModel;
use crate::report;
use crate::report::table::{Column, TextTable};

// ---------------------------------------------------------------- text

/// `--seed S --run N ...`: the options that reproduce one run.
pub fn reproduce_command(settings: &Settings, design: &str, run: u64, model_flags: &str) -> String {
    let mut command = format!(
        "slotcheck simulate --design {design} --seed {} --run {run} --depth {}",
        settings.seed, settings.depth
    );
    if let Some(ranges) = &settings.swarm {
        command.push_str(" --swarm");
        for (name, range) in ranges {
            command.push_str(&format!(
                " --range {name}={}..={}",
                range.start(),
                range.end()
            ));
        }
    }
    if let Some(l) = settings.liveness {
        command.push_str(&format!(" --liveness {l}"));
    }
    if let Some(p) = settings.pct {
        command.push_str(&format!(" --pct {} --pct-horizon {}", p.depth, p.horizon));
    }
    if settings.guided {
        command.push_str(" --guided");
    }
    if !model_flags.is_empty() {
        command.push(' ');
        command.push_str(model_flags);
    }
    command
}

/// The report as text, each violation told as its shrunk story.
pub fn report_text<M: ToolModel>(
    report: &Report,
    runs: &[DesignRun<M>],
    settings: &Settings,
    model_flags: &str,
) -> String {
    let mut out = String::new();
    let what = match &report.swarm {
        Some(ranges) => format!(
            "swarm ({})",
            ranges
                .iter()
                .map(|(n, [l, h])| format!("{n} {l}..={h}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => report
            .bounds
            .iter()
            .map(|(n, v)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let range = match report.only_run {
        Some(r) => format!("run {r}"),
        None => format!("runs 0..{}", report.runs),
    };
    let mut scheduler = match report.pct {
        Some([depth, horizon]) => format!(", pct depth {depth} over {horizon} steps"),
        None => String::new(),
    };
    if report.guided {
        scheduler.push_str(", guided");
    }
    out.push_str(&format!(
        "slotcheck simulate: {}, seed {}, {range}, depth {}, {what}{scheduler}\n",
        report.model, report.seed, report.depth
    ));
    if settings.shard != Shard::WHOLE {
        out.push_str(&format!(
            "shard {}/{}: the runs r with r mod {} = {}\n",
            settings.shard.index,
            settings.shard.count,
            settings.shard.count,
            settings.shard.index - 1
        ));
    }
    for run in runs {
        let d = &run.report;
        out.push_str(&format!(
            "\n{}: {}, {}{}\n",
            d.design,
            report::count(d.runs, "run"),
            report::count(d.states, "state"),
            if d.cut_at_depth > 0 {
                format!(", {} cut at --depth", report::count(d.cut_at_depth, "walk"))
            } else {
                String::new()
            }
        ));
        // The property names on a column as wide as the longest one has
        // always needed, so that designs' lists line up.
        let mut violated = TextTable::new(vec![
            Column::left("property").at_least(25),
            Column::left("violated"),
        ]);
        violated.margin = "  ".into();
        violated.headless = true;
        for v in &d.violations {
            violated.row(vec![
                v.property.as_str().into(),
                format!(
                    "violated in {} (first: run {}, {}, shrunk to {})",
                    report::count(v.runs, "run"),
                    v.first_run,
                    report::count(v.original_steps as u64, "step"),
                    v.shrunk_steps
                )
                .into(),
            ]);
        }
        out.push_str(&violated.render(report::Style::plain()));
        if d.violations.is_empty() {
            out.push_str("  no property violated\n");
        }
        let witnesses: Vec<String> = d
            .witnesses
            .iter()
            .map(|w| {
                if w.runs == 0 {
                    format!("{} NOT reached", w.property)
                } else {
                    format!("{} in {}", w.property, report::count(w.runs, "run"))
                }
            })
            .collect();
        out.push_str(&format!("  witnesses: {}\n", witnesses.join(", ")));
        if let Some(why) = &d.cut {
            out.push_str(&format!(
                "  inconclusive: {why} after {}; the runs not done are not a verdict\n",
                report::count(d.runs, "run")
            ));
        }
    }
    for run in runs {
        for (v, shrunk) in run.report.violations.iter().zip(&run.shrunk) {
            let steps = shrunk.model.tell(&shrunk.init, &shrunk.actions);
            out.push_str(&format!(
                "\n{} {}: seed {}, run {}; {}, shrunk to {}{}\n",
                run.report.design,
                v.property,
                v.seed,
                v.first_run,
                report::count(v.original_steps as u64, "step"),
                v.shrunk_steps,
                if v.shortest_by_search {
                    " (the shortest on these bounds)"
                } else {
                    ""
                }
            ));
            out.push_str(&format!("  drawn: {}\n", v.drawn));
            out.push_str(&format!("  bounds: {}\n", bounds_words(&shrunk.model)));
            out.push_str(&format!(
                "  reproduce: {}\n",
                reproduce_command(settings, &run.report.design, v.first_run, model_flags)
            ));
            if let Some(trace) = &v.trace {
                out.push_str(&format!("  replay: slotcheck replay {trace}\n"));
            }
            out.push_str(&report::story_text(&steps, &v.explanation));
        }
    }
    out
}

/// `1 000 runs in 0.52 s: 1 923 runs/s, ...` for standard error.
pub fn timing_line(report: &Report, timing: &Timing) -> String {
    let runs: u64 = report.designs.iter().map(|d| d.runs).sum();
    let states: u64 = report.designs.iter().map(|d| d.states).sum();
    let per = |n: u64| {
        if timing.walk_seconds > 0.0 {
            n as f64 / timing.walk_seconds
        } else {
            0.0
        }
    };
    format!(
        "simulate: {}, {} in {:.2} s ({:.0} runs/s, {:.0} states/s); shrinking {:.2} s",
        report::count(runs, "run"),
        report::count(states, "state"),
        timing.walk_seconds,
        per(runs),
        per(states),
        timing.shrink_seconds
    )
}
