//! What a builder logs for each step of the link model, read off the
//! records the step left (`log.rs`), the one account of what it did: a step
//! logs a short sequence of lines (a start logs its put and the build's
//! start), which `validate` matches one line at a time.

use super::super::log::{Check, Record};
use super::super::{Ask, Bid, KEY_LIFETIME};

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

/// What a step that left `records`, taken at tick `now`, logs, in order.
/// `put_at` is when each ask's key was last put (the state keeps only a
/// clamped age). Empty: a step no system logs (time, a crash, a late
/// heartbeat, a late answer landing in the subscription, the server's
/// answer to an open request).
pub fn observe(records: &[Record], now: u8, put_at: &[Option<u8>]) -> Vec<Observation> {
    use Observation as O;
    let mut lines = Vec::new();
    for record in records {
        match *record {
            // The client's fetch returns an earlier answer as any fetch
            // returns a message.
            Record::Fetch { ask, .. } | Record::FetchEarlier { ask } => lines.push(O::Fetch(ask)),
            // A fetch whose pull request expired as the server failed a
            // redelivery for it gives up empty-handed too.
            Record::FetchGivesUp { .. } | Record::Rewind { fetching: true, .. } => {
                lines.push(O::FetchEmpty)
            }
            Record::Read {
                ask,
                check,
                duplicate,
            } => {
                lines.push(O::Take(ask));
                if let Some(found) = kv_get(check, ask, now, put_at) {
                    lines.push(O::KvGet {
                        ask,
                        found,
                        drop: duplicate,
                    });
                }
            }
            Record::Start { ask, .. } => lines.extend([O::Put(ask), O::BuildStart(ask)]),
            Record::Ack { ask, .. } => lines.push(O::Ack(ask)),
            Record::Nak { ask, .. } => lines.push(O::Nak(ask)),
            Record::NakFault { ask } => lines.push(O::Take(ask)),
            Record::Heartbeat { ask, .. } => lines.push(O::Heartbeat(ask)),
            Record::Finish { ask, .. } => lines.push(O::BuildFinish(ask)),
            Record::KeyDone { ask } => lines.push(O::Put(ask)),
            Record::KeyDeleted { ask } => lines.push(O::KvDelete(ask)),
            Record::Answer { .. }
            | Record::Land { .. }
            | Record::Drop { .. }
            | Record::HandBack { .. }
            | Record::AckLost { .. }
            | Record::Tick
            | Record::AckWaitRunsOut { .. }
            | Record::KeyExpires { .. }
            | Record::QueueFirst { .. }
            | Record::Crash { .. }
            | Record::Delay { .. }
            | Record::Rewind { .. }
            | Record::AsNew { .. } => {}
        }
    }
    lines
}

/// What the KV get of `a`'s running key found, read at tick `now`: the
/// key's builder and its age by the reader's clock (`None`: no key, or one
/// past its TTL); `None` when the design reads no key.
fn kv_get(check: Check, a: Ask, now: u8, put_at: &[Option<u8>]) -> Option<Option<(Bid, i16)>> {
    let put = put_at.get(a as usize).copied().flatten();
    match check {
        Check::Unchecked => None,
        Check::NoKey => Some(None),
        Check::Key { .. } if expired(put, now) => Some(None),
        Check::Key { key, offset, .. } => {
            let age = put.map_or(key.age as i16, |p| (now - p) as i16);
            Some(Some((key.builder, age + offset as i16)))
        }
    }
}
