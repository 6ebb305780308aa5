//! The flags every command that checks shares: how far a run may go.

use crate::check::Limits;
use crate::models::whole;
use clap::Args;
use std::time::Duration;

/// How far a run may go. Every budget is refused at zero alike (it would
/// cut the run before its first state), by the parsers below, so that each
/// budget flag is one field and one parser.
#[derive(Args, Clone, Debug)]
pub struct LimitArgs {
    /// Checker threads; the verdicts, counts and traces do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = whole(1u16, Some(256)))]
    pub threads: u16,
    /// Stop after generating this many states (at least 1); what is not yet decided is inconclusive.
    #[arg(long, value_name = "N", value_parser = budget_count)]
    pub max_states: Option<usize>,
    /// Stop this many seconds (more than 0) after the command starts, whatever it runs (every
    /// design of a compare, every scenario); what is not yet decided is inconclusive.
    #[arg(long, value_name = "SECONDS", value_parser = budget_seconds)]
    pub timeout: Option<f64>,
    /// Stop before the process holds more memory than this (512M, 8G...);
    /// what is not yet decided is inconclusive. Default: four fifths of the
    /// memory available when the run starts (MemAvailable), or of the
    /// memory cgroup's limit (a container's: v2 memory.max, v1
    /// memory.limit_in_bytes) when that is less.
    #[arg(long, value_name = "SIZE", value_parser = crate::check::memory::parse_size)]
    pub max_memory: Option<u64>,
    /// No progress line on stderr (it is shown only on a terminal anyway).
    #[arg(long, short)]
    pub quiet: bool,
}

/// A budget counted in units (states...): a whole number, at least 1.
fn budget_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("a budget of 0 would stop before the first state: give at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number, 1 or more".into()),
    }
}

/// A budget in seconds: a number above 0 (fractions allowed).
pub fn budget_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err("must be a positive number of seconds".into()),
    }
}

impl LimitArgs {
    pub fn limits(&self) -> Result<Limits, String> {
        Ok(Limits {
            threads: self.threads as usize,
            max_states: self.max_states,
            progress: crate::check::progress::wanted(self.quiet),
            ..budget(self.timeout, self.max_memory)
        })
    }
}

/// The deadline `--timeout` sets, once, so that every run of the command
/// shares it (a wall-clock promise), and the memory budget, given or by
/// default; nothing else limited.
pub fn budget(timeout: Option<f64>, max_memory: Option<u64>) -> Limits {
    use crate::check::memory::{most_there_is, show_size};
    if let (Some(given), Some(most)) = (max_memory, most_there_is()) {
        if given > most {
            eprintln!(
                "warning: --max-memory {} is more than this machine (or its memory cgroup) has, {}: the system may kill the run before this budget stops it",
                show_size(given),
                show_size(most)
            );
        }
    }
    Limits {
        deadline: timeout.map(|t| std::time::Instant::now() + Duration::from_secs_f64(t)),
        max_memory: max_memory.or_else(crate::check::memory::default_budget),
        ..Limits::default()
    }
}
