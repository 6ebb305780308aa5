//! `slotcheck replay --on nats TRACE`: a link trace's story run by the
//! reference builder on a private nats-server (the `slotcheck-nats` crate,
//! behind the `real` feature), and the trace's property judged from the
//! server's evidence. docs/real-jetstream.md explains it.

use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Clone, Debug, Default)]
pub struct NatsReplayArgs {
    /// With --on nats: which builder runs the story: `rust` (the reference
    /// builder, on async-nats; the default) or `go` (the Go builder on
    /// Debian's nats.go, built with `go build` for the run).
    #[arg(long, value_name = "rust|go")]
    pub builder: Option<String>,
    /// With --on nats: the builder's design, if not the trace's (e.g. a
    /// check-only story run by after-1649's builder under network delay).
    #[arg(long = "as-design", value_name = "DESIGN")]
    pub as_design: Option<String>,
    /// With --on nats: real milliseconds per model tick (5 s of the source's
    /// time); ack wait, heartbeat, freshness and TTL scale with it, fetch
    /// waits do not. Default 250, or a dozen late delays when more.
    #[arg(long, value_name = "MS")]
    pub ms_per_tick: Option<u64>,
    /// With --on nats: the one-way delay (ms) the proxy puts on a builder's
    /// link for a `fetch-late` step (default: three quarters of the fetch
    /// wait).
    #[arg(long, value_name = "MS")]
    pub late_delay_ms: Option<u64>,
    /// With --on nats: every builder the trace puts off the server's clock
    /// is put off by this many seconds instead (same direction).
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub skew: Option<i64>,
    /// With --on nats: write the run's event log (NDJSON, `slotcheck
    /// validate`'s format) here.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Exit 1 reproduced, 0 not reproduced, 3 the server did otherwise than
/// the story, or a deadline or signal cut it (inconclusive), 2 bad input,
/// no server, or the server gone during the run.
#[cfg(feature = "real")]
pub fn run(
    file: &Path,
    on: &str,
    args: &NatsReplayArgs,
    deadline: Option<std::time::Instant>,
) -> Result<u8, String> {
    use slotcheck_nats::design::Design;
    use slotcheck_nats::machine::BuilderKind;
    use slotcheck_nats::replay::{replay_blocking, Options, Verdict};
    use slotcheck_nats::script::Script;
    if on != "nats" {
        return Err(format!("--on {on}: this build replays on `nats` only"));
    }
    if args.ms_per_tick.is_some_and(|ms| ms < 50) {
        return Err("--ms-per-tick: at least 50 (a tick must outlast a fetch's wait)".into());
    }
    // Before anything runs: the log is never the trace (any spelling).
    if let Some(path) = &args.log {
        use crate::report::itf::{check_outputs, Output};
        check_outputs(&[Output::file("--log", path)], &[file.to_path_buf()])?;
    }
    let text = crate::report::read_small(file, crate::report::SMALL_INPUT)?;
    let document: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
    let script = Script::of_itf(&document).map_err(|e| format!("{}: {e}", file.display()))?;
    let design = match &args.as_design {
        Some(name) => Some(Design::parse(name).ok_or(format!(
            "--as-design {name}: not one of {}",
            Design::names()
        ))?),
        None => None,
    };
    let builder = match args.builder.as_deref() {
        None => BuilderKind::Rust,
        Some(name) => {
            BuilderKind::parse(name).ok_or(format!("--builder {name}: not one of rust, go"))?
        }
    };
    let options = Options {
        builder,
        design,
        ms_per_tick: args.ms_per_tick,
        late_delay: args.late_delay_ms.map(std::time::Duration::from_millis),
        skew_s: args.skew,
        stop: slotcheck_nats::server::Stop {
            deadline,
            cancelled: crate::check::budget::cancelled,
        },
    };
    let outcome = replay_blocking(&script, &options).map_err(|e| e.to_string())?;
    print!("{}", outcome.text());
    if let Some(path) = &args.log {
        std::fs::write(path, &outcome.log)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(match outcome.verdict {
        Verdict::Reproduced => 1,
        Verdict::NotReproduced => 0,
        Verdict::Diverged(_) | Verdict::Cut(_) => 3,
    })
}

impl NatsReplayArgs {
    /// The flags given, which only `--on nats` takes: elsewhere they are
    /// refused rather than ignored.
    pub fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        if self.as_design.is_some() {
            given.push("--as-design");
        }
        if self.ms_per_tick.is_some() {
            given.push("--ms-per-tick");
        }
        if self.late_delay_ms.is_some() {
            given.push("--late-delay-ms");
        }
        if self.skew.is_some() {
            given.push("--skew");
        }
        if self.log.is_some() {
            given.push("--log");
        }
        given
    }
}

#[cfg(not(feature = "real"))]
pub fn run(
    _file: &Path,
    on: &str,
    _args: &NatsReplayArgs,
    _deadline: Option<std::time::Instant>,
) -> Result<u8, String> {
    Err(format!(
        "--on {on}: this slotcheck was built without the `real` feature (cargo build --features real)"
    ))
}
