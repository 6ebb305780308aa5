//! `slotcheck validate LOG`: checks a real system's event log against the
//! model, one queue at a time, with one design or each (which designs can
//! explain the log). The search is the `validate` room's; this file reads
//! the log, builds each queue's trace and reports.

use crate::report::validation::{DesignValidation, Validation};
use crate::validate::{self, Verdict};
use clap::Args;
use slotcheck_models::events::{self, Entry, Log, ModelName};
use slotcheck_models::link::{
    self,
    trace::{streams, LinkTrace, TraceError as LinkError},
};
use slotcheck_models::stovepipe::trace::{queues, QueueTrace, TraceError};
use slotcheck_models::stovepipe::{compose, Design, DESIGNS};
use std::path::PathBuf;

#[derive(Args)]
pub struct ValidateArgs {
    /// The event log: NDJSON, one event per line (docs/validate.md).
    pub log: PathBuf,
    /// The design to check the log against; without it, every design, and
    /// the answer is which designs can explain the log.
    #[arg(long)]
    pub design: Option<String>,
    /// The model (stovepipe or link); by default the log's header says.
    #[arg(long)]
    pub model: Option<String>,
    /// Print the verdicts as JSON.
    #[arg(long)]
    pub json: bool,
    /// Stop this many seconds (more than 0) after the command starts: the queues not yet
    /// validated are inconclusive, each at its first line.
    #[arg(long, value_name = "SECONDS", value_parser = super::args::budget_seconds)]
    pub timeout: Option<f64>,
    /// Stop before the process holds more memory than this (512M, 8G...), as at --timeout.
    /// Default: four fifths of the memory available when the run starts (MemAvailable), or of
    /// the memory cgroup's limit (a container's: v2 memory.max, v1 memory.limit_in_bytes) when
    /// that is less.
    #[arg(long, value_name = "SIZE", value_parser = crate::check::memory::parse_size)]
    pub max_memory: Option<u64>,
}

/// The process budgets (`--timeout`, `--max-memory`, a signal), asked
/// before each queue's search: once one runs out, every queue left is
/// inconclusive at its first line, and the report says which budget.
struct Budget {
    watch: crate::check::budget::Watch,
    cut: Option<(crate::check::Cut, usize)>,
}

impl Budget {
    fn new(args: &ValidateArgs) -> Budget {
        let limits = super::args::budget(args.timeout, args.max_memory);
        Budget {
            watch: crate::check::budget::Watch::new(&limits, std::time::Instant::now()),
            cut: None,
        }
    }

    /// The verdict of a queue whose first line is `line`, if a budget
    /// has run out; else `None`: validate it.
    fn spent(&mut self, line: usize) -> Option<Verdict> {
        if self.cut.is_none() {
            self.cut = self.watch.over(0).map(|cut| (cut, line));
        }
        self.cut.map(|_| Verdict::Inconclusive {
            line,
            candidates: 0,
        })
    }

    /// Said on stderr, once, at the end.
    fn say(&self, file: &str) {
        if let Some((cut, line)) = self.cut {
            eprintln!(
                "{file}:{line}: {}: this queue and those after it are inconclusive",
                cut.describe()
            );
        }
    }
}

/// One design's verdicts, a queue each.
struct DesignResult {
    design: &'static str,
    queues: Vec<(String, Verdict)>,
}

impl DesignResult {
    fn exit_code(&self) -> u8 {
        validate::worst(self.queues.iter().map(|(_, v)| v.exit_code()))
    }
}

pub fn run(args: ValidateArgs) -> Result<u8, String> {
    let file = args.log.display().to_string();
    let bytes = std::fs::read(&args.log).map_err(|e| format!("cannot read {file}: {e}"))?;
    // Bytes that are not UTF-8 named by LOG:LINE:COL, as every reader does.
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let before = std::str::from_utf8(&e.as_bytes()[..valid]).expect("valid up to here");
        let (line, column) = crate::report::line_column(before, valid);
        format!(
            "{file}:{line}:{column}: byte 0x{:02x} is not UTF-8 (a log is UTF-8 text, a JSON object a line)",
            e.as_bytes()[valid]
        )
    })?;
    let log = events::parse(&file, &text).map_err(|e| e.to_string())?;
    let model = which_model(&args, &log, &file)?;
    match model {
        ModelName::Stovepipe => stovepipe(&args, &file, log),
        ModelName::Link => link(&args, &file, log),
    }
}

/// The model `--model` names, or the log's.
fn which_model(args: &ValidateArgs, log: &Log, file: &str) -> Result<ModelName, String> {
    let from_log = log.entries.iter().find_map(|(_, e)| match e {
        Entry::Stovepipe(_) => Some(ModelName::Stovepipe),
        Entry::Link(_) => Some(ModelName::Link),
        Entry::Header(_) => None,
    });
    let from_log = log.header.model.or(from_log);
    match args.model.as_deref() {
        None => {
            from_log.ok_or_else(|| format!("{file}: no events, and no header naming the model"))
        }
        Some(name) => {
            let given = match name {
                "stovepipe" => ModelName::Stovepipe,
                "link" => ModelName::Link,
                other => {
                    return Err(format!(
                        "--model: `{other}` is not a model (stovepipe, link)"
                    ))
                }
            };
            match from_log {
                Some(m) if m != given => Err(format!(
                    "--model {}: the log is a {} log",
                    given.name(),
                    m.name()
                )),
                _ => Ok(given),
            }
        }
    }
}

fn stovepipe(args: &ValidateArgs, file: &str, log: Log) -> Result<u8, String> {
    let designs: Vec<Design> = match &args.design {
        Some(name) => vec![compose(name).map_err(|e| format!("--design: {e}"))?],
        None => DESIGNS.to_vec(),
    };
    let mut records = Vec::new();
    for (line, entry) in log.entries {
        match entry {
            Entry::Stovepipe(r) => records.push((line, r)),
            Entry::Link(_) => {
                return Err(format!("{file}:{line}: a link event in a stovepipe log"))
            }
            Entry::Header(_) => {}
        }
    }
    let split = queues(records);
    let mut results = Vec::new();
    let mut budget = Budget::new(args);
    for design in designs {
        let mut verdicts = Vec::new();
        for (queue, split_read, events) in &split {
            let first = events.first().map_or(0, |(line, _)| *line);
            if let Some(verdict) = budget.spent(first) {
                verdicts.push((queue.clone(), verdict));
                continue;
            }
            let verdict = match QueueTrace::new(design, &log.header, *split_read, events.clone()) {
                Ok(trace) => validate::validate(&trace),
                Err(TraceError::Bad { line, message }) => {
                    return Err(format!("{file}:{line}: {message}"))
                }
                Err(TraceError::Beyond { line, .. }) => Verdict::Inconclusive {
                    line,
                    candidates: 0,
                },
            };
            verdicts.push((queue.clone(), verdict));
        }
        results.push(DesignResult {
            design: design.name,
            queues: verdicts,
        });
    }
    budget.say(file);
    report(args, file, "stovepipe", &results)
}

fn link(args: &ValidateArgs, file: &str, log: Log) -> Result<u8, String> {
    let designs: Vec<&'static link::Design> = match &args.design {
        Some(name) => vec![link::design_named(name).ok_or_else(|| {
            let names: Vec<&str> = link::all_designs().map(|d| d.name).collect();
            format!(
                "--design: `{name}` is not a link design ({})",
                names.join(", ")
            )
        })?],
        None => link::all_designs().collect(),
    };
    let mut records = Vec::new();
    for (line, entry) in log.entries {
        match entry {
            Entry::Link(r) => records.push((line, r)),
            Entry::Stovepipe(_) => {
                return Err(format!("{file}:{line}: a stovepipe event in a link log"))
            }
            Entry::Header(_) => {}
        }
    }
    let split = streams(records);
    let mut results = Vec::new();
    let mut budget = Budget::new(args);
    for design in designs {
        let mut verdicts = Vec::new();
        for (stream, lines) in &split {
            let first = lines.first().map_or(0, |(line, _)| *line);
            if let Some(verdict) = budget.spent(first) {
                verdicts.push((stream.clone(), verdict));
                continue;
            }
            verdicts.push((
                stream.clone(),
                link_verdict(design, &log.header, lines.clone())
                    .map_err(|e| format!("{file}:{e}"))?,
            ));
        }
        results.push(DesignResult {
            design: design.name,
            queues: verdicts,
        });
    }
    budget.say(file);
    report(args, file, "link", &results)
}

/// One link stream's verdict against one design; a bad log is an error
/// (`line: message`).
pub fn link_verdict(
    design: &'static link::Design,
    header: &events::Header,
    lines: Vec<(usize, events::Record<events::link::Event>)>,
) -> Result<Verdict, String> {
    match LinkTrace::new(design, link::Options::default(), header, lines) {
        Ok(trace) => Ok(validate::validate(&trace)),
        Err(LinkError::Bad { line, message }) => Err(format!("{line}: {message}")),
        Err(LinkError::Beyond { line, message }) => {
            eprintln!("line {line}: inconclusive: {message}");
            Ok(Verdict::Inconclusive {
                line,
                candidates: 0,
            })
        }
    }
}

fn report(
    args: &ValidateArgs,
    file: &str,
    model: &str,
    results: &[DesignResult],
) -> Result<u8, String> {
    let one_design = args.design.is_some();
    let code = if one_design {
        results[0].exit_code()
    } else {
        // Which designs explain the log: the best of them.
        let rank = |c: u8| {
            [0u8, 1, 3, validate::EXIT_DEPARTS]
                .iter()
                .position(|&x| x == c)
        };
        results
            .iter()
            .map(DesignResult::exit_code)
            .min_by_key(|&c| rank(c))
            .unwrap_or(0)
    };
    if args.json {
        print!(
            "{}",
            crate::report::json_text(&report_json(file, model, results, code))
        );
    } else {
        print!("{}", report_text(file, results, one_design));
    }
    Ok(code)
}

fn report_json(file: &str, model: &str, results: &[DesignResult], code: u8) -> Validation {
    Validation {
        designs: results
            .iter()
            .map(|r| DesignValidation {
                design: r.design.to_string(),
                exit_code: r.exit_code(),
                queues: r
                    .queues
                    .iter()
                    .map(|(q, v)| validate::record(q, v))
                    .collect(),
            })
            .collect(),
        exit_code: code,
        explained_by: results
            .iter()
            .filter(|r| r.exit_code() <= 1)
            .map(|r| r.design.to_string())
            .collect(),
        log: file.to_string(),
        model: model.to_string(),
    }
}

fn report_text(file: &str, results: &[DesignResult], one_design: bool) -> String {
    let mut out = String::new();
    for r in results {
        let queues = r.queues.len();
        let conforming = r.queues.iter().filter(|(_, v)| v.exit_code() == 0).count();
        out.push_str(&format!(
            "{file} against {}: {} ({} of {} queue(s) conform)\n",
            r.design,
            summary(r),
            conforming,
            queues
        ));
        if one_design || r.exit_code() <= 1 {
            for (queue, verdict) in &r.queues {
                if verdict.exit_code() != 0 || queues == 1 {
                    out.push_str(&indent(&validate::text(queue, verdict)));
                }
            }
        } else if let Some((queue, verdict)) = r.queues.iter().find(|(_, v)| v.exit_code() > 1) {
            // Where the design stops explaining the log, in one line.
            let first = validate::text(queue, verdict);
            out.push_str(&indent(first.lines().next().unwrap_or("")));
        }
    }
    if !one_design {
        let explained: Vec<&str> = results
            .iter()
            .filter(|r| r.exit_code() <= 1)
            .map(|r| r.design)
            .collect();
        out.push_str(&if explained.is_empty() {
            "no design explains this log\n".to_string()
        } else {
            format!("explained by: {}\n", explained.join(", "))
        });
    }
    out
}

fn summary(r: &DesignResult) -> &'static str {
    match r.exit_code() {
        0 => "conforms",
        1 => "conforms, with a violation",
        3 => "inconclusive",
        _ => "departs",
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
