//! Stovepipe events: what each statement of a handler, the client, the
//! broker or the build system RETURNED (rows read with their versions,
//! rows affected by a CAS), never what a model predicted.
//!
//! Requests are named by the system's own IDs (any string): validate maps
//! them to the model's R1, R2, ... in the order of their `arrive` lines.
//! Versions are the model's numbering: the queue row starts at version 1,
//! a request row is inserted at version 1, and every write that wins adds
//! one to each row it writes (see docs/validate.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A request row's `state` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    Accepted,
    Processing,
    Succeeded,
    Superseded,
    DeadLettered,
}

/// A message kind as the broker names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageName {
    /// `process(R)`, published on arrival.
    Process,
    /// `signal(R)`, published when R's build finishes.
    Signal,
    /// `dead(R)`: a message out of deliveries, handled by the DLQ
    /// reconciler.
    Dead,
}

/// A request row as a statement read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestRow {
    /// The request's ID.
    pub id: String,
    /// Its `state` column.
    pub state: RowState,
    /// Its version column.
    pub version: u64,
}

/// The queue row as a statement read it: its version and its slot field,
/// whichever column the design keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QueueRow {
    /// Its version column.
    pub version: u64,
    /// The counter designs' `in_flight_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_count: Option<u64>,
    /// The owner-keyed designs' `in_flight_request_ids` (any order).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::null_is_some_empty"
    )]
    pub in_flight_request_ids: Option<Vec<String>>,
}

/// Which row a write is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RowName {
    Queue,
    Request,
}

/// The new values a write sets (the columns it sets, nothing else).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Values {
    /// A request row's new `state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<RowState>,
    /// The queue row's new `in_flight_count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight_count: Option<u64>,
    /// The queue row's new `in_flight_request_ids` (any order).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::null_is_some_empty"
    )]
    pub in_flight_request_ids: Option<Vec<String>>,
}

/// One row's write inside a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowWrite {
    /// The row written.
    pub row: RowName,
    /// The request, when the row is a request row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// The version the row had to be at (the version read).
    pub expected_version: u64,
    /// What it sets.
    pub set: Values,
}

/// A stovepipe event, tagged by `"event"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Client: R's row was inserted (accepted) and `process(R)` published.
    Arrive {
        /// The request's ID.
        request: String,
    },
    /// Broker: a message was handed to a new handler invocation.
    Deliver {
        /// The message kind.
        message: MessageName,
        /// The request it is about.
        request: String,
        /// The id the system gives this invocation; the same id is the
        /// `actor` of every step it takes.
        worker: String,
        /// Which delivery of the message this is, as the model counts
        /// it: one more than its deliveries that ended in a crash or an
        /// expiry (a held message comes back with the same attempt, so
        /// not SQS's `ApproximateReceiveCount` where the service holds);
        /// checked when given. Dead messages count none: always 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u8>,
    },
    /// Worker: the one consistent read of R's row, the queue row and the
    /// latest head (the request that arrived last).
    Read {
        /// R's row.
        request: RequestRow,
        /// The queue row (named so as not to clash with the common
        /// `queue` field, which says which queue).
        queue_row: QueueRow,
        /// The ID of the latest head.
        head: String,
    },
    /// Worker, split reads: R's row alone (the first of three statements).
    ReadRequest {
        /// R's row.
        request: RequestRow,
    },
    /// Worker, split reads: the queue row alone.
    ReadQueue {
        /// The queue row (named so as not to clash with the common
        /// `queue` field, which says which queue).
        queue_row: QueueRow,
    },
    /// Worker, split reads: the latest head alone.
    ReadHead {
        /// The ID of the latest head.
        head: String,
    },
    /// Worker: the queue row read again alone (after a lost CAS on it).
    RereadQueue {
        /// The queue row (named so as not to clash with the common
        /// `queue` field, which says which queue).
        queue_row: QueueRow,
    },
    /// Worker: R's row read again alone (after a lost CAS on it).
    RereadRequest {
        /// R's row.
        request: RequestRow,
    },
    /// Worker: a compare-and-set of one row, `UPDATE ... SET ..., version =
    /// version + 1 WHERE version = expected_version`.
    Cas {
        /// The row written.
        row: RowName,
        /// The request, when the row is a request row.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
        /// The version the row had to be at (the version read).
        expected_version: u64,
        /// The values it sets (for a CAS that lost: the values it tried).
        set: Values,
        /// Rows affected was 1.
        won: bool,
        /// The database refused it (a serialization failure, a deadlock, a
        /// lock wait timeout): nothing was written and `won` is false; the
        /// worker reads again (the model option `aborts`, on for logs).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aborted: bool,
        /// The handler's step, if the system names it: `claim`,
        /// `write_processing`, `count_up`, `unwind`, `release`,
        /// `release_before_supersede`, `supersede`,
        /// `supersede_then_release`, `write_outcome`; checked when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    /// Worker: one transaction writing several rows, committed only if every
    /// row is at its expected version (the atomic-admit repairs).
    Transaction {
        /// The writes, one per row.
        writes: Vec<RowWrite>,
        /// It committed.
        won: bool,
        /// The database refused it (a serialization failure, a deadlock, a
        /// lock wait timeout): nothing was written and `won` is false; the
        /// worker reads again (the model option `aborts`, on for logs).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aborted: bool,
        /// The handler's step, if the system names it (`claim`); checked
        /// when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    /// Worker, the reaping repairs: one statement that removes from the
    /// queue's owners every request whose row is terminal, guarded by the
    /// queue row's version.
    Reap {
        /// The version the queue row had to be at.
        expected_version: u64,
        /// The owners it found terminal and removed (empty: none was, and
        /// nothing was written; `null` is empty).
        #[serde(deserialize_with = "super::null_is_empty")]
        removed: Vec<String>,
        /// The queue row was still at `expected_version` (false: nothing
        /// written, `removed` is not checked).
        won: bool,
        /// The database refused it (a serialization failure, a deadlock, a
        /// lock wait timeout): nothing was written and `won` is false; the
        /// worker reads again (the model option `aborts`, on for logs).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        aborted: bool,
    },
    /// Worker: R's build was submitted to the build system.
    Submit {
        /// The request.
        request: String,
        /// The build system started a build (false: one was already
        /// submitted, nothing started).
        started: bool,
    },
    /// Worker (the DLQ reconciler of the dlq-cancels repairs): R's build
    /// was cancelled and has stopped.
    CancelBuild {
        /// The request.
        request: String,
        /// A running build was stopped (false: none ran); checked when
        /// given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped: Option<bool>,
    },
    /// Worker: its message was acked.
    Ack {
        /// The message kind.
        message: MessageName,
        /// The request.
        request: String,
    },
    /// Worker: its message was held (parked behind a closed gate, no
    /// attempt counted).
    Hold {
        /// The message kind.
        message: MessageName,
        /// The request.
        request: String,
    },
    /// Build system: R's build finished and `signal(R)` was published.
    FinishBuild {
        /// The request.
        request: String,
    },
}

impl Event {
    /// The `event` tag of this event.
    pub fn tag(&self) -> &'static str {
        match self {
            Event::Arrive { .. } => "arrive",
            Event::Deliver { .. } => "deliver",
            Event::Read { .. } => "read",
            Event::ReadRequest { .. } => "read_request",
            Event::ReadQueue { .. } => "read_queue",
            Event::ReadHead { .. } => "read_head",
            Event::RereadQueue { .. } => "reread_queue",
            Event::RereadRequest { .. } => "reread_request",
            Event::Cas { .. } => "cas",
            Event::Transaction { .. } => "transaction",
            Event::Reap { .. } => "reap",
            Event::Submit { .. } => "submit",
            Event::CancelBuild { .. } => "cancel_build",
            Event::Ack { .. } => "ack",
            Event::Hold { .. } => "hold",
            Event::FinishBuild { .. } => "finish_build",
        }
    }
}
