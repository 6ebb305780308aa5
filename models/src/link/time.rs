//! Time (a tick of 5 s: builds, heartbeat timers, ack deadlines and key
//! ages advance) and the two faults of the contract: a crash and a late
//! heartbeat.

use super::log::Record;
use super::{Ask, Bid, Builder, Link, Log, State, Status, KEY_LIFETIME, MAX_BUILDERS};
use crate::Inline;

/// The builders whose heartbeat for `a` is due at this very instant (not
/// late): at a deadline of `a`, the model lets the deadline come first.
fn heartbeats_due(builders: &[Builder], a: Ask) -> Inline<Bid, { MAX_BUILDERS as usize }> {
    (0..builders.len() as Bid)
        .filter(|&b| {
            builders[b as usize]
                .run
                .is_some_and(|r| r.ask == a && r.heartbeat_in == 0 && r.grace == 0)
        })
        .collect()
}

pub fn tick(m: &Link, s: &mut State, log: &mut Log) {
    s.now += 1;
    log.record(|| Record::Tick);
    // Open pull requests expire within milliseconds (the client's wait less
    // its margin); the 408 each gets is ignored by a fetch that has no
    // message yet and skipped by one that drains the subscription.
    for b in s.builders.iter_mut() {
        b.open = false;
    }
    for b in s.builders.iter_mut() {
        if let Some(run) = &mut b.run {
            run.built = run.built.saturating_add(1);
            if run.heartbeat_in > 0 {
                run.heartbeat_in -= 1;
            } else {
                run.grace -= 1;
            }
        }
    }
    let max_deliver = m.bounds.max_deliver;
    // `redelivery-queue`: the ack waits that run out now join the back of
    // the queue together (their order within the tick is left open).
    let joins = if m.options.redelivery_queue {
        s.queue_tail() + 1
    } else {
        0
    };
    let State {
        messages, builders, ..
    } = s;
    let builders: &[Builder] = builders;
    for (a, msg) in messages.iter_mut().enumerate() {
        if let Status::Delivered { to, ack_in } = &mut msg.status {
            *ack_in -= 1;
            if *ack_in == 0 {
                let to = *to;
                let last = msg.deliveries >= max_deliver;
                msg.status = if last {
                    Status::Exhausted
                } else {
                    msg.queue = joins;
                    Status::Available
                };
                log.record(|| Record::AckWaitRunsOut {
                    ask: a as Ask,
                    holder: to,
                    last,
                    due: heartbeats_due(builders, a as Ask),
                });
            }
        }
    }
    let stale_at = m.stale_at();
    for (a, key) in s.keys.iter_mut().enumerate() {
        if let Some(k) = key {
            if k.age + 1 >= KEY_LIFETIME {
                *key = None;
                log.record(|| Record::KeyExpires { ask: a as Ask });
            } else if k.done {
                k.age += 1;
            } else {
                // A key past the stale age is kept as stale, never removed;
                // the story's ledger knows when its TTL ends.
                k.age = (k.age + 1).min(stale_at);
            }
        }
    }
}

/// `redelivery-queue`: the server's redelivery queue has `a` first among
/// the messages at its head, whose ack waits ran out in the same tick: every
/// other message's place moves one back.
pub fn queue_first(s: &mut State, a: Ask, log: &mut Log) {
    let head = s.messages[a as usize].queue;
    let mut others = Inline::default();
    for (x, m) in s.messages.iter_mut().enumerate() {
        if x != a as usize && m.queue >= head {
            if m.queue == head {
                others.push(x as Ask);
            }
            m.queue += 1;
        }
    }
    log.record(|| Record::QueueFirst { ask: a, others });
}

/// The builder dies and restarts idle: its build, buffer, answer on the
/// way and decision are lost.
pub fn crash(s: &mut State, b: Bid, log: &mut Log) {
    s.crashes_left -= 1;
    let builder = &mut s.builders[b as usize];
    let lost = *builder;
    builder.run = None;
    builder.buffer.clear();
    builder.on_the_way = None;
    builder.decided = None;
    // Its connection closes: the server drops a request nobody listens to.
    builder.open = false;
    log.record(|| Record::Crash { lost });
}

pub fn delay(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    s.lates_left -= 1;
    let late = m.bounds.late_by_ticks();
    let run = s.builders[b as usize]
        .run
        .as_mut()
        .expect("a running builder");
    run.grace = late;
    run.delayed = true;
    log.record(|| Record::Delay { late });
}
