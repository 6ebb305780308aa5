//! `slotcheck live` for the stovepipe designs: one run, a table of every
//! design, or the recommended design's SQL variants (see `live.rs`).

use super::live_args::LiveArgs;
use crate::report::itf;
use crate::report::table::{Column, TextTable};
use crate::report::Style;
use crate::validate::{self, Verdict};
use slotcheck_models::events;
use slotcheck_models::stovepipe::trace::{queues, QueueTrace, TraceError};
use slotcheck_models::stovepipe::{design_named, DESIGNS};
use slotcheck_sql::engine::{Dialect, EngineName};
use slotcheck_sql::handlers::{Aborts, ReadMode, TxRead, Variant};
use slotcheck_sql::live::{self, Config, Outcome};
use slotcheck_sql::parts::parts_named;
use slotcheck_sql::steer::{self, Schedule};
use slotcheck_sql::Backend;
use std::io::Write;
use std::time::Duration;

/// The design the live runs default to and the isolation table runs: the
/// README's former recommendation, which holds every finding when the
/// worker's read is one snapshot and breaks under split reads (the model's
/// column of the isolation table says where).
pub const RECOMMENDED: &str = "owner-keyed-atomic-admit-dlq-cancels";

/// What the model says of a SQL variant: the reading its read is (one
/// snapshot, or split), or that the variant is outside the model.
fn model_reading(engine: EngineName, level: &str, read: &str, tx: &str) -> Option<bool> {
    // A plain SELECT in MariaDB's admit is no atomic transaction: two
    // admits can both "win" on rows they read at the same version.
    if engine == EngineName::Mariadb && tx == "plain" {
        return None;
    }
    Some(match read {
        "joined" => false,
        // Each statement its own snapshot at READ COMMITTED; one snapshot
        // at REPEATABLE READ, and in SQLite's transactions (WAL).
        "transaction" => level == "read-committed",
        _ => true,
    })
}

/// The model's verdict on `design` over the invariants a live run judges,
/// on two requests, K = 1, a crash, a stall and two deliveries (the live
/// runs' faults on the smallest bounds that show the split-read window),
/// with the read one snapshot or split.
fn model_verdict(design: &str, split: bool) -> Result<String, String> {
    use slotcheck_models::stovepipe::{compose, Bounds, Stovepipe};
    let mut model = Stovepipe::new(
        compose(design)?,
        Bounds {
            requests: 2,
            max_concurrent: 1,
            crashes: 1,
            stalls: 1,
            max_deliveries: 2,
        },
    );
    model.options.split_read = split;
    let outcome = crate::check::check(model, &ROW_PROPERTIES, &crate::check::Limits::default());
    let broken: Vec<String> = ROW_PROPERTIES
        .iter()
        .filter_map(|p| {
            let r = outcome.result(p)?;
            (r.verdict == crate::check::Verdict::Violated).then(|| {
                format!(
                    "{p} ({})",
                    crate::report::count(crate::report::steps(r).unwrap_or(0) as u64, "step")
                )
            })
        })
        .collect();
    Ok(if broken.is_empty() {
        "holds".to_string()
    } else {
        format!("violated: {}", broken.join(", "))
    })
}

/// The invariants a live run judges on the rows, which `--until` may name.
const ROW_PROPERTIES: [&str; 4] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
];

fn variant(args: &LiveArgs) -> Result<Variant, String> {
    let read = match args.read.as_str() {
        "joined" => ReadMode::Joined,
        "transaction" => ReadMode::Transaction,
        "separate" => ReadMode::Separate,
        other => return Err(format!("--read: `{other}` (joined, transaction, separate)")),
    };
    let tx_read = match args.tx_read.as_str() {
        "for-update" => TxRead::ForUpdate,
        "plain" => TxRead::Plain,
        other => return Err(format!("--tx-read: `{other}` (for-update, plain)")),
    };
    let aborts = match args.aborts.as_str() {
        "retried" => Aborts::Retried,
        "logged" => Aborts::Logged,
        other => return Err(format!("--aborts: `{other}` (retried, logged)")),
    };
    Ok(Variant {
        read,
        tx_read,
        aborts,
    })
}

fn dialect(engine: EngineName, isolation: Option<&str>) -> Result<Dialect, String> {
    let mut d = Dialect::of(engine);
    match (engine, isolation) {
        (_, None) => {}
        (EngineName::Mariadb, Some("repeatable-read")) => {}
        (EngineName::Mariadb, Some("read-committed")) => d.read_committed = true,
        (EngineName::Sqlite, Some("immediate")) => {}
        (EngineName::Sqlite, Some("deferred")) => d.begin_immediate = false,
        (EngineName::Postgres, Some("repeatable-read")) => {}
        (EngineName::Postgres, Some("read-committed")) => d.read_committed = true,
        (EngineName::Postgres, Some("serializable")) => d.serializable = true,
        (_, Some(other)) => {
            return Err(format!(
                "--isolation: `{other}` is not a level of {} (mariadb: repeatable-read, read-committed; postgres: repeatable-read, read-committed, serializable; sqlite: immediate, deferred)",
                engine.name()
            ))
        }
    }
    Ok(d)
}

fn config(args: &LiveArgs, design: &str, dialect: Dialect, seed: u64) -> Result<Config, String> {
    if design_named(design).is_none() {
        let names: Vec<&str> = DESIGNS.iter().map(|d| d.name).collect();
        return Err(format!(
            "--design: `{design}` (one of {})",
            names.join(", ")
        ));
    }
    let parts = parts_named(design).ok_or_else(|| format!("{design} has no SQL"))?;
    if args.requests == 0 || args.requests > 3 {
        return Err("--requests: from 1 to 3 (the model's bounds)".into());
    }
    let mut c = Config::new(design, parts, dialect, seed);
    c.variant = variant(args)?;
    if let Some(aim) = &args.aim {
        let aim = Aim::load(aim, design)?;
        let b = aim.bounds;
        (c.requests, c.max_concurrent, c.max_deliveries) =
            (b.requests, b.max_concurrent, b.max_deliveries);
        (c.crashes, c.stalls) = (b.crashes, b.stalls);
        if aim.split_read {
            c.variant.read = ReadMode::Separate;
        }
    }
    c.queues = args.queues.max(1);
    if args.aim.is_none() {
        c.requests = args.requests;
        c.crashes = args.crashes;
        c.stalls = args.stalls;
    }
    c.crash_percent = args.crash_percent;
    c.stall_percent = args.stall_percent;
    c.workers = args.workers.max(1);
    // The command's deadline when --timeout is given (what is left of it
    // for this run), else a run's own guard.
    c.timeout = match args.deadline {
        Some(deadline) => deadline.saturating_duration_since(std::time::Instant::now()),
        None => RUN_LIMIT,
    };
    c.cancelled = crate::check::budget::cancelled;
    c.turnstile = !args.no_turnstile;
    Ok(c)
}

/// How long a run may take when no `--timeout` is given.
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// What `slotcheck validate` says of each queue's log of a run.
#[derive(Default)]
pub struct Validated {
    pub conform: usize,
    /// Conform, with a property violated along the way.
    pub conform_violated: usize,
    pub inconclusive: usize,
    /// Logs the model cannot explain: the first one's verdict, told.
    pub departs: usize,
    pub first_departure: Option<String>,
}

impl Validated {
    fn add(&mut self, other: Validated) {
        self.conform += other.conform;
        self.conform_violated += other.conform_violated;
        self.inconclusive += other.inconclusive;
        self.departs += other.departs;
        if self.first_departure.is_none() {
            self.first_departure = other.first_departure;
        }
    }

    fn words(&self) -> String {
        // Whether the model explains every log is said in words, so that it
        // stays checkable where the counts, which vary run to run, are not.
        if self.departs == 0 && self.inconclusive == 0 {
            return format!(
                "the model explains every one ({} conform, {} conform with a violation)",
                self.conform, self.conform_violated
            );
        }
        format!(
            "{} conform, {} conform with a violation, {} depart, {} inconclusive",
            self.conform, self.conform_violated, self.departs, self.inconclusive
        )
    }
}

/// Validates every queue's log of a run against the design it ran.
pub fn validate_log(design: &str, outcome: &Outcome) -> Result<Validated, String> {
    validate_log_within(design, outcome, &validate::Options::default())
}

/// [`validate_log`] within the command's budgets (`options.budget`): a
/// queue it did not get to, or cut inside, is inconclusive.
pub fn validate_log_within(
    design: &str,
    outcome: &Outcome,
    options: &validate::Options,
) -> Result<Validated, String> {
    let design = design_named(design).expect("a known design");
    let text: Vec<String> = outcome.log.iter().map(|l| l.to_string()).collect();
    let mut log =
        events::parse("live", &text.join("\n")).map_err(|e| format!("the live log: {e}"))?;
    let records = log.stovepipe_lines();
    let mut v = Validated::default();
    for (queue, split, records) in queues(records) {
        let verdict = match QueueTrace::new(design, &log.header, split, records) {
            Ok(trace) => validate::validate_with(&trace, options),
            Err(TraceError::Bad { line, message }) => {
                return Err(format!("the live log, line {line}: {message}"))
            }
            Err(TraceError::Beyond { line, message }) => Verdict::Inconclusive {
                line,
                candidates: 0,
                why: message,
            },
        };
        match verdict.exit_code() {
            0 => v.conform += 1,
            1 => v.conform_violated += 1,
            3 => v.inconclusive += 1,
            _ => {
                v.departs += 1;
                if v.first_departure.is_none() {
                    v.first_departure = Some(validate::text(&queue, &verdict));
                }
            }
        }
    }
    Ok(v)
}

/// What a design's runs found.
struct Tally {
    runs: u64,
    queues: usize,
    statements: u64,
    violated_queues: usize,
    /// The run and violations of the first queue that broke `--until`'s
    /// invariant (without `--until`, any).
    first: Option<(u64, Vec<&'static str>)>,
    cut: usize,
    /// Why the runs stopped before every run asked for was made and its
    /// logs validated (a signal, the time budget), if they did.
    stopped: Option<&'static str>,
    story: Option<String>,
    validated: Validated,
    /// With `--log`: every run's lines, one header first (each run's
    /// queues have IDs of their own).
    log: Vec<serde_json::Value>,
}

fn runs(
    backend: &Backend,
    args: &LiveArgs,
    design: &str,
    d: Dialect,
    stop_at_first: bool,
) -> Result<(Tally, Option<Outcome>), String> {
    let mut tally = Tally {
        runs: 0,
        queues: 0,
        statements: 0,
        violated_queues: 0,
        first: None,
        cut: 0,
        stopped: None,
        story: None,
        validated: Validated::default(),
        log: Vec::new(),
    };
    let mut last = None;
    let schedule = schedule(args, design)?;
    let options = validate::Options {
        budget: crate::check::Limits {
            deadline: args.deadline,
            ..crate::check::Limits::default()
        },
        ..validate::Options::default()
    };
    for i in 0..args.runs.max(1) {
        // A signal or the time budget ends the runs: the one it cut is the
        // last (cut, so inconclusive), and what the runs before it decided
        // is kept. (A signal before the first run cuts that run.)
        let out_of_time = args
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d);
        if i > 0 || out_of_time {
            if let Some(why) = super::real::stopped(args.deadline) {
                tally.stopped = Some(why);
                break;
            }
        }
        let c = config(args, design, d, args.seed + i)?;
        let outcome = match &schedule {
            None => live::run(backend, &c),
            Some(s) => steer::run(backend, &c, s),
        }
        .map_err(|e| format!("{} failed during the run: {e}", backend.engine.name()))?;
        tally.runs += 1;
        tally.queues += outcome.queues.len();
        tally.statements += outcome.statements;
        tally.cut += outcome.cut.is_some() as usize;
        let validated = validate_log_within(design, &outcome, &options)?;
        if validated.inconclusive > 0 {
            // Queues left undecided once the budget ran out: its doing.
            tally.stopped = tally.stopped.or(super::real::stopped(args.deadline));
        }
        tally.validated.add(validated);
        if args.log.is_some() {
            let first = tally.log.is_empty();
            tally.log.extend(
                outcome
                    .log
                    .iter()
                    .filter(|l| first || l.get("event").and_then(|e| e.as_str()) != Some("header"))
                    .cloned(),
            );
        }
        let violated = outcome.violated();
        tally.violated_queues += violated.len();
        let wanted = violated.iter().find(|q| match &args.until {
            Some(p) => q.violations.contains(&p.as_str()),
            None => true,
        });
        let found = wanted.is_some();
        if tally.first.is_none() {
            if let Some(q) = wanted {
                tally.first = Some((tally.runs, q.violations.clone()));
                tally.story = Some(queue_story(&outcome, q.queue));
            }
        }
        last = Some(outcome);
        if found && stop_at_first {
            break;
        }
    }
    Ok((tally, last))
}

/// One queue's log and end rows, as text.
fn queue_story(outcome: &Outcome, queue: i64) -> String {
    let mut out = String::new();
    for (i, line) in outcome.queue_log(queue).iter().enumerate() {
        let mut line = (*line).clone();
        if let Some(o) = line.as_object_mut() {
            o.remove("queue");
            o.remove("ts_ms");
        }
        out.push_str(&format!("{:>3}. {line}\n", i + 1));
    }
    if let Some(end) = outcome.queues.iter().find(|q| q.queue == queue) {
        out.push_str("rows at the end:\n");
        for (row, value) in &end.rows {
            out.push_str(&format!("  {row}: {value}\n"));
        }
        out.push_str(&format!(
            "most builds running at a build's start: {}; violated: {}\n",
            end.max_running,
            end.violations.join(", ")
        ));
    }
    out
}

/// Every design's SQL, from the text the handlers run.
fn print_sql() -> Result<u8, String> {
    for (i, design) in DESIGNS.iter().enumerate() {
        let parts =
            parts_named(design.name).ok_or_else(|| format!("{} has no SQL", design.name))?;
        // A blank line between designs, none after the last.
        if i > 0 {
            println!();
        }
        println!("### {}\n\n{}\n", design.name, design.change);
        println!(
            "```sql\n{}```",
            slotcheck_sql::sqltext::listing(design.name, &parts)
        );
    }
    Ok(0)
}

pub fn run(mut args: LiveArgs) -> Result<u8, String> {
    if args.sql {
        return print_sql();
    }
    if let (Some(aim), None) = (&args.aim, &args.until) {
        // Steered towards a finding: the runs stop at its property.
        args.until = Some(Aim::load(aim, &args.design)?.story(&args.design)?.1);
    }
    // A usage error before any server starts.
    schedule(&args, &args.design)?;
    if let Some(p) = &args.until {
        if !ROW_PROPERTIES.contains(&p.as_str()) {
            return Err(format!(
                "--until: `{p}` is not an invariant a live run judges ({})",
                ROW_PROPERTIES.join(", ")
            ));
        }
    }
    let engine = EngineName::parse(&args.on)?;
    let d = dialect(engine, args.isolation.as_deref())?;
    // Every output is checked before the run, not minutes after it.
    if let Some(path) = &args.log {
        if args.table || args.isolation_table || args.steer_table {
            return Err(
                "--log writes one run's event log: leave it out with --table and --isolation-table"
                    .into(),
            );
        }
        itf::check_outputs(&[itf::Output::file("--log", path)], &[])?;
    }
    let Some(backend) = super::real::backend(&args.on, args.deadline)? else {
        let why = super::real::stopped(args.deadline).unwrap_or("stopped");
        println!(
            "slotcheck live --on {}: {why} while the server started: inconclusive",
            engine.name()
        );
        return Ok(3);
    };
    if args.steer_table {
        return steer_table(&backend, &args);
    }
    if args.isolation_table {
        return isolation_table(&backend, &args);
    }
    if args.table {
        return design_table(&backend, &args, d);
    }
    let (tally, _) = runs(&backend, &args, &args.design, d, true)?;
    if let Some(path) = &args.log {
        let mut file =
            std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for line in &tally.log {
            writeln!(file, "{line}").map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    println!(
        "slotcheck live --on {}: {} ({}), {} run(s) from seed {}, {} queues, {} statements",
        engine.name(),
        args.design,
        d.isolation_words(),
        tally.runs,
        args.seed,
        tally.queues,
        tally.statements
    );
    if args.schedule.is_some() || args.aim.is_some() {
        println!("{}", schedule_words(&args)?);
    }
    println!(
        "the queues' logs, validated against {}: {}",
        args.design,
        tally.validated.words()
    );
    if let Some(departure) = &tally.validated.first_departure {
        print!("the first log the model cannot explain:\n{departure}");
    }
    if let (Some(p), Some((run, _))) = (&args.until, &tally.first) {
        // The line a reader (and the docs' check) looks for; the rest varies.
        println!(
            "`{p}` broken live in run {run} (seed {}); {} queue(s) broke an invariant in all",
            args.seed + run - 1,
            tally.violated_queues
        );
    }
    if let Some((run, violations)) = &tally.first {
        println!(
            "violation in run {run} (seed {}): {}; {} queue(s) violated in all",
            args.seed + run - 1,
            violations.join(", "),
            tally.violated_queues
        );
        print!("{}", tally.story.unwrap_or_default());
        return Ok(1);
    }
    if let Some(p) = &args.until {
        println!(
            "`{p}` held on the rows of every queue of {} run(s)",
            tally.runs
        );
        if tally.violated_queues > 0 {
            println!("{} queue(s) broke another invariant", tally.violated_queues);
            return Ok(1);
        }
    }
    let stopped =
        tally.stopped.or(crate::check::budget::cancelled()
            .then_some("a signal (SIGINT or SIGTERM) stopped the run"));
    let (line, exit) = unbroken_end(tally.cut, tally.validated.departs, stopped);
    println!("{line}");
    Ok(exit)
}

/// The last line and exit of a run whose rows broke no invariant: a cut
/// run, or runs `stopped` (a signal, the time budget: between two runs too,
/// the runs asked for not all made, or their logs not all validated), are
/// inconclusive (3); else, as the link's live run, a log the model cannot
/// explain is a departure (4), whatever the rows say; else 0.
pub fn unbroken_end(cut: usize, departs: usize, stopped: Option<&str>) -> (String, u8) {
    if cut > 0 || stopped.is_some() {
        let why = stopped.unwrap_or("a bound");
        let line = if cut > 0 {
            format!("{cut} run(s) stopped before every queue drained ({why}): inconclusive")
        } else {
            format!(
                "{why} before every run asked for was made and its logs validated: inconclusive"
            )
        };
        return (line, 3);
    }
    if departs > 0 {
        return (
            "every invariant held on the rows of every queue, but a queue's log departs from the model".into(),
            validate::EXIT_DEPARTS,
        );
    }
    ("every invariant held on the rows of every queue".into(), 0)
}

/// Every design, `--runs` runs each from `--seed`, stopping at a design's
/// first violation.
fn design_table(backend: &Backend, args: &LiveArgs, d: Dialect) -> Result<u8, String> {
    println!(
        "slotcheck live --table --on {}: {} queue(s) a run, {} request(s), K 1, 2 deliveries, at most {} crash(es) and {} stall(s) a queue; up to {} run(s) a design from seed {}",
        backend.engine.name(),
        args.queues,
        args.requests,
        args.crashes,
        args.stalls,
        args.runs,
        args.seed
    );
    // Printed a row at a time, as each design's runs end: the design
    // column as wide as the longest name, known before the first row.
    let widest = DESIGNS.iter().map(|d| d.name.len()).max().unwrap_or(0);
    let table = TextTable::new(vec![
        Column::left("design").at_least(widest),
        Column::right("runs").at_least(4),
        Column::right("queues").at_least(6),
        Column::right("statements").at_least(10),
        Column::right("violated").at_least(8),
        Column::left("first violation"),
    ]);
    print!("{}", table.heading(Style::plain()));
    let mut stories = Vec::new();
    let mut code = 0;
    for design in DESIGNS {
        if let Some(why) = super::real::stopped(args.deadline) {
            println!("{why}: the designs below the last row were not run");
            code = 3;
            break;
        }
        let (tally, _) = runs(backend, args, design.name, d, true)?;
        let first = match &tally.first {
            Some((run, v)) => format!("run {run}: {}", v.join(", ")),
            None if tally.cut > 0 => format!("none ({} run(s) cut short)", tally.cut),
            None => "none".to_string(),
        };
        print!(
            "{}",
            table.line(
                vec![
                    design.name.into(),
                    tally.runs.to_string().into(),
                    tally.queues.to_string().into(),
                    tally.statements.to_string().into(),
                    tally.violated_queues.to_string().into(),
                    first.into(),
                ],
                Style::plain()
            )
        );
        if let Some(story) = tally.story {
            stories.push((design.name, story));
        }
    }
    for (design, story) in stories {
        println!("\n{design}, the first violated queue's log:\n{story}");
    }
    Ok(code)
}

/// The recommended design under each SQL variant of the read, the admit
/// transaction and the isolation level.
fn isolation_table(backend: &Backend, args: &LiveArgs) -> Result<u8, String> {
    let engine = backend.engine;
    let levels: Vec<&str> = match engine {
        EngineName::Mariadb => vec!["repeatable-read", "read-committed"],
        EngineName::Postgres => vec!["read-committed", "repeatable-read", "serializable"],
        EngineName::Sqlite => vec!["immediate", "deferred"],
    };
    println!(
        "slotcheck live --isolation-table --on {}: {RECOMMENDED}, {} run(s) of {} queue(s) a variant from seed {}",
        engine.name(),
        args.runs,
        args.queues,
        args.seed
    );
    // Printed a row at a time, as each variant's runs end; the invariants'
    // verdict and what the model made of the logs share a heading.
    let table = TextTable::new(vec![
        Column::left("isolation").at_least(15),
        Column::left("read").at_least(11),
        Column::left("admit read").at_least(10),
        Column::right("statements").at_least(10),
        Column::right("violated").at_least(8),
        Column::left("invariants").at_least(27),
        Column::left(""),
        Column::left("model"),
    ]);
    print!("{}", table.heading(Style::plain()));
    let mut short = Vec::new();
    let verdicts = [
        model_verdict(RECOMMENDED, false)?,
        model_verdict(RECOMMENDED, true)?,
    ];
    for level in levels {
        for read in ["joined", "transaction", "separate"] {
            for tx in ["for-update", "plain"] {
                if let Some(why) = super::real::stopped(args.deadline) {
                    println!("{why}: the variants below the last row were not run");
                    return Ok(3);
                }
                let mut a = LiveArgs { ..clone_args(args) };
                a.read = read.into();
                a.tx_read = tx.into();
                let d = dialect(engine, Some(level))?;
                let (tally, _) = runs(backend, &a, RECOMMENDED, d, false)?;
                let model = match model_reading(engine, level, read, tx) {
                    None => "outside the model: the admit is not atomic".to_string(),
                    Some(split) => format!(
                        "{}: {}",
                        if split { "split-read" } else { "one snapshot" },
                        verdicts[split as usize]
                    ),
                };
                let broken = model.contains("violated") || model.starts_with("outside");
                let verdict = match &tally.first {
                    Some((_, v)) => format!("violated: {}", v.join(", ")),
                    None if tally.cut > 0 => "inconclusive (cut short)".into(),
                    // "kept" alone only where the model agrees.
                    None if broken => "kept here, window not hit".into(),
                    None => "kept".into(),
                };
                let v = &tally.validated;
                let explained = v.conform + v.conform_violated;
                // Words when the model explains every log: what the docs check.
                let logs = if explained == tally.queues {
                    "every log conforms".to_string()
                } else {
                    format!(
                        "{explained} of {} conform, {} depart",
                        tally.queues, v.departs
                    )
                };
                if tally.first.is_some() || tally.cut > 0 || explained != tally.queues {
                    short.push(format!("{level} {read} {tx}"));
                }
                print!(
                    "{}",
                    table.line(
                        vec![
                            level.into(),
                            read.into(),
                            tx.into(),
                            tally.statements.to_string().into(),
                            tally.violated_queues.to_string().into(),
                            verdict.into(),
                            logs.into(),
                            model.into(),
                        ],
                        Style::plain()
                    )
                );
            }
        }
    }
    if short.is_empty() {
        println!("no variant broke an invariant in these runs, and the model explained every queue's log");
        Ok(0)
    } else {
        println!(
            "variants that broke an invariant, were cut short or left a log unexplained: {}",
            short.join("; ")
        );
        Ok(1)
    }
}

fn clone_args(a: &LiveArgs) -> LiveArgs {
    LiveArgs {
        on: a.on.clone(),
        model: a.model.clone(),
        design: a.design.clone(),
        seed: a.seed,
        runs: a.runs,
        queues: a.queues,
        requests: a.requests,
        crashes: a.crashes,
        stalls: a.stalls,
        crash_percent: a.crash_percent,
        stall_percent: a.stall_percent,
        workers: a.workers,
        timeout: a.timeout,
        deadline: a.deadline,
        read: a.read.clone(),
        tx_read: a.tx_read.clone(),
        aborts: a.aborts.clone(),
        isolation: a.isolation.clone(),
        until: a.until.clone(),
        link: a.link.clone(),
        schedule: a.schedule.clone(),
        aim: a.aim.clone(),
        steer_table: false,
        log: None,
        no_turnstile: a.no_turnstile,
        table: false,
        isolation_table: false,
        sql: false,
    }
}

/// A finding a live run steers towards (`--aim`): its scenario's bounds,
/// reading, and the story `--schedule guided` follows.
struct Aim {
    file: String,
    bounds: slotcheck_models::stovepipe::Bounds,
    split_read: bool,
    finding: Option<String>,
    /// Each story: its design, the property it violates, its steps.
    stories: Vec<(String, String, Vec<String>)>,
}

impl Aim {
    /// `name` is a scenario's file stem under scenarios/, or a path.
    fn load(name: &str, _design: &str) -> Result<Aim, String> {
        let file = if name.ends_with(".toml") || name.contains('/') {
            name.to_string()
        } else {
            format!("{}/{name}.toml", crate::scenario::SCENARIO_DIR)
        };
        let text = std::fs::read_to_string(&file).map_err(|e| {
            format!("--aim: {file}: {e} (a finding's scenario, e.g. owner-keyed-stall)")
        })?;
        let table: toml::Table = text.parse().map_err(|e| format!("{file}: {e}"))?;
        if table.get("model").and_then(|m| m.as_str()) != Some("stovepipe") {
            return Err(format!("--aim: {file} is not a stovepipe scenario"));
        }
        let b = table
            .get("bounds")
            .and_then(|b| b.as_table())
            .ok_or_else(|| format!("{file}: no [bounds]"))?;
        let get = |k: &str| -> Result<u8, String> {
            b.get(k)
                .and_then(|v| v.as_integer())
                .map(|v| v as u8)
                .ok_or_else(|| format!("{file}: [bounds] {k} is missing"))
        };
        let bounds = slotcheck_models::stovepipe::Bounds {
            requests: get("requests")?,
            max_concurrent: get("max_concurrent")?,
            crashes: get("crashes")?,
            stalls: get("stalls")?,
            max_deliveries: get("max_deliveries")?,
        };
        if bounds.requests > 3 {
            return Err(format!(
                "--aim: {file} has {} requests; a live run takes at most 3",
                bounds.requests
            ));
        }
        let options: Vec<&str> = table
            .get("options")
            .and_then(|o| o.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let stories = table
            .get("story")
            .and_then(|s| s.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| {
                        let s = s.as_table()?;
                        let steps = s.get("steps")?.as_array()?;
                        Some((
                            s.get("design")?.as_str()?.to_string(),
                            s.get("violates")?.as_str()?.to_string(),
                            steps
                                .iter()
                                .filter_map(|w| w.as_str().map(String::from))
                                .collect(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Aim {
            file,
            bounds,
            split_read: options.contains(&"split-read"),
            finding: table
                .get("finding")
                .and_then(|f| f.as_str())
                .map(String::from),
            stories,
        })
    }

    /// The story `design` is steered by, and the property it violates: the
    /// scenario's story of that design, else its first story (the same
    /// steering for a design the finding does not break), else the
    /// model's shortest counterexample of the scenario's finding.
    fn story(&self, design: &str) -> Result<(String, String, Vec<String>), String> {
        if let Some(s) = self
            .stories
            .iter()
            .find(|s| s.0 == design)
            .or(self.stories.first())
        {
            return Ok(s.clone());
        }
        use slotcheck_models::stovepipe::{compose, Stovepipe};
        use slotcheck_models::Narrated;
        let property = self
            .finding
            .clone()
            .ok_or_else(|| format!("--aim: {} names no finding and tells no story", self.file))?;
        let model = || -> Result<Stovepipe, String> {
            let mut m = Stovepipe::new(compose(design)?, self.bounds);
            m.options.split_read = self.split_read;
            Ok(m)
        };
        let judged = ROW_PROPERTIES
            .iter()
            .copied()
            .find(|p| *p == property)
            .ok_or_else(|| {
                format!(
                    "--aim: {}'s finding, {property}, is not an invariant a live run judges",
                    self.file
                )
            })?;
        let outcome = crate::check::check(model()?, &[judged], &crate::check::Limits::default());
        let trace = outcome
            .result(&property)
            .and_then(|r| r.trace.as_ref())
            .ok_or_else(|| {
                format!(
                    "--aim: the model finds no counterexample of {property} for {design} on {}'s bounds: nothing to steer towards",
                    self.file
                )
            })?;
        Ok((
            design.to_string(),
            property,
            model()?.words(&trace.init, &trace.actions),
        ))
    }
}

/// The scheduler `--schedule` names (`None`: the free run, `random`).
fn schedule(args: &LiveArgs, design: &str) -> Result<Option<Schedule>, String> {
    let name = args.schedule.as_deref().unwrap_or(if args.aim.is_some() {
        "guided"
    } else {
        "random"
    });
    match name {
        "random" => Ok(None),
        "pct" => Ok(Some(Schedule::Pct)),
        "guided" => {
            let aim = args
                .aim
                .as_deref()
                .ok_or("--schedule guided follows a finding's story: name it with --aim FINDING")?;
            let (_, _, steps) = Aim::load(aim, design)?.story(design)?;
            Ok(Some(Schedule::Guided(steps)))
        }
        other => Err(format!("--schedule: `{other}` (random, pct, guided)")),
    }
}

/// The windows the steered runs aim at (issue 35), as the steer table
/// runs them: the label, the scenario (none: outside the model), the
/// design, whether the read is split, whether the admit reads without
/// FOR UPDATE.
const WINDOWS: [(&str, Option<&str>, &str, bool); 6] = [
    (
        "split reads, the former recommendation",
        Some("split-read-stale-head"),
        RECOMMENDED,
        false,
    ),
    (
        "split reads, the recommendation (held)",
        Some("split-read-stale-head"),
        "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        false,
    ),
    (
        "owner-keyed's stall",
        Some("owner-keyed-stall"),
        "owner-keyed",
        false,
    ),
    (
        "fail-open's two heads",
        Some("fail-open-two-heads"),
        "fail-open",
        false,
    ),
    (
        "claim-first's wedge",
        Some("SP-OCT-003"),
        "claim-first",
        false,
    ),
    (
        "the admit without FOR UPDATE",
        None,
        "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        true,
    ),
];

/// Runs to the first violation of each window, under each scheduler.
fn steer_table(backend: &Backend, args: &LiveArgs) -> Result<u8, String> {
    let engine = backend.engine;
    let runs = if args.runs > 1 { args.runs } else { 20 };
    println!(
        "slotcheck live --steer-table --on {}: runs to the first violation (at most {runs} a cell, from seed {}), {} queue(s) a run",
        engine.name(),
        args.seed,
        args.queues
    );
    let table = TextTable::new(vec![
        Column::left("window").at_least(38),
        Column::left("design").at_least(52),
        Column::left("random").at_least(11),
        Column::left("pct").at_least(11),
        Column::left("guided").at_least(11),
    ]);
    print!("{}", table.heading(Style::plain()));
    for (label, aim, design, plain) in WINDOWS {
        let mut cells = Vec::new();
        for scheduler in ["random", "pct", "guided"] {
            if let Some(why) = super::real::stopped(args.deadline) {
                println!("{why}: the rows below the last were not run");
                return Ok(3);
            }
            if scheduler == "guided" && aim.is_none() {
                cells.push("no story".to_string());
                continue;
            }
            let mut a = clone_args(args);
            a.runs = runs;
            a.design = design.into();
            a.aim = aim.map(String::from);
            a.schedule = Some(scheduler.into());
            a.tx_read = if plain { "plain" } else { "for-update" }.into();
            a.until = match aim {
                Some(f) => Some(Aim::load(f, design)?.story(design)?.1),
                None => None,
            };
            // Split reads break at READ COMMITTED; SQLite's levels do not
            // change the reads.
            let level = match engine {
                EngineName::Sqlite => None,
                _ => Some("read-committed"),
            };
            let d = dialect(engine, level)?;
            let (tally, _) = runs_of(backend, &a, design, d)?;
            cells.push(match &tally.first {
                Some((run, _)) => format!("run {run}"),
                None if tally.cut > 0 => format!("none in {} (cut)", tally.runs),
                None => format!("none in {}", tally.runs),
            });
        }
        print!(
            "{}",
            table.line(
                vec![
                    label.into(),
                    design.into(),
                    cells[0].clone().into(),
                    cells[1].clone().into(),
                    cells[2].clone().into(),
                ],
                Style::plain()
            )
        );
    }
    Ok(0)
}

fn runs_of(
    backend: &Backend,
    args: &LiveArgs,
    design: &str,
    d: Dialect,
) -> Result<(Tally, Option<Outcome>), String> {
    runs(backend, args, design, d, true)
}

/// The scheduler of a steered run, in words.
fn schedule_words(args: &LiveArgs) -> Result<String, String> {
    Ok(match schedule(args, &args.design)? {
        None => "scheduled by the threads and the engine (random), faults at seeded chances".into(),
        Some(Schedule::Pct) => {
            "steered by pct: seeded priorities and change points, faults placed by the director"
                .into()
        }
        Some(Schedule::Guided(steps)) => {
            let aim = args.aim.as_deref().unwrap_or_default();
            let (design, property, _) = Aim::load(aim, &args.design)?.story(&args.design)?;
            format!(
                "steered by guided: the story of {design} violating {property} in {aim} ({}), then random",
                crate::report::count(steps.len() as u64, "step")
            )
        }
    })
}
