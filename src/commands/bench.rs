//! `slotcheck bench`: a fixed matrix of bounds, measured as unique states,
//! states per second, bytes per unique state, peak memory and time to verdict
//! (and to the first violation), with one thread and, on the large bounds,
//! two; then how far past a `--timeout` a run stops (the search alone, and
//! every command that takes one, end to end), how long `mutate` takes, and
//! the simulator. Figures, never assertions: they vary by machine.

use crate::check::budget::cancelled;
use crate::check::memory::{peak_bytes, reset_peak};
use crate::check::{check, Limits, Phases, Verdict};
use crate::models::link::DEFAULT_BOUNDS as LINK_DEFAULT_BOUNDS;
use crate::models::stovepipe::DEFAULT_BOUNDS;
use crate::mutate::{self, Equivalents};
use crate::report::bench::{
    round, BenchReport, CommandOvershoot, MutateFigures, PhaseSeconds, ProgressCost, SearchFigures,
    SearchOvershoot, SideBySide, ValidateFigures, ValidateLinkFigures,
};
use slotcheck_models::link::{design_named as link_design, Bounds as LinkBounds, Link};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
use slotcheck_models::{Narrated, Packed, PropertyKind};
use stateright::Model;
use std::time::{Duration, Instant};

/// The recommended repair (the README's *What to merge*).
const RECOMMENDED: &str = "owner-keyed-atomic-admit-supersede-first-dlq-cancels";

/// The designs measured: the source's three and the recommended repair.
const DESIGNS: [&str; 4] = ["claim-first", "fail-open", "owner-keyed", RECOMMENDED];

/// The split reads' row (`--large`): the recommended design on these
/// bounds with `--option split-read`, beside its one-snapshot row (named
/// as the report finds it: the bounds' row and
/// [`SPLIT`](crate::report::bench::SPLIT)).
const SPLIT_BOUNDS: &str = "N3 K1 c1 s1";
const SPLIT_ROW: &str = "N3 K1 c1 s1 split";

/// The four requests' row (`--large`): the recommended design on these
/// bounds, on two threads (renamed requests bring it within 16 GB; the
/// source's designs, which break on three requests already, are left out).
const FOUR_REQUESTS_ROW: &str = "N4 K2 c2 s1";

fn bounds(requests: u8, max_concurrent: u8, crashes: u8, stalls: u8) -> Bounds {
    Bounds {
        requests,
        max_concurrent,
        crashes,
        stalls,
        max_deliveries: 2,
    }
}

/// The matrix: named bounds and the thread counts to run them with. The
/// large bounds are the targets: three requests with a crash and a
/// stall, and two slots with two crashes and a stall.
pub fn matrix(large: bool) -> Vec<(&'static str, Bounds, &'static [usize])> {
    let mut rows: Vec<(&'static str, Bounds, &'static [usize])> = vec![
        ("N1 K1 c1 s0", bounds(1, 1, 1, 0), &[1]),
        ("N2 K1 c1 s0", bounds(2, 1, 1, 0), &[1]),
        ("default", DEFAULT_BOUNDS, &[1]),
        ("N3 K1 c1 s0", bounds(3, 1, 1, 0), &[1]),
    ];
    if large {
        rows.push(("N3 K1 c1 s1", bounds(3, 1, 1, 1), &[1, 2]));
        rows.push(("N3 K2 c2 s1", bounds(3, 2, 2, 1), &[1, 2]));
    }
    rows
}

pub struct Measurement {
    pub phases: Phases,
    pub bounds: &'static str,
    pub design: &'static str,
    pub threads: usize,
    pub unique: usize,
    pub states: usize,
    pub states_per_second: f64,
    pub peak_mib: Option<f64>,
    /// Peak memory over unique states: what the search costs per state.
    pub bytes_per_state: Option<f64>,
    pub seconds: f64,
    /// Seconds to the first violation of any `always` property.
    pub first_violation: Option<f64>,
}

/// The link designs measured: the source's four (what `compare --model
/// link` runs) and the recommended repair.
const LINK_DESIGNS: [&str; 5] = [
    "before-1649",
    "after-1649",
    "check-only",
    "margin-only",
    "after-1649-repaired",
];

/// A row of link bounds: its name, the bounds, the designs, the threads.
type LinkRow = (
    &'static str,
    LinkBounds,
    &'static [&'static str],
    &'static [usize],
);

/// The link rows: `compare --model link`'s defaults and, on the large
/// bounds, the same with three asks and three builders (issue 24's target).
pub fn link_matrix(large: bool) -> Vec<LinkRow> {
    let mut rows: Vec<LinkRow> = vec![("link default", LINK_DEFAULT_BOUNDS, &LINK_DESIGNS, &[1])];
    if large {
        let three = LinkBounds {
            asks: 3,
            builders: 3,
            ..LINK_DEFAULT_BOUNDS
        };
        rows.push(("link A3 B3", three, &LINK_DESIGNS, &[2]));
    }
    rows
}

/// One row: the whole space of `model` with `threads` threads.
fn measure_one<M>(
    bounds: &'static str,
    design: &'static str,
    model: M,
    threads: usize,
    progress: bool,
) -> Measurement
where
    M: Narrated + Packed + Sync,
    M::State: Clone,
    M::Action: Clone,
{
    let limits = Limits {
        threads,
        progress,
        ..Limits::default()
    };
    let own_peak = reset_peak();
    let outcome = check(model, &[], &limits);
    let peak = own_peak.then(peak_bytes).flatten();
    let first_violation = outcome
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Violated)
        .filter_map(|r| r.found_after)
        .fold(None, |min: Option<f64>, t| {
            Some(min.map_or(t, |m| m.min(t)))
        });
    Measurement {
        bounds,
        design,
        threads,
        unique: outcome.stats.unique,
        states: outcome.stats.states,
        states_per_second: outcome.stats.states_per_second(),
        peak_mib: peak.map(|b| b as f64 / (1 << 20) as f64),
        bytes_per_state: peak.map(|b| b as f64 / outcome.stats.unique.max(1) as f64),
        seconds: outcome.stats.seconds,
        first_violation,
        phases: outcome.stats.phases,
    }
}

/// Two one-thread searches of the same space at once, each on a thread of
/// its own (`bench --scaling`): what the machine lets two threads do, with
/// nothing shared but the machine. As a row, the slower of the two, with
/// `threads` 0; no peak (the two share the process).
fn side_by_side<M>(bounds: &'static str, design: &'static str, model: M) -> Measurement
where
    M: Narrated + Packed + Sync + Clone + Send,
    M::State: Clone,
    M::Action: Clone,
{
    let limits = Limits {
        threads: 1,
        ..Limits::default()
    };
    let run = || check(model.clone(), &[], &limits).stats;
    let (a, b) = std::thread::scope(|scope| {
        let other = scope.spawn(run);
        let a = run();
        (a, other.join().expect("the other search"))
    });
    // The same search twice: a pair that differs is not two of one.
    assert_eq!(
        (a.unique, a.states),
        (b.unique, b.states),
        "two searches of one space"
    );
    let slower = if a.seconds >= b.seconds { a } else { b };
    Measurement {
        bounds,
        design,
        threads: 0,
        unique: slower.unique,
        states: slower.states,
        states_per_second: slower.states_per_second(),
        peak_mib: None,
        bytes_per_state: None,
        seconds: slower.seconds,
        first_violation: None,
        phases: slower.phases,
    }
}

/// `measure` as a row, unless a signal came before or during it (a search
/// a signal cut is no figure of the whole space): `None` then.
fn whole(measure: impl FnOnce() -> Measurement) -> Option<Measurement> {
    if cancelled() {
        return None;
    }
    let m = measure();
    (!cancelled()).then_some(m)
}

/// `progress`: a progress line on stderr during each run (it does not
/// change the figures beyond a poll every few milliseconds). After a
/// signal, the rows measured whole before it.
pub fn measure(large: bool, progress: bool, runs: usize) -> Vec<Measurement> {
    let mut rows = measure_rows(matrix(large), &DESIGNS, progress);
    let four_requests = bounds(4, 2, 2, 1);
    if large {
        let (_, bounds, _) = matrix(true)
            .into_iter()
            .find(|row| row.0 == SPLIT_BOUNDS)
            .expect("the split reads' bounds are in the matrix");
        rows.push(Box::new(move || {
            let mut model = Stovepipe::new(design_named(RECOMMENDED).expect("a design"), bounds);
            model.options.split_read = true;
            measure_one(SPLIT_ROW, RECOMMENDED, model, 1, progress)
        }));
        rows.push(Box::new(move || {
            let model = Stovepipe::new(design_named(RECOMMENDED).expect("a design"), four_requests);
            measure_one(FOUR_REQUESTS_ROW, RECOMMENDED, model, 2, progress)
        }));
    }
    for (name, bounds, designs, threads) in link_matrix(large) {
        for &design in designs {
            for &threads in threads {
                rows.push(Box::new(move || {
                    let model = Link::new(link_design(design).expect("a design"), bounds);
                    measure_one(name, design, model, threads, progress)
                }));
            }
        }
    }
    fastest(rows, runs)
}

/// A row of the table: how to measure it once.
type Row = Box<dyn Fn() -> Measurement>;

/// Each row measured `runs` times, the rows taken in turn (so that a
/// while of a busier machine falls on every row alike), and kept as its
/// fastest whole run. After a signal, the rows measured whole before it.
fn fastest(rows: Vec<Row>, runs: usize) -> Vec<Measurement> {
    let mut best: Vec<Option<Measurement>> = rows.iter().map(|_| None).collect();
    for _ in 0..runs.max(1) {
        for (row, best) in rows.iter().zip(&mut best) {
            if let Some(m) = whole(row) {
                if best.as_ref().is_none_or(|b| m.seconds < b.seconds) {
                    *best = Some(m);
                }
            }
        }
    }
    best.into_iter().flatten().collect()
}

/// The stovepipe rows of `matrix`: each design on each bounds, with each
/// of its thread counts.
fn measure_rows(
    matrix: Vec<(&'static str, Bounds, &'static [usize])>,
    designs: &[&'static str],
    progress: bool,
) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for (name, bounds, threads) in matrix {
        for &design in designs {
            for &threads in threads {
                rows.push(Box::new(move || {
                    let model = Stovepipe::new(design_named(design).expect("a design"), bounds);
                    measure_one(name, design, model, threads, progress)
                }));
            }
        }
    }
    rows
}

/// The bounds `--scaling` measures: the large matrix's two-slot row, for
/// the source's three designs and the recommended one.
const SCALING: &str = "N3 K2 c2 s1";

/// `--quick`: the matrix's first bounds alone.
fn measure_quick(progress: bool) -> Vec<Measurement> {
    let (name, bounds, _) = matrix(false)[0];
    DESIGNS
        .into_iter()
        .filter_map(|design| {
            let model = Stovepipe::new(design_named(design).expect("a design"), bounds);
            whole(|| measure_one(name, design, model, 1, progress))
        })
        .collect()
}

/// The design whose progress check is costed: the recommended one.
const PROGRESS_DESIGN: &str = RECOMMENDED;

/// The progress check's cost: `design` on `bounds` checked with its
/// `always` and `sometimes` properties alone, then with every property, one
/// run after the other (so that both see the same load), per thread count.
/// The bounds are three requests, K 1, a crash, a stall and two
/// deliveries (`N3 K1 c1 s1`), with a target of at most twice the time and
/// the memory.
pub fn progress_cost(
    name: &'static str,
    bounds: Bounds,
    threads: &[usize],
    progress: bool,
) -> Vec<ProgressCost> {
    let model = Stovepipe::new(design_named(PROGRESS_DESIGN).expect("a design"), bounds);
    let safety: Vec<&'static str> = model
        .properties()
        .iter()
        .map(|p| p.name)
        .filter(|&name| model.kind_of(name) != Some(PropertyKind::Progress))
        .collect();
    let run = |names: &[&'static str], threads: usize| {
        let limits = Limits {
            threads,
            progress,
            ..Limits::default()
        };
        let own_peak = reset_peak();
        let outcome = check(model, names, &limits);
        let peak = own_peak.then(peak_bytes).flatten();
        (
            round(outcome.stats.seconds, 3),
            peak.map(|b| round(b as f64 / (1 << 20) as f64, 1)),
        )
    };
    threads
        .iter()
        .map(|&threads| {
            let (safety_seconds, safety_peak_mib) = run(&safety, threads);
            let (seconds, peak_mib) = run(&[], threads);
            ProgressCost {
                bounds: name.to_string(),
                design: PROGRESS_DESIGN.to_string(),
                peak_mib,
                safety_peak_mib,
                safety_seconds,
                seconds,
                threads,
            }
        })
        .collect()
}

/// How far past its `--timeout` a run that cannot finish stops: fail-open
/// on the largest bounds, cut at `timeout`, with one thread and two.
pub fn timeout_overshoot(timeout: Duration) -> Vec<(usize, f64)> {
    [1, 2]
        .into_iter()
        .take_while(|_| !cancelled())
        .map(|threads| {
            let model = Stovepipe::new(
                design_named("fail-open").expect("a design"),
                bounds(3, 2, 2, 1),
            );
            let limits = Limits {
                threads,
                timeout: Some(timeout),
                ..Limits::default()
            };
            let started = Instant::now();
            let outcome = check(model, &[], &limits);
            assert!(outcome.stats.cut.is_some(), "the run is cut");
            (threads, started.elapsed().as_secs_f64())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .filter(|_| !cancelled())
        .collect()
}

/// Each command that takes `--timeout`, on work that outlasts it (the
/// nightly scenario, bounds of minutes, a hundred million walks).
const TIMED_COMMANDS: [(&str, &str); 6] = [
    (
        "check --design",
        "check --design fail-open --requests 3 --max-concurrent 2 --crashes 2 --stalls 1",
    ),
    ("check (scenarios)", "check scenarios/nightly-n3-k2.toml"),
    (
        "compare",
        "compare --requests 3 --max-concurrent 2 --crashes 2 --stalls 1",
    ),
    ("compare --findings", "compare --findings"),
    (
        "mutate",
        "mutate --design fail-open --requests 3 --crashes 1 --stalls 1",
    ),
    (
        "simulate",
        "simulate --design fail-open --runs 100000000 --no-save",
    ),
];

/// How far past its `--timeout` each command stops, end to end (this
/// binary run as a child, from start to exit, every phase included: a
/// mutate's listing of mutants, a simulation's shrinking): per command,
/// its seconds and exit status.
pub fn command_overshoot(timeout: Duration) -> Result<Vec<(&'static str, f64, i32)>, String> {
    let binary = std::env::current_exe().map_err(|e| format!("bench: this binary: {e}"))?;
    let mut rows: Vec<(&'static str, f64, i32)> = TIMED_COMMANDS
        .iter()
        .take_while(|_| !cancelled())
        .map(|(name, command)| {
            let started = Instant::now();
            let status = std::process::Command::new(&binary)
                .args(command.split_whitespace())
                .args(["--timeout", &timeout.as_secs_f64().to_string(), "--json"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map_err(|e| format!("bench: {command}: {e}"))?;
            Ok((
                *name,
                started.elapsed().as_secs_f64(),
                status.code().unwrap_or(-1),
            ))
        })
        .collect::<Result<_, String>>()?;
    if cancelled() {
        // The last child ran while the signal came (a Ctrl-C reaches the
        // whole group): its figure is the signal's, not its --timeout's.
        rows.pop();
    }
    Ok(rows)
}

/// `slotcheck mutate` on `bounds` (the default ones, but for `--quick`), for
/// the recommended design: its mutants and the seconds they take.
pub fn mutate_time(bounds: Bounds) -> (usize, f64) {
    let model = Stovepipe::new(design_named(RECOMMENDED).expect("a design"), bounds);
    let started = Instant::now();
    let reports = mutate::run(
        &[vec![model]],
        &Equivalents::default(),
        &Limits::default(),
        false,
        false,
    );
    (reports[0].mutants.len(), started.elapsed().as_secs_f64())
}

/// A measurement as the report has it: rates to the unit, memory to 0.1,
/// seconds to the millisecond.
fn figures_of(m: &Measurement) -> SearchFigures {
    SearchFigures {
        bounds: m.bounds.to_string(),
        bytes_per_state: m.bytes_per_state.map(|b| round(b, 1)),
        design: m.design.to_string(),
        first_violation_seconds: m.first_violation.map(|t| round(t, 3)),
        peak_mib: m.peak_mib.map(|p| round(p, 1)),
        seconds: round(m.seconds, 3),
        states: m.states,
        states_per_second: m.states_per_second.round(),
        threads: m.threads,
        unique: m.unique,
        phases: PhaseSeconds {
            expand: round(m.phases.expand.as_secs_f64(), 3),
            graph: round(m.phases.graph.as_secs_f64(), 3),
            insert: round(m.phases.insert.as_secs_f64(), 3),
            number: round(m.phases.number.as_secs_f64(), 3),
            progress: round(m.phases.progress.as_secs_f64(), 3),
        },
    }
}

/// `validate` on a log of at least `lines` lines of many independent queues
/// (random runs of the recommended design, three requests each, with a
/// crash and a stall allowed, interleaved line by line): lines, queues,
/// seconds to parse and validate it all, and the queues that conform.
pub fn validate_time(lines: usize) -> (usize, usize, f64, usize) {
    use slotcheck_models::events;
    use slotcheck_models::stovepipe::trace::{queues, simulated_log, QueueTrace};
    let design = design_named(RECOMMENDED).expect("a design");
    let bounds = bounds(3, 1, 1, 1);
    let (total, interleaved) = interleaved_logs(lines, |n| {
        simulated_log(design, bounds, n as u64, &format!("q{n}"), 80)
    });
    let header = events::Header {
        model: Some(events::ModelName::Stovepipe),
        max_concurrent: Some(bounds.max_concurrent),
        max_deliveries: Some(bounds.max_deliveries),
        ..events::Header::default()
    };
    let text = events::to_ndjson(Some(&header), &interleaved);
    let started = Instant::now();
    let mut log = events::parse("bench.ndjson", &text).expect("a simulated log parses");
    let records = log.stovepipe_lines();
    let mut conforming = 0;
    let split = queues(records);
    let count = split.len();
    for (_, split_read, events) in split {
        let trace = QueueTrace::new(design, &log.header, split_read, events).expect("in bounds");
        if crate::validate::validate(&trace).exit_code() <= 1 {
            conforming += 1;
        }
    }
    (total, count, started.elapsed().as_secs_f64(), conforming)
}

/// Logs of independent queues (`log(n)` the n-th) until they hold at least
/// `lines` lines, interleaved line by line as a service with many queues
/// writes them: their total, and the lines.
fn interleaved_logs<R: Clone>(
    lines: usize,
    mut log: impl FnMut(usize) -> Vec<R>,
) -> (usize, Vec<R>) {
    let mut logs: Vec<Vec<R>> = Vec::new();
    let mut total = 0;
    while total < lines {
        let next = log(logs.len());
        total += next.len();
        logs.push(next);
    }
    let mut interleaved = Vec::with_capacity(total);
    let longest = logs.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..longest {
        interleaved.extend(logs.iter().filter_map(|l| l.get(i).cloned()));
    }
    (total, interleaved)
}

/// Lines of the link log `bench` validates.
const LINK_LINES: usize = 100_000;

/// `validate` on a link log of at least `lines` lines of many independent
/// streams (random runs of after-1649: two asks, two builders, a crash, a
/// late heartbeat, a lost ack allowed, interleaved line by line): lines,
/// streams, seconds to parse and validate it all, and the streams that
/// conform.
pub fn validate_link_time(lines: usize) -> (usize, usize, f64, usize) {
    use slotcheck_models::events;
    use slotcheck_models::link::trace::{simulated_log, streams, LinkTrace};
    use slotcheck_models::link::{design_named, Bounds, Options};
    let design = design_named("after-1649").expect("a design");
    let bounds = Bounds {
        late_heartbeats: 1,
        lost_acks: 1,
        ..Bounds::default()
    };
    let (total, interleaved) = interleaved_logs(lines, |n| {
        simulated_log(design, bounds, n as u64, &format!("s{n}"), 120)
    });
    let header = events::Header {
        model: Some(events::ModelName::Link),
        ms_per_tick: Some(100),
        max_deliver: Some(bounds.max_deliver),
        ..events::Header::default()
    };
    let text = events::to_ndjson(Some(&header), &interleaved);
    let started = Instant::now();
    let mut log = events::parse("bench.ndjson", &text).expect("a simulated log parses");
    let records = log.link_lines();
    let split = streams(records);
    let count = split.len();
    let mut conforming = 0;
    for (_, lines) in split {
        let trace =
            LinkTrace::new(design, Options::default(), &log.header, lines).expect("in bounds");
        if crate::validate::validate(&trace).exit_code() <= 1 {
            conforming += 1;
        }
    }
    (total, count, started.elapsed().as_secs_f64(), conforming)
}

/// `quick`: the first bounds of the matrix only (`mutate` on them too), logs
/// of a thousand lines, no `--timeout` runs and no simulator: the command and
/// its report checked in seconds.
///
/// `progress_only`: only the progress check's cost (see [`progress_cost`]),
/// as its lines, or with `as_json` as a JSON list of `ProgressCost`.
pub fn run(
    large: bool,
    quick: bool,
    progress_only: bool,
    scaling: bool,
    runs: usize,
    as_json: bool,
    progress: bool,
) -> Result<u8, String> {
    // Each later phase runs only if no signal came; one that a signal
    // reached during it is left out (`whole`, `after`), never half-counted.
    fn after<T>(phase: impl FnOnce() -> T) -> Option<T> {
        if cancelled() {
            return None;
        }
        let done = phase();
        (!cancelled()).then_some(done)
    }
    if progress_only {
        let costs = progress_cost("N3 K1 c1 s1", bounds(3, 1, 1, 1), &[1, 2], progress);
        if as_json {
            println!(
                "{}",
                serde_json::to_string_pretty(&costs).expect("a report is JSON")
            );
        } else {
            for c in &costs {
                print!("{}", c.line());
            }
        }
        return Ok(if cancelled() { 3 } else { 0 });
    }
    if scaling {
        let (_, bounds, threads) = matrix(true)
            .into_iter()
            .find(|(name, ..)| *name == SCALING)
            .expect("the scaling bounds are in the matrix");
        // Each design with one thread, two, and two one-thread searches
        // side by side (threads 0), in turn.
        let mut each: Vec<Row> = Vec::new();
        for design in DESIGNS {
            let model = move || Stovepipe::new(design_named(design).expect("a design"), bounds);
            for &threads in threads {
                each.push(Box::new(move || {
                    measure_one(SCALING, design, model(), threads, progress)
                }));
            }
            each.push(Box::new(move || side_by_side(SCALING, design, model())));
        }
        let (rows, pairs): (Vec<Measurement>, Vec<Measurement>) =
            fastest(each, runs).into_iter().partition(|m| m.threads > 0);
        let report = BenchReport {
            checks: rows.iter().map(figures_of).collect(),
            side_by_side: pairs
                .iter()
                .map(|m| SideBySide {
                    bounds: m.bounds.to_string(),
                    design: m.design.to_string(),
                    seconds: round(m.seconds, 3),
                })
                .collect(),
            runs,
            stopped: cancelled().then(|| {
                "a signal (SIGINT or SIGTERM) stopped the bench: the rows above are whole, the ones not shown were not measured".to_string()
            }),
            ..BenchReport::default()
        };
        if as_json {
            println!(
                "{}",
                serde_json::to_string_pretty(&report).expect("a report is JSON")
            );
        } else {
            print!("{}{}", report.text(), report.phases_text());
        }
        return Ok(if cancelled() { 3 } else { 0 });
    }
    let rows = if quick {
        measure_quick(progress)
    } else {
        measure(large, progress, runs)
    };
    let timeout = Duration::from_secs(2);
    let overshoot = if large {
        timeout_overshoot(timeout)
    } else {
        Vec::new()
    };
    let (mutate_bounds, mutate_on) = if quick {
        let (name, bounds, _) = matrix(false)[0];
        (name, bounds)
    } else {
        ("default bounds", DEFAULT_BOUNDS)
    };
    let mutated = after(|| mutate_time(mutate_on));
    let log_size = if quick { 1000 } else { 100_000 };
    let validated = after(|| validate_time(log_size));
    let link_size = if quick { 1000 } else { LINK_LINES };
    let validated_link = after(|| validate_link_time(link_size));
    let commands = if quick {
        Vec::new()
    } else {
        command_overshoot(timeout)?
    };
    let design = RECOMMENDED.to_string();
    let progress_costs = after(|| {
        if quick {
            let (name, bounds, _) = matrix(false)[0];
            progress_cost(name, bounds, &[1], progress)
        } else {
            progress_cost("N3 K1 c1 s1", bounds(3, 1, 1, 1), &[1, 2], progress)
        }
    })
    .unwrap_or_default();
    let spin = after(|| crate::commands::bench_spin::compare(quick, progress)).transpose()?;
    let report = BenchReport {
        checks: rows.iter().map(figures_of).collect(),
        runs,
        command_timeout: commands
            .iter()
            .map(|(command, s, code)| CommandOvershoot {
                command: command.to_string(),
                exit: *code,
                stopped_after_seconds: *s,
                timeout_seconds: timeout.as_secs_f64(),
            })
            .collect(),
        mutate: mutated.map(|(mutants, seconds)| MutateFigures {
            bounds: mutate_bounds.to_string(),
            design: design.clone(),
            mutants,
            seconds,
        }),
        stopped: cancelled().then(|| {
            "a signal (SIGINT or SIGTERM) stopped the bench: the figures above are whole, the measurements not shown were not made".to_string()
        }),
        progress: progress_costs,
        side_by_side: Vec::new(),
        spin,
        timeout: overshoot
            .iter()
            .map(|(threads, s)| SearchOvershoot {
                stopped_after_seconds: *s,
                threads: *threads,
                timeout_seconds: timeout.as_secs_f64(),
            })
            .collect(),
        validate: validated.map(|(lines, queues, seconds, conforming)| ValidateFigures {
            conforming,
            design,
            lines,
            queues,
            seconds,
        }),
        validate_link: validated_link.map(|(lines, streams, seconds, conforming)| {
            ValidateLinkFigures {
                conforming,
                design: "after-1649".into(),
                lines,
                seconds,
                streams,
            }
        }),
    };
    let exit = if report.stopped.is_some() { 3 } else { 0 };
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("a report is JSON")
        );
        return Ok(exit);
    }
    print!("{}", report.text());
    if quick || exit != 0 {
        return Ok(exit);
    }
    println!();
    // The simulator's side: runs per second and runs to the first violation
    // of each claim of the contract (also `slotcheck simulate --bench`).
    let (text, cut) = crate::commands::simulate_bench::bench(0, &Limits::default())?;
    print!("{text}");
    Ok(if cut.is_some() { 3 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::bench::SPLIT;
    use std::cell::Cell;
    use std::rc::Rc;

    /// The report finds the split row by its name: its bounds' and SPLIT.
    #[test]
    fn the_split_row_is_named_as_the_report_reads_it() {
        assert_eq!(SPLIT_ROW, format!("{SPLIT_BOUNDS}{SPLIT}"));
    }

    /// Two searches side by side explore the space one search alone does,
    /// each whole, and the row is told apart from a thread count (0).
    #[test]
    fn side_by_side_searches_are_each_the_whole_space() {
        let model = || {
            Stovepipe::new(
                design_named("owner-keyed").expect("a design"),
                bounds(2, 1, 1, 0),
            )
        };
        let pair = side_by_side("N2 K1 c1 s0", "owner-keyed", model());
        let alone = measure_one("N2 K1 c1 s0", "owner-keyed", model(), 1, false);
        assert_eq!(pair.threads, 0);
        assert!(alone.unique > 100, "{}", alone.unique);
        assert_eq!((pair.unique, pair.states), (alone.unique, alone.states));
        assert!(pair.seconds > 0.0 && pair.peak_mib.is_none());
    }

    fn row(name: &'static str, times: Vec<f64>, taken: Rc<Cell<usize>>) -> Row {
        let next = Cell::new(0);
        Box::new(move || {
            let i = next.get();
            next.set(i + 1);
            taken.set(taken.get() + 1);
            Measurement {
                phases: Phases::default(),
                bounds: name,
                design: name,
                threads: 1,
                unique: i,
                states: 0,
                states_per_second: 0.0,
                peak_mib: None,
                bytes_per_state: None,
                seconds: times[i],
                first_violation: None,
            }
        })
    }

    #[test]
    fn each_row_is_its_fastest_run_in_the_rows_order() {
        let taken = Rc::new(Cell::new(0));
        let rows = vec![
            row("a", vec![3.0, 1.0, 2.0], taken.clone()),
            row("b", vec![1.0, 5.0, 4.0], taken.clone()),
        ];
        let best = fastest(rows, 3);
        assert_eq!(taken.get(), 6, "every row measured three times");
        let got: Vec<(&str, f64, usize)> = best
            .iter()
            .map(|m| (m.bounds, m.seconds, m.unique))
            .collect();
        assert_eq!(got, vec![("a", 1.0, 1), ("b", 1.0, 0)]);
        let once = fastest(vec![row("c", vec![2.0], taken.clone())], 1);
        assert_eq!((once.len(), once[0].seconds), (1, 2.0));
    }
}
