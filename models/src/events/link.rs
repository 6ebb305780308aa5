//! Link events: what each JetStream or KV call of a builder RETURNED, what
//! the client published and what the build did, as the builder saw it.
//! Asks are named by the system's own IDs (any string), mapped to the
//! model's A1, A2, ... in the order of their `publish` lines; builders by
//! their ids (the `actor`). Time comes from `ts_ms`, mapped to the model's
//! ticks by the header's `ms_per_tick` (see docs/validate.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a builder decided from the running key it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run the ask: put the key and build.
    Run,
    /// A duplicate: ack it without running it.
    Drop,
}

/// A link event, tagged by `"event"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Client: the ask was published on the work queue.
    Publish {
        /// The ask's ID.
        ask: String,
    },
    /// Builder: a fetch (pull request) returned a message, or gave up empty
    /// (`got: null`).
    Fetch {
        /// The ask of the message it got, or null.
        got: Option<String>,
    },
    /// Builder: a message reached its buffer after its fetch had given up
    /// (the server's late answer to the pull request).
    LateAnswer {
        /// The ask of the message.
        ask: String,
    },
    /// Builder: it read the oldest message of its buffer (designs without
    /// the duplicate check decide and start in the same step).
    Take {
        /// The ask.
        ask: String,
    },
    /// Builder: the KV get of the ask's running key, and what it decided.
    KvGet {
        /// The ask.
        ask: String,
        /// A key was there.
        found: bool,
        /// The builder the key names, when found.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        builder: Option<String>,
        /// The key's age by this builder's clock, in ms, when found.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        age_ms: Option<u64>,
        /// What it decided.
        decision: Decision,
    },
    /// Builder: it put the running key and starts the ask.
    Put {
        /// The ask.
        ask: String,
    },
    /// Builder: a heartbeat, the key put again and in-progress sent.
    Heartbeat {
        /// The ask.
        ask: String,
    },
    /// Builder: the message was acked.
    Ack {
        /// The ask.
        ask: String,
    },
    /// Builder: the message was nak'ed (handed back at once).
    Nak {
        /// The ask.
        ask: String,
    },
    /// Builder: the build started.
    BuildStart {
        /// The ask.
        ask: String,
    },
    /// Builder: the build finished and its result was announced.
    BuildFinish {
        /// The ask.
        ask: String,
    },
    /// Builder: the running key was deleted.
    KvDelete {
        /// The ask.
        ask: String,
    },
    /// Server evidence: the consumer's view of an ask's message (consumer
    /// info), for the record.
    Server {
        /// The ask.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ask: Option<String>,
        /// How many times the server has delivered it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        num_delivered: Option<u64>,
        /// The consumer's delivery sequence of that delivery (the ack
        /// subject's consumer sequence, `Sequence.Consumer` of nats.go's
        /// `Metadata()`): it counts every delivery of the consumer, so an
        /// answer delivered before others and logged after them shows it
        /// was held.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        consumer_seq: Option<u64>,
    },
}

impl Event {
    /// The `event` tag of this event.
    pub fn tag(&self) -> &'static str {
        match self {
            Event::Publish { .. } => "publish",
            Event::Fetch { .. } => "fetch",
            Event::LateAnswer { .. } => "late_answer",
            Event::Take { .. } => "take",
            Event::KvGet { .. } => "kv_get",
            Event::Put { .. } => "put",
            Event::Heartbeat { .. } => "heartbeat",
            Event::Ack { .. } => "ack",
            Event::Nak { .. } => "nak",
            Event::BuildStart { .. } => "build_start",
            Event::BuildFinish { .. } => "build_finish",
            Event::KvDelete { .. } => "kv_delete",
            Event::Server { .. } => "server",
        }
    }
}
