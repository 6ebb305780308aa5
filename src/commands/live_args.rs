//! `slotcheck live`'s flags: read by the command, which picks the model
//! (`live.rs`), and by the stovepipe runs (`live_stovepipe.rs`), so they
//! sit apart from both. The link's own flags are `live_link.rs`'s, folded
//! in.

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LiveArgs {
    /// The system. Stovepipe: `sqlite` (embedded, a file in a temporary folder), `mariadb` or
    /// `postgres` (a private server started for the run, on a Unix socket, no networking). Link: `nats`
    /// (a private nats-server with JetStream on a loopback port), the default with --model link.
    #[arg(
        long,
        value_name = "SYSTEM",
        default_value = "sqlite",
        default_value_if("model", "link", "nats")
    )]
    pub on: String,
    /// The model whose designs run live: stovepipe (the SQL-backed admission queue) or link
    /// (the builders on JetStream).
    #[arg(long, value_name = "MODEL", default_value = "stovepipe")]
    pub model: String,
    /// The design to run (default: the README's recommendation; link: after-1649).
    #[arg(
        long,
        value_name = "DESIGN",
        default_value = "owner-keyed-atomic-admit-dlq-cancels",
        default_value_if("model", "link", "after-1649")
    )]
    pub design: String,
    /// Seeds the faults, arrivals and build times (the interleavings are the database's).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs, seeds S, S+1, ...: a violation found stops at that run.
    #[arg(long, default_value_t = 1)]
    pub runs: u64,
    /// Independent queues per run, each a behaviour of the model on its bounds.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub queues: usize,
    /// Requests per queue (the model's N; at most 3).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub requests: u8,
    /// Crashes and stalls each queue may suffer, at most.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub crashes: u8,
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub stalls: u8,
    /// The chance in percent, before each step, of a crash and of a stall.
    #[arg(long, value_name = "PERCENT", default_value_t = 4)]
    pub crash_percent: u32,
    #[arg(long, value_name = "PERCENT", default_value_t = 4)]
    pub stall_percent: u32,
    /// Worker threads, each with its own connection.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub workers: usize,
    /// The command's time, in seconds from its start: the private server's start, every run and
    /// the validation of every log. Stovepipe: a run it cuts, or runs it leaves unmade, are
    /// inconclusive (exit 3); link: a run it cuts ends there, its builds where they are, and is
    /// judged on what the server did. Without it, each run stops after 30 s.
    #[arg(long, value_name = "SECONDS", value_parser = super::args::budget_seconds)]
    pub timeout: Option<f64>,
    /// When `--timeout` runs out (set once, at the command's start).
    #[arg(skip)]
    pub deadline: Option<std::time::Instant>,
    /// How the worker reads R's row, the queue row and the head: `joined` (one statement),
    /// `transaction` (three in one transaction), `separate` (three statements).
    #[arg(long, value_name = "HOW", default_value = "joined")]
    pub read: String,
    /// How the admit transaction reads the rows it writes: `for-update` or `plain`.
    #[arg(long, value_name = "HOW", default_value = "for-update")]
    pub tx_read: String,
    /// Stovepipe: when the engine refuses a write (a serialization failure, a deadlock):
    /// `retried` (the step again, only the attempt that went through logged) or `logged` (the
    /// refused write logged `aborted`, and the worker reads again).
    #[arg(long, value_name = "HOW", default_value = "retried")]
    pub aborts: String,
    /// MariaDB: `repeatable-read` (the default) or `read-committed`; PostgreSQL: the same or
    /// `serializable`; SQLite: `immediate` (BEGIN IMMEDIATE) or `deferred` (BEGIN).
    #[arg(long, value_name = "LEVEL")]
    pub isolation: Option<String>,
    /// Run until a queue breaks this invariant (no-wedge, builds-within-limit, count-not-low,
    /// count-not-high), at most --runs runs: a violation of another one does not stop the runs.
    #[arg(long, value_name = "PROPERTY")]
    pub until: Option<String>,
    /// Write the event log (NDJSON, `slotcheck validate`'s format) here: stovepipe, every run's
    /// queues in one file (one header, each run's queues with IDs of their own); link, the last
    /// run's. Checked before anything runs.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Stovepipe: no turnstile per queue; each worker thread logs as a
    /// service does, after its statements, its lines naming their process,
    /// and validate infers the order across threads.
    #[arg(long)]
    pub no_turnstile: bool,
    /// Who chooses the next step: `random` (the default: the threads and the engine, faults at
    /// seeded chances), `pct` (a director per queue: seeded priorities and change points, faults
    /// placed, a worker held inside its admit transaction) or `guided` (a director follows the
    /// story of --aim's finding, step by step, then goes on as random). Default with --aim: guided.
    #[arg(long, value_name = "SCHEDULER")]
    pub schedule: Option<String>,
    /// Steer towards a finding: its scenario (scenarios/FINDING.toml, or a path) gives the
    /// bounds, the reading and the story that --schedule guided follows; --until defaults to
    /// the property the story violates.
    #[arg(long, value_name = "FINDING")]
    pub aim: Option<String>,
    /// Run every design (each --runs times) and print one table.
    #[arg(long)]
    pub table: bool,
    /// Runs to the first violation of each window the model finds, under each scheduler
    /// (at most --runs runs a cell, default 20 here), and print one table.
    #[arg(long)]
    pub steer_table: bool,
    /// Run the recommended design under each SQL variant and print which keep every invariant.
    #[arg(long)]
    pub isolation_table: bool,
    /// Run nothing: print each design's SQL, as the handlers run it (Markdown).
    #[arg(long)]
    pub sql: bool,
    #[command(flatten)]
    pub link: super::live_link::LinkLiveArgs,
}
