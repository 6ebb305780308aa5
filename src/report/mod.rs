//! What a person reads and what a program parses: the comparison table, the
//! statistics, the stories, and the same as JSON.
//!
//! The room: `results.rs` the typed results a runner fills and every format
//! renders (their JSON is serde's, their schema schemars'); `mod.rs` tables,
//! stories, JSON and small text helpers; `itf.rs` ITF traces and the
//! checking and writing of output files; `diagram/` sequence diagrams
//! (Mermaid, SVG); `mutation.rs`, `validation.rs` the typed results of
//! `mutate` and `validate`; `table.rs` text tables (comfy-table); `junit.rs` JUnit (quick-junit); `html.rs` the HTML
//! report (maud); `see.rs` the `--format` and `--html` flags and pages. It reads `check`'s results and
//! any `Narrated` model's stories; it never runs a model, names one, or
//! reaches into `simulate`, `scenario` or the commands.

pub mod bench;
pub mod comparison;
pub mod diagram;
pub mod html;
pub mod itf;
pub mod junit;
pub mod mutation;
pub mod results;
pub mod see;
pub mod table;
pub mod validation;

use crate::check::{Outcome, PropertyResult, Stats, Trace, Verdict};
use clap::Args;
use slotcheck_models::{Narrated, PropertyKind, StoryStep};
use std::io::IsTerminal;
use std::path::PathBuf;

/// JSON for programs, the same two flags in every command that has a
/// report: `--json` puts it on standard output instead of the text, and
/// `--json-out FILE` writes it to a file while the text is still printed.
/// A flag with an optional value would take a following path as its file
/// (`check --json scenarios/x.toml` once overwrote the scenario), so
/// neither is optional.
#[derive(Args, Clone, Debug, Default)]
pub struct JsonArgs {
    /// Print the report as one JSON object on standard output instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON report to FILE (the text is still printed); never over an input.
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,
}

/// `1 run`, `2 runs`: a count with its noun.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// ANSI colour, only on a terminal and only without `NO_COLOR`.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn for_stdout() -> Self {
        Style {
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    pub fn plain() -> Self {
        Style { color: false }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn verdict(&self, result_verdict: Verdict, text: &str) -> String {
        match result_verdict {
            Verdict::Holds | Verdict::Reached => self.paint("32", text),
            Verdict::Violated | Verdict::NotReached => self.paint("1;31", text),
            Verdict::Inconclusive => self.paint("33", text),
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }
}

/// A trace told as a story, and its ending: the property's explanation
/// of the last state. A lasso's loop is marked: its first step says the
/// loop starts there, and the ending that the loop's steps repeat for ever
/// (or, with no loop steps, that the run stays in its last state).
pub fn told<M: Narrated>(model: &M, property: &str, trace: &Trace<M>) -> (Vec<StoryStep>, String) {
    let mut steps = model.tell(&trace.init, &trace.actions);
    let explanation = model.explain(property, &trace.last);
    let ending = match trace.loop_from {
        None => explanation,
        Some(from) if from >= steps.len() => format!(
            "nothing weakly fair can happen any more: the run stays in this state, which repeats for ever; {explanation}"
        ),
        Some(from) => {
            let n = steps.len();
            steps[from].action = format!(
                "[loop: steps {} to {n} repeat for ever] {}",
                from + 1,
                steps[from].action
            );
            format!(
                "back in the state after step {from}: steps {} to {n} repeat for ever, a fair loop (every step enabled throughout it is taken in it); {explanation}",
                from + 1
            )
        }
    };
    (steps, ending)
}

/// `holds`, `violated (7 steps)`, `reached`, `NOT reached`, `inconclusive`.
pub fn verdict_cell<M: Narrated>(result: &PropertyResult<M>) -> String {
    match result.verdict {
        Verdict::Violated => match result.trace.as_ref() {
            Some(Trace {
                loop_from: Some(from),
                ..
            }) => {
                let steps = result.trace.as_ref().map_or(0, |t| t.steps());
                if steps == *from {
                    // Nothing fair can happen: the last state repeats.
                    format!("violated ({}, stuck)", count(steps as u64, "step"))
                } else {
                    format!(
                        "violated ({}, loop {})",
                        count(*from as u64, "step"),
                        steps - from
                    )
                }
            }
            _ => {
                let steps = result.trace.as_ref().map_or(0, |t| t.steps());
                format!("violated ({})", count(steps as u64, "step"))
            }
        },
        Verdict::NotReached => "NOT reached".into(),
        other => other.word().into(),
    }
}

/// The steps of a trace, when it has one (for JSON: `null` otherwise).
pub fn steps<M: Narrated>(result: &PropertyResult<M>) -> Option<usize> {
    result.trace.as_ref().map(|t| t.steps())
}

/// One table, a design a row: each `always` property's verdict, then the
/// witnesses (all reached, or which not); then the statistics of each design.
pub fn comparison_table<M: Narrated>(columns: &[(String, Outcome<M>)], style: Style) -> String {
    let Some((_, first)) = columns.first() else {
        return String::new();
    };
    let properties: Vec<&str> = first
        .results
        .iter()
        .filter(|r| r.kind != PropertyKind::Sometimes)
        .map(|r| r.name)
        .collect();
    // A verdict column keeps the width of a long verdict, so tables of
    // several runs line up.
    let mut headings = vec![table::Column::left("design")];
    headings.extend(
        properties
            .iter()
            .map(|name| table::Column::left(name).at_least("violated (24 steps)".len())),
    );
    headings.push(table::Column::left("witnesses"));
    let mut verdicts = table::TextTable::new(headings);
    for (design, outcome) in columns {
        let mut row: Vec<table::Cell> = vec![design.as_str().into()];
        for name in &properties {
            if let Some(r) = outcome.result(name) {
                row.push(table::Cell::painted(verdict_cell(r), r.verdict));
            }
        }
        let witnesses: Vec<_> = outcome
            .results
            .iter()
            .filter(|r| r.kind == PropertyKind::Sometimes)
            .collect();
        let missing: Vec<&PropertyResult<M>> = witnesses
            .iter()
            .copied()
            .filter(|r| r.verdict != Verdict::Reached)
            .collect();
        let cell = match missing.first() {
            None => format!("all {} reached", witnesses.len()),
            Some(r) if r.verdict == Verdict::Inconclusive => "inconclusive".to_string(),
            Some(_) => {
                let names: Vec<&str> = missing.iter().map(|r| r.name).collect();
                format!("NOT {}", names.join(", "))
            }
        };
        let verdict = missing.first().map_or(Verdict::Reached, |r| r.verdict);
        row.push(table::Cell::painted(cell, verdict));
        verdicts.row(row);
    }
    let mut out = verdicts.render(style);
    out.push('\n');
    out.push_str(&stats_table(
        &columns
            .iter()
            .map(|(d, o)| (d.clone(), o.stats))
            .collect::<Vec<_>>(),
        style,
    ));
    out
}

/// Each design's run: states, unique states, depth, seconds, and why it
/// was cut short if it was.
pub fn stats_table(rows: &[(String, Stats)], style: Style) -> String {
    let mut stats = table::TextTable::new(vec![
        table::Column::left("design"),
        table::Column::right("states"),
        table::Column::right("unique"),
        table::Column::right("depth"),
        table::Column::right("seconds"),
        table::Column::left(""),
    ]);
    for (design, s) in rows {
        stats.row(vec![
            design.as_str().into(),
            s.states.to_string().into(),
            s.unique.to_string().into(),
            s.depth.map_or("-".to_string(), |d| d.to_string()).into(),
            format!("{:.2}", s.seconds).into(),
            s.cut
                .map_or(String::new(), |cut| {
                    format!("cut short: {}", cut.describe())
                })
                .into(),
        ]);
    }
    stats.render(style)
}

/// A story as numbered lines, each step with the rows it changed.
pub fn story_text(steps: &[StoryStep], ending: &str) -> String {
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&format!("{:>4}. {}: {}\n", i + 1, step.actor, step.action));
        for change in &step.changes {
            let line = match (&change.before, &change.after) {
                (None, Some(after)) => format!("{}: {after} (new)", change.row),
                (Some(before), Some(after)) => format!("{}: {before} -> {after}", change.row),
                (Some(_), None) => format!("{}: gone", change.row),
                (None, None) => continue,
            };
            out.push_str(&format!("          {line}\n"));
        }
    }
    out.push_str(&format!("      => {ending}\n"));
    out
}

/// A typed report as the JSON a program reads: pretty, with a final newline.
pub fn json_text<T: serde::Serialize>(report: &T) -> String {
    serde_json::to_string_pretty(report).expect("a report is JSON") + "\n"
}

/// Escapes text for XML attributes and content; characters XML 1.0 cannot
/// hold (most control characters) become U+FFFD.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The most an input that is kilobytes by nature (a scenario, a trace, a
/// shard's report, a list of mutants) may hold: a device or a runaway file
/// given by mistake (`/dev/zero`) is refused rather than read until memory
/// runs out.
pub const SMALL_INPUT: u64 = 64 << 20;

/// The bytes of `path`, at most `cap` of them: `Err(None)` past that.
fn read_capped(path: &std::path::Path, cap: u64) -> Result<Vec<u8>, Option<std::io::Error>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(cap + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(None);
    }
    Ok(bytes)
}

fn too_large(cap: u64) -> String {
    format!(
        "more than {} MiB: not a file of this kind (is it the path meant?)",
        cap >> 20
    )
}

/// A small input read whole (at most `cap` bytes), as text; errors name
/// the file (bytes that are not UTF-8 by line and column).
pub fn read_small(path: &std::path::Path, cap: u64) -> Result<String, String> {
    let bytes = read_capped(path, cap).map_err(|e| match e {
        Some(e) => format!("cannot read {}: {e}", path.display()),
        None => format!("{}: {}", path.display(), too_large(cap)),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = std::str::from_utf8(&e.as_bytes()[..valid]).expect("valid up to here");
        let (line, column) = line_column(before, valid);
        format!(
            "{}:{line}:{column}: byte 0x{:02x} is not UTF-8",
            path.display(),
            e.as_bytes()[valid]
        )
    })
}

/// A text file read whole (at most [`SMALL_INPUT`] bytes); an error says
/// where: bytes that are not UTF-8 at their line and column (`Some`), or
/// why the file could not be read.
/// A small TOML list (`mutants/equivalent.toml`, `coverage/unreached.toml`)
/// read and parsed; an error names the file, and the line and column where
/// they are known.
pub fn read_toml<T: serde::de::DeserializeOwned>(
    file: &std::path::Path,
) -> Result<(String, T), String> {
    let text = read_text(file).map_err(|(at, message)| {
        let at = at.map_or(String::new(), |(l, c)| format!(":{l}:{c}"));
        format!("{}{at}: {message}", file.display())
    })?;
    let parsed = toml::from_str(&text).map_err(|e| {
        let at = e.span().map_or(String::new(), |s| {
            let (line, column) = line_column(&text, s.start);
            format!(":{line}:{column}")
        });
        format!("{}{at}: {}", file.display(), e.message())
    })?;
    Ok((text, parsed))
}

pub fn read_text(path: &std::path::Path) -> Result<String, (Option<(usize, usize)>, String)> {
    let bytes = read_capped(path, SMALL_INPUT).map_err(|e| match e {
        Some(e) => (None, format!("cannot read: {e}")),
        None => (None, too_large(SMALL_INPUT)),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let before = std::str::from_utf8(&bytes[..valid]).expect("valid up to here");
        (
            Some(line_column(before, valid)),
            format!(
                "byte 0x{:02x} is not UTF-8 (a scenario or list is UTF-8 text)",
                bytes[valid]
            ),
        )
    })
}
