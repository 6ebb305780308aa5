//! `slotcheck live --model link --on nats --design D --seed S`: builders of
//! one design running freely on a private nats-server under seeded faults,
//! bounded in time, the properties judged from the server's evidence (crate
//! `slotcheck-nats`, feature `real`; docs/real-jetstream.md).
//!
//! `LinkLiveArgs` holds the link's own flags; `live` shares `--on`,
//! `--model`, `--design`, `--seed`, `--runs`, `--timeout`, `--log`,
//! `--crash-percent` and `--stall-percent` (a stall is a late heartbeat)
//! with the stovepipe live run.

use clap::Args;

/// The link's own flags.
#[derive(Args, Clone, Debug)]
pub struct LinkLiveArgs {
    /// Link: asks published at the start.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub asks: usize,
    /// Link: builders, each with its own connection (through a proxy).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub builders: usize,
    /// Link: real ms per model tick (5 s of the source's time).
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub ms_per_tick: u64,
    /// Link: a late heartbeat is late by up to this (seconds of source time).
    #[arg(long, value_name = "SECONDS", default_value_t = 50)]
    pub late_by: u64,
    /// Link: the chance in percent, at each finish, that the ack is lost.
    #[arg(long, value_name = "PERCENT", default_value_t = 4)]
    pub lost_ack_percent: u32,
    /// Link: each clock off the server's by up to this (seconds), either way.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub skew: i64,
    /// Link: one-way delay (ms) on b1's link to the server.
    #[arg(long, value_name = "MS")]
    pub delay_ms: Option<u64>,
    /// Link: longest build (seconds of source time, a multiple of 5).
    #[arg(long, value_name = "SECONDS", default_value_t = 75)]
    pub longest_build: u64,
    /// Link: which builders run: `rust` (the reference builder on async-nats,
    /// stepped by slotcheck; the default) or `go` (the Go builder on nats.go,
    /// free: a service per builder, faulted from outside its process).
    #[arg(long, value_name = "rust|go")]
    pub builder: Option<String>,
}

#[cfg(feature = "real")]
#[allow(clippy::too_many_arguments)]
pub fn run_link(
    on: &str,
    design: &str,
    seed: u64,
    runs: u64,
    (timeout, deadline): (Option<f64>, Option<std::time::Instant>),
    (crash_percent, stall_percent): (u32, u32),
    (crashes, stalls): (u8, u8),
    log: Option<&std::path::Path>,
    link: &LinkLiveArgs,
) -> Result<u8, String> {
    use slotcheck_nats::design::{Design, Timing};
    use slotcheck_nats::live::{live_blocking, LiveOptions};
    if on != "nats" {
        return Err(format!(
            "--on {on}: the link model runs live on `nats` only"
        ));
    }
    let design = Design::parse(design)
        .ok_or(format!("--design {design}: not one of {}", Design::names()))?;
    if timeout.is_some_and(|t| !(1.0..=600.0).contains(&t)) {
        return Err("--timeout: from 1 to 600 seconds".into());
    }
    if link.ms_per_tick < 50 || link.longest_build < 5 || link.late_by < 5 {
        return Err("--ms-per-tick at least 50; --longest-build and --late-by at least 5".into());
    }
    if link.asks == 0 || link.builders == 0 || link.asks > 100 || link.builders > 20 {
        return Err("--asks from 1 to 100, --builders from 1 to 20".into());
    }
    let go = match link.builder.as_deref() {
        None | Some("rust") => false,
        Some("go") => true,
        Some(other) => return Err(format!("--builder {other}: not one of rust, go")),
    };
    // Every output is checked before the run, not minutes after it.
    if let Some(path) = log {
        use crate::report::itf::{check_outputs, Output};
        check_outputs(&[Output::file("--log", path)], &[])?;
    }
    let percent = |p: u32| f64::from(p.min(100)) / 100.0;
    let options = LiveOptions {
        asks: link.asks,
        builders: link.builders,
        timing: Timing::scaled(link.ms_per_tick),
        // A run's length: the command's whole --timeout at most (its
        // deadline cuts it sooner), else half a minute.
        limit: std::time::Duration::from_secs_f64(timeout.unwrap_or(30.0)),
        crash_rate: percent(crash_percent),
        late_rate: percent(stall_percent),
        late_by_ticks: link.late_by / 5,
        lost_ack_rate: percent(link.lost_ack_percent),
        longest_build_ticks: link.longest_build / 5,
        skew_s: link.skew,
        delay: link.delay_ms.map(std::time::Duration::from_millis),
        stop: slotcheck_nats::server::Stop {
            deadline,
            cancelled: crate::check::budget::cancelled,
        },
        ..LiveOptions::new(design, seed)
    };
    let outcomes = if go {
        let bounds = slotcheck_nats::golive::FaultBounds {
            crashes: crashes.into(),
            stalls: stalls.into(),
        };
        slotcheck_nats::golive::free_blocking(&options, runs, bounds)
    } else {
        live_blocking(&options, runs)
    }
    .map_err(|e| e.to_string())?;
    let validating = crate::validate::Options {
        budget: crate::check::Limits {
            deadline,
            ..crate::check::Limits::default()
        },
        ..crate::validate::Options::default()
    };
    let (mut departed, mut undecided) = (false, false);
    for outcome in &outcomes {
        if go {
            println!("the Go builder on nats.go, free: one process per builder, faults from outside (SIGKILL, SIGSTOP/SIGCONT, the proxy)");
        }
        print!("{}", outcome.text());
        // The Go builder runs on Debian's nats.go 1.22.1, whose pull
        // request expires at the wait less 10 ms (docs/link-reality.md), against
        // nats-server 2.9.10, which hands out redeliveries in the order
        // their ack waits ran out (`redelivery-queue`).
        let model = slotcheck_models::link::Options {
            expiry_less_10ms: go,
            redelivery_queue: go,
            ..Default::default()
        };
        let verdict = validate_run_under(design.name(), model, &outcome.log, &validating)?;
        departed |= verdict.exit_code() == crate::validate::EXIT_DEPARTS;
        undecided |= verdict.exit_code() == 3;
        print!(
            "{}",
            validated_words(design.name(), &verdict, outcome.violated())
        );
    }
    if let (Some(path), Some(last)) = (log, outcomes.last()) {
        std::fs::write(path, &last.log)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if outcomes.iter().any(|o| o.violated()) {
        return Ok(1);
    }
    if departed {
        return Ok(crate::validate::EXIT_DEPARTS);
    }
    if crate::check::budget::cancelled() {
        println!("a signal (SIGINT or SIGTERM) stopped the run: inconclusive");
        return Ok(3);
    }
    // Runs asked for and not made (each ends the runs only with a
    // violation): the time budget ran out between two, or before the
    // first (the server's start, the Go builder's build).
    if (outcomes.len() as u64) < runs.max(1) {
        println!(
            "the time budget (--timeout) ran out after {} of {} run(s): inconclusive",
            outcomes.len(),
            runs.max(1)
        );
        return Ok(3);
    }
    // The server's evidence holds, but the model could not decide the log:
    // not a clean run.
    Ok(if undecided { 3 } else { 0 })
}

/// A run's log (what the server returned to each builder, never what the
/// model predicted) validated against the design it ran, by the link search
/// of `slotcheck validate`, under model options: the Go builder's runs are
/// judged under its client's expiry rule (Debian's nats.go 1.22.1,
/// `expiry-less-10ms`) and the server's redelivery queue.
pub fn validate_run_under(
    design: &str,
    model: slotcheck_models::link::Options,
    log: &str,
    options: &crate::validate::Options,
) -> Result<crate::validate::Verdict, String> {
    use slotcheck_models::events;
    // `live` took the name already, a composition included.
    let design = slotcheck_models::link::design_named(design)
        .or_else(|| slotcheck_models::link::compose(design).ok())
        .expect("a link design");
    let mut parsed = events::parse("live", log).map_err(|e| format!("the live log: {e}"))?;
    let lines = parsed.link_lines();
    super::validate::link_verdict_under(design, model, &parsed.header, lines, options)
        .map_err(|e| format!("the live log, line {e}"))
}

/// The verdict in words, and whether the model and the server's evidence
/// agree on a violation.
pub fn validated_words(design: &str, verdict: &crate::validate::Verdict, violated: bool) -> String {
    let mut out = format!(
        "the run's log, validated against {design}: {}\n",
        verdict.word()
    );
    let found = !verdict.violated_properties().is_empty();
    match verdict {
        crate::validate::Verdict::Conforms { .. } if found != violated => out.push_str(&format!(
            "  (the server's evidence says {}; the model's explanation of the log says {})\n",
            if violated {
                "a property is violated"
            } else {
                "every property holds"
            },
            if found { "one is" } else { "none is" }
        )),
        crate::validate::Verdict::Conforms { .. } => {}
        _ => out.push_str(&indent(&crate::validate::text("", verdict))),
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

#[cfg(not(feature = "real"))]
#[allow(clippy::too_many_arguments)]
pub fn run_link(
    on: &str,
    _design: &str,
    _seed: u64,
    _runs: u64,
    _timeout: (Option<f64>, Option<std::time::Instant>),
    _rates: (u32, u32),
    _bounds: (u8, u8),
    _log: Option<&std::path::Path>,
    _link: &LinkLiveArgs,
) -> Result<u8, String> {
    Err(format!(
        "--on {on}: this slotcheck was built without the `real` feature (cargo build --features real)"
    ))
}
