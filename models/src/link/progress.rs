//! The link model's progress properties and the weak fairness they need
//! (`docs/link.md`): what each state still owes, and which steps a fair run
//! must take.

use super::{Action, Ask, Link, State, Status};

/// Every ask is eventually built and acknowledged, or dead-lettered.
pub const ASKS_COMPLETE: &str = "asks-complete";
/// No builder waits for ever: one holding work (a buffered, landing,
/// decided or running ask) eventually holds nothing again.
pub const BUILDERS_FREE: &str = "builders-free";

impl Link {
    /// The asks not yet built and acked, nor dead-lettered, one bit each.
    pub fn incomplete(&self, s: &State) -> u64 {
        (0..s.messages.len())
            .filter(|&a| {
                let status = s.messages[a].status;
                !(s.results[a] && status == Status::Acked) && status != Status::Exhausted
            })
            .fold(0, |acc, a| acc | 1 << a)
    }

    /// The builders holding work, one bit each.
    pub fn busy(&self, s: &State) -> u64 {
        s.builders
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.holds_nothing())
            .fold(0, |acc, (b, _)| acc | 1 << b)
    }

    /// Weak fairness per builder and for the clock; the faults (a crash, a
    /// late heartbeat, a slow answer, a lost ack, a nak) are owed by none.
    pub fn fairness_of(&self, action: &Action) -> Option<u64> {
        match *action {
            Action::Crash(_)
            | Action::Delay(_)
            | Action::SlowAnswer(_)
            | Action::FinishAckLost(_)
            | Action::Nak(_) => None,
            Action::Tick => Some(1 << 32),
            other => other.builder().map(u64::from),
        }
    }

    /// At the horizon time stops: what then waits for time is the bound's
    /// doing, not the design's.
    pub fn at_horizon(&self, s: &State) -> bool {
        s.now >= self.bounds.horizon_ticks()
    }

    /// The words a progress violation says of `s`.
    pub fn pending_words(&self, property: &str, s: &State) -> String {
        let names = |mask: u64, name: fn(u8) -> String| {
            (0..64u8)
                .filter(|&i| mask & (1 << i) != 0)
                .map(name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match property {
            ASKS_COMPLETE => format!(
                "asks-complete violated: {} neither built and acked nor dead-lettered, for ever in a fair run",
                names(self.incomplete(s), |a: Ask| super::ask_name(a))
            ),
            _ => format!(
                "builders-free violated: {} holds work for ever in a fair run",
                names(self.busy(s), super::builder_name)
            ),
        }
    }
}
