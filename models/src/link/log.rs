//! What a step says happened, and what a story keeps beside the state.

use super::{Ask, Link, State, KEY_LIFETIME, MAX_ASKS};

/// What a story knows that the state does not: when each running key was
/// last put. The state keeps only the key's age, clamped where every clock
/// reads it stale, so the time of the put is counted along the path.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ledger {
    /// The tick of each ask's last put, while its key exists and the path
    /// says when; `None` for no key or a put from before the path's start.
    pub put_at: [Option<u8>; MAX_ASKS as usize],
}

impl Ledger {
    /// What the path's first state tells: the puts whose age is not clamped.
    pub fn of(link: &Link, s: &State) -> Self {
        let mut ledger = Ledger::default();
        for (a, key) in s.keys.iter().enumerate() {
            if let Some(k) = key.filter(|k| k.age < link.stale_at()) {
                ledger.put_at[a] = Some(s.now - k.age);
            }
        }
        ledger
    }

    /// After a step into `next`: a key of age zero was put now (a tick ages
    /// every key), a key gone takes its put with it.
    pub fn record(&mut self, next: &State) {
        for (a, key) in next.keys.iter().enumerate() {
            match key {
                None => self.put_at[a] = None,
                Some(k) if k.age == 0 => self.put_at[a] = Some(next.now),
                Some(_) => {}
            }
        }
    }

    /// Whether `a`'s key, put at a known time, has outlived the bucket's TTL
    /// by `now`: the model keeps it as a stale key, which acts as no key.
    pub fn expired(&self, a: Ask, now: u8) -> bool {
        self.put_at[a as usize].is_some_and(|p| now - p >= KEY_LIFETIME)
    }
}

/// What a step says happened; collects lines only when a story is told, with
/// the ledger the story keeps, and the branches it took only when coverage
/// is measured.
pub(crate) struct Log {
    telling: Option<(Vec<String>, Ledger)>,
    marks: Option<Vec<Path>>,
}

impl Log {
    pub fn quiet() -> Self {
        Log {
            telling: None,
            marks: None,
        }
    }
    pub fn telling(ledger: Ledger) -> Self {
        Log {
            telling: Some((Vec::new(), ledger)),
            marks: None,
        }
    }
    /// A log that keeps the coverage marks of a step (`coverage.rs`).
    pub fn marking() -> Self {
        Log {
            telling: None,
            marks: Some(Vec::new()),
        }
    }
    /// Whether marks are kept: a mark that costs a search asks first.
    pub fn is_marking(&self) -> bool {
        self.marks.is_some()
    }
    pub fn mark(&mut self, path: Path) {
        if let Some(marks) = &mut self.marks {
            marks.push(path);
        }
    }
    pub fn marks(self) -> Vec<Path> {
        self.marks.unwrap_or_default()
    }
    pub fn say(&mut self, line: impl FnOnce() -> String) {
        if let Some((lines, _)) = &mut self.telling {
            lines.push(line());
        }
    }
    /// What the story knows of the keys; nothing while checking.
    pub fn ledger(&self) -> Option<&Ledger> {
        self.telling.as_ref().map(|(_, ledger)| ledger)
    }
    pub fn text(self) -> String {
        self.telling
            .map(|(lines, _)| lines.join("; "))
            .unwrap_or_default()
    }
}

/// A branch of a step, by where it sits in `steps.rs` and `time.rs`: what
/// a step marks for coverage (`coverage.rs` names them and lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    Fetch,
    FetchGivesUp,
    SlowAnswer,
    FetchEarlier,
    AnswerBusy,
    AnswerIdle,
    LandHandBack,
    LandBusy,
    LandIdle,
    ReadUnchecked,
    ReadNoKey,
    ReadDoneKey,
    ReadFreshKey,
    ReadOwnKey,
    ReadStaleKey,
    StartConflict,
    DropDeferred,
    DropAcked,
    StartOverKey,
    Start,
    StartHandsBack,
    AckRemoves,
    AckRemovesHeld,
    AckAlreadyGone,
    AckExhausted,
    AckIgnoredHeld,
    AckIgnoredAvailable,
    NakAgain,
    NakLast,
    NakNothing,
    NakFault,
    HeartbeatRestarts,
    HeartbeatRestartsHeld,
    HeartbeatIgnored,
    HeartbeatAvailable,
    HeartbeatAcked,
    HeartbeatExhausted,
    FinishResult,
    FinishAgain,
    FinishAckLost,
    FinishKeyDeleted,
    FinishKeyDone,
    TickRedelivers,
    TickLastDelivery,
    TickBesideHeartbeat,
    TickKeyExpires,
    QueueFirst,
    CrashBuild,
    CrashBuffer,
    CrashOnTheWay,
    CrashDecided,
    Delay,
}
