//! What a builder logs for each step of the link model, read off the step
//! and the states before and after it (not from the story's words): a step
//! logs a short sequence of lines (a start logs its put and the build's
//! start), which `validate` matches one line at a time.

use super::super::{Action, Ask, Bid, Link, State, KEY_LIFETIME};

/// One line a builder logs, in the model's names (asks and builders by
/// index), as the log's [`Event`](crate::events::link::Event) says it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Observation {
    /// A fetch that gave up empty-handed.
    #[default]
    FetchEmpty,
    Fetch(Ask),
    Take(Ask),
    KvGet {
        ask: Ask,
        /// The key's builder and its age by the reader's clock, in ticks;
        /// `None`: no key (or one past its TTL).
        found: Option<(Bid, i16)>,
        drop: bool,
    },
    Put(Ask),
    BuildStart(Ask),
    Heartbeat(Ask),
    BuildFinish(Ask),
    Ack(Ask),
    Nak(Ask),
    KvDelete(Ask),
}

/// Whether a key put at `put_at` has outlived the bucket's TTL at `now`.
pub fn expired(put_at: Option<u8>, now: u8) -> bool {
    put_at.is_some_and(|p| now - p >= KEY_LIFETIME)
}

/// What `action`, taken in `s` and leading to `next`, logs, in order.
/// `put_at` is when each ask's key was last put (the state keeps only a
/// clamped age). Empty: a step no system logs (time, a crash, a late
/// heartbeat, a late answer landing in the subscription).
pub fn observe(
    link: &Link,
    s: &State,
    action: Action,
    next: &State,
    put_at: &[Option<u8>],
) -> Vec<Observation> {
    use Observation as O;
    let buffered = |b: Bid| s.builders[b as usize].buffer.first().copied();
    match action {
        Action::Tick | Action::Queue(_) | Action::Crash(_) | Action::Delay(_) => Vec::new(),
        Action::Fetch(b) => next.builders[b as usize]
            .buffer
            .last()
            .map(|&a| vec![O::Fetch(a)])
            .unwrap_or_default(),
        Action::FetchLate(_) | Action::SlowAnswer(_) => vec![O::FetchEmpty],
        // The fetch returns the earlier answer as any fetch returns a
        // message; the server's answer to its open request is silent.
        Action::FetchEarlier(b) => next.builders[b as usize]
            .buffer
            .last()
            .map(|&a| vec![O::Fetch(a)])
            .unwrap_or_default(),
        Action::Answer(_) => Vec::new(),
        Action::Land(b) => {
            // Handed back at once (hand-back): its nak is logged.
            let landed = s.builders[b as usize].on_the_way;
            match landed {
                Some(a) if !next.builders[b as usize].buffer.contains(&a) => vec![O::Nak(a)],
                _ => Vec::new(),
            }
        }
        Action::Take(b) => {
            let Some(a) = buffered(b) else {
                return Vec::new();
            };
            let mut lines = vec![O::Take(a)];
            if link.design.duplicate_check {
                let drop = next.builders[b as usize].run.is_none();
                lines.push(kv_get(link, s, b, a, drop, put_at));
            }
            lines.extend(acted(link, s, b, a, next));
            lines
        }
        Action::Read(b) => {
            let Some(a) = buffered(b) else {
                return Vec::new();
            };
            let drop = next.builders[b as usize]
                .decided
                .is_some_and(|d| d.duplicate);
            vec![O::Take(a), kv_get(link, s, b, a, drop, put_at)]
        }
        Action::Start(b) | Action::Drop(b) => match s.builders[b as usize].decided {
            Some(d) => acted(link, s, b, d.ask, next),
            None => Vec::new(),
        },
        Action::Heartbeat(b) => match s.builders[b as usize].run {
            Some(run) => vec![O::Heartbeat(run.ask)],
            None => Vec::new(),
        },
        Action::Finish(b) | Action::FinishAckLost(b) => {
            let Some(run) = s.builders[b as usize].run else {
                return Vec::new();
            };
            let a = run.ask;
            let mut lines = vec![O::BuildFinish(a)];
            if matches!(action, Action::Finish(_)) {
                lines.push(O::Ack(a));
            }
            lines.push(if link.design.done_key {
                O::Put(a)
            } else {
                O::KvDelete(a)
            });
            lines
        }
        Action::Nak(b) => match buffered(b) {
            Some(a) => vec![O::Take(a), O::Nak(a)],
            None => Vec::new(),
        },
    }
}

/// The KV get of `a`'s running key by `b`, read in `s`.
fn kv_get(
    link: &Link,
    s: &State,
    b: Bid,
    a: Ask,
    drop: bool,
    put_at: &[Option<u8>],
) -> Observation {
    let put = put_at.get(a as usize).copied().flatten();
    let found = s.keys[a as usize]
        .filter(|_| !expired(put, s.now))
        .map(|key| {
            let age = put.map_or(key.age as i16, |p| (s.now - p) as i16);
            (key.builder, age + s.builders[b as usize].offset as i16)
        });
    let _ = link;
    Observation::KvGet {
        ask: a,
        found,
        drop,
    }
}

/// What acting on a decision about `a` logs: the put and the build's
/// start, and with hand-back a nak for each ask left in the buffer; or, for
/// a duplicate, its ack (none when it is left to its ack wait).
fn acted(link: &Link, s: &State, b: Bid, a: Ask, next: &State) -> Vec<Observation> {
    use Observation as O;
    let started = next.builders[b as usize].run.is_some_and(|r| r.ask == a);
    if started {
        let mut lines = vec![O::Put(a), O::BuildStart(a)];
        let before = &s.builders[b as usize].buffer;
        let kept = &next.builders[b as usize].buffer;
        if kept.is_empty() && link.design.hand_back {
            lines.extend(before.iter().filter(|&&r| r != a).map(|&r| O::Nak(r)));
        }
        return lines;
    }
    let done = s.keys[a as usize].is_some_and(|k| k.done);
    if link.design.defer_duplicates && !done {
        Vec::new()
    } else {
        vec![O::Ack(a)]
    }
}
