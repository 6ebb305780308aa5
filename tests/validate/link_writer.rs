//! An independent writer of link logs: it reads a story as a reviewer does
//! (each step's time, its builder and its words) and writes what a real
//! builder would have logged, with the asks and builders renamed. It knows
//! nothing of the model's observations (models/src/link/trace/observe.rs);
//! like the reference builder (nats/src/builder.rs), it logs a late answer
//! when the builder next fetches or reads, and a fetch's delivery count and
//! the consumer's delivery sequence (every delivery the story tells, in
//! order) as a `server` line.

use slotcheck_models::events::link::{Decision, Event};
use slotcheck_models::events::{Header, ModelName, Record};
use slotcheck_models::link::Bounds;
use slotcheck_models::StoryStep;
use std::collections::HashMap;

/// Real ms per tick in the logs written.
pub const MS_PER_TICK: u64 = 1000;

/// The header of a log of a run on these bounds: what a real system knows
/// of its own set-up (its stream's max_deliver, its clocks' skew, its
/// timings where they are not the source's).
pub fn header(bounds: &Bounds) -> Header {
    let source = Bounds::default();
    let differs = |ours: u16, theirs: u16| (ours != theirs).then_some(ours);
    Header {
        model: Some(ModelName::Link),
        ms_per_tick: Some(MS_PER_TICK),
        max_deliver: Some(bounds.max_deliver),
        skew_s: (bounds.skew > 0).then_some(bounds.skew),
        ack_wait_s: differs(bounds.ack_wait, source.ack_wait),
        heartbeat_every_s: differs(bounds.heartbeat_every, source.heartbeat_every),
        fresh_for_s: differs(bounds.fresh_for, source.fresh_for),
        // A server that may fail a redelivery and hand a message out again
        // counted 1: Debian's.
        nats_server: (bounds.rewinds > 0).then(|| "2.9.10".into()),
        ..Header::default()
    }
}

/// `A2` as the system names it.
pub fn ask(model_name: &str) -> String {
    format!("check-{}", 100 + model_name[1..].parse::<u32>().unwrap())
}

fn builder(model_name: &str) -> String {
    format!("bld-{}", &model_name[1..])
}

/// What the writer tracks of each builder: the answer on the way, the late
/// answers in its subscription, the ask it is finishing.
#[derive(Default)]
struct Builder {
    on_the_way: Option<(String, u64, u64)>,
    landed: Vec<(String, u64, u64)>,
    finishing: Option<String>,
}

struct Writer {
    out: Vec<Record<Event>>,
    tick: u64,
    in_tick: u64,
}

impl Writer {
    fn say(&mut self, actor: &str, event: Event) {
        let ts = self.tick * MS_PER_TICK + (self.in_tick * 5).min(300);
        self.in_tick += 1;
        self.out.push(Record {
            model: None,
            queue: String::new(),
            ts_ms: Some(ts),
            process: None,
            seq: None,
            actor: actor.to_string(),
            event,
        });
    }
}

/// The first word like `A3` in `text`.
fn ask_in(text: &str) -> String {
    let word = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| w.len() >= 2 && w.starts_with('A') && w[1..].chars().all(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no ask in `{text}`"));
    ask(word)
}

/// The number after `(delivery `.
fn delivery(text: &str) -> u64 {
    let rest = &text[text.find("(delivery ").expect("a delivery count") + 10..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The log of a story of `asks` asks.
pub fn write(story: &[StoryStep], asks: u8) -> Vec<Record<Event>> {
    let mut w = Writer {
        out: Vec::new(),
        tick: 0,
        in_tick: 0,
    };
    for a in 1..=asks {
        w.say(
            "client",
            Event::Publish {
                ask: ask(&format!("A{a}")),
            },
        );
    }
    let mut builders: HashMap<String, Builder> = HashMap::new();
    // The consumer's delivery sequence: every delivery the story tells.
    let mut seq = 0u64;
    for step in story {
        let mut words = step.actor.split_whitespace();
        let time = words.next().unwrap();
        let seconds: u64 = time
            .trim_start_matches("t=")
            .trim_end_matches('s')
            .parse()
            .unwrap();
        if seconds / 5 != w.tick {
            w.tick = seconds / 5;
            w.in_tick = 0;
        }
        let who = match words.next() {
            // Time, and the server's order of its redelivery queue: no
            // builder logs them.
            Some("time") | Some("server") | None => continue,
            Some("fault") => {
                words.next(); // "on"
                words.next().unwrap()
            }
            Some(b) => b,
        };
        let actor = builder(who);
        let b = builders.entry(actor.clone()).or_default();
        let clauses: Vec<&str> = step.action.split("; ").collect();
        let drain = |b: &mut Builder, w: &mut Writer| {
            for (a, n, q) in b.landed.drain(..) {
                w.say(&actor, Event::LateAnswer { ask: a.clone() });
                w.say(
                    &actor,
                    Event::Server {
                        ask: Some(a),
                        num_delivered: Some(n),
                        consumer_seq: Some(q),
                    },
                );
            }
        };
        for (i, c) in clauses.iter().enumerate() {
            let next = clauses.get(i + 1).copied().unwrap_or("");
            // The delivery a fetch made, a clause or two later.
            let delivered = clauses[i..]
                .iter()
                .find(|c| c.contains(" delivered (delivery "))
                .copied()
                .unwrap_or("");
            // That delivery's place in the consumer's sequence.
            let next_seq = seq + 1;
            if c.contains(" delivered (delivery ") {
                seq += 1;
            }
            if c.starts_with("fetch: the server answers") {
                drain(b, &mut w);
                let a = ask_in(delivered);
                w.say(
                    &actor,
                    Event::Fetch {
                        got: Some(a.clone()),
                    },
                );
                w.say(
                    &actor,
                    Event::Server {
                        ask: Some(a),
                        num_delivered: Some(delivery(delivered)),
                        consumer_seq: Some(next_seq),
                    },
                );
            } else if c.starts_with("fetch: it sends a new pull request") {
                // the client's fetch: the fetch returns the earlier request's
                // answer, as any fetch returns a message.
                drain(b, &mut w);
                let (a, n, q) = b.on_the_way.take().expect("an answer on the way");
                w.say(
                    &actor,
                    Event::Fetch {
                        got: Some(a.clone()),
                    },
                );
                w.say(
                    &actor,
                    Event::Server {
                        ask: Some(a),
                        num_delivered: Some(n),
                        consumer_seq: Some(q),
                    },
                );
            } else if c.starts_with("the server answers its open pull request") {
                b.on_the_way = Some((ask_in(delivered), delivery(delivered), next_seq));
            } else if c.starts_with("its fetch's pull request expires") {
                // A redelivery the server failed: the fetch got nothing.
                drain(b, &mut w);
                w.say(&actor, Event::Fetch { got: None });
            } else if c.starts_with("fetch gives up") {
                drain(b, &mut w);
                w.say(&actor, Event::Fetch { got: None });
                b.on_the_way = Some((ask_in(delivered), delivery(delivered), next_seq));
            } else if c.contains("the late answer to its pull request lands") {
                let landed = b.on_the_way.take().expect("an answer on the way");
                if c.ends_with("into its buffer") {
                    b.landed.push(landed);
                }
            } else if c.starts_with("read A") {
                drain(b, &mut w);
                w.say(&actor, Event::Take { ask: ask_in(c) });
            } else if c.starts_with("get ") && c.contains("running key from the KV bucket") {
                let found = !c.contains("there is none");
                let named = c
                    .split_whitespace()
                    .find(|t| {
                        t.starts_with('b')
                            && t.len() >= 2
                            && t[1..]
                                .trim_end_matches(',')
                                .chars()
                                .all(|d| d.is_ascii_digit())
                    })
                    .map(|t| builder(t.trim_end_matches(',')));
                let age_ms = c.find(" s by its own").map(|end| {
                    let number = c[..end].rsplit(' ').next().unwrap();
                    number.parse::<i64>().unwrap().max(0) as u64 / 5 * MS_PER_TICK
                });
                let decision = if next.starts_with("decide to drop") {
                    Decision::Drop
                } else {
                    Decision::Run
                };
                w.say(
                    &actor,
                    Event::KvGet {
                        ask: ask_in(c),
                        found,
                        builder: named.filter(|_| found),
                        age_ms: age_ms.filter(|_| found),
                        decision,
                    },
                );
            } else if c.starts_with("run A") {
                let a = ask_in(c);
                w.say(&actor, Event::Put { ask: a.clone() });
                w.say(&actor, Event::BuildStart { ask: a });
            } else if c.starts_with("ack A") {
                if !c.contains("lost on the way") {
                    w.say(&actor, Event::Ack { ask: ask_in(c) });
                }
            } else if c.starts_with("nak A") {
                w.say(&actor, Event::Nak { ask: ask_in(c) });
            } else if c.starts_with("heartbeat A") {
                w.say(&actor, Event::Heartbeat { ask: ask_in(c) });
            } else if c.starts_with("build of A") {
                let a = ask_in(c);
                b.finishing = Some(a.clone());
                w.say(&actor, Event::BuildFinish { ask: a });
            } else if *c == "delete the running key" {
                let a = b.finishing.take().expect("a finish");
                w.say(&actor, Event::KvDelete { ask: a });
            } else if *c == "put the running key, marked done" {
                let a = b.finishing.take().expect("a finish");
                w.say(&actor, Event::Put { ask: a });
            } else if c.starts_with("crashes") {
                b.on_the_way = None;
                b.landed.clear();
            }
        }
    }
    w.out
}
