//! The budgets outside the search: what a phase that is not a breadth-first
//! search (listing a design's mutants, the simulator's walks) looks at to
//! stop on time, and the cancellation a first SIGINT or SIGTERM asks for.
//! The search looks at the same deadline, memory and cancellation itself.

use super::memory::resident_bytes;
use super::{Cut, Limits};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set once a signal asked the run to stop: every budget then runs out, so
/// a cancelled run ends as a reached deadline does, its reports written.
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Asks every run of the process to stop, and says whether it was asked
/// before (async-signal-safe: one swap, so that of two signals taken at
/// once by two threads exactly one is the first).
pub fn cancel() -> bool {
    CANCELLED.swap(true, Ordering::SeqCst)
}

pub fn cancelled() -> bool {
    CANCELLED.load(Ordering::Relaxed)
}

/// How often a phase looks at the process's memory (reading /proc).
const MEMORY_EVERY: Duration = Duration::from_millis(20);

/// One phase's budget: states counted by the caller, the command's
/// deadline, the process's memory and a signal, whichever runs out first.
pub struct Watch {
    max_states: Option<usize>,
    deadline: Option<Instant>,
    max_memory: Option<u64>,
    memory_looked_at: Option<Instant>,
    /// The last look found the process within a tenth of the budget.
    near: bool,
}

impl Watch {
    pub fn new(limits: &Limits, started: Instant) -> Watch {
        Watch {
            max_states: limits.max_states,
            deadline: match (limits.timeout.map(|t| started + t), limits.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            max_memory: limits.max_memory,
            memory_looked_at: None,
            near: false,
        }
    }

    /// What has run out, with `states` counted so far; `None`: go on. Cheap
    /// enough to ask every few hundred states.
    pub fn over(&mut self, states: usize) -> Option<Cut> {
        if cancelled() {
            return Some(Cut::Signal);
        }
        if self.max_states.is_some_and(|max| states > max) {
            return Some(Cut::MaxStates);
        }
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) {
            return Some(Cut::Timeout);
        }
        // Near the budget, every time: a phase can take some hundreds of
        // megabytes a second, past the budget by a tenth of it in 20 ms.
        if self.near
            || self
                .memory_looked_at
                .is_none_or(|at| now.duration_since(at) >= MEMORY_EVERY)
        {
            self.memory_looked_at = Some(now);
            if let (Some(max), Some(held)) = (self.max_memory, resident_bytes()) {
                if held > max {
                    return Some(Cut::MaxMemory);
                }
                self.near = held > max / 10 * 9;
            }
        }
        None
    }
}

/// Runs a phase that asks `go_on(states)` now and then (a listing of
/// mutants) under `limits`; `Err` names the budget that stopped it.
pub fn within<T>(
    limits: &Limits,
    phase: impl FnOnce(&mut dyn FnMut(usize) -> bool) -> Option<T>,
) -> Result<T, Cut> {
    let mut watch = Watch::new(limits, Instant::now());
    let mut cut = None;
    let done = phase(&mut |states| {
        cut = watch.over(states);
        cut.is_none()
    });
    done.ok_or_else(|| cut.expect("a phase stops only when told to"))
}
