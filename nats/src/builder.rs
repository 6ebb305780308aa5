//! The reference builder: the source's `natsMachine` on a real server, one
//! step at a time, each step logging what it saw. The pull is the source's
//! (nats.go's `PullSubscribe`): one subscription on the builder's inbox for
//! every pull request it makes, so that a message the server delivers after
//! a fetch gave up stays in that subscription, unread, until the builder
//! next reads it: the late answer. async-nats's own `fetch` opens one inbox
//! per batch and would drop such a message instead.

use crate::bus::{Error, Names, RunningValue};
use crate::design::{fetch_expiry_of, Design, Timing};
use crate::log::Log;
use async_nats::jetstream::{self, kv};
use async_nats::{Client, Message, Subscriber};
use futures_util::{FutureExt, StreamExt};
use slotcheck_models::events::link::{Decision, Event};
use std::collections::VecDeque;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// What a start did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Started {
    Runs(String),
    /// The revision-checked put failed (another builder wrote the key since
    /// the read): dropped as a duplicate.
    Conflict(String),
    Nothing,
}

/// What the repairs cost a builder, counted as it runs (`live` reports
/// them per thousand asks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// Server clock: probe puts (one per read that finds a key).
    pub probe_puts: u64,
    /// Hand-back: naks of answers that landed on a busy builder.
    pub hand_backs: u64,
    /// Deferred duplicates: duplicates left to their ack wait.
    pub deferred: u64,
    /// Done key: the finish's puts of the key marked done.
    pub done_puts: u64,
}

impl std::ops::AddAssign for Costs {
    fn add_assign(&mut self, other: Costs) {
        self.probe_puts += other.probe_puts;
        self.hand_backs += other.hand_backs;
        self.deferred += other.deferred;
        self.done_puts += other.done_puts;
    }
}

/// The running key as a read found it: its revision (for a
/// revision-checked start) and whether a finished build left it done.
#[derive(Clone, Copy, Debug, Default)]
struct KeyRead {
    revision: Option<u64>,
    done: bool,
}

/// A message the builder holds: its ask, where to ack it, and how many times
/// the server says it has delivered it (from the ack subject).
#[derive(Clone, Debug)]
pub struct Held {
    pub ask: String,
    reply: String,
    pub delivered: u64,
    /// The consumer's delivery sequence of this delivery.
    pub consumer_seq: Option<u64>,
}

impl Held {
    fn of(message: &Message) -> Option<Held> {
        let reply = message.reply.as_ref()?.to_string();
        // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>
        let delivered = reply.split('.').nth(4)?.parse().ok()?;
        let consumer_seq = reply.split('.').nth(6).and_then(|t| t.parse().ok());
        Some(Held {
            consumer_seq,
            ask: String::from_utf8_lossy(&message.payload).into_owned(),
            reply,
            delivered,
        })
    }
}

/// What a fetch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The server's answer came within the wait: this ask, now buffered.
    Got(String),
    /// The fetch gave up (its wait ran out, or the server said its pull
    /// request expired).
    Empty,
    /// Nothing was asked: the buffer already held a message.
    Buffered,
}

pub struct Builder {
    pub name: String,
    pub design: Design,
    timing: Timing,
    /// This builder's clock less the server's, in real ms.
    pub offset_ms: i64,
    url: String,
    names: Names,
    log: Log,
    client: Client,
    subscription: Subscriber,
    running: kv::Store,
    results: kv::Store,
    inbox: String,
    requests: u64,
    generation: u64,
    pub buffer: VecDeque<Held>,
    pub decided: Option<(Held, Decision)>,
    key_read: KeyRead,
    pub building: Option<Held>,
    /// The ask of the last answer that reached the subscription after its
    /// fetch gave up, until a land step claims it.
    landed: Option<String>,
    /// Faults: the next ack is not sent; the builder's fetch wait, if not
    /// the design's.
    pub lose_next_ack: bool,
    pub costs: Costs,
}

impl Builder {
    /// The asks it holds: buffered, decided on, or building.
    pub fn held(&self) -> impl Iterator<Item = String> + '_ {
        self.buffer
            .iter()
            .map(|h| h.ask.clone())
            .chain(self.decided.iter().map(|(h, _)| h.ask.clone()))
            .chain(self.building.iter().map(|h| h.ask.clone()))
    }

    /// Connects to `url` (the server, or a proxy in front of it).
    pub async fn connect(
        name: &str,
        design: Design,
        timing: Timing,
        offset_ms: i64,
        url: &str,
        names: &Names,
        log: &Log,
    ) -> Result<Builder, Error> {
        let (client, subscription, inbox, running, results) =
            Self::open(name, 0, url, names).await?;
        Ok(Builder {
            name: name.to_string(),
            design,
            timing,
            offset_ms,
            url: url.to_string(),
            names: names.clone(),
            log: log.clone(),
            client,
            subscription,
            running,
            results,
            inbox,
            requests: 0,
            generation: 0,
            buffer: VecDeque::new(),
            decided: None,
            key_read: KeyRead::default(),
            building: None,
            landed: None,
            lose_next_ack: false,
            costs: Costs::default(),
        })
    }

    async fn open(
        name: &str,
        generation: u64,
        url: &str,
        names: &Names,
    ) -> Result<(Client, Subscriber, String, kv::Store, kv::Store), Error> {
        let client = async_nats::ConnectOptions::new()
            .max_reconnects(0)
            .connect(url)
            .await?;
        let inbox = format!("_INBOX.{}.{name}.{generation}", names.stream);
        let subscription = client.subscribe(format!("{inbox}.*")).await?;
        let js = jetstream::new(client.clone());
        let running = js.get_key_value(&names.running).await?;
        let results = js.get_key_value(&names.results).await?;
        Ok((client, subscription, inbox, running, results))
    }

    fn say(&self, event: Event) {
        self.log.say(&self.name, event);
    }

    /// Moves what reached the subscription since the last fetch into the
    /// buffer: every message there came after its fetch gave up.
    pub fn drain(&mut self) {
        while let Some(Some(message)) = self.subscription.next().now_or_never() {
            self.late(message);
        }
    }

    fn late(&mut self, message: Message) {
        if message.status.is_some() {
            return; // an old pull request's end: nats.go skips these too
        }
        if let Some(held) = Held::of(&message) {
            self.say(Event::LateAnswer {
                ask: held.ask.clone(),
            });
            self.say(Event::Server {
                ask: Some(held.ask.clone()),
                num_delivered: Some(held.delivered),
                consumer_seq: held.consumer_seq,
            });
            self.landed = Some(held.ask.clone());
            self.buffer.push_back(held);
        }
    }

    /// Waits up to `within` for a late answer to land: its ask, and whether
    /// it was handed back at once (hand-back, the builder busy). One that
    /// an earlier step already drained into the buffer counts; a message a
    /// fetch returned (the client's fetch of an earlier answer) does not.
    pub async fn wait_landed(&mut self, within: Duration) -> Result<Option<(String, bool)>, Error> {
        self.drain();
        let deadline = Instant::now() + within;
        while self.landed.is_none() {
            match tokio::time::timeout_at(deadline, self.subscription.next()).await {
                Ok(Some(message)) => self.late(message),
                _ => return Ok(None),
            }
        }
        let ask = self.landed.take().unwrap_or_default();
        if self.design.model().busy_buffer.hands_back() && self.building.is_some() {
            self.hand_back().await?;
            return Ok(Some((ask, true)));
        }
        Ok(Some((ask, false)))
    }

    /// Hand-back: a busy builder naks whatever it holds unread.
    async fn hand_back(&mut self) -> Result<(), Error> {
        while let Some(held) = self.buffer.pop_front() {
            self.nak(&held).await?;
            self.costs.hand_backs += 1;
        }
        Ok(())
    }

    /// One fetch of one message with the design's wait.
    pub async fn fetch(&mut self) -> Result<Fetched, Error> {
        let wait = self.design.take_wait();
        self.fetch_waiting(wait).await
    }

    /// One fetch of one message waiting `wait`, its pull request expiring at
    /// `fetchExpiryOf(wait)` on the server.
    pub async fn fetch_waiting(&mut self, wait: Duration) -> Result<Fetched, Error> {
        self.drain();
        if !self.buffer.is_empty() {
            return Ok(Fetched::Buffered);
        }
        self.requests += 1;
        let reply = format!("{}.{}", self.inbox, self.requests);
        let request = serde_json::json!({
            "batch": 1,
            "expires": fetch_expiry_of(wait).as_nanos() as u64,
        });
        let deadline = Instant::now() + wait;
        self.client
            .publish_with_reply(
                format!(
                    "$JS.API.CONSUMER.MSG.NEXT.{}.{}",
                    self.names.stream, self.names.consumer
                ),
                reply.clone(),
                request.to_string().into(),
            )
            .await?;
        self.client.flush().await?;
        loop {
            match tokio::time::timeout_at(deadline, self.subscription.next()).await {
                Err(_) => break,
                Ok(None) => return Err("the subscription closed".into()),
                Ok(Some(message)) if message.status.is_some() => {
                    if message.subject.as_str() == reply {
                        break; // this request expired on the server
                    }
                }
                Ok(Some(message)) => {
                    if let Some(held) = Held::of(&message) {
                        let ask = held.ask.clone();
                        self.say(Event::Fetch {
                            got: Some(ask.clone()),
                        });
                        self.say(Event::Server {
                            ask: Some(ask.clone()),
                            num_delivered: Some(held.delivered),
                            consumer_seq: held.consumer_seq,
                        });
                        self.buffer.push_back(held);
                        return Ok(Fetched::Got(ask));
                    }
                }
            }
        }
        self.say(Event::Fetch { got: None });
        Ok(Fetched::Empty)
    }

    /// Reads the oldest buffered message.
    fn take_oldest(&mut self) -> Option<Held> {
        self.drain();
        let held = self.buffer.pop_front()?;
        self.say(Event::Take {
            ask: held.ask.clone(),
        });
        Some(held)
    }

    /// With the duplicate check: reads the oldest buffered message, gets its
    /// running key and decides (the source's `runningElsewhere`).
    pub async fn read(&mut self) -> Result<Option<(String, Decision)>, Error> {
        let Some(held) = self.take_oldest() else {
            return Ok(None);
        };
        let ask = held.ask.clone();
        let (decision, key) = self.judge(&ask).await?;
        self.decided = Some((held, decision));
        self.key_read = key;
        Ok(Some((ask, decision)))
    }

    /// The KV get and `duplicateOf`: a key naming another builder and this
    /// ask, put less than `runningFreshFor` ago by this builder's clock (with
    /// the server clock: before a probe put of its own, read back), is a
    /// duplicate; so is a key left done. A key that cannot be read runs the
    /// check.
    async fn judge(&mut self, ask: &str) -> Result<(Decision, KeyRead), Error> {
        let entry = match self.running.entry(ask).await {
            Ok(Some(entry)) if entry.operation == kv::Operation::Put => Some(entry),
            _ => None,
        };
        let Some(entry) = entry else {
            self.say(Event::KvGet {
                ask: ask.to_string(),
                found: false,
                builder: None,
                age_ms: None,
                decision: Decision::Run,
            });
            return Ok((Decision::Run, KeyRead::default()));
        };
        let value = serde_json::from_slice::<RunningValue>(&entry.value).ok();
        let now_ns = if self.design.model().check.on_server_times() {
            let probe = format!("probe.{}", self.name);
            self.running
                .put(probe.as_str(), self.name.clone().into())
                .await?;
            self.costs.probe_puts += 1;
            let stamped = self
                .running
                .entry(probe.as_str())
                .await?
                .ok_or("the probe key just put is not there")?;
            stamped.created.unix_timestamp_nanos()
        } else {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("after 1970")
                .as_nanos() as i128
                + self.offset_ms as i128 * 1_000_000
        };
        let age_ms = ((now_ns - entry.created.unix_timestamp_nanos()) / 1_000_000).max(0) as u64;
        let done = value.as_ref().is_some_and(|v| v.done && v.build == ask);
        let duplicate = done
            || value.as_ref().is_some_and(|v| {
                v.build == ask
                    && v.builder != self.name
                    && Duration::from_millis(age_ms) < self.timing.fresh_for()
            });
        let decision = if duplicate {
            Decision::Drop
        } else {
            Decision::Run
        };
        self.say(Event::KvGet {
            ask: ask.to_string(),
            found: true,
            builder: value.map(|v| v.builder),
            age_ms: Some(age_ms),
            decision,
        });
        Ok((
            decision,
            KeyRead {
                revision: Some(entry.revision),
                done,
            },
        ))
    }

    /// Without the duplicate check: read the oldest buffered message and
    /// run it.
    pub async fn take(&mut self) -> Result<Option<String>, Error> {
        let Some(held) = self.take_oldest() else {
            return Ok(None);
        };
        let ask = held.ask.clone();
        self.run(held, None).await?;
        Ok(Some(ask))
    }

    /// After a read that decided to run: put the key and start. With the
    /// revision-checked start a put that fails drops the ask instead.
    pub async fn start(&mut self) -> Result<Started, Error> {
        match self.decided.take() {
            Some((held, Decision::Run)) => {
                let ask = held.ask.clone();
                let key = self.key_read;
                if self.run(held.clone(), Some(key)).await? {
                    Ok(Started::Runs(ask))
                } else {
                    self.drop_held(&held, key.done).await?;
                    Ok(Started::Conflict(ask))
                }
            }
            other => {
                self.decided = other;
                Ok(Started::Nothing)
            }
        }
    }

    /// After a read that found a duplicate: ack it, do not run it.
    pub async fn drop_duplicate(&mut self) -> Result<Option<String>, Error> {
        match self.decided.take() {
            Some((held, Decision::Drop)) => {
                let ask = held.ask.clone();
                self.drop_held(&held, self.key_read.done).await?;
                Ok(Some(ask))
            }
            other => {
                self.decided = other;
                Ok(None)
            }
        }
    }

    /// A duplicate is acked; deferring duplicates, left to its ack wait
    /// unless its key was left done.
    async fn drop_held(&mut self, held: &Held, done: bool) -> Result<(), Error> {
        if self.design.model().duplicate.deferred() && !done {
            self.costs.deferred += 1;
            return Ok(());
        }
        self.ack(held).await
    }

    fn value(&self, ask: &str, done: bool) -> Result<bytes::Bytes, Error> {
        let value = RunningValue {
            builder: self.name.clone(),
            build: ask.to_string(),
            started_ms: self.log.ms(),
            done,
        };
        Ok(serde_json::to_vec(&value)?.into())
    }

    async fn put_key(&self, ask: &str) -> Result<(), Error> {
        self.running.put(ask, self.value(ask, false)?).await?;
        Ok(())
    }

    /// Puts the key and starts; false when a revision-checked put failed.
    /// With hand-back, whatever else it holds is naked now that it is busy.
    async fn run(&mut self, held: Held, read: Option<KeyRead>) -> Result<bool, Error> {
        match read.filter(|_| self.design.model().start.revision_checked()) {
            Some(KeyRead {
                revision: Some(revision),
                ..
            }) => {
                let value = self.value(&held.ask, false)?;
                if self
                    .running
                    .update(held.ask.as_str(), value, revision)
                    .await
                    .is_err()
                {
                    return Ok(false);
                }
            }
            Some(_) => {
                let value = self.value(&held.ask, false)?;
                if self.running.create(held.ask.as_str(), value).await.is_err() {
                    return Ok(false);
                }
            }
            None => self.put_key(&held.ask).await?,
        }
        self.say(Event::Put {
            ask: held.ask.clone(),
        });
        self.say(Event::BuildStart {
            ask: held.ask.clone(),
        });
        self.building = Some(held);
        if self.design.model().busy_buffer.hands_back() {
            self.hand_back().await?;
        }
        Ok(true)
    }

    /// Put the key and say in-progress (fire and forget, as the source).
    pub async fn heartbeat(&mut self) -> Result<Option<String>, Error> {
        let Some(held) = self.building.clone() else {
            return Ok(None);
        };
        if self.design.model().busy_buffer.hands_back() {
            // What landed since the last look goes back.
            self.drain();
            self.hand_back().await?;
        }
        self.put_key(&held.ask).await?;
        self.client
            .publish(held.reply.clone(), "+WPI".into())
            .await?;
        self.client.flush().await?;
        self.say(Event::Heartbeat {
            ask: held.ask.clone(),
        });
        Ok(Some(held.ask))
    }

    async fn ack(&mut self, held: &Held) -> Result<(), Error> {
        let lose = std::mem::take(&mut self.lose_next_ack);
        if self.design.model().finish_ack.sync() {
            // AckSync, retried until the server confirms it: a lost first
            // try is sent again.
            let mut confirmed = false;
            for attempt in 0..10 {
                if confirmed {
                    break;
                }
                if lose && attempt == 0 {
                    continue;
                }
                let request = self.client.request(held.reply.clone(), "+ACK".into());
                confirmed = tokio::time::timeout(Duration::from_secs(1), request)
                    .await
                    .is_ok_and(|r| r.is_ok());
            }
            if !confirmed {
                return Err(format!("the ack of {} was never confirmed", held.ask).into());
            }
        } else if lose {
            return Ok(()); // the fault: the ack never leaves
        } else {
            self.client
                .publish(held.reply.clone(), "+ACK".into())
                .await?;
            self.client.flush().await?;
        }
        self.say(Event::Ack {
            ask: held.ask.clone(),
        });
        Ok(())
    }

    /// Hand the message back at once (the source's one `Nak` path).
    pub async fn nak(&mut self, held: &Held) -> Result<(), Error> {
        self.client
            .publish(held.reply.clone(), "-NAK".into())
            .await?;
        self.client.flush().await?;
        self.say(Event::Nak {
            ask: held.ask.clone(),
        });
        Ok(())
    }

    /// The nak fault: the oldest buffered message is handed back at once
    /// instead of read.
    pub async fn nak_oldest(&mut self) -> Result<Option<String>, Error> {
        self.drain();
        let Some(held) = self.buffer.pop_front() else {
            return Ok(None);
        };
        self.nak(&held).await?;
        Ok(Some(held.ask))
    }

    /// Hands the message of the build back at once and stops the build.
    pub async fn nak_building(&mut self) -> Result<Option<String>, Error> {
        let Some(held) = self.building.take() else {
            return Ok(None);
        };
        self.nak(&held).await?;
        Ok(Some(held.ask))
    }

    /// The build ends: announce the result, ack, delete the key.
    pub async fn finish(&mut self) -> Result<Option<String>, Error> {
        let Some(held) = self.building.take() else {
            return Ok(None);
        };
        self.results
            .put(held.ask.as_str(), self.name.clone().into())
            .await?;
        self.say(Event::BuildFinish {
            ask: held.ask.clone(),
        });
        self.ack(&held).await?;
        if self.design.model().finish_key.marks_done() {
            let value = self.value(&held.ask, true)?;
            self.running.put(held.ask.as_str(), value).await?;
            self.costs.done_puts += 1;
            return Ok(Some(held.ask));
        }
        self.running.delete(held.ask.as_str()).await?;
        self.say(Event::KvDelete {
            ask: held.ask.clone(),
        });
        Ok(Some(held.ask))
    }

    /// Dies and restarts idle under the same name: the connection is
    /// dropped with nothing acked, and the buffer, the decision and the
    /// build are lost. Not logged: a crash is inferred from the log.
    pub async fn crash(&mut self) -> Result<(), Error> {
        self.generation += 1;
        let (client, subscription, inbox, running, results) =
            Self::open(&self.name, self.generation, &self.url, &self.names).await?;
        // The old connection goes when its last handle does.
        self.client = client;
        self.subscription = subscription;
        self.inbox = inbox;
        self.running = running;
        self.results = results;
        self.buffer.clear();
        self.decided = None;
        self.key_read = KeyRead::default();
        self.building = None;
        self.landed = None;
        Ok(())
    }

    pub fn is_idle(&self) -> bool {
        self.building.is_none() && self.decided.is_none()
    }
}
