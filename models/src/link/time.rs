//! Time (a tick of 5 s: builds, heartbeat timers, ack deadlines and key
//! ages advance) and the two faults of the contract: a crash and a late
//! heartbeat.

use super::log::Path;
use super::steps::{message_fate, seconds};
use super::{
    ask_name, at, builder_name, Ask, Bid, Builder, Link, Log, State, Status, KEY_LIFETIME,
    TICK_SECONDS,
};

/// The builders whose heartbeat for `a` is due at this very instant (not
/// late): at a deadline of `a`, the model lets the deadline come first.
fn heartbeats_due(builders: &[Builder], a: Ask) -> Vec<Bid> {
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
    log.say(|| format!("{TICK_SECONDS} s pass"));
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
    // Kept as ticks: checking never tells, so it must not format.
    let now = s.now;
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
                log.mark(if last {
                    Path::TickLastDelivery
                } else {
                    Path::TickRedelivers
                });
                if log.is_marking() && !heartbeats_due(builders, a as Ask).is_empty() {
                    log.mark(Path::TickBesideHeartbeat);
                }
                log.say(|| {
                    let a = a as Ask;
                    let then = if last {
                        format!("at its last delivery (max_deliver {max_deliver}): the server never delivers it again")
                    } else {
                        "the server delivers it again".into()
                    };
                    // Where a heartbeat was due at this instant too, the
                    // order the model chose decides: the story says so.
                    let due = heartbeats_due(builders, a);
                    let tie = if due.is_empty() {
                        String::new()
                    } else {
                        let who: Vec<String> = due.iter().map(|&b| builder_name(b)).collect();
                        format!(
                            " ({}'s heartbeat is due at this same instant; the model lets the ack wait run out first, so its AckProgress comes too late to restart it)",
                            who.join(" and ")
                        )
                    };
                    format!(
                        "at {} the ack wait of {} runs out unacked by {}{tie}: {then}",
                        at(now as i16),
                        ask_name(a),
                        builder_name(to)
                    )
                });
            }
        }
    }
    let stale_at = m.stale_at();
    for (a, key) in s.keys.iter_mut().enumerate() {
        if let Some(k) = key {
            let a = a as Ask;
            let expires = |log: &mut Log| {
                log.say(|| {
                    format!(
                        "at {} the running key of {} expires: the KV bucket's TTL, {} s after its last put",
                        at(now as i16),
                        ask_name(a),
                        seconds(KEY_LIFETIME)
                    )
                })
            };
            if k.age + 1 >= KEY_LIFETIME {
                *key = None;
                log.mark(Path::TickKeyExpires);
                expires(log);
            } else if k.done {
                k.age += 1;
            } else {
                k.age = (k.age + 1).min(stale_at);
                // A key past the stale age is kept as stale, never removed;
                // the story's ledger knows when its TTL ends.
                let ledger_expires = log
                    .ledger()
                    .is_some_and(|l| l.put_at[a as usize].is_some_and(|p| now - p == KEY_LIFETIME));
                if ledger_expires {
                    expires(log);
                }
            }
        }
    }
}

/// `redelivery-queue`: the server's redelivery queue has `a` first among
/// the messages at its head, whose ack waits ran out in the same tick: every
/// other message's place moves one back.
pub fn queue_first(s: &mut State, a: Ask, log: &mut Log) {
    let head = s.messages[a as usize].queue;
    log.mark(Path::QueueFirst);
    let mut others = Vec::new();
    for (x, m) in s.messages.iter_mut().enumerate() {
        if x != a as usize && m.queue >= head {
            if m.queue == head {
                others.push(x as Ask);
            }
            m.queue += 1;
        }
    }
    log.say(|| {
        let names: Vec<String> = others.iter().map(|&x| ask_name(x)).collect();
        format!(
            "the server's redelivery queue: the ack wait of {} ran out before that of {} (within the same tick), so the server hands {} out first",
            ask_name(a),
            names.join(" and "),
            ask_name(a)
        )
    });
}

/// Says what a crash loses, from the state before it: the build, each
/// buffered message, an answer on the way, an ask read and not yet acted
/// on, and where each of their messages stands.
pub fn crash(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    log.say(|| {
        let builder = &s.builders[b as usize];
        let mut lost = Vec::new();
        if let Some(r) = builder.run {
            lost.push(format!(
                "the build of {} is lost ({})",
                ask_name(r.ask),
                message_fate(m, s, b, r.ask)
            ));
        }
        for &a in builder.buffer.iter() {
            lost.push(format!(
                "{} in its buffer is lost ({})",
                ask_name(a),
                message_fate(m, s, b, a)
            ));
        }
        if let Some(a) = builder.on_the_way {
            lost.push(format!(
                "the answer on the way, {}, never lands ({})",
                ask_name(a),
                message_fate(m, s, b, a)
            ));
        }
        if let Some(d) = builder.decided {
            lost.push(format!(
                "{}, read and not yet {}, is lost ({})",
                ask_name(d.ask),
                if d.duplicate { "acked" } else { "started" },
                message_fate(m, s, b, d.ask)
            ));
        }
        let doing = match builder.run {
            Some(r) => format!(" while building {}", ask_name(r.ask)),
            None => String::new(),
        };
        format!("crashes{doing} and restarts idle: {}", lost.join("; "))
    });
    s.crashes_left -= 1;
    let builder = &mut s.builders[b as usize];
    for (lost, path) in [
        (builder.run.is_some(), Path::CrashBuild),
        (!builder.buffer.is_empty(), Path::CrashBuffer),
        (builder.on_the_way.is_some(), Path::CrashOnTheWay),
        (builder.decided.is_some(), Path::CrashDecided),
    ] {
        if lost {
            log.mark(path);
        }
    }
    builder.run = None;
    builder.buffer.clear();
    builder.on_the_way = None;
    builder.decided = None;
    // Its connection closes: the server drops a request nobody listens to.
    builder.open = false;
}

pub fn delay(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    s.lates_left -= 1;
    log.mark(Path::Delay);
    let late = m.bounds.late_by_ticks();
    let run = s.builders[b as usize]
        .run
        .as_mut()
        .expect("a running builder");
    run.grace = late;
    run.delayed = true;
    log.say(|| {
        format!(
            "its heartbeat (the key's put and the AckProgress) is late, by up to {} s",
            seconds(late)
        )
    });
}
