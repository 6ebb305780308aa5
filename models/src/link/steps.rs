//! The steps of the contract, in its order: fetch (and the late answer), read
//! and decide, run with heartbeats, finish, and the faults that change a
//! step (a late answer, a lost ack, a nak); time, crashes and late
//! heartbeats are in `time.rs`.

use super::log::Path;
use super::mutation::Act;
use super::{
    ask_name, at, builder_name, Ask, Bid, Decided, Key, Link, Log, Run, State, Status,
    KEY_LIFETIME, TICK_SECONDS,
};

pub(super) fn seconds(ticks: u8) -> u16 {
    ticks as u16 * TICK_SECONDS
}

/// The time `ticks` from now, as a story writes it.
fn from_now(s: &State, ticks: u8) -> String {
    at(s.now as i16 + ticks as i16)
}

/// Where the message of `a` stands, for a builder `b` that loses its copy:
/// whether anything will ever hand the ask out again is what decides a loss.
pub(super) fn message_fate(m: &Link, s: &State, b: Bid, a: Ask) -> String {
    let msg = s.messages[a as usize];
    let last = msg.deliveries >= m.bounds.max_deliver;
    match msg.status {
        Status::Delivered { to, ack_in } => {
            let holder = if to == b {
                "it".to_string()
            } else {
                builder_name(to)
            };
            let then = if last {
                format!(
                    "never delivered again: that was its last delivery (max_deliver {})",
                    m.bounds.max_deliver
                )
            } else {
                "delivered again".into()
            };
            format!(
                "{}'s message is held by {holder} until its ack wait runs out at {}, and then {then}",
                ask_name(a),
                from_now(s, ack_in)
            )
        }
        Status::Available => format!("{}'s message is available", ask_name(a)),
        Status::Acked => format!(
            "{}'s message is already acked: nothing times out, the server never delivers it again",
            ask_name(a)
        ),
        Status::Exhausted => format!(
            "{}'s message is out of deliveries (max_deliver {}): the server never delivers it again",
            ask_name(a),
            m.bounds.max_deliver
        ),
    }
}

/// The server hands message `a` to builder `b`'s pull request, with a
/// deadline an ack wait from now.
fn deliver(link: &Link, s: &mut State, b: Bid, a: Ask, log: &mut Log) {
    let m = &mut s.messages[a as usize];
    if link.does(Act::CountDelivery) || m.deliveries == 0 {
        m.deliveries += 1;
    }
    m.status = Status::Delivered {
        to: b,
        ack_in: link.bounds.ack_wait_ticks(),
    };
    let n = m.deliveries;
    let max = link.bounds.max_deliver;
    log.say(|| {
        format!(
            "{} delivered (delivery {n}, max_deliver {max})",
            ask_name(a)
        )
    });
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
    if counts(m, before, b) {
        msg.status = Status::Acked;
        log.mark(match before {
            Status::Delivered { to, .. } if to != b => Path::AckRemovesHeld,
            _ => Path::AckRemoves,
        });
        log.say(|| match before {
            Status::Delivered { to, .. } if to != b => format!(
                "ack {}: the server removes it, though {} holds it now",
                ask_name(a),
                builder_name(to)
            ),
            _ => format!("ack {}: the server removes it", ask_name(a)),
        });
    } else {
        log.mark(match before {
            Status::Acked => Path::AckAlreadyGone,
            Status::Exhausted => Path::AckExhausted,
            Status::Delivered { .. } => Path::AckIgnoredHeld,
            Status::Available => Path::AckIgnoredAvailable,
        });
        let why = match before {
            Status::Acked => "already gone".to_string(),
            Status::Exhausted => {
                format!("out of deliveries (max_deliver {})", m.bounds.max_deliver)
            }
            Status::Delivered { to, .. } => format!(
                "ignored: {} holds it now (stale-ack-ignored)",
                builder_name(to)
            ),
            Status::Available => {
                "ignored: it waits to be delivered again (stale-ack-ignored)".to_string()
            }
        };
        log.say(|| format!("ack {} ({why})", ask_name(a)));
    }
}

pub fn fetch(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("a fetch is enabled with a message available");
    log.mark(Path::Fetch);
    log.say(|| "fetch: the server answers its pull request at once".to_string());
    deliver(m, s, b, a, log);
    s.builders[b as usize].buffer.push(a);
    log.say(|| format!("{} into its buffer", ask_name(a)));
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
    let margin = m.has_margin();
    log.mark(if margin {
        Path::SlowAnswer
    } else {
        Path::FetchGivesUp
    });
    log.say(|| {
        if margin {
            "fetch gives up empty-handed: the network delays its pull request's answer past the fetch margin; the server answers that pull request"
                .into()
        } else {
            "fetch gives up empty-handed before its pull request expires on the server (no fetch margin); the server answers that pull request"
                .into()
        }
    });
    deliver(m, s, b, a, log);
    s.builders[b as usize].on_the_way = Some(a);
    log.say(|| format!("the answer, {}, is still on the way", ask_name(a)));
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
    log.mark(Path::FetchEarlier);
    log.say(|| {
        format!(
            "fetch: it sends a new pull request, and the answer to its earlier one, {}, arrives first: the fetch returns it; its own pull request stays open on the server",
            ask_name(a)
        )
    });
}

/// The client's fetch: the server answers an open pull request as soon as it has
/// a message, whether or not the builder that sent it still waits.
pub fn answer(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let a = s
        .first_available()
        .expect("an open pull request is answered with a message available");
    let busy = s.builders[b as usize].run.map(|r| r.ask);
    log.mark(if busy.is_some() {
        Path::AnswerBusy
    } else {
        Path::AnswerIdle
    });
    log.say(|| match busy {
        Some(r) => format!(
            "the server answers its open pull request, though it builds {}",
            ask_name(r)
        ),
        None => "the server answers its open pull request, which its fetch no longer waits on"
            .to_string(),
    });
    deliver(m, s, b, a, log);
    let builder = &mut s.builders[b as usize];
    builder.open = false;
    builder.on_the_way = Some(a);
    log.say(|| format!("the answer, {}, is on the way", ask_name(a)));
}

pub fn land(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    let builder = &mut s.builders[b as usize];
    let a = builder
        .on_the_way
        .take()
        .expect("a late answer lands what is on the way");
    let busy = builder.run.map(|r| r.ask);
    if let (true, Some(r)) = (m.hand_back(), busy) {
        log.mark(Path::LandHandBack);
        log.say(|| {
            format!(
                "the late answer to its pull request lands while it builds {}: hand {} back",
                ask_name(r),
                ask_name(a)
            )
        });
        nak(m, s, b, a, log);
        return;
    }
    builder.buffer.push(a);
    log.mark(if busy.is_some() {
        Path::LandBusy
    } else {
        Path::LandIdle
    });
    log.say(|| match busy {
        Some(r) => format!(
            "the late answer to its pull request lands while it builds {}: {} into its buffer",
            ask_name(r),
            ask_name(a)
        ),
        None => format!(
            "the late answer to its pull request lands: {} into its buffer",
            ask_name(a)
        ),
    });
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
    log.say(|| format!("read {}", ask_name(a)));
    let mut decided = Decided {
        ask: a,
        duplicate: false,
        conflict: false,
    };
    if !m.design.duplicate_check {
        log.mark(Path::ReadUnchecked);
        return decided;
    }
    let Some(key) = s.keys[a as usize] else {
        log.mark(Path::ReadNoKey);
        log.say(|| {
            format!(
                "get {}'s running key from the KV bucket: there is none; decide to run it",
                ask_name(a)
            )
        });
        return decided;
    };
    if key.done {
        decided.duplicate = true;
        log.mark(Path::ReadDoneKey);
        log.say(|| {
            format!(
                "get {}'s running key from the KV bucket: {} left it done; decide to drop it",
                ask_name(a),
                builder_name(key.builder)
            )
        });
        return decided;
    }
    // Seen is server time; freshness is judged on this builder's clock, or
    // with `server_clock` on a second time the server stamps.
    let offset = if m.server_clock() { 0 } else { offset };
    let age_here = key.age as i16 + offset as i16;
    let fresh = m.is_fresh(key.age as i16, age_here);
    let another = key.builder != b || !m.does(Act::CheckKeyOwner);
    decided.duplicate = another && fresh;
    log.mark(if decided.duplicate {
        Path::ReadFreshKey
    } else if key.builder == b {
        Path::ReadOwnKey
    } else {
        Path::ReadStaleKey
    });
    let now = s.now;
    let put_at = log.ledger().and_then(|l| l.put_at[a as usize]);
    let expired = log.ledger().is_some_and(|l| l.expired(a, now));
    log.say(|| {
        let then = if decided.duplicate {
            "decide to drop it as a duplicate"
        } else {
            "decide to run it"
        };
        if let Some(p) = put_at.filter(|_| expired) {
            return format!(
                "get {}'s running key from the KV bucket: last put {}, it expired {} s after it (the KV bucket's TTL), so there is none; {then}",
                ask_name(a),
                at(p as i16),
                seconds(KEY_LIFETIME)
            );
        }
        let verdict = if key.builder == b {
            "its own".to_string()
        } else if fresh {
            format!("fresh (under {} s)", m.bounds.fresh_for)
        } else {
            format!("stale ({} s or more)", m.bounds.fresh_for)
        };
        // The state's age stops where every clock reads it stale; the
        // story's ledger knows the put itself.
        let (put, age) = match put_at {
            Some(p) => (format!("last put {}", at(p as i16)), now - p),
            None => ("last put".to_string(), key.age),
        };
        let at_least = if put_at.is_none() && key.age >= m.stale_at() {
            "at least "
        } else {
            ""
        };
        format!(
            "get {}'s running key from the KV bucket: it names {}, {put}: {at_least}{} s ago by the server's clock, {at_least}{} s by its own: {verdict}; {then}",
            ask_name(a),
            builder_name(key.builder),
            seconds(age),
            (age as i16 + offset as i16) * TICK_SECONDS as i16,
        )
    });
    decided
}

/// Step 3: the ack of a duplicate, or the start: put the running key, run.
fn act_on(m: &Link, s: &mut State, b: Bid, decided: Decided, log: &mut Log) {
    let a = decided.ask;
    if decided.conflict && !decided.duplicate {
        log.mark(Path::StartConflict);
        log.say(|| {
            format!(
                "its revision-checked put of {}'s running key fails: another builder wrote the key since the read",
                ask_name(a)
            )
        });
    }
    if decided.duplicate || decided.conflict {
        log.say(|| format!("drop {} as a duplicate", ask_name(a)));
        let done = s.keys[a as usize].is_some_and(|k| k.done);
        if m.defer_duplicates() && !done {
            log.mark(Path::DropDeferred);
            log.say(|| {
                format!(
                    "no ack: {} is left to its ack wait, to come back if its builder dies",
                    ask_name(a)
                )
            });
        } else if m.does(Act::AckDrop) {
            log.mark(Path::DropAcked);
            ack(m, s, b, a, log);
        }
        s.dropped = true;
        return;
    }
    // The put overwrites another builder's key (a stale one, or one put
    // between a split read and this put), as the source's unconditional put
    // does; a key past its TTL, which the state keeps as stale, is gone.
    let now = s.now;
    let expired = log.ledger().is_some_and(|l| l.expired(a, now));
    let over = s.keys[a as usize].filter(|k| k.builder != b && !expired);
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
    log.mark(if over.is_some() {
        Path::StartOverKey
    } else {
        Path::Start
    });
    log.say(|| match over {
        Some(k) => format!(
            "run {}, put its running key in the KV bucket over {}'s key",
            ask_name(a),
            builder_name(k.builder)
        ),
        None => format!("run {}, put its running key in the KV bucket", ask_name(a)),
    });
    if !m.does(Act::AckAfterResult) {
        ack(m, s, b, a, log);
    }
    if m.hand_back() {
        while !s.builders[b as usize].buffer.is_empty() {
            let rest = s.builders[b as usize].buffer.remove(0);
            log.mark(Path::StartHandsBack);
            log.say(|| format!("it is busy now: hand {} back", ask_name(rest)));
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
    let max_deliver = m.bounds.max_deliver;
    let msg = &mut s.messages[a as usize];
    if !counts(m, msg.status, b) {
        log.mark(Path::NakNothing);
        log.say(|| format!("nak {} (nothing changes)", ask_name(a)));
        return;
    }
    let tail = s.queue_tail();
    let msg = &mut s.messages[a as usize];
    if let Status::Delivered { .. } = msg.status {
        let last = msg.deliveries >= max_deliver;
        msg.status = if last {
            Status::Exhausted
        } else {
            // `redelivery-queue`: a nak joins the back of the queue
            // (consumer.go's processNak, addToRedeliverQueue).
            if m.options.redelivery_queue {
                msg.queue = tail + 1;
            }
            Status::Available
        };
        log.mark(if last { Path::NakLast } else { Path::NakAgain });
        log.say(|| {
            if last {
                format!("nak {}: at its last delivery (max_deliver {max_deliver}), the server never delivers it again", ask_name(a))
            } else {
                format!("nak {}: the server delivers it again at once", ask_name(a))
            }
        });
    } else {
        log.mark(Path::NakNothing);
        log.say(|| format!("nak {} (nothing changes)", ask_name(a)));
    }
}

/// Fault: an idle builder naks its oldest buffered ask instead of reading
/// it, as the source does on one path whose condition the model leaves open.
pub fn nak_fault(m: &Link, s: &mut State, b: Bid, log: &mut Log) {
    s.naks_left -= 1;
    let a = s.builders[b as usize].buffer.remove(0);
    log.mark(Path::NakFault);
    log.say(|| format!("read {} and nak it", ask_name(a)));
    nak(m, s, b, a, log);
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
    let now = s.now;
    let msg = &mut s.messages[a as usize];
    let before = msg.status;
    let taken = in_progress && counts(m, before, b);
    if let (true, Status::Delivered { ack_in, .. }) = (taken, &mut msg.status) {
        *ack_in = m.bounds.ack_wait_ticks();
    }
    if in_progress {
        log.mark(match before {
            Status::Delivered { to, .. } if taken && to == b => Path::HeartbeatRestarts,
            Status::Delivered { .. } if taken => Path::HeartbeatRestartsHeld,
            Status::Delivered { .. } => Path::HeartbeatIgnored,
            Status::Available => Path::HeartbeatAvailable,
            Status::Acked => Path::HeartbeatAcked,
            Status::Exhausted => Path::HeartbeatExhausted,
        });
    }
    log.say(|| {
        let put = if key {
            "put the running key"
        } else {
            "the running key is not put"
        };
        let progress = match before {
            _ if !in_progress => "no AckProgress (in-progress) is sent".to_string(),
            Status::Delivered { to, .. } if taken => {
                let held = if to == b {
                    String::new()
                } else {
                    format!(" (delivered to {} now)", builder_name(to))
                };
                format!(
                    "AckProgress (in-progress) restarts the ack wait of {}{held}, to run out at {}",
                    ask_name(a),
                    at(now as i16 + m.bounds.ack_wait_ticks() as i16)
                )
            }
            Status::Delivered { to, .. } => format!(
                "AckProgress (in-progress) is ignored: {} holds {} now (stale-ack-ignored)",
                builder_name(to),
                ask_name(a)
            ),
            Status::Available => format!(
                "AckProgress (in-progress) changes nothing: {} waits to be delivered again, no ack wait runs",
                ask_name(a)
            ),
            Status::Acked => format!(
                "AckProgress (in-progress) changes nothing: {} is already acked",
                ask_name(a)
            ),
            Status::Exhausted => format!(
                "AckProgress (in-progress) changes nothing: {} is out of deliveries (max_deliver {})",
                ask_name(a),
                m.bounds.max_deliver
            ),
        };
        format!("heartbeat {}: {put}; {progress}", ask_name(a))
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
    log.mark(if again {
        Path::FinishAgain
    } else {
        Path::FinishResult
    });
    log.say(|| {
        format!(
            "build of {} ends after {} s: announce the result{}",
            ask_name(a),
            seconds(run.built),
            if again { " (again)" } else { "" }
        )
    });
    if !acked {
        log.mark(Path::FinishAckLost);
        log.say(|| {
            format!(
                "ack {}: lost on the way, the server never receives it",
                ask_name(a)
            )
        });
    } else if m.does(Act::AckFinish) {
        ack(m, s, b, a, log);
    }
    // The source deletes the pull request's key, whoever put it last;
    // `done_key` keeps it, marked done, to the end of its TTL.
    if m.done_key() {
        s.keys[a as usize] = Some(Key::put(b, true));
        wrote_key(m, s, b, a);
        log.mark(Path::FinishKeyDone);
        log.say(|| "put the running key, marked done".into());
    } else if m.does(Act::DeleteKeyAtFinish) {
        s.keys[a as usize] = None;
        wrote_key(m, s, b, a);
        log.mark(Path::FinishKeyDeleted);
        log.say(|| "delete the running key".into());
    }
}
