//! Telling a path of the link model: every step at its server time (`t=65s`),
//! each builder with its own clock where the skew is not zero, and the rows
//! that changed. What each step says is in `say.rs`, told from the records
//! the step left.

mod say;

use super::{
    ask_name, at, builder_name, Action, Ask, Bid, Link, Log, State, Status, ASKS_COMPLETE,
    ASKS_FINISH, BUILDERS_FREE, KEY_LIFETIME, NO_DOUBLE_RUN, NO_LOST_ASK, NO_RUN_AFTER_RESULT,
    SOME_DROPPED, SOME_REDELIVERED, TICK_SECONDS,
};
use crate::{diff_rows, Narrated, Progress, ScriptError, StoryStep, Value};
use say::Ledger;
use stateright::Model;

impl Link {
    /// `b2` or, with a skew, `b2 (its clock t=25s)`.
    fn builder_label(&self, s: &State, b: Bid) -> String {
        let offset = s.builders[b as usize].offset;
        if self.bounds.skew == 0 {
            builder_name(b)
        } else {
            format!(
                "{} (its clock {})",
                builder_name(b),
                at(s.now as i16 + offset as i16)
            )
        }
    }

    fn actor(&self, s: &State, action: Action) -> String {
        let who = match action.builder() {
            None if matches!(action, Action::Queue(_)) => "server".to_string(),
            None => "time".to_string(),
            Some(b) if action.is_fault() => format!("fault on {}", self.builder_label(s, b)),
            Some(b) => self.builder_label(s, b),
        };
        format!("{} {who}", at(s.now as i16))
    }
}

fn word(action: Action) -> String {
    let (verb, b) = match action {
        Action::Tick => return "tick".into(),
        Action::Queue(a) => return format!("queue {}", ask_name(a)),
        Action::Fetch(b) => ("fetch", b),
        Action::FetchLate(b) => ("fetch-late", b),
        Action::Land(b) => ("land", b),
        Action::FetchEarlier(b) => ("fetch-earlier", b),
        Action::Answer(b) => ("answer", b),
        Action::Take(b) => ("take", b),
        Action::Read(b) => ("read", b),
        Action::Start(b) => ("start", b),
        Action::Drop(b) => ("drop", b),
        Action::Heartbeat(b) => ("heartbeat", b),
        Action::Finish(b) => ("finish", b),
        Action::Crash(b) => ("crash", b),
        Action::Delay(b) => ("delay", b),
        Action::SlowAnswer(b) => ("slow-answer", b),
        Action::FinishAckLost(b) => ("finish-ack-lost", b),
        Action::Nak(b) => ("nak", b),
        Action::Rewind(b) => ("rewind", b),
    };
    format!("{verb} {}", builder_name(b))
}

fn parse_word(text: &str, builders: u8) -> Result<Action, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let builder = |w: &str| -> Result<Bid, String> {
        let n: u8 = w
            .strip_prefix('b')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("`{w}` is not a builder (b1, b2, ...)"))?;
        if n == 0 || n > builders {
            return Err(format!("there is no builder {w} (b1 to b{builders})"));
        }
        Ok(n - 1)
    };
    let ask = |w: &str| -> Result<Ask, String> {
        w.strip_prefix('A')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|&n| n >= 1)
            .map(|n| n - 1)
            .ok_or_else(|| format!("`{w}` is not an ask (A1, A2, ...)"))
    };
    Ok(match words.as_slice() {
        ["tick"] => Action::Tick,
        ["queue", a] => Action::Queue(ask(a)?),
        ["fetch", b] => Action::Fetch(builder(b)?),
        ["fetch-late", b] => Action::FetchLate(builder(b)?),
        ["land", b] => Action::Land(builder(b)?),
        ["fetch-earlier", b] => Action::FetchEarlier(builder(b)?),
        ["answer", b] => Action::Answer(builder(b)?),
        ["take", b] => Action::Take(builder(b)?),
        ["read", b] => Action::Read(builder(b)?),
        ["start", b] => Action::Start(builder(b)?),
        ["drop", b] => Action::Drop(builder(b)?),
        ["heartbeat", b] => Action::Heartbeat(builder(b)?),
        ["finish", b] => Action::Finish(builder(b)?),
        ["crash", b] => Action::Crash(builder(b)?),
        ["delay", b] => Action::Delay(builder(b)?),
        ["slow-answer", b] => Action::SlowAnswer(builder(b)?),
        ["finish-ack-lost", b] => Action::FinishAckLost(builder(b)?),
        ["nak", b] => Action::Nak(builder(b)?),
        ["rewind", b] => Action::Rewind(builder(b)?),
        _ => {
            return Err(format!(
                "`{text}` is not a step (tick, queue A1, fetch b1, fetch-late b1, land b1, fetch-earlier b1, answer b1, take b1, read b1, start b1, drop b1, heartbeat b1, finish b1, crash b1, delay b1, slow-answer b1, finish-ack-lost b1, nak b1, rewind b1)"
            ))
        }
    })
}

fn ask_list(asks: impl Iterator<Item = Ask>) -> String {
    asks.map(ask_name).collect::<Vec<_>>().join(", ")
}

impl Link {
    /// The state as rows; with a story's ledger, each running key at its
    /// last put (and gone at the end of its TTL) rather than at its clamped
    /// age.
    fn rows_told(&self, s: &State, ledger: Option<&Ledger>) -> Vec<(String, String)> {
        let now = s.now as i16;
        let mut rows = vec![("time".to_string(), at(now))];
        for (a, m) in s.messages.iter().enumerate() {
            let a = a as Ask;
            let deliveries = format!(
                "deliveries {} of max_deliver {}",
                m.deliveries, self.bounds.max_deliver
            );
            let status = match m.status {
                Status::Available if m.queue > 0 => {
                    format!(
                        "available, place {} in the redelivery queue, {deliveries}",
                        m.queue
                    )
                }
                Status::Available => format!("available, {deliveries}"),
                Status::Delivered { to, ack_in } => format!(
                    "delivered to {}, ack wait runs out {}, {deliveries}",
                    builder_name(to),
                    at(now + ack_in as i16)
                ),
                Status::Acked => "acked (gone)".into(),
                // Out of deliveries, yet a wound-back cursor sends it again.
                Status::Exhausted if m.again => format!("out of deliveries, {deliveries}"),
                Status::Exhausted => format!("never delivered again, {deliveries}"),
            };
            let status = if m.again {
                format!("{status}; the server's cursor wound back to it: it goes out again as new")
            } else {
                status
            };
            rows.push((format!("{} message", ask_name(a)), status));
            let put_at = ledger.and_then(|l| l.put_at[a as usize]);
            if let Some(key) = s.keys[a as usize] {
                // An age not clamped tells the put's time as well as a ledger.
                let unclamped = (key.done || key.age < self.stale_at()).then(|| s.now - key.age);
                let put = match put_at.or(unclamped) {
                    _ if ledger.is_some_and(|l| l.expired(a, s.now)) => None,
                    Some(p) => Some(format!(
                        "last put {}, TTL ends {}",
                        at(p as i16),
                        at(p as i16 + KEY_LIFETIME as i16)
                    )),
                    None => Some(format!(
                        "last put at or before {} (stale by every clock)",
                        at(now - key.age as i16)
                    )),
                };
                if let Some(put) = put {
                    rows.push((
                        format!("{} running key", ask_name(a)),
                        format!(
                            "{}{}, {put}",
                            builder_name(key.builder),
                            if key.done { ", done" } else { "" }
                        ),
                    ));
                }
            }
            if s.results[a as usize] {
                rows.push((format!("{} result", ask_name(a)), "announced".into()));
            }
        }
        for (b, builder) in s.builders.iter().enumerate() {
            let name = builder_name(b as Bid);
            let state = match builder.run {
                None => match builder.decided {
                    Some(d) if d.duplicate => {
                        format!("read {}: a duplicate, to be acked", ask_name(d.ask))
                    }
                    Some(d) if d.conflict => format!(
                        "read {}: to be started, its key written since (the revision-checked put will fail)",
                        ask_name(d.ask)
                    ),
                    Some(d) => format!("read {}: to be started", ask_name(d.ask)),
                    None => "idle".to_string(),
                },
                Some(run) => {
                    let heartbeat = if run.heartbeat_in > 0 {
                        format!("next heartbeat {}", at(now + run.heartbeat_in as i16))
                    } else if run.grace > 0 {
                        format!(
                            "heartbeat late, by up to {} s more",
                            run.grace as u16 * TICK_SECONDS
                        )
                    } else {
                        "heartbeat due".into()
                    };
                    format!(
                        "building {} since {}, {heartbeat}",
                        ask_name(run.ask),
                        at(now - run.built as i16)
                    )
                }
            };
            rows.push((name.clone(), state));
            if !builder.buffer.is_empty() {
                rows.push((
                    format!("{name} buffer"),
                    format!("[{}]", ask_list(builder.buffer.iter().copied())),
                ));
            }
            if builder.open {
                rows.push((
                    format!("{name} pull request"),
                    "open on the server, its fetch no longer waiting".into(),
                ));
            }
            if let Some(a) = builder.on_the_way {
                rows.push((
                    format!("{name} late answer"),
                    format!("{} on the way", ask_name(a)),
                ));
            }
        }
        rows
    }
}

impl Narrated for Link {
    fn progress(&self) -> Vec<Progress<Self>> {
        vec![
            Progress {
                name: ASKS_COMPLETE,
                pending: |m: &Self, s: &State| m.incomplete(s),
            },
            Progress {
                name: BUILDERS_FREE,
                pending: |m: &Self, s: &State| m.busy(s),
            },
        ]
    }

    fn fairness(&self, _s: &State, action: &Action) -> Option<u64> {
        self.fairness_of(action)
    }

    fn stopped_by_bounds(&self, s: &State) -> bool {
        self.at_horizon(s)
    }

    fn rows(&self, s: &State) -> Vec<(String, String)> {
        self.rows_told(s, None)
    }

    /// Messages live in the consumer, running keys in the bucket, results
    /// where they are announced; a builder's buffer and late answer are the
    /// builder's own.
    fn lane(&self, row: &str) -> String {
        if row.ends_with(" message") {
            "consumer".into()
        } else if row.ends_with(" running key") {
            "bucket".into()
        } else if row.ends_with(" result") {
            "results".into()
        } else {
            row.split(' ').next().unwrap_or(row).into()
        }
    }

    fn values(&self, s: &State) -> Vec<(String, Value)> {
        let int = |n: i64| Value::Int(n);
        let text = |t: &str| Value::Str(t.to_string());
        let asks = Value::Map(
            (0..s.messages.len())
                .map(|a| {
                    let m = s.messages[a];
                    let (status, holder, deadline) = match m.status {
                        Status::Available => ("available", None, None),
                        Status::Delivered { to, ack_in } => {
                            ("delivered", Some(to), Some(s.now as i64 + ack_in as i64))
                        }
                        Status::Acked => ("acked", None, None),
                        Status::Exhausted => ("exhausted", None, None),
                    };
                    // A clamped age knows only a latest time of the put.
                    let key = match s.keys[a] {
                        Some(k) => Value::Record(vec![
                            ("builder".into(), Value::Str(builder_name(k.builder))),
                            (
                                if k.age >= self.stale_at() {
                                    "seen_at_or_before_s"
                                } else {
                                    "seen_s"
                                }
                                .into(),
                                int((s.now as i64 - k.age as i64) * TICK_SECONDS as i64),
                            ),
                        ]),
                        None => Value::Record(vec![]),
                    };
                    (
                        Value::Str(ask_name(a as Ask)),
                        Value::Record(vec![
                            ("status".into(), text(status)),
                            (
                                "holder".into(),
                                text(&holder.map(builder_name).unwrap_or_default()),
                            ),
                            (
                                "deadline_s".into(),
                                int(deadline.map_or(-1, |d| d * TICK_SECONDS as i64)),
                            ),
                            ("deliveries".into(), int(m.deliveries as i64)),
                            ("running_key".into(), key),
                            ("result".into(), Value::Bool(s.results[a])),
                        ]),
                    )
                })
                .collect(),
        );
        let builders = Value::Map(
            s.builders
                .iter()
                .enumerate()
                .map(|(b, builder)| {
                    let decided = match builder.decided {
                        Some(d) => Value::Record(vec![
                            ("ask".into(), Value::Str(ask_name(d.ask))),
                            ("duplicate".into(), Value::Bool(d.duplicate)),
                        ]),
                        None => Value::Record(vec![]),
                    };
                    let run = match builder.run {
                        Some(r) => Value::Record(vec![
                            ("ask".into(), Value::Str(ask_name(r.ask))),
                            ("built_s".into(), int(r.built as i64 * TICK_SECONDS as i64)),
                            (
                                "heartbeat_in_s".into(),
                                int(r.heartbeat_in as i64 * TICK_SECONDS as i64),
                            ),
                            ("grace_s".into(), int(r.grace as i64 * TICK_SECONDS as i64)),
                        ]),
                        None => Value::Record(vec![]),
                    };
                    (
                        Value::Str(builder_name(b as Bid)),
                        Value::Record(vec![
                            (
                                "offset_s".into(),
                                int(builder.offset as i64 * TICK_SECONDS as i64),
                            ),
                            ("run".into(), run),
                            (
                                "buffer".into(),
                                Value::List(
                                    builder
                                        .buffer
                                        .iter()
                                        .map(|&a| Value::Str(ask_name(a)))
                                        .collect(),
                                ),
                            ),
                            (
                                "late_answer".into(),
                                Value::Str(builder.on_the_way.map(ask_name).unwrap_or_default()),
                            ),
                            ("decided".into(), decided),
                        ]),
                    )
                })
                .collect(),
        );
        vec![
            ("now_s".into(), int(s.now as i64 * TICK_SECONDS as i64)),
            ("asks".into(), asks),
            ("builders".into(), builders),
            ("crashes_left".into(), int(s.crashes_left as i64)),
            ("lates_left".into(), int(s.lates_left as i64)),
            ("dropped".into(), Value::Bool(s.dropped)),
        ]
    }

    /// Replays the path with a ledger of the keys' puts, which the state
    /// does not keep.
    fn tell(&self, init: &State, actions: &[Action]) -> Vec<StoryStep> {
        let mut state = *init;
        let mut ledger = Ledger::of(self, init);
        let mut steps = Vec::new();
        for &action in actions {
            let mut log = Log::recording();
            let next = self.apply(&state, action, &mut log);
            let said = self.say(&state, action, &log.records(), &ledger);
            let before = self.rows_told(&state, Some(&ledger));
            ledger.record(&next);
            steps.push(StoryStep {
                actor: self.actor(&state, action),
                action: said,
                changes: diff_rows(&before, &self.rows_told(&next, Some(&ledger))),
            });
            state = next;
        }
        steps
    }

    fn words(&self, _init: &State, actions: &[Action]) -> Vec<String> {
        actions.iter().map(|&a| word(a)).collect()
    }

    fn parse(&self, init: &State, script: &[String]) -> Result<Vec<Action>, ScriptError> {
        let mut state = *init;
        let mut actions = Vec::new();
        for (index, text) in script.iter().enumerate() {
            let fail = |message: String| ScriptError { index, message };
            let action = parse_word(text, self.bounds.builders).map_err(fail)?;
            let mut enabled = Vec::new();
            self.actions(&state, &mut enabled);
            if !enabled.contains(&action) {
                return Err(fail(format!(
                    "`{text}` is not enabled at {}",
                    at(state.now as i16)
                )));
            }
            state = self.apply(&state, action, &mut Log::quiet());
            actions.push(action);
        }
        Ok(actions)
    }

    fn explain(&self, property: &str, s: &State) -> String {
        let now = at(s.now as i16);
        let asks = 0..s.messages.len() as Ask;
        match property {
            NO_DOUBLE_RUN => {
                let doubled: Vec<String> = asks
                    .filter(|&a| s.runners(a).count() > 1)
                    .map(|a| {
                        let who: Vec<String> =
                            s.runners(a).map(|b| self.builder_label(s, b)).collect();
                        format!("{} is built by {}", ask_name(a), who.join(" and "))
                    })
                    .collect();
                format!("no-double-run violated at {now}: {}", doubled.join("; "))
            }
            NO_LOST_ASK => format!(
                "no-lost-ask violated at {now}: {} has no result, nobody builds it, no buffer holds it and the server will never hand it out again",
                ask_list(asks.filter(|&a| s.is_lost(a)))
            ),
            NO_RUN_AFTER_RESULT => {
                let again: Vec<String> = asks
                    .filter(|&a| s.results[a as usize] && s.runners(a).next().is_some())
                    .map(|a| {
                        let who: Vec<String> =
                            s.runners(a).map(|b| self.builder_label(s, b)).collect();
                        format!("{} is built again by {}", ask_name(a), who.join(" and "))
                    })
                    .collect();
                format!(
                    "no-run-after-result violated at {now}: {}, after its result was announced",
                    again.join("; ")
                )
            }
            ASKS_FINISH => format!(
                "asks-finish violated at {now}: nothing can happen any more, yet {} has no result",
                ask_list(asks.filter(|&a| !s.results[a as usize]))
            ),
            SOME_REDELIVERED => format!(
                "some-redelivered reached at {now}: {} handed out more than once",
                ask_list(asks.filter(|&a| s.messages[a as usize].deliveries >= 2))
            ),
            SOME_DROPPED => format!("some-dropped reached at {now}: a builder dropped an ask as a duplicate"),
            ASKS_COMPLETE | BUILDERS_FREE => self.pending_words(property, s),
            other => format!("{other}: no such property"),
        }
    }
}
