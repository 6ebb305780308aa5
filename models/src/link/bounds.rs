//! The bounds of one check of the link model, and their check.

use super::{ACK_WAIT, FRESH_FOR, HEARTBEAT_EVERY, MAX_ASKS, MAX_BUILDERS, TICK_SECONDS};

fn seconds(ticks: u8) -> u16 {
    ticks as u16 * TICK_SECONDS
}

/// The bounds of one check. Times are in seconds, multiples of a tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub asks: u8,
    pub builders: u8,
    /// Each builder's clock is off the server's by at most this much, either
    /// way; every offset in whole ticks is checked.
    pub skew: u16,
    /// No tick after this much server time.
    pub horizon: u16,
    /// A build takes from one tick up to this long.
    pub longest_build: u16,
    /// How many times a builder may crash (it restarts idle at once).
    pub crashes: u8,
    /// How many heartbeats may be late, and by how much at most.
    pub late_heartbeats: u8,
    pub late_by: u16,
    /// Deliveries before the server stops handing a message out.
    pub max_deliver: u8,
    /// Fetches whose answer, delayed on the network, lands after the fetch
    /// gave up even with the fetch margin (the margin's designs only).
    pub slow_answers: u8,
    /// Finishes whose ack never reaches the server.
    pub lost_acks: u8,
    /// Reads at which a builder naks the ask instead (the source's one nak
    /// path, whose condition the model does not know).
    pub naks: u8,
    /// Redeliveries nats-server fails to make before 2.10.14 (a pull
    /// request expired as it took one), each winding its cursor of new
    /// messages back one (see [`Action::Rewind`](super::Action::Rewind)).
    pub rewinds: u8,
    /// The contract's timings, bounds like the rest (the source's values by
    /// default): the consumer's ack wait, the heartbeat (and in-progress)
    /// period, and how long a running key counts as fresh.
    pub ack_wait: u16,
    pub heartbeat_every: u16,
    pub fresh_for: u16,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            asks: 2,
            builders: 2,
            skew: 0,
            horizon: 90,
            longest_build: 90,
            crashes: 1,
            late_heartbeats: 0,
            late_by: 10,
            max_deliver: 3,
            slow_answers: 0,
            lost_acks: 0,
            naks: 0,
            rewinds: 0,
            ack_wait: seconds(ACK_WAIT),
            heartbeat_every: seconds(HEARTBEAT_EVERY),
            fresh_for: seconds(FRESH_FOR),
        }
    }
}

/// Seconds as ticks: the error names the bound.
fn ticks(name: &str, seconds: u16, max: u16) -> Result<u8, String> {
    if !seconds.is_multiple_of(TICK_SECONDS) {
        return Err(format!(
            "{name} must be a multiple of {TICK_SECONDS} s (one tick), not {seconds}"
        ));
    }
    if seconds > max {
        return Err(format!("{name} must be at most {max} s, not {seconds}"));
    }
    Ok((seconds / TICK_SECONDS) as u8)
}

impl Bounds {
    /// Checks the bounds a model can be built with; the error names the bound.
    pub fn validate(&self) -> Result<(), String> {
        if self.asks == 0 || self.asks > MAX_ASKS {
            return Err(format!(
                "asks must be from 1 to {MAX_ASKS}, not {}",
                self.asks
            ));
        }
        if self.builders == 0 || self.builders > MAX_BUILDERS {
            return Err(format!(
                "builders must be from 1 to {MAX_BUILDERS}, not {}",
                self.builders
            ));
        }
        ticks("skew", self.skew, 120)?;
        if ticks("horizon", self.horizon, 1200)? == 0 {
            return Err("horizon must be at least 5 s (one tick)".into());
        }
        if ticks("longest build", self.longest_build, 1200)? == 0 {
            return Err("longest build must be at least 5 s (one tick)".into());
        }
        if ticks("late by", self.late_by, 600)? == 0 && self.late_heartbeats > 0 {
            return Err("late by must be at least 5 s when heartbeats may be late".into());
        }
        for (name, value, max) in [
            ("ack wait", self.ack_wait, 600),
            ("heartbeat every", self.heartbeat_every, 300),
            ("fresh for", self.fresh_for, 600),
        ] {
            if ticks(name, value, max)? == 0 {
                return Err(format!("{name} must be at least 5 s (one tick)"));
            }
        }
        if self.max_deliver == 0 {
            return Err("max deliver must be at least 1".into());
        }
        Ok(())
    }

    pub fn skew_ticks(&self) -> u8 {
        (self.skew / TICK_SECONDS) as u8
    }
    pub fn horizon_ticks(&self) -> u8 {
        (self.horizon / TICK_SECONDS) as u8
    }
    pub fn longest_build_ticks(&self) -> u8 {
        (self.longest_build / TICK_SECONDS) as u8
    }
    pub fn late_by_ticks(&self) -> u8 {
        (self.late_by / TICK_SECONDS) as u8
    }
    pub fn ack_wait_ticks(&self) -> u8 {
        (self.ack_wait / TICK_SECONDS) as u8
    }
    pub fn heartbeat_ticks(&self) -> u8 {
        (self.heartbeat_every / TICK_SECONDS) as u8
    }
    pub fn fresh_for_ticks(&self) -> u8 {
        (self.fresh_for / TICK_SECONDS) as u8
    }

    /// Whether the timings are the source's: reports name them only where
    /// they are not, so that every output of the contract's reading stays.
    pub fn timings_are_the_sources(&self) -> bool {
        let d = Bounds::default();
        (self.ack_wait, self.heartbeat_every, self.fresh_for)
            == (d.ack_wait, d.heartbeat_every, d.fresh_for)
    }
}
