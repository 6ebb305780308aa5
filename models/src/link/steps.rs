//! The steps of the contract, in its order: fetch (and the late answer), read
//! and decide, run with heartbeats, finish, and the faults that change a
//! step (a late answer, a lost ack, a nak); time, crashes and late
//! heartbeats are in `time.rs`. Each primitive changes the state and
//! records what it did (`log.rs`); the words are the story's.

use super::log::{AckOutcome, Check, DropThen, NakOutcome, Progress, Record};
use super::mutation::Act;
use super::{Ask, Bid, Decided, Key, Link, Log, Run, State, Status};

/// The server hands message `a` to builder `b`'s pull request, with a
/// deadline an ack wait from now, and the step records it (`said`, given
/// the delivery count it carries). A message the server's cursor was wound
/// back to and that is not available otherwise goes out as new: counted 1,
/// its count for `max_deliver` unchanged (nats-server 2.9's `getNextMsg`
/// counts only redeliveries).
fn deliver(
    link: &Link,
    s: &mut State,
    b: Bid,
    a: Ask,
    log: &mut Log,
    said: impl FnOnce(u8) -> Record,
) {
    let m = &mut s.messages[a as usize];
    let as_new = m.again && m.status != Status::Available;
    if as_new {
        m.again = false;
    } else if link.does(Act::CountDelivery) || m.deliveries == 0 {
        m.deliveries += 1;
    }
    m.status = Status::Delivered {
        to: b,
        ack_in: link.bounds.ack_wait_ticks(),
    };
    let (delivery, counted) = (if as_new { 1 } else { m.deliveries }, m.deliveries);
    log.record(|| said(delivery));
    if as_new {
        log.record(|| Record::AsNew { ask: a, counted });
    }
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
    let before = msg.status;
    let taken = counts(m, before, b);
    if taken {
        msg.status = Status::Acked;
        // The work queue removes it: a wound-back cursor passes it by.
        msg.again = false;
    }
    let outcome = match before {
        Status::Delivered { to, .. } if taken && to != b => AckOutcome::RemovesHeld(to),
        _ if taken => AckOutcome::Removes,
        Status::Acked => AckOutcome::AlreadyGone,
        Status::Exhausted => AckOutcome::Exhausted,
        Status::Delivered { to, .. } => AckOutcome::IgnoredHeld(to),
        Status::Available => AckOutcome::IgnoredAvailable,
    };
    log.record(|| Record::Ack { ask: a, outcome });
}

pub fn fetch(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("a fetch is enabled with a message available");
    deliver(m, s, b, a, log, |delivery| Record::Fetch {
        ask: a,
        delivery,
    });
    s.builders[b as usize].buffer.push(a);
}

/// No margin: the fetch gives up before its pull request expires on the
/// server, and the server answers that request with the first available
/// message. The abandoned request is older than any the builders make after
/// it, and JetStream serves the oldest waiting pull request first, so the
/// message is delivered now and is on the way to a builder that moved on.
pub fn fetch_late(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("a late fetch is enabled with a message available");
    let slow = m.has_margin();
    deliver(m, s, b, a, log, |delivery| Record::FetchGivesUp {
        ask: a,
        delivery,
        slow,
    });
    s.builders[b as usize].on_the_way = Some(a);
}

/// The client's fetch (the default), as nats.go's `Subscription.Fetch` does it: the builder's
/// fetch publishes a new pull request, then waits on its subscription, where
/// the earlier request's answer, sent before the new request reached the
/// server, arrives first; the fetch (batch 1) returns it, and nothing
/// withdraws the new request: it stays open on the server until it is
/// answered or expires.
pub fn fetch_earlier(_m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let builder = &mut s.builders[b as usize];
    let a = builder
        .on_the_way
        .take()
        .expect("a fetch returns the answer on the way");
    builder.buffer.push(a);
    builder.open = true;
    log.record(|| Record::FetchEarlier { ask: a });
}

/// The client's fetch: the server answers an open pull request as soon as it has
/// a message, whether or not the builder that sent it still waits.
pub fn answer(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("an open pull request is answered with a message available");
    let busy = s.builders[b as usize].run.map(|r| r.ask);
    deliver(m, s, b, a, log, |delivery| Record::Answer {
        ask: a,
        delivery,
        busy,
    });
    let builder = &mut s.builders[b as usize];
    builder.open = false;
    builder.on_the_way = Some(a);
}

pub fn land(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let builder = &mut s.builders[b as usize];
    let a = builder
        .on_the_way
        .take()
        .expect("a late answer lands what is on the way");
    let busy = builder.run.map(|r| r.ask);
    let handed_back = m.hand_back() && busy.is_some();
    if !handed_back {
        builder.buffer.push(a);
    }
    log.record(|| Record::Land {
        ask: a,
        busy,
        handed_back,
    });
    if handed_back {
        nak(m, s, b, a, log);
    }
}

/// Steps 2 and 3 in one step: read the oldest buffered message, decide,
/// then run (the first put) or drop. The designs without the duplicate check
/// (nothing shared is read before the put) and `atomic-start`.
pub fn take(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let decided = decide(m, s, b, log);
    act_on(m, s, b, decided, log);
}

/// The split reading's first step: read the oldest buffered message, get
/// its running key, decide. Nothing is written; the next step acts.
pub fn read(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let decided = decide(m, s, b, log);
    s.builders[b as usize].decided = Some(decided);
}

/// The split reading's second step: the put of a start, or the ack of a
/// duplicate, as the read decided.
pub fn act(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let decided = s.builders[b as usize]
        .decided
        .take()
        .expect("a builder that decided");
    act_on(m, s, b, decided, log);
}

/// Step 2: read the oldest buffered message and, with the duplicate check,
/// its running key from the KV bucket, and decide.
fn decide(m: &Link, s: &mut State, b: Bid, log: &mut Log) -> Decided {
    let a = s.builders[b as usize].buffer.remove(0);
    let offset = s.builders[b as usize].offset;
    let mut decided = Decided {
        ask: a,
        duplicate: false,
        conflict: false,
    };
    let check = match s.keys[a as usize] {
        _ if !m.design.check.reads_key() => Check::Unchecked,
        None => Check::NoKey,
        Some(key) => {
            // Seen is server time; freshness is judged on this builder's
            // clock, or with `DuplicateCheck::ServerClock` a second time the server
            // stamps. A key left done is a duplicate, of any age.
            let clock = if m.server_clock() { 0 } else { offset };
            let fresh = !key.done && m.is_fresh(key.age as i16, key.age as i16 + clock as i16);
            let another = key.builder != b || !m.does(Act::CheckKeyOwner);
            decided.duplicate = key.done || (another && fresh);
            Check::Key {
                key,
                own: key.builder == b,
                offset,
                clock,
                fresh,
            }
        }
    };
    let duplicate = decided.duplicate;
    log.record(|| Record::Read {
        ask: a,
        check,
        duplicate,
    });
    decided
}

/// Step 3: the ack of a duplicate, or the start: put the running key, run.
fn act_on(m: &Link, s: &mut State, b: Bid, decided: Decided, log: &mut Log) {
    let a = decided.ask;
    if decided.duplicate || decided.conflict {
        let done = s.keys[a as usize].is_some_and(|k| k.done);
        let then = if m.defer_duplicates() && !done {
            DropThen::Deferred
        } else if m.does(Act::AckDrop) {
            DropThen::Acked
        } else {
            DropThen::Nothing
        };
        log.record(|| Record::Drop {
            ask: a,
            failed_put: decided.conflict && !decided.duplicate,
            then,
        });
        if then == DropThen::Acked {
            ack(m, s, b, a, log);
        }
        s.dropped = true;
        return;
    }
    // The put overwrites another builder's key (a stale one, or one put
    // between a split read and this put), as the source's unconditional put
    // does.
    let over = s.keys[a as usize]
        .filter(|k| k.builder != b)
        .map(|k| k.builder);
    if m.does(Act::PutKeyAtStart) {
        s.keys[a as usize] = Some(Key::put(b, false));
        wrote_key(m, s, b, a);
    }
    s.builders[b as usize].run = Some(Run {
        ask: a,
        built: 0,
        heartbeat_in: m.bounds.heartbeat_ticks(),
        grace: 0,
        delayed: false,
    });
    log.record(|| Record::Start { ask: a, over });
    if !m.does(Act::AckAfterResult) {
        ack(m, s, b, a, log);
    }
    if m.hand_back() {
        while !s.builders[b as usize].buffer.is_empty() {
            let rest = s.builders[b as usize].buffer.remove(0);
            log.record(|| Record::HandBack { ask: rest });
            nak(m, s, b, rest, log);
        }
    }
}

/// A write of `a`'s running key by `b`: a revision-checked put of any other
/// builder that read the key and has not yet put it will fail.
fn wrote_key(m: &Link, s: &mut State, b: Bid, a: Ask) {
    if !m.revision_start() {
        return;
    }
    for (other, builder) in s.builders.iter_mut().enumerate() {
        if let Some(d) = builder.decided.as_mut().filter(|d| d.ask == a) {
            if other as Bid != b {
                d.conflict = true;
            }
        }
    }
}

/// A nak of `a` by `b`: the server hands the message out again at once, or
/// never at its last delivery. Counted as an ack is (see [`counts`]).
fn nak(m: &Link, s: &mut State, b: Bid, a: Ask, log: &mut Log) {
    let tail = if m.options.redelivery_queue {
        s.queue_tail()
    } else {
        0
    };
    let msg = &mut s.messages[a as usize];
    let outcome = match msg.status {
        Status::Delivered { .. } if counts(m, msg.status, b) => {
            if msg.deliveries >= m.bounds.max_deliver {
                msg.status = Status::Exhausted;
                NakOutcome::Last
            } else {
                // `redelivery-queue`: a nak joins the back of the queue
                // (consumer.go's processNak, addToRedeliverQueue).
                if m.options.redelivery_queue {
                    msg.queue = tail + 1;
                }
                msg.status = Status::Available;
                NakOutcome::Again
            }
        }
        _ => NakOutcome::Nothing,
    };
    log.record(|| Record::Nak { ask: a, outcome });
}

/// Fault: an idle builder naks its oldest buffered ask instead of reading
/// it, as the source does on one path whose condition the model leaves open.
pub fn nak_fault(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    s.naks_left -= 1;
    let a = s.builders[b as usize].buffer.remove(0);
    log.record(|| Record::NakFault { ask: a });
    nak(m, s, b, a, log);
}

/// Fault (`--rewinds`), nats-server before 2.10.14: builder `b`'s pull
/// request (its fetch's, or one left open) expires just as the server takes
/// the first redelivery for it. The server has counted the delivery and
/// taken the message off its redelivery queue, so it waits out an ack wait
/// as if delivered; and it winds its cursor of new messages back one
/// (`o.sseq--`, meant for a new message), so the last message it handed
/// out new goes out again as new, unless acked.
pub fn rewind(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    s.rewinds_left -= 1;
    let a = s
        .first_redelivery()
        .expect("a rewind is enabled with a redelivery first");
    let back_to = s.rewound_to();
    let msg = &mut s.messages[a as usize];
    if m.does(Act::CountDelivery) {
        msg.deliveries += 1;
    }
    msg.status = Status::Delivered {
        to: b,
        ack_in: m.bounds.ack_wait_ticks(),
    };
    let counted = msg.deliveries;
    if let Some(y) = back_to {
        s.messages[y as usize].again = true;
    }
    let builder = &mut s.builders[b as usize];
    let fetching = !builder.open;
    builder.open = false;
    log.record(|| Record::Rewind {
        ask: a,
        counted,
        back_to,
        fetching,
    });
}

pub fn heartbeat(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let run = s.builders[b as usize]
        .run
        .as_mut()
        .expect("a running builder");
    run.heartbeat_in = m.bounds.heartbeat_ticks();
    run.grace = 0;
    run.delayed = false;
    let a = run.ask;
    let (key, in_progress) = (m.does(Act::HeartbeatKey), m.does(Act::HeartbeatInProgress));
    if key {
        s.keys[a as usize] = Some(Key::put(b, false));
        wrote_key(m, s, b, a);
    }
    let msg = &mut s.messages[a as usize];
    let before = msg.status;
    let taken = in_progress && counts(m, before, b);
    if let (true, Status::Delivered { ack_in, .. }) = (taken, &mut msg.status) {
        *ack_in = m.bounds.ack_wait_ticks();
    }
    let progress = in_progress.then_some(match before {
        Status::Delivered { to, .. } if taken => Progress::Restarts {
            held: (to != b).then_some(to),
        },
        Status::Delivered { to, .. } => Progress::Ignored(to),
        Status::Available => Progress::Available,
        Status::Acked => Progress::Acked,
        Status::Exhausted => Progress::Exhausted,
    });
    log.record(|| Record::Heartbeat {
        ask: a,
        key,
        progress,
    });
}

pub fn finish(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    end_build(m, s, b, true, log)
}

/// Fault: the build ends as in [`finish`], but its ack never reaches the
/// server; the message is handed out again at its ack wait.
pub fn finish_ack_lost(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    end_build(m, s, b, false, log)
}

fn end_build(m: &Link, s: &mut State, b: Bid, acked: bool, log: &mut Log) {
    let run = s.builders[b as usize]
        .run
        .take()
        .expect("a running builder");
    let a = run.ask;
    let again = s.results[a as usize];
    s.results[a as usize] = true;
    log.record(|| Record::Finish {
        ask: a,
        built: run.built,
        again,
    });
    if !acked {
        log.record(|| Record::AckLost { ask: a });
    } else if m.does(Act::AckFinish) {
        ack(m, s, b, a, log);
    }
    // The source deletes the pull request's key, whoever put it last;
    // `FinishKey::MarkedDone` keeps it, marked done, to the end of its TTL.
    if m.done_key() {
        s.keys[a as usize] = Some(Key::put(b, true));
        wrote_key(m, s, b, a);
        log.record(|| Record::KeyDone { ask: a });
    } else if m.does(Act::DeleteKeyAtFinish) {
        s.keys[a as usize] = None;
        wrote_key(m, s, b, a);
        log.record(|| Record::KeyDeleted { ask: a });
    }
}
