//! The shared side of a run: the work-queue stream and its pull consumer,
//! the bucket of checks running (and what its keys hold) and the bucket of
//! results, and the client that publishes asks and reads the server's
//! evidence.

use crate::design::Timing;
use crate::log::Log;
use async_nats::jetstream::{self, consumer, kv, stream};
use serde::{Deserialize, Serialize};
use slotcheck_models::events::link::Event;

/// The value of a running key (the source's `CheckRunning`): its `Seen` is
/// the entry's `Created()`, read, never written.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunningValue {
    pub builder: String,
    pub build: String,
    pub started_ms: u64,
    /// With the done key: the build finished (the key kept to its TTL).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done: bool,
}

/// Names of one run's stream, consumer and buckets; distinct per run, so
/// that runs can share one server.
#[derive(Clone, Debug)]
pub struct Names {
    pub stream: String,
    pub consumer: String,
    pub running: String,
    pub results: String,
}

impl Names {
    pub fn of(run: &str) -> Names {
        Names {
            stream: format!("ASKS_{run}"),
            consumer: format!("BUILDERS_{run}"),
            running: format!("RUNNING_{run}"),
            results: format!("RESULTS_{run}"),
        }
    }
    pub fn subject(&self) -> String {
        format!("asks.{}", self.stream)
    }
}

pub type Error = Box<dyn std::error::Error + Send + Sync>;

pub struct Bus {
    pub names: Names,
    pub timing: Timing,
    pub js: jetstream::Context,
    pub consumer: consumer::Consumer<consumer::pull::Config>,
    pub stream: stream::Stream,
    pub results: kv::Store,
    /// Ask id to its stream sequence, in publication order.
    pub published: Vec<(String, u64)>,
    pub log: Log,
}

/// The version the server at `url` says it is (its INFO), for a log's
/// header: validate allows a count going back only on a server before
/// 2.10.14.
pub async fn server_version(url: &str) -> Result<String, Error> {
    let client = async_nats::connect(url).await?;
    Ok(client.server_info().version)
}

impl Bus {
    /// nats-server 2.9's failed redelivery, steered (the model's `rewind`):
    /// a pull request that has expired (a nanosecond) by the time the
    /// consumer takes a redelivery waiting in its queue with no other
    /// request waiting. The consumer counts the delivery, finds the request
    /// expired and winds its cursor back (nats/tests/server_facts.rs).
    pub async fn expired_pull(&self) -> Result<(), Error> {
        // The steps before came on the builders' connections, which the
        // server reads apart from this one: a nak not yet taken would leave
        // no redelivery to fail.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let client = self.js.client();
        let next = format!(
            "$JS.API.CONSUMER.MSG.NEXT.{}.{}",
            self.names.stream, self.names.consumer
        );
        let inbox = client.new_inbox();
        client
            .publish_with_reply(next, inbox, r#"{"batch":1,"expires":1}"#.into())
            .await?;
        client.flush().await?;
        // The consumer's loop takes it within milliseconds.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        Ok(())
    }

    /// Creates the stream, the consumer (the source's ack wait and
    /// `max_deliver`) and both buckets (the running one with the source's
    /// TTL) on the server at `url`.
    pub async fn create(
        url: &str,
        names: Names,
        timing: Timing,
        max_deliver: i64,
        log: Log,
    ) -> Result<Bus, Error> {
        let client = async_nats::connect(url).await?;
        let js = jetstream::new(client);
        let stream = js
            .create_stream(stream::Config {
                name: names.stream.clone(),
                subjects: vec![names.subject()],
                retention: stream::RetentionPolicy::WorkQueue,
                ..Default::default()
            })
            .await?;
        let consumer = stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some(names.consumer.clone()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: timing.ack_wait(),
                max_deliver,
                ..Default::default()
            })
            .await?;
        bucket(&js, &names.running, timing.key_ttl()).await?;
        let results = bucket(&js, &names.results, std::time::Duration::ZERO).await?;
        Ok(Bus {
            names,
            timing,
            js,
            consumer,
            stream,
            results,
            published: Vec::new(),
            log,
        })
    }

    /// Publishes an ask (its id is the payload) and waits for the stream's ack.
    pub async fn publish(&mut self, ask: &str) -> Result<(), Error> {
        let ack = self
            .js
            .publish(self.names.subject(), ask.to_string().into())
            .await?
            .await?;
        self.published.push((ask.to_string(), ack.sequence));
        self.log.say(
            "client",
            Event::Publish {
                ask: ask.to_string(),
            },
        );
        Ok(())
    }

    pub async fn running(&self) -> Result<kv::Store, Error> {
        Ok(self.js.get_key_value(&self.names.running).await?)
    }

    /// The server's evidence at the end of a run.
    pub async fn evidence(&mut self) -> Result<Evidence, Error> {
        let info = self.consumer.info().await?.clone();
        let running = self.running().await?;
        let mut asks = Vec::new();
        for (ask, sequence) in &self.published {
            let in_stream = self.stream.get_raw_message(*sequence).await.is_ok();
            let result = self.results.entry(ask.as_str()).await?;
            let mut puts = Vec::new();
            if let Ok(mut history) = running.history(ask.as_str()).await {
                use futures_util::StreamExt;
                while let Some(Ok(entry)) = history.next().await {
                    let who = serde_json::from_slice::<RunningValue>(&entry.value)
                        .map(|v| v.builder)
                        .unwrap_or_else(|_| "(deleted)".into());
                    puts.push(who);
                }
            }
            asks.push(AskEvidence {
                ask: ask.clone(),
                in_stream,
                result_by: result.and_then(|e| String::from_utf8(e.value.to_vec()).ok()),
                running_key_history: puts,
            });
        }
        Ok(Evidence {
            delivered: info.delivered.consumer_sequence,
            redelivered: info.num_redelivered as u64,
            ack_pending: info.num_ack_pending as u64,
            pending: info.num_pending,
            asks,
        })
    }
}

/// A KV bucket as nats.go makes one on a 2.9 server: async-nats 0.51's
/// `create_key_value` cannot read nats-server 2.9.10's answer ("data did
/// not match any variant of untagged enum Response"), so the bucket's stream
/// is made here with the KV settings and then opened as a bucket. History
/// is kept (10) for the evidence only: who put a key, in order; `max_age`
/// is the TTL from a key's last put.
async fn bucket(
    js: &jetstream::Context,
    name: &str,
    max_age: std::time::Duration,
) -> Result<kv::Store, Error> {
    js.create_stream(stream::Config {
        name: format!("KV_{name}"),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 10,
        max_age,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: stream::DiscardPolicy::New,
        duplicate_window: std::time::Duration::from_secs(1).min(if max_age.is_zero() {
            std::time::Duration::from_secs(1)
        } else {
            max_age
        }),
        ..Default::default()
    })
    .await?;
    Ok(js.get_key_value(name).await?)
}

/// What the server holds: consumer info, and per ask whether its message is
/// still in the stream, its result and who put its running key.
#[derive(Clone, Debug)]
pub struct Evidence {
    /// Deliveries the consumer made in all (its delivered sequence).
    pub delivered: u64,
    pub redelivered: u64,
    pub ack_pending: u64,
    pub pending: u64,
    pub asks: Vec<AskEvidence>,
}

#[derive(Clone, Debug)]
pub struct AskEvidence {
    pub ask: String,
    /// Its message is still in the work-queue stream (not acked).
    pub in_stream: bool,
    /// The builder whose result is in the results bucket.
    pub result_by: Option<String>,
    /// Who put the running key, oldest first, from the bucket's history.
    pub running_key_history: Vec<String>,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "consumer info: {} deliveries, {} redelivered, {} ack pending, {} pending",
            self.delivered, self.redelivered, self.ack_pending, self.pending
        )?;
        for a in &self.asks {
            writeln!(
                f,
                "  {}: message {}, result {}, running key put by [{}]",
                a.ask,
                if a.in_stream {
                    "still in the stream"
                } else {
                    "gone (acked)"
                },
                a.result_by.as_deref().unwrap_or("none"),
                a.running_key_history.join(", ")
            )?;
        }
        Ok(())
    }
}
