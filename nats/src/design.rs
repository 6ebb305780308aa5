//! The four designs as the source's two switches, and its timings: fetch
//! waits in real milliseconds, everything else in source time divided by one
//! scale (a model tick is 5 s of source time).

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Design {
    Before1649,
    After1649,
    CheckOnly,
    MarginOnly,
}

impl Design {
    pub const ALL: [Design; 4] = [
        Design::Before1649,
        Design::After1649,
        Design::CheckOnly,
        Design::MarginOnly,
    ];

    pub fn parse(name: &str) -> Option<Design> {
        Design::ALL.into_iter().find(|d| d.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Design::Before1649 => "before-1649",
            Design::After1649 => "after-1649",
            Design::CheckOnly => "check-only",
            Design::MarginOnly => "margin-only",
        }
    }

    /// `runningElsewhere`/`duplicateOf` before a run.
    pub fn duplicate_check(self) -> bool {
        matches!(self, Design::After1649 | Design::CheckOnly)
    }

    /// The source's `checkTakeWait`: 100 ms with the fix, 30 ms before it
    /// (whose pull request, at `fetchExpiryOf`, ends 3 ms before the fetch:
    /// under `minFetchMargin`).
    pub fn take_wait(self) -> Duration {
        match self {
            Design::After1649 | Design::MarginOnly => Duration::from_millis(100),
            Design::Before1649 | Design::CheckOnly => Duration::from_millis(30),
        }
    }
}

/// The source's `takeIdleWait`: a fetch's wait when every queue is empty.
pub const TAKE_IDLE_WAIT: Duration = Duration::from_secs(1);

/// The expiry nats.go gives the pull request of a fetch that waits this
/// long: the wait less a tenth of it, or less five seconds.
pub fn fetch_expiry_of(wait: Duration) -> Duration {
    wait - (wait / 10).min(Duration::from_secs(5))
}

/// Source time scaled down: `ms_per_tick` real ms for a model tick (5 s of
/// the source's time). Fetch waits and margins are not scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    pub ms_per_tick: u64,
    /// The consumer's ack wait in ticks: the source's minute (12) unless a
    /// story's bounds say otherwise (`--ack-wait`).
    pub ack_wait_ticks: u64,
}

impl Timing {
    /// The source's timers at `ms_per_tick` real ms a tick.
    pub const fn scaled(ms_per_tick: u64) -> Timing {
        Timing {
            ms_per_tick,
            ack_wait_ticks: 12,
        }
    }
    fn ticks(self, n: u64) -> Duration {
        Duration::from_millis(n * self.ms_per_tick)
    }
    pub fn tick(self) -> Duration {
        self.ticks(1)
    }
    /// A redelivery comes an ack wait (the source's minute) after the last
    /// heartbeat.
    pub fn ack_wait(self) -> Duration {
        self.ticks(self.ack_wait_ticks)
    }
    /// Heartbeats and in-progress every ten seconds.
    pub fn heartbeat(self) -> Duration {
        self.ticks(2)
    }
    /// `runningFreshFor`, 25 s.
    pub fn fresh_for(self) -> Duration {
        self.ticks(5)
    }
    /// The running bucket's TTL, two minutes.
    pub fn key_ttl(self) -> Duration {
        self.ticks(24)
    }
    /// A clock offset of `seconds` of source time, in real ms.
    pub fn skew_ms(self, seconds: i64) -> i64 {
        seconds * self.ms_per_tick as i64 / 5
    }
}

impl Default for Timing {
    /// 250 ms a tick: 5 s of source time in a quarter second, so the ack
    /// wait is 3 s and a story of a minute and a half takes five seconds.
    fn default() -> Self {
        Timing::scaled(250)
    }
}
