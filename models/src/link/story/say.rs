//! A step's words: the story tells the records a step left (`log.rs`), with
//! what its ledger knows of the keys that the state does not. Every
//! sentence a story says of a step is here.

use super::super::log::{AckOutcome, Check, DropThen, NakOutcome, Progress, Record};
use super::super::{
    ask_name, at, builder_name, Action, Ask, Bid, Link, State, Status, KEY_LIFETIME, MAX_ASKS,
    TICK_SECONDS,
};

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

fn seconds(ticks: u8) -> u16 {
    ticks as u16 * TICK_SECONDS
}

/// The time `ticks` from now, as a story writes it.
fn from_now(s: &State, ticks: u8) -> String {
    at(s.now as i16 + ticks as i16)
}

impl Link {
    /// What the step `action` from `s`, which left `records`, says: its
    /// sentences joined.
    pub(super) fn say(
        &self,
        s: &State,
        action: Action,
        records: &[Record],
        ledger: &Ledger,
    ) -> String {
        let b = action.builder().unwrap_or_default();
        let mut lines: Vec<String> = Vec::new();
        for &record in records {
            self.say_record(s, b, record, ledger, &mut lines);
        }
        if action == Action::Tick {
            lines.extend(self.keys_expiring(s, records, ledger));
        }
        lines.join("; ")
    }

    /// The sentences of one record of a step by `b` from `s`.
    fn say_record(
        &self,
        s: &State,
        b: Bid,
        record: Record,
        ledger: &Ledger,
        lines: &mut Vec<String>,
    ) {
        let max_deliver = self.bounds.max_deliver;
        let delivered = |a: Ask, n: u8| {
            format!(
                "{} delivered (delivery {n}, max_deliver {max_deliver})",
                ask_name(a)
            )
        };
        let mut say = |line: String| lines.push(line);
        match record {
            Record::Fetch { ask, delivery } => {
                say("fetch: the server answers its pull request at once".into());
                say(delivered(ask, delivery));
                say(format!("{} into its buffer", ask_name(ask)));
            }
            Record::FetchGivesUp {
                ask,
                delivery,
                slow,
            } => {
                say(if slow {
                    "fetch gives up empty-handed: the network delays its pull request's answer past the fetch margin; the server answers that pull request"
                } else {
                    "fetch gives up empty-handed before its pull request expires on the server (no fetch margin); the server answers that pull request"
                }.into());
                say(delivered(ask, delivery));
                say(format!("the answer, {}, is still on the way", ask_name(ask)));
            }
            Record::FetchEarlier { ask } => say(format!(
                "fetch: it sends a new pull request, and the answer to its earlier one, {}, arrives first: the fetch returns it; its own pull request stays open on the server",
                ask_name(ask)
            )),
            Record::Answer {
                ask,
                delivery,
                busy,
            } => {
                say(match busy {
                    Some(r) => format!(
                        "the server answers its open pull request, though it builds {}",
                        ask_name(r)
                    ),
                    None => "the server answers its open pull request, which its fetch no longer waits on".into(),
                });
                say(delivered(ask, delivery));
                say(format!("the answer, {}, is on the way", ask_name(ask)));
            }
            Record::Land {
                ask,
                busy,
                handed_back,
            } => say(match busy {
                Some(r) if handed_back => format!(
                    "the late answer to its pull request lands while it builds {}: hand {} back",
                    ask_name(r),
                    ask_name(ask)
                ),
                Some(r) => format!(
                    "the late answer to its pull request lands while it builds {}: {} into its buffer",
                    ask_name(r),
                    ask_name(ask)
                ),
                None => format!(
                    "the late answer to its pull request lands: {} into its buffer",
                    ask_name(ask)
                ),
            }),
            Record::Read {
                ask,
                check,
                duplicate,
            } => {
                say(format!("read {}", ask_name(ask)));
                if let Some(line) = self.say_check(s, ask, check, duplicate, ledger) {
                    say(line);
                }
            }
            Record::Drop {
                ask,
                failed_put,
                then,
            } => {
                if failed_put {
                    say(format!(
                        "its revision-checked put of {}'s running key fails: another builder wrote the key since the read",
                        ask_name(ask)
                    ));
                }
                say(format!("drop {} as a duplicate", ask_name(ask)));
                if then == DropThen::Deferred {
                    say(format!(
                        "no ack: {} is left to its ack wait, to come back if its builder dies",
                        ask_name(ask)
                    ));
                }
            }
            Record::Start { ask, over } => {
                // A key past its TTL, which the state keeps as stale, is gone.
                let over = over.filter(|_| !ledger.expired(ask, s.now));
                say(match over {
                    Some(k) => format!(
                        "run {}, put its running key in the KV bucket over {}'s key",
                        ask_name(ask),
                        builder_name(k)
                    ),
                    None => format!("run {}, put its running key in the KV bucket", ask_name(ask)),
                });
            }
            Record::HandBack { ask } => say(format!("it is busy now: hand {} back", ask_name(ask))),
            Record::Ack { ask, outcome } => say(self.say_ack(ask, outcome)),
            Record::Nak { ask, outcome } => say(match outcome {
                NakOutcome::Nothing => format!("nak {} (nothing changes)", ask_name(ask)),
                NakOutcome::Last => format!(
                    "nak {}: at its last delivery (max_deliver {max_deliver}), the server never delivers it again",
                    ask_name(ask)
                ),
                NakOutcome::Again => {
                    format!("nak {}: the server delivers it again at once", ask_name(ask))
                }
            }),
            Record::NakFault { ask } => say(format!("read {} and nak it", ask_name(ask))),
            Record::Heartbeat { ask, key, progress } => {
                say(self.say_heartbeat(s, ask, key, progress))
            }
            Record::Finish { ask, built, again } => say(format!(
                "build of {} ends after {} s: announce the result{}",
                ask_name(ask),
                seconds(built),
                if again { " (again)" } else { "" }
            )),
            Record::AckLost { ask } => say(format!(
                "ack {}: lost on the way, the server never receives it",
                ask_name(ask)
            )),
            Record::KeyDone { .. } => say("put the running key, marked done".into()),
            Record::KeyDeleted { .. } => say("delete the running key".into()),
            Record::Tick => say(format!("{TICK_SECONDS} s pass")),
            Record::AckWaitRunsOut {
                ask,
                holder,
                last,
                due,
            } => {
                let then = if last {
                    format!("at its last delivery (max_deliver {max_deliver}): the server never delivers it again")
                } else {
                    "the server delivers it again".into()
                };
                // Where a heartbeat was due at this instant too, the order
                // the model chose decides: the story says so.
                let tie = if due.is_empty() {
                    String::new()
                } else {
                    let who: Vec<String> = due.iter().map(|&b| builder_name(b)).collect();
                    format!(
                        " ({}'s heartbeat is due at this same instant; the model lets the ack wait run out first, so its AckProgress comes too late to restart it)",
                        who.join(" and ")
                    )
                };
                say(format!(
                    "at {} the ack wait of {} runs out unacked by {}{tie}: {then}",
                    at(s.now as i16 + 1),
                    ask_name(ask),
                    builder_name(holder)
                ));
            }
            // Told with the keys the ledger sees expire (`keys_expiring`).
            Record::KeyExpires { .. } => {}
            Record::QueueFirst { ask, others } => {
                let names: Vec<String> = others.iter().map(|&x| ask_name(x)).collect();
                say(format!(
                    "the server's redelivery queue: the ack wait of {} ran out before that of {} (within the same tick), so the server hands {} out first",
                    ask_name(ask),
                    names.join(" and "),
                    ask_name(ask)
                ));
            }
            Record::Crash { lost } => say(self.say_crash(s, b, lost)),
            Record::Delay { late } => say(format!(
                "its heartbeat (the key's put and the AckProgress) is late, by up to {} s",
                seconds(late)
            )),
            Record::Rewind {
                ask,
                counted,
                back_to,
                fetching,
            } => {
                say(format!(
                    "{} just as the server takes {} from its redelivery queue for it: the delivery fails (nats-server before 2.10.14), yet the server counts it (delivery {counted}, max_deliver {max_deliver}) and leaves {} to its ack wait, due {}",
                    if fetching {
                        "its fetch's pull request expires, and the fetch gives up empty-handed,"
                    } else {
                        "its open pull request expires"
                    },
                    ask_name(ask),
                    ask_name(ask),
                    from_now(s, self.bounds.ack_wait_ticks())
                ));
                say(match back_to {
                    Some(y) => format!(
                        "the server winds its cursor of new messages back one, to {}, the last it handed out new: {} will go out again as if never delivered",
                        ask_name(y),
                        ask_name(y)
                    ),
                    None => "the server winds its cursor of new messages back one, to a message acked and gone from the stream: nothing goes out again".into(),
                });
            }
            Record::AsNew { ask, counted } => say(format!(
                "the server's wound-back cursor hands {} out as never delivered: this delivery says 1 (the server keeps {counted} for max_deliver, and counts this one nowhere)",
                ask_name(ask)
            )),
        }
    }

    /// What a read found of `a`'s running key and decided; `None` when the
    /// design reads no key.
    fn say_check(
        &self,
        s: &State,
        a: Ask,
        check: Check,
        duplicate: bool,
        ledger: &Ledger,
    ) -> Option<String> {
        let get = format!("get {}'s running key from the KV bucket", ask_name(a));
        let (key, own, clock, fresh) = match check {
            Check::Unchecked => return None,
            Check::NoKey => return Some(format!("{get}: there is none; decide to run it")),
            Check::Key { key, .. } if key.done => {
                return Some(format!(
                    "{get}: {} left it done; decide to drop it",
                    builder_name(key.builder)
                ))
            }
            Check::Key {
                key,
                own,
                clock,
                fresh,
                ..
            } => (key, own, clock, fresh),
        };
        let then = if duplicate {
            "decide to drop it as a duplicate"
        } else {
            "decide to run it"
        };
        let now = s.now;
        let put_at = ledger.put_at[a as usize];
        if let Some(p) = put_at.filter(|_| ledger.expired(a, now)) {
            return Some(format!(
                "{get}: last put {}, it expired {} s after it (the KV bucket's TTL), so there is none; {then}",
                at(p as i16),
                seconds(KEY_LIFETIME)
            ));
        }
        let verdict = if own {
            "its own".to_string()
        } else if fresh {
            format!("fresh (under {} s)", self.bounds.fresh_for)
        } else {
            format!("stale ({} s or more)", self.bounds.fresh_for)
        };
        // The state's age stops where every clock reads it stale; the
        // story's ledger knows the put itself.
        let (put, age) = match put_at {
            Some(p) => (format!("last put {}", at(p as i16)), now - p),
            None => ("last put".to_string(), key.age),
        };
        let at_least = if put_at.is_none() && key.age >= self.stale_at() {
            "at least "
        } else {
            ""
        };
        Some(format!(
            "{get}: it names {}, {put}: {at_least}{} s ago by the server's clock, {at_least}{} s by its own: {verdict}; {then}",
            builder_name(key.builder),
            seconds(age),
            (age as i16 + clock as i16) * TICK_SECONDS as i16,
        ))
    }

    fn say_ack(&self, a: Ask, outcome: AckOutcome) -> String {
        let why = match outcome {
            AckOutcome::Removes => return format!("ack {}: the server removes it", ask_name(a)),
            AckOutcome::RemovesHeld(to) => {
                return format!(
                    "ack {}: the server removes it, though {} holds it now",
                    ask_name(a),
                    builder_name(to)
                )
            }
            AckOutcome::AlreadyGone => "already gone".to_string(),
            AckOutcome::Exhausted => format!(
                "out of deliveries (max_deliver {})",
                self.bounds.max_deliver
            ),
            AckOutcome::IgnoredHeld(to) => format!(
                "ignored: {} holds it now (stale-ack-ignored)",
                builder_name(to)
            ),
            AckOutcome::IgnoredAvailable => {
                "ignored: it waits to be delivered again (stale-ack-ignored)".to_string()
            }
        };
        format!("ack {} ({why})", ask_name(a))
    }

    fn say_heartbeat(&self, s: &State, a: Ask, key: bool, progress: Option<Progress>) -> String {
        let put = if key {
            "put the running key"
        } else {
            "the running key is not put"
        };
        let progress = match progress {
            None => "no AckProgress (in-progress) is sent".to_string(),
            Some(Progress::Restarts { held }) => {
                let held = match held {
                    None => String::new(),
                    Some(to) => format!(" (delivered to {} now)", builder_name(to)),
                };
                format!(
                    "AckProgress (in-progress) restarts the ack wait of {}{held}, to run out at {}",
                    ask_name(a),
                    from_now(s, self.bounds.ack_wait_ticks())
                )
            }
            Some(Progress::Ignored(to)) => format!(
                "AckProgress (in-progress) is ignored: {} holds {} now (stale-ack-ignored)",
                builder_name(to),
                ask_name(a)
            ),
            Some(Progress::Available) => format!(
                "AckProgress (in-progress) changes nothing: {} waits to be delivered again, no ack wait runs",
                ask_name(a)
            ),
            Some(Progress::Acked) => format!(
                "AckProgress (in-progress) changes nothing: {} is already acked",
                ask_name(a)
            ),
            Some(Progress::Exhausted) => format!(
                "AckProgress (in-progress) changes nothing: {} is out of deliveries (max_deliver {})",
                ask_name(a),
                self.bounds.max_deliver
            ),
        };
        format!("heartbeat {}: {put}; {progress}", ask_name(a))
    }

    /// What a crash of `b` lost, from the builder as it was and the state
    /// before it: the build, each buffered message, an answer on the way,
    /// an ask read and not yet acted on, and where each of their messages
    /// stands.
    fn say_crash(&self, s: &State, b: Bid, builder: super::super::Builder) -> String {
        let fate = |a: Ask| self.message_fate(s, b, a);
        let mut lost = Vec::new();
        if let Some(r) = builder.run {
            lost.push(format!(
                "the build of {} is lost ({})",
                ask_name(r.ask),
                fate(r.ask)
            ));
        }
        for &a in builder.buffer.iter() {
            lost.push(format!(
                "{} in its buffer is lost ({})",
                ask_name(a),
                fate(a)
            ));
        }
        if let Some(a) = builder.on_the_way {
            lost.push(format!(
                "the answer on the way, {}, never lands ({})",
                ask_name(a),
                fate(a)
            ));
        }
        if let Some(d) = builder.decided {
            lost.push(format!(
                "{}, read and not yet {}, is lost ({})",
                ask_name(d.ask),
                if d.duplicate { "acked" } else { "started" },
                fate(d.ask)
            ));
        }
        let doing = match builder.run {
            Some(r) => format!(" while building {}", ask_name(r.ask)),
            None => String::new(),
        };
        format!("crashes{doing} and restarts idle: {}", lost.join("; "))
    }

    /// Where the message of `a` stands, for a builder `b` that loses its
    /// copy: whether anything will ever hand the ask out again is what
    /// decides a loss.
    fn message_fate(&self, s: &State, b: Bid, a: Ask) -> String {
        let max_deliver = self.bounds.max_deliver;
        let msg = s.messages[a as usize];
        match msg.status {
            Status::Delivered { to, ack_in } => {
                let holder = if to == b {
                    "it".to_string()
                } else {
                    builder_name(to)
                };
                let then = if msg.deliveries >= max_deliver {
                    format!(
                        "never delivered again: that was its last delivery (max_deliver {max_deliver})"
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
                "{}'s message is out of deliveries (max_deliver {max_deliver}): the server never delivers it again",
                ask_name(a)
            ),
        }
    }

    /// The running keys that expire in a tick from `s`, in the order of
    /// their asks: those the state removes at their TTL (its records), and
    /// those it keeps as stale that the ledger sees reach their TTL now.
    fn keys_expiring(&self, s: &State, records: &[Record], ledger: &Ledger) -> Vec<String> {
        let now = s.now + 1;
        let removed = |a: Ask| {
            records
                .iter()
                .any(|r| matches!(r, Record::KeyExpires { ask } if *ask == a))
        };
        (0..s.keys.len() as Ask)
            .filter(|&a| {
                removed(a)
                    || s.keys[a as usize].is_some_and(|k| {
                        !k.done
                            && ledger.put_at[a as usize].is_some_and(|p| now - p == KEY_LIFETIME)
                    })
            })
            .map(|a| {
                format!(
                    "at {} the running key of {} expires: the KV bucket's TTL, {} s after its last put",
                    at(now as i16),
                    ask_name(a),
                    seconds(KEY_LIFETIME)
                )
            })
            .collect()
    }
}
