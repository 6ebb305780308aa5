//! The steps of the contract, in its order: fetch (and the late answer), read
//! and decide, run with heartbeats, finish; then time and the two faults.

use super::mutation::Mutation;
use super::{
    ask_name, builder_name, Ask, Bid, Key, Link, Log, Run, State, Status, ACK_WAIT,
    HEARTBEAT_EVERY, KEY_LIFETIME, TICK_SECONDS,
};

fn seconds(ticks: u8) -> u16 {
    ticks as u16 * TICK_SECONDS
}

/// The server hands message `a` to builder `b`: into its buffer, with a
/// deadline an ack wait from now.
fn deliver(link: &Link, s: &mut State, b: Bid, a: Ask, log: &mut Log) {
    let m = &mut s.messages[a as usize];
    if !link.mutated(Mutation::DeliveriesNotCounted) || m.deliveries == 0 {
        m.deliveries += 1;
    }
    m.status = Status::Delivered {
        to: b,
        ack_in: ACK_WAIT,
    };
    s.builders[b as usize].buffer.push(a);
    let n = m.deliveries;
    log.say(|| format!("{} delivered (delivery {n}) into its buffer", ask_name(a)));
}

/// Whether the server takes an ack or in-progress for `a` from `b`: by the
/// contract's default any builder that received it counts; with
/// `stale-ack-ignored` only the current holder.
fn counts(m: &Link, status: Status, b: Bid) -> bool {
    match status {
        Status::Delivered { to, .. } => to == b || !m.options.stale_ack_ignored,
        Status::Available => !m.options.stale_ack_ignored,
        Status::Acked | Status::Exhausted => false,
    }
}

fn ack(m: &Link, s: &mut State, b: Bid, a: Ask, log: &mut Log) {
    let msg = &mut s.messages[a as usize];
    if counts(m, msg.status, b) {
        msg.status = Status::Acked;
        log.say(|| format!("ack {}: the server removes it", ask_name(a)));
    } else {
        let why = match msg.status {
            Status::Acked => "already gone",
            Status::Exhausted => "no longer handed out",
            _ => "not the current holder, ignored",
        };
        log.say(|| format!("ack {} ({why})", ask_name(a)));
    }
}

pub fn fetch(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("a fetch is enabled with a message available");
    log.say(|| "fetch".to_string());
    deliver(m, s, b, a, log);
}

pub fn fetch_late(s: &mut State, b: Bid, log: &mut Log) {
    s.builders[b as usize].late_answer = true;
    log.say(|| {
        "fetch gives up empty-handed; the server's answer is still on the way (no fetch margin)"
            .into()
    });
}

pub fn land(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("a late answer lands a message available");
    s.builders[b as usize].late_answer = false;
    let busy = s.builders[b as usize].run.map(|r| r.ask);
    log.say(|| match busy {
        Some(r) => format!("a late answer lands while it builds {}", ask_name(r)),
        None => "a late answer lands".into(),
    });
    deliver(m, s, b, a, log);
}

/// Steps 2 to 4's start: read the oldest buffered message, decide, run or drop.
pub fn take(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s.builders[b as usize].buffer.remove(0);
    let offset = s.builders[b as usize].offset;
    log.say(|| format!("read {}", ask_name(a)));
    if m.design.duplicate_check {
        if let Some(key) = s.keys[a as usize] {
            // Seen is server time; freshness is judged on this builder's clock.
            let age_here = key.age as i16 + offset as i16;
            let fresh = m.is_fresh(key.age as i16, age_here);
            log.say(|| {
                let stale = if key.age >= m.stale_at() { "at least " } else { "" };
                format!(
                    "running key names {}, seen {stale}{} s ago by the server, {} s by its clock: {}",
                    builder_name(key.builder),
                    seconds(key.age),
                    age_here * TICK_SECONDS as i16,
                    if key.builder == b {
                        "its own"
                    } else if fresh {
                        "fresh"
                    } else {
                        "stale"
                    }
                )
            });
            let another = key.builder != b || m.mutated(Mutation::DropsItsOwnAsk);
            if another && fresh {
                log.say(|| format!("drop {} as a duplicate", ask_name(a)));
                if !m.mutated(Mutation::DropWithoutAck) {
                    ack(m, s, b, a, log);
                }
                s.dropped = true;
                return;
            }
        } else {
            log.say(|| "no running key".into());
        }
    }
    if !m.mutated(Mutation::KeyNotPutAtStart) {
        s.keys[a as usize] = Some(Key { builder: b, age: 0 });
    }
    s.builders[b as usize].run = Some(Run {
        ask: a,
        built: 0,
        heartbeat_in: HEARTBEAT_EVERY,
        grace: 0,
        delayed: false,
    });
    log.say(|| format!("run {}, put its running key", ask_name(a)));
    if m.mutated(Mutation::AckBeforeResult) {
        ack(m, s, b, a, log);
    }
}

pub fn heartbeat(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let run = s.builders[b as usize]
        .run
        .as_mut()
        .expect("a running builder");
    run.heartbeat_in = HEARTBEAT_EVERY;
    run.grace = 0;
    run.delayed = false;
    let a = run.ask;
    let (key, in_progress) = match m.mutation {
        Some(Mutation::HeartbeatSkipped) => (false, false),
        Some(Mutation::HeartbeatWithoutInProgress) => (true, false),
        Some(Mutation::HeartbeatWithoutKey) => (false, true),
        _ => (true, true),
    };
    if key {
        s.keys[a as usize] = Some(Key { builder: b, age: 0 });
    }
    let msg = &mut s.messages[a as usize];
    let taken = in_progress && counts(m, msg.status, b);
    if let (true, Status::Delivered { ack_in, .. }) = (taken, &mut msg.status) {
        *ack_in = ACK_WAIT;
        log.say(|| {
            format!(
                "heartbeat {}: put the running key, in-progress moves the deadline an ack wait on",
                ask_name(a)
            )
        });
    } else {
        log.say(|| {
            format!(
                "heartbeat {}: put the running key, in-progress changes nothing",
                ask_name(a)
            )
        });
    }
}

pub fn finish(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let run = s.builders[b as usize]
        .run
        .take()
        .expect("a running builder");
    let a = run.ask;
    let again = s.results[a as usize];
    s.results[a as usize] = true;
    log.say(|| {
        format!(
            "build of {} ends after {} s: announce the result{}",
            ask_name(a),
            seconds(run.built),
            if again { " (again)" } else { "" }
        )
    });
    if !m.mutated(Mutation::FinishWithoutAck) {
        ack(m, s, b, a, log);
    }
    // The source deletes the pull request's key, whoever put it last.
    if !m.mutated(Mutation::KeyNotDeleted) {
        s.keys[a as usize] = None;
        log.say(|| "delete the running key".into());
    }
}

pub fn tick(m: &Link, s: &mut State, log: &mut Log) {
    s.now += 1;
    log.say(|| format!("{TICK_SECONDS} s pass"));
    for b in s.builders.iter_mut() {
        b.late_answer = false;
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
    for (a, msg) in s.messages.iter_mut().enumerate() {
        if let Status::Delivered { to, ack_in } = &mut msg.status {
            *ack_in -= 1;
            if *ack_in == 0 {
                let to = *to;
                if msg.deliveries >= max_deliver {
                    msg.status = Status::Exhausted;
                    log.say(|| {
                        format!(
                            "{}'s ack deadline passes at its last delivery: never handed out again",
                            ask_name(a as Ask)
                        )
                    });
                } else {
                    msg.status = Status::Available;
                    log.say(|| {
                        format!(
                            "{}'s ack deadline passes unacked by {}: available again",
                            ask_name(a as Ask),
                            builder_name(to)
                        )
                    });
                }
            }
        }
    }
    let stale_at = m.stale_at();
    for (a, key) in s.keys.iter_mut().enumerate() {
        if let Some(k) = key {
            if k.age + 1 >= KEY_LIFETIME {
                *key = None;
                log.say(|| format!("the running key of {} expires", ask_name(a as Ask)));
            } else {
                k.age = (k.age + 1).min(stale_at);
            }
        }
    }
}

pub fn crash(s: &mut State, b: Bid, log: &mut Log) {
    s.crashes_left -= 1;
    let builder = &mut s.builders[b as usize];
    let run = builder.run.take();
    builder.buffer.clear();
    builder.late_answer = false;
    log.say(|| match run {
        Some(r) => format!(
            "crashes while building {} and restarts idle; its messages time out",
            ask_name(r.ask)
        ),
        None => "crashes and restarts idle; its buffer is lost".into(),
    });
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
    log.say(|| format!("its heartbeat is late, by up to {} s", seconds(late)));
}
