//! `slotcheck live --on ENGINE --design D --seed S`: a design run live on a
//! real database (crate `slotcheck-sql`): worker threads with their own
//! connections, many queues at once, seeded crashes and stalls, and the
//! invariants judged on the real rows at the end. `--table` runs every
//! design; `--isolation-table` the recommended design's SQL variants.
//!
//! The model a run is of is chosen in [`run`], in one place: stovepipe's
//! designs here; another model's live run is another arm there. The flags
//! are `live_args.rs`'s, which the stovepipe runs read whole.

use super::live_args::LiveArgs;

/// Runs the command: 0 clean, 1 a violation found, 3 a run cut short.
pub fn run(mut args: LiveArgs) -> Result<u8, String> {
    args.deadline = args
        .timeout
        .map(|t| std::time::Instant::now() + std::time::Duration::from_secs_f64(t));
    match args.model.as_str() {
        "stovepipe" => stovepipe(args),
        "link" => super::live_link::run_link(
            &args.on,
            &args.design,
            args.seed,
            args.runs,
            (args.timeout, args.deadline),
            (args.crash_percent, args.stall_percent),
            (args.crashes, args.stalls),
            args.log.as_deref(),
            &args.link,
        ),
        other => Err(format!(
            "--model: `{other}` has no live run (stovepipe, link)"
        )),
    }
}

#[cfg(not(feature = "real"))]
fn stovepipe(args: LiveArgs) -> Result<u8, String> {
    Err(format!(
        "live --on {}: this slotcheck was built without the `real` feature",
        args.on
    ))
}

#[cfg(feature = "real")]
fn stovepipe(args: LiveArgs) -> Result<u8, String> {
    super::live_stovepipe::run(args)
}
