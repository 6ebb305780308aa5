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
use slotcheck_models::NamedOptions;
use std::path::PathBuf;

#[derive(Args)]
pub struct ValidateArgs {
    /// The event log: NDJSON, one event per line (docs/validate.md); or
    /// several, one per process, merged.
    #[arg(required = true, num_args = 1..)]
    pub logs: Vec<PathBuf>,
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
    /// Candidates the search may keep after one line before the log is
    /// inconclusive (exit 3).
    #[arg(long, value_name = "N", default_value_t = validate::CANDIDATE_BUDGET)]
    pub max_candidates: usize,
    /// Exit 1 only for a violation every explanation of the log breaks (a
    /// certain one); a possible one is reported, with exit 0.
    #[arg(long)]
    pub strict: bool,
    /// The log must have at least N queues (streams); fewer is
    /// inconclusive (exit 3). The header's `expect_queues` says the same.
    #[arg(long, value_name = "N")]
    pub expect_queues: Option<u32>,
    /// Link: a model option (repeatable), as `check --option` takes it: the
    /// reading of the client the builders use, e.g. `expiry-less-10ms`
    /// (nats.go up to 1.36.0) or `single-late-answer`. Stovepipe's come
    /// from the log (split-read from its read lines, delayed-hold from the
    /// header's `hold`; aborts are always allowed).
    #[arg(long = "option", value_name = "NAME")]
    pub options: Vec<String>,
}

/// The process budgets (`--timeout`, `--max-memory`, a signal), asked
/// before each queue's search: once one runs out, every queue left is
/// inconclusive at its first line, and the report says which budget.
struct Budget {
    watch: crate::check::budget::Watch,
    cut: Option<(crate::check::Cut, usize)>,
}

impl Budget {
    /// `limits`: the options' (the search looks at them inside a queue).
    fn new(limits: &crate::check::Limits) -> Budget {
        Budget {
            watch: crate::check::budget::Watch::new(limits, std::time::Instant::now()),
            cut: None,
        }
    }

    /// After a queue: if the search ran out of a budget inside it, that
    /// queue's line is where the budget ran out.
    fn after(&mut self, verdict: &Verdict) {
        if self.cut.is_some() {
            return;
        }
        if let (Some(cut), Verdict::Inconclusive { line, why, .. }) = (self.watch.over(0), verdict)
        {
            if why == cut.describe() {
                self.cut = Some((cut, *line));
            }
        }
    }

    /// The verdict of a queue whose first line is `line`, if a budget
    /// has run out; else `None`: validate it.
    fn spent(&mut self, line: usize) -> Option<Verdict> {
        if self.cut.is_none() {
            self.cut = self.watch.over(0).map(|cut| (cut, line));
        }
        self.cut.map(|(cut, _)| Verdict::Inconclusive {
            line,
            candidates: 0,
            why: cut.describe().to_string(),
        })
    }

    /// Said on stderr, once, at the end.
    fn say(&self, places: &events::Places) {
        if let Some((cut, line)) = self.cut {
            eprintln!(
                "{}: {}: this queue and those after it are inconclusive",
                at(places, line),
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
    let names: Vec<String> = args.logs.iter().map(|p| p.display().to_string()).collect();
    let mut files = Vec::new();
    for (path, file) in args.logs.iter().zip(&names) {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {file}: {e}"))?;
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
        files.push((
            file.clone(),
            events::parse(file, &text).map_err(|e| e.to_string())?,
        ));
    }
    let (log, places) = events::merge(files).map_err(|e| e.to_string())?;
    let file = names.join(" ");
    let model = which_model(&args, &log, &file)?;
    let options = validate::Options {
        max_candidates: args.max_candidates.max(1),
        strict: args.strict,
        budget: super::args::budget(args.timeout, args.max_memory),
    };
    let expect = Expect {
        queues: log.header.queues.clone(),
        count: args.expect_queues.or(log.header.expect_queues),
    };
    let mut results = match model {
        ModelName::Stovepipe => stovepipe(&args, &options, &places, log)?,
        ModelName::Link => link(&args, &options, &places, log)?,
    };
    let missing = expect.apply(&mut results);
    report(&args, &file, model.name(), &results, &places, &missing)
}

/// What the log must have: the queues its header names, and how many.
struct Expect {
    queues: Vec<String>,
    count: Option<u32>,
}

impl Expect {
    /// Adds each named queue that logged nothing to every design's
    /// verdicts, inconclusive (nothing to judge is not a pass), and says
    /// what is missing.
    fn apply(&self, results: &mut [DesignResult]) -> Vec<String> {
        let mut missing = Vec::new();
        let Some(first) = results.first() else {
            return missing;
        };
        let logged: Vec<String> = first.queues.iter().map(|(q, _)| q.clone()).collect();
        for queue in &self.queues {
            if !logged.contains(queue) {
                missing.push(format!(
                    "queue `{queue}` (named in the header) logged no line"
                ));
                for r in results.iter_mut() {
                    r.queues.push((
                        queue.clone(),
                        Verdict::Inconclusive {
                            line: 0,
                            candidates: 0,
                            why: "it logged no line (the header names it): nothing to judge".into(),
                        },
                    ));
                }
            }
        }
        let have = results[0].queues.len();
        if let Some(count) = self.count.filter(|&c| have < c as usize) {
            missing.push(format!("{count} queue(s) expected, the log has {have}"));
        }
        missing
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

fn stovepipe(
    args: &ValidateArgs,
    options: &validate::Options,
    places: &events::Places,
    log: Log,
) -> Result<Vec<DesignResult>, String> {
    if let Some(name) = args.options.first() {
        return Err(format!(
            "--option `{name}`: a stovepipe log says its own options (split-read by its read lines, delayed-hold by the header's `hold`; aborts are always allowed)"
        ));
    }
    let designs: Vec<Design> = match &args.design {
        Some(name) => vec![compose(name).map_err(|e| format!("--design: {e}"))?],
        None => DESIGNS.to_vec(),
    };
    let mut records = Vec::new();
    for (line, entry) in log.entries {
        match entry {
            Entry::Stovepipe(r) => records.push((line, r)),
            Entry::Link(_) => {
                return Err(format!(
                    "{}: a link event in a stovepipe log",
                    at(places, line)
                ))
            }
            Entry::Header(_) => {}
        }
    }
    let split = queues(records);
    let mut results = Vec::new();
    let mut budget = Budget::new(&options.budget);
    for design in designs {
        let mut verdicts = Vec::new();
        for (queue, split_read, events) in &split {
            let first = events.first().map_or(0, |(line, _)| *line);
            if let Some(verdict) = budget.spent(first) {
                verdicts.push((queue.clone(), verdict));
                continue;
            }
            let verdict = match QueueTrace::new(design, &log.header, *split_read, events.clone()) {
                Ok(trace) => validate::validate_with(&trace, options),
                Err(TraceError::Bad { line, message }) => {
                    return Err(format!("{}: {message}", at(places, line)))
                }
                Err(TraceError::Beyond { line, message }) => Verdict::Inconclusive {
                    line,
                    candidates: 0,
                    why: message,
                },
            };
            budget.after(&verdict);
            verdicts.push((queue.clone(), verdict));
        }
        results.push(DesignResult {
            design: design.name,
            queues: verdicts,
        });
    }
    budget.say(places);
    Ok(results)
}

/// `file:line` of a line of the merged log (`file:line` for one file too).
fn at(places: &events::Places, line: usize) -> String {
    match places.files.as_slice() {
        [(file, _)] => format!("{file}:{line}"),
        _ => places.place(line),
    }
}

fn link(
    args: &ValidateArgs,
    options: &validate::Options,
    places: &events::Places,
    log: Log,
) -> Result<Vec<DesignResult>, String> {
    let designs: Vec<&'static link::Design> = match &args.design {
        Some(name) if name.contains('+') => {
            vec![link::compose(name).map_err(|e| format!("--design: {e}"))?]
        }
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
                return Err(format!(
                    "{}: a stovepipe event in a link log",
                    at(places, line)
                ))
            }
            Entry::Header(_) => {}
        }
    }
    let mut model = link::Options::default();
    for name in &args.options {
        model.set(name).map_err(|e| format!("--option: {e}"))?;
    }
    let split = streams(records);
    let mut results = Vec::new();
    let mut budget = Budget::new(&options.budget);
    for design in designs {
        let mut verdicts = Vec::new();
        for (stream, lines) in &split {
            let first = lines.first().map_or(0, |(line, _)| *line);
            if let Some(verdict) = budget.spent(first) {
                verdicts.push((stream.clone(), verdict));
                continue;
            }
            let verdict = link_verdict_model(design, model, &log.header, lines.clone(), options)
                .map_err(|(line, e)| format!("{}: {e}", at(places, line)))?;
            budget.after(&verdict);
            verdicts.push((stream.clone(), verdict));
        }
        results.push(DesignResult {
            design: design.name,
            queues: verdicts,
        });
    }
    budget.say(places);
    Ok(results)
}

/// One link stream's verdict against one design, under model options (a
/// client's fetch as its version does it) and validate's options (its
/// budgets); a bad log is an error (`line: message`).
pub fn link_verdict_under(
    design: &'static link::Design,
    model: link::Options,
    header: &events::Header,
    lines: Vec<(usize, events::Record<events::link::Event>)>,
    options: &validate::Options,
) -> Result<Verdict, String> {
    link_verdict_model(design, model, header, lines, options)
        .map_err(|(line, message)| format!("{line}: {message}"))
}

fn link_verdict_model(
    design: &'static link::Design,
    model: link::Options,
    header: &events::Header,
    lines: Vec<(usize, events::Record<events::link::Event>)>,
    options: &validate::Options,
) -> Result<Verdict, (usize, String)> {
    match LinkTrace::new(design, model, header, lines) {
        Ok(trace) => Ok(validate::validate_with(&trace, options)),
        Err(LinkError::Bad { line, message }) => Err((line, message)),
        Err(LinkError::Beyond { line, message }) => Ok(Verdict::Inconclusive {
            line,
            candidates: 0,
            why: message,
        }),
    }
}

fn report(
    args: &ValidateArgs,
    file: &str,
    model: &str,
    results: &[DesignResult],
    places: &events::Places,
    missing: &[String],
) -> Result<u8, String> {
    let one_design = args.design.is_some();
    let queues = results.first().map_or(0, |r| r.queues.len());
    let code = if queues == 0 || !missing.is_empty() {
        // Nothing to judge is not a pass; a departure still departs.
        let best = best_code(results, one_design);
        validate::worst([best, 3])
    } else {
        best_code(results, one_design)
    };
    if args.json {
        let mut json = report_json(file, model, results, code, places);
        json.missing = missing.to_vec();
        json.options = args.options.clone();
        print!("{}", crate::report::json_text(&json));
    } else {
        let mut text = String::new();
        if !args.options.is_empty() {
            text.push_str(&format!(
                "under the model options {}\n",
                args.options.join(", ")
            ));
        }
        text.push_str(&report_text(file, results, one_design, places));
        if queues == 0 {
            text.push_str("inconclusive: the log has no events, nothing to judge\n");
        }
        for m in missing {
            text.push_str(&format!("inconclusive: {m}\n"));
        }
        text.push_str(&format!("{queues} queue(s) validated\n"));
        print!("{text}");
    }
    Ok(code)
}

/// One design's exit code, or the best design's.
fn best_code(results: &[DesignResult], one_design: bool) -> u8 {
    if one_design {
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
    }
}

fn report_json(
    file: &str,
    model: &str,
    results: &[DesignResult],
    code: u8,
    places: &events::Places,
) -> Validation {
    let several = places.files.len() > 1;
    let locate = |mut record: crate::report::validation::QueueVerdict| {
        if several {
            if let Some(line) = record.line {
                record.at = Some(places.place(line));
            }
        }
        record
    };
    Validation {
        missing: Vec::new(),
        options: Vec::new(),
        queues_validated: results.first().map_or(0, |r| r.queues.len()),
        designs: results
            .iter()
            .map(|r| DesignValidation {
                design: r.design.to_string(),
                exit_code: r.exit_code(),
                queues: r
                    .queues
                    .iter()
                    .map(|(q, v)| locate(validate::record(q, v)))
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

fn report_text(
    file: &str,
    results: &[DesignResult],
    one_design: bool,
    places: &events::Places,
) -> String {
    let text = |queue: &str, verdict: &Verdict| {
        validate::text_at(queue, verdict, &|line| places.place(line))
    };
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
                    out.push_str(&indent(&text(queue, verdict)));
                }
            }
        } else if let Some((queue, verdict)) = r.queues.iter().find(|(_, v)| v.exit_code() > 1) {
            // Where the design stops explaining the log, in one line.
            let first = text(queue, verdict);
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
        _ if r.queues.is_empty() => "nothing to judge",
        0 => "conforms",
        1 => "conforms, with a violation",
        3 => "inconclusive",
        _ => "departs",
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}
