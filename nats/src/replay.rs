//! `slotcheck replay --on nats TRACE`: a model's story run on the real
//! server, step by step, with the same builders and the same faults in the
//! same order; then the property the story violates, judged from the
//! server's evidence.
//!
//! The model names asks by publication order; the server may hand them out
//! in another (a late answer and the next fetch's answer come back in the
//! order of the connection, not of the story), so the replay binds each
//! model ask to the real one the first time a step shows which, and says so.

use crate::builder::{Fetched, Started};
use crate::bus::{Bus, Error, Evidence, Names};
use crate::design::{Design, Timing};
use crate::log::Log;
use crate::machine::{BuilderKind, Machine};
use crate::proxy::Proxy;
use crate::script::{ask_status, builder_view, Action, Script};
use crate::verdict::{self, Violations};
use slotcheck_models::events::link::Decision;
use slotcheck_models::events::{Header, ModelName};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Which builder runs the story: the reference one (async-nats) or the
    /// Go one (nats.go).
    pub builder: BuilderKind,
    /// The builder's design; by default the trace's.
    pub design: Option<Design>,
    /// Real ms per tick; by default 250, or a dozen one-way late delays
    /// when that is more, so that a delayed builder's slow steps (each KV
    /// call a round trip through the proxy) stay well inside a tick.
    pub ms_per_tick: Option<u64>,
    /// The one-way delay the proxy gives a builder's traffic for a
    /// `fetch-late` step, until its answer lands; by default three quarters
    /// of the design's fetch wait (so the answer comes back after the fetch
    /// gave up and within the next one), and at least 50 ms in a story
    /// with `fetch-earlier` (so that other builders' steps between the
    /// fetch that gave up and the next fetch fit before the answer comes).
    pub late_delay: Option<Duration>,
    /// Every builder whose clock the trace puts off the server's is put off
    /// by this many seconds instead, the same way (to try a skew the model
    /// holds at, on the story of one it breaks at).
    pub skew_s: Option<i64>,
    /// A deadline or a signal: the replay stops before its next step,
    /// inconclusive, with what the steps before it did.
    pub stop: crate::server::Stop,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The real run violates the trace's property.
    Reproduced,
    /// It followed the story and does not violate it.
    NotReproduced,
    /// The server did otherwise than the story at this step.
    Diverged(String),
    /// Stopped before this step, by a deadline or a signal.
    Cut(String),
}

pub struct Outcome {
    pub builder: BuilderKind,
    pub design: Design,
    pub property: String,
    pub verdict: Verdict,
    /// One line per step: the model's words and what the server did.
    pub steps: Vec<String>,
    pub evidence: Evidence,
    pub violations: Violations,
    pub builds: Vec<verdict::Build>,
    /// Model ask to real ask where they differ.
    pub relabelled: Vec<(String, String)>,
    pub log: String,
}

struct Binding {
    real: BTreeMap<String, String>,
    pinned: BTreeSet<String>,
}

impl Binding {
    /// Binds model ask `model` to real ask `real`, swapping with the model
    /// ask bound to `real` if neither was pinned yet.
    fn bind(&mut self, model: &str, real: &str) -> Result<(), String> {
        if self.real.get(model).map(String::as_str) == Some(real) {
            self.pinned.insert(model.to_string());
            return Ok(());
        }
        let other = self
            .real
            .iter()
            .find(|(_, r)| r.as_str() == real)
            .map(|(m, _)| m.clone())
            .ok_or(format!(
                "the server gave {real}, which the story never published"
            ))?;
        if self.pinned.contains(model) || self.pinned.contains(&other) {
            return Err(format!(
                "the story has {model} here, the server gave {real}"
            ));
        }
        let mine = self.real[model].clone();
        self.real.insert(other.clone(), mine);
        self.real.insert(model.to_string(), real.to_string());
        self.pinned.insert(model.to_string());
        self.pinned.insert(other);
        Ok(())
    }
}

/// Replays `script` on the server at `server`, in streams and buckets of
/// their own named after `run`.
pub async fn replay(
    server: std::net::SocketAddr,
    run: &str,
    script: &Script,
    options: &Options,
) -> Result<Outcome, Error> {
    let design = match options.design {
        Some(d) => d,
        None => Design::parse(&script.design)
            .ok_or(format!("unknown design `{}` in the trace", script.design))?,
    };
    let has_earlier = script
        .steps
        .iter()
        .any(|s| matches!(s.action, Action::FetchEarlier(_)));
    let late_delay = options.late_delay.unwrap_or(if has_earlier {
        (design.take_wait() * 3 / 4).max(Duration::from_millis(50))
    } else {
        design.take_wait() * 3 / 4
    });
    let has_late = script
        .steps
        .iter()
        .any(|s| matches!(s.action, Action::FetchLate(_) | Action::SlowAnswer(_)));
    let timing = Timing {
        ms_per_tick: options.ms_per_tick.unwrap_or(if has_late {
            250.max(late_delay.as_millis() as u64 * 12 / 50 * 50)
        } else {
            250
        }),
        ack_wait_ticks: script.ack_wait_ticks,
    };
    if design.duplicate_check()
        != Design::parse(&script.design).is_some_and(|d| d.duplicate_check())
    {
        return Err(format!(
            "the trace's design {} and the builder's {} differ in the duplicate check: \
             their steps (take, or read then start or drop) do not match",
            script.design,
            design.name()
        )
        .into());
    }
    let names = Names::of(run);
    let url = format!("nats://{server}");
    let header = Header {
        model: Some(ModelName::Link),
        design: Some(design.name().to_string()),
        ms_per_tick: Some(timing.ms_per_tick),
        max_deliver: Some(script.max_deliver as u8),
        nats_server: Some(crate::bus::server_version(&url).await?),
        ..Default::default()
    };
    let log = Log::new(&header, &names.stream);
    let mut bus = Bus::create(&url, names.clone(), timing, script.max_deliver, log.clone()).await?;
    let mut proxies = Vec::new();
    let mut builders = Vec::new();
    for (name, offset) in script.builders.iter().zip(&script.offsets_s) {
        let offset = &match options.skew_s {
            Some(skew) => offset.signum() * skew,
            None => *offset,
        };
        let proxy = Proxy::start(server).await?;
        let builder = Machine::connect(
            options.builder,
            name,
            design,
            timing,
            timing.skew_ms(*offset),
            &proxy.url(),
            &names,
            &log,
        )
        .await?;
        proxies.push(proxy);
        builders.push(builder);
    }
    for ask in &script.asks {
        bus.publish(ask).await?;
    }
    let mut binding = Binding {
        real: script.asks.iter().map(|a| (a.clone(), a.clone())).collect(),
        pinned: BTreeSet::new(),
    };
    // When b's last pull request left, for a late answer's delivery time.
    let mut last_request: BTreeMap<usize, Instant> = BTreeMap::new();
    // Steps of an instant start a fifth of a tick after it, so that a
    // deadline the story lets pass at a tick has passed on the server.
    let slack = timing.tick() / 5;
    let origin = Instant::now();
    let mut now_tick = 0u32;
    // When each real ask's ack wait last restarted, at the latest.
    let mut restarted: BTreeMap<String, Instant> = BTreeMap::new();
    let mut crashes: Vec<(String, u64)> = Vec::new();
    let mut deliveries: BTreeMap<String, u64> = BTreeMap::new();
    let mut lines = Vec::new();
    let mut verdict = None;
    for (i, step) in script.steps.iter().enumerate() {
        if let Some(why) = options.stop.why() {
            verdict = Some(Verdict::Cut(format!(
                "{why} before step {} of {}",
                i + 1,
                script.steps.len()
            )));
            break;
        }
        let label = format!("step {} ({})", i + 1, step.words);
        for builder in &mut builders {
            builder.at_step(&label);
        }
        let expected = |b: usize| builder_view(&step.after, &script.builders[b]);
        let result: Result<String, String> = match step.action {
            Action::Tick => {
                // Nothing is on the way when time passes, and an open pull
                // request has expired: no builder's link is slow any more.
                for proxy in &proxies {
                    proxy.set_delay(Duration::ZERO);
                }
                now_tick += 1;
                let mut until = origin + timing.tick() * now_tick + slack;
                for ask in &script.asks {
                    let passes = ask_status(&step.before, ask) == "delivered"
                        && ask_status(&step.after, ask) != "delivered";
                    if let Some(at) = restarted.get(&binding.real[ask]).filter(|_| passes) {
                        until = until.max(*at + timing.ack_wait() + Duration::from_millis(30));
                    }
                }
                tokio::time::sleep_until(until).await;
                Ok(String::new())
            }
            Action::Fetch(b) => {
                let want = expected(b).buffer.last().cloned();
                // An idle builder polls until the server hands it something.
                let give_up = Instant::now() + timing.tick() * 2 + Duration::from_secs(1);
                let mut got = None;
                while got.is_none() && Instant::now() < give_up {
                    last_request.insert(b, Instant::now());
                    match builders[b].fetch().await? {
                        Fetched::Got(ask) => got = Some(ask),
                        Fetched::Buffered => {
                            got = builders[b].buffered().last().map(|h| h.0.clone())
                        }
                        Fetched::Empty => {}
                    }
                }
                match (got, want) {
                    (Some(real), Some(model)) => {
                        restarted.insert(real.clone(), Instant::now());
                        note_deliveries(&builders[b], &mut deliveries);
                        binding.bind(&model, &real).map(|()| format!("got {real}"))
                    }
                    (None, _) => Err("the server handed out nothing".into()),
                    (Some(real), None) => Err(format!("got {real}, the story has nothing")),
                }
            }
            Action::FetchLate(b) | Action::SlowAnswer(b) => {
                proxies[b].set_delay(late_delay);
                last_request.insert(b, Instant::now());
                match builders[b].fetch().await? {
                    Fetched::Empty => Ok(format!(
                        "gave up after {} ms; its answer is {} ms away on the link",
                        design.take_wait().as_millis(),
                        2 * late_delay.as_millis()
                    )),
                    other => Err(format!("the fetch did not give up: {other:?}")),
                }
            }
            Action::FetchEarlier(b) => {
                // The earlier answer comes back two one-way delays after
                // its request left: the new fetch's request goes out half a
                // wait before that, so that the answer arrives while the
                // fetch waits and after its own request went out.
                let model = builders_late(&step.before, &script.builders[b]);
                let earlier = last_request.get(&b).copied().unwrap_or_else(Instant::now);
                let back = earlier + proxies[b].delay() * 2;
                let wait = design.take_wait();
                tokio::time::sleep_until(back.checked_sub(wait / 2).unwrap_or(back)).await;
                last_request.insert(b, Instant::now());
                match (builders[b].fetch().await?, model) {
                    (Fetched::Got(real), Some(model)) => {
                        // Delivered when its request reached the server.
                        restarted.insert(
                            real.clone(),
                            earlier + proxies[b].delay() + Duration::from_millis(5),
                        );
                        note_deliveries(&builders[b], &mut deliveries);
                        binding.bind(&model, &real).map(|()| {
                            format!(
                                "got {real}, the answer to its earlier pull request; its new one is open"
                            )
                        })
                    }
                    (Fetched::Buffered, _) => Err(
                        "the earlier answer had landed before the fetch: no pull request was sent"
                            .into(),
                    ),
                    (other, model) => Err(format!("fetched {other:?}, the story {model:?}")),
                }
            }
            // The server answered the open pull request when it arrived
            // (with the first available ask, if any): the answer is bound
            // to the story's when it lands.
            Action::Answer(b) => Ok(format!(
                "its open pull request is answered on the server; the answer is {} ms away on the link",
                proxies[b].delay().as_millis()
            )),
            Action::Land(b) => {
                let model = builders_late(&step.before, &script.builders[b]);
                let landed = builders[b].wait_landed(Duration::from_secs(2)).await?;
                proxies[b].set_delay(Duration::ZERO);
                // With hand-back the model naks an answer landing on a busy
                // builder.
                let handed_back = design.model().busy_buffer.hands_back()
                    && builder_view(&step.before, &script.builders[b])
                        .run
                        .is_some();
                match (landed, model) {
                    (Some((real, naked)), Some(model)) if naked == handed_back => {
                        // The server answered the last pull request when it
                        // arrived, a one-way delay after it left.
                        let delivered = last_request.get(&b).map_or(Instant::now(), |at| {
                            *at + late_delay + Duration::from_millis(5)
                        });
                        if naked {
                            restarted.remove(&real);
                        } else {
                            restarted.insert(real.clone(), delivered.min(Instant::now()));
                        }
                        note_deliveries(&builders[b], &mut deliveries);
                        binding.bind(&model, &real).map(|()| {
                            if naked {
                                format!("{real} landed and was handed back with a nak")
                            } else {
                                format!("{real} landed in the buffer")
                            }
                        })
                    }
                    (Some((real, naked)), Some(_)) => Err(format!(
                        "{real} landed and was {}, the story {}",
                        if naked { "handed back" } else { "kept" },
                        if handed_back {
                            "hands it back"
                        } else {
                            "keeps it"
                        }
                    )),
                    _ => Err("no late answer landed".into()),
                }
            }
            Action::Take(b) => {
                let model = expected(b).run;
                match (builders[b].take().await?, model) {
                    (Some(real), Some(model)) => {
                        binding.bind(&model, &real).map(|()| format!("runs {real}"))
                    }
                    (real, model) => Err(format!("took {real:?}, the story {model:?}")),
                }
            }
            Action::Read(b) => {
                let model = expected(b).decided;
                match (builders[b].read().await?, model) {
                    (Some((real, decision)), Some((model, duplicate))) => {
                        binding.bind(&model, &real)?;
                        let drop = decision == Decision::Drop;
                        if drop == duplicate {
                            Ok(format!(
                                "read {real}: {}",
                                if drop { "a duplicate" } else { "to run" }
                            ))
                        } else {
                            Err(format!(
                                "read {real} and decided to {}, the story to {}",
                                if drop { "drop it" } else { "run it" },
                                if duplicate { "drop it" } else { "run it" }
                            ))
                        }
                    }
                    (real, model) => Err(format!("read {real:?}, the story {model:?}")),
                }
            }
            Action::Start(b) => {
                // A revision-checked start the model fails leaves nothing
                // running.
                let runs = expected(b).run.is_some();
                match (builders[b].start().await?, runs) {
                    (Started::Runs(a), true) => Ok(format!("runs {a}")),
                    (Started::Conflict(a), false) => Ok(format!(
                        "its revision-checked put of {a}'s key failed: dropped as a duplicate"
                    )),
                    (Started::Runs(a), false) => Err(format!("runs {a}, the story's put fails")),
                    (Started::Conflict(a), true) => Err(format!(
                        "the revision-checked put of {a}'s key failed, the story runs it"
                    )),
                    (Started::Nothing, _) => Err("nothing to start".to_string()),
                }
            }
            Action::Drop(b) => {
                // Deferring duplicates, the builder leaves it to its ack
                // wait (unless its key was left done).
                let defer = design.model().duplicate.deferred();
                builders[b]
                    .drop_duplicate()
                    .await?
                    .map(|a| {
                        if defer {
                            format!(
                                "dropped {a} as a duplicate (acked only if its key was left done)"
                            )
                        } else {
                            format!("acked {a} as a duplicate")
                        }
                    })
                    .ok_or_else(|| "nothing to drop".to_string())
            }
            Action::Heartbeat(b) => match builders[b].heartbeat().await? {
                Some(a) => {
                    restarted.insert(a.clone(), Instant::now() + proxies[b].delay());
                    Ok(format!("in-progress for {a}"))
                }
                None => Err("not building".into()),
            },
            Action::Finish(b) => builders[b]
                .finish(false)
                .await?
                .map(|a| format!("result of {a}, acked, key deleted"))
                .ok_or_else(|| "not building".to_string()),
            Action::FinishAckLost(b) => builders[b]
                .finish(true)
                .await?
                .map(|a| format!("result of {a}, key deleted, the ack not sent"))
                .ok_or_else(|| "not building".to_string()),
            Action::Nak(b) => {
                let model = builder_view(&step.before, &script.builders[b])
                    .buffer
                    .first()
                    .cloned();
                match (builders[b].nak_oldest().await?, model) {
                    (Some(real), Some(model)) => {
                        // The server hands it out again at once: no ack
                        // wait of it runs out later in the story.
                        restarted.remove(&real);
                        binding
                            .bind(&model, &real)
                            .map(|()| format!("naked {real}"))
                    }
                    (real, model) => Err(format!("naked {real:?}, the story {model:?}")),
                }
            }
            Action::Crash(b) => {
                proxies[b].cut();
                builders[b].crash().await?;
                crashes.push((script.builders[b].clone(), log.ms()));
                Ok("connection dropped, nothing acked; restarted idle".into())
            }
            Action::Delay(_) => Ok("its heartbeat is not sent now".into()),
            Action::Rewind(_) => {
                bus.expired_pull().await?;
                // The failed redelivery's ack wait starts again now.
                for ask in &script.asks {
                    if ask_status(&step.before, ask) != "delivered"
                        && ask_status(&step.after, ask) == "delivered"
                    {
                        restarted.insert(binding.real[ask].clone(), Instant::now());
                    }
                }
                Ok("a pull request expired (1 ns) reaches the consumer as it takes the redelivery: the delivery fails and the server's cursor winds back".into())
            }
        };
        let said = |what: String| {
            format!(
                "{:>3}. t={:>3}s {:<14} {what}",
                i + 1,
                now_tick * 5,
                step.words
            )
        };
        match result {
            Ok(what) => lines.push(said(what)),
            Err(why) => {
                lines.push(said(format!("DIVERGED: {why}")));
                verdict = Some(Verdict::Diverged(format!(
                    "step {} ({}): {why}",
                    i + 1,
                    step.words
                )));
                break;
            }
        }
    }
    let held: Vec<String> = builders.iter().flat_map(|b| b.held()).collect();
    for builder in &mut builders {
        builder.stop().await;
    }
    // Acks and in-progress are fire and forget: let the server take the
    // last ones before asking it what it holds.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let evidence = bus.evidence().await?;
    let records = log.records();
    let builds = verdict::builds(&records, &crashes);
    let violations = verdict::judge(
        &builds,
        &records,
        &evidence,
        &held,
        &deliveries,
        script.max_deliver as u64,
    );
    let verdict = verdict.unwrap_or(if violations.of_property(&script.property).is_empty() {
        Verdict::NotReproduced
    } else {
        Verdict::Reproduced
    });
    let relabelled = binding
        .real
        .iter()
        .filter(|(m, r)| m != r)
        .map(|(m, r)| (m.clone(), r.clone()))
        .collect();
    for proxy in &proxies {
        proxy.cut();
    }
    Ok(Outcome {
        builder: options.builder,
        design,
        property: script.property.clone(),
        verdict,
        steps: lines,
        evidence,
        violations,
        builds,
        relabelled,
        log: log.text(),
    })
}

fn builders_late(state: &serde_json::Value, builder: &str) -> Option<String> {
    builder_view(state, builder).late_answer
}

/// The most deliveries the server has reported per ask, from what this
/// builder holds.
fn note_deliveries(builder: &Machine, deliveries: &mut BTreeMap<String, u64>) {
    for (ask, delivered) in builder.buffered() {
        let seen = deliveries.entry(ask).or_default();
        *seen = (*seen).max(delivered);
    }
}

impl Outcome {
    /// The report as printed.
    pub fn text(&self) -> String {
        let mut out = format!(
            "replay on a real nats-server (JetStream), {} builder ({}), design {}, property {}\n",
            self.builder.name(),
            self.builder.client(),
            self.design.name(),
            self.property
        );
        for line in &self.steps {
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if !self.relabelled.is_empty() {
            let pairs: Vec<String> = self
                .relabelled
                .iter()
                .map(|(m, r)| format!("the story's {m} is the server's {r}"))
                .collect();
            out.push_str(&format!(
                "asks in the server's order: {} (a late answer and the next answer come back in the connection's order)\n",
                pairs.join(", ")
            ));
        }
        out.push_str("builds that ran:\n");
        for b in &self.builds {
            out.push_str(&format!(
                "  {} by {} from {} ms{}\n",
                b.ask,
                b.builder,
                b.start_ms,
                b.end_ms
                    .map(|e| format!(" to {e} ms"))
                    .unwrap_or(" (still running)".into())
            ));
        }
        out.push_str(&self.evidence.to_string());
        for (name, found) in [
            ("no-double-run", &self.violations.double_runs),
            ("no-run-after-result", &self.violations.runs_after_result),
            ("no-lost-ask", &self.violations.lost_asks),
        ] {
            for f in found {
                out.push_str(&format!("  {name} violated: {f}\n"));
            }
        }
        out.push_str(&match &self.verdict {
            Verdict::Reproduced => {
                format!("=> reproduced: the real run violates {}\n", self.property)
            }
            Verdict::NotReproduced => format!(
                "=> not reproduced: the real run followed the story and does not violate {}\n",
                self.property
            ),
            Verdict::Diverged(why) => {
                format!("=> inconclusive: the server did otherwise than the story at {why}\n")
            }
            Verdict::Cut(why) => format!("=> inconclusive: {why}\n"),
        });
        out
    }
}

/// Starts a private server, replays, stops it: for the command line.
/// Its exit ends the replay at once, as an error naming it.
pub fn replay_blocking(script: &Script, options: &Options) -> Result<Outcome, Error> {
    let mut server = crate::server::Server::start()?;
    let address: std::net::SocketAddr = format!("127.0.0.1:{}", server.port()).parse()?;
    let work = replay(address, "replay", script, options);
    Ok(crate::server::run_watched(&mut server, options.stop, work)?)
}

/// The event log's `build_start` lines, for tests.
pub fn started(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("\"build_start\""))
        .count()
}
