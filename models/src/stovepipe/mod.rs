//! The stovepipe admission model (`docs/stovepipe.md`): a queue row, request
//! rows, at-least-once messages, workers that read and CAS-write one row at a
//! time, builds, and crash and stall faults.
//!
//! The handlers (`process`, `signal`, `dlq`) live in `handlers.rs` and read
//! like the contract, each step a primitive of the worker's `Turn`
//! (`turn.rs`), and both act on messages through the broker's rules
//! (`broker.rs`); a design is a value, one choice per part (`design.rs`),
//! which the handlers ask at the step where the choice acts; `compose.rs`
//! builds one from named parts. The state (`state.rs`) holds only what a future
//! step can use: no version numbers and no read values, just whether each row
//! a worker read is still as it read it. Each step leaves one record of what
//! it did (`log.rs`); stories and `validate` recompute the versions and
//! values they show by replaying the path's records.

mod broker;
mod compose;
pub mod coverage;
pub mod design;
mod handlers;
mod log;
pub mod mutation;
mod rename;
mod state;
mod story;
pub mod trace;
mod turn;

pub use compose::{compose, composition_help, Repair, REPAIRS};
pub use design::{design_named, Admit, Design, Dlq, Gate, Resume, SlotField, StaleHead, DESIGNS};
pub use state::{State, MAX_WORKERS};

use log::Log;
use stateright::{Model, Property};

/// A request, by index: `R1` is 0. Requests arrive in ID order.
pub type Req = u8;

/// `R1` for request 0.
pub fn request_name(r: Req) -> String {
    format!("R{}", r + 1)
}

/// The most requests a run may have.
pub const MAX_REQUESTS: u8 = 32;
/// The most crashes or stalls a run may have.
pub const MAX_FAULTS: u8 = 15;
/// The most deliveries a message may have before it is dead-lettered.
pub const MAX_DELIVERIES: u8 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestState {
    Accepted,
    Processing,
    Succeeded,
    Superseded,
    DeadLettered,
}

impl RequestState {
    pub const ALL: [RequestState; 5] = [
        RequestState::Accepted,
        RequestState::Processing,
        RequestState::Succeeded,
        RequestState::Superseded,
        RequestState::DeadLettered,
    ];

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RequestState::Succeeded | RequestState::Superseded | RequestState::DeadLettered
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            RequestState::Accepted => "accepted",
            RequestState::Processing => "processing",
            RequestState::Succeeded => "succeeded",
            RequestState::Superseded => "superseded",
            RequestState::DeadLettered => "dead_lettered",
        }
    }
}

/// The queue row's slot field as a value, whose type is the design's choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slots {
    /// `in_flight_count`: anonymous, clamped at zero on release.
    Count(u8),
    /// `in_flight_request_ids`: the requests holding a slot, as a bit set.
    Owners(u32),
}

impl Slots {
    /// How many slots the gate sees taken.
    pub fn taken(self) -> u8 {
        match self {
            Slots::Count(n) => n,
            Slots::Owners(set) => set.count_ones() as u8,
        }
    }

    /// The column's name.
    pub fn field(self) -> &'static str {
        match self {
            Slots::Count(_) => "in_flight_count",
            Slots::Owners(_) => "in_flight_request_ids",
        }
    }

    /// The column's value: `1`, `{R1, R2}`.
    pub fn value(self) -> String {
        match self {
            Slots::Count(n) => n.to_string(),
            Slots::Owners(set) => {
                let names: Vec<String> = (0..MAX_REQUESTS)
                    .filter(|r| set & (1 << r) != 0)
                    .map(request_name)
                    .collect();
                format!("{{{}}}", names.join(", "))
            }
        }
    }

    /// `in_flight_count 1`.
    pub fn render(self) -> String {
        format!("{} {}", self.field(), self.value())
    }

    /// What the gate compares with K: `in_flight_count 1`, `|{R1}| = 1`.
    pub fn gate_words(self) -> String {
        match self {
            Slots::Count(_) => self.render(),
            Slots::Owners(_) => format!("|{}| = {}", self.value(), self.taken()),
        }
    }
}

/// What a read of the slot field tells the worker that read it, all that its
/// decisions use: whether a release of its request would write (an anonymous
/// count always can; an owner set when the request is in it) and whether the
/// gate is closed (the slots taken are K or more).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotView {
    pub has_slot: bool,
    pub full: bool,
}

/// A request's build: submitting is idempotent by request ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Build {
    NotSubmitted,
    Running,
    Finished,
}

/// A message names its work; a dead message remembers what ran out, so that a
/// request's process and signal messages can both be dead-lettered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageKind {
    Process,
    Signal,
    DeadProcess,
    DeadSignal,
}

/// The handler a message is delivered to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Handler {
    Process,
    Signal,
    Dlq,
}

impl MessageKind {
    pub const ALL: [MessageKind; 4] = [
        MessageKind::Process,
        MessageKind::Signal,
        MessageKind::DeadProcess,
        MessageKind::DeadSignal,
    ];

    pub fn handler(self) -> Handler {
        match self {
            MessageKind::Process => Handler::Process,
            MessageKind::Signal => Handler::Signal,
            MessageKind::DeadProcess | MessageKind::DeadSignal => Handler::Dlq,
        }
    }

    pub fn is_dead(self) -> bool {
        self.handler() == Handler::Dlq
    }

    /// The dead letter that replaces this message when it runs out of
    /// deliveries.
    pub fn dead(self) -> MessageKind {
        match self {
            MessageKind::Process => MessageKind::DeadProcess,
            _ => MessageKind::DeadSignal,
        }
    }

    /// `process(R1)`, `dead(R1)`.
    pub fn render(self, r: Req) -> String {
        let name = match self {
            MessageKind::Process => "process",
            MessageKind::Signal => "signal",
            MessageKind::DeadProcess | MessageKind::DeadSignal => "dead",
        };
        format!("{name}({})", request_name(r))
    }
}

impl Handler {
    pub fn name(self) -> &'static str {
        match self {
            Handler::Process => "process",
            Handler::Signal => "signal",
            Handler::Dlq => "dlq",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Delivery {
    Visible,
    InFlight,
    /// Held: waits for a durable write, without counting an attempt.
    Parked,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Message {
    pub request: Req,
    pub kind: MessageKind,
    pub status: Delivery,
    /// Crashes and expiries so far; dead messages count none (retried forever).
    pub attempts: u8,
}

/// A worker's program counter: the next step of its handler. The admit steps
/// are named after the contract's table; each design uses its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    Read,
    /// With `split-read`: R's row was read (in this state); the queue row,
    /// then the latest head, are each read in a step of their own.
    ReadQueue {
        request: RequestState,
    },
    ReadHead {
        request: RequestState,
        slots: SlotView,
    },
    Hold,
    Ack,
    SubmitBuild,
    /// Owner-keyed: release the slot of a head that is no longer the latest.
    ReleaseBeforeSupersede,
    Supersede,
    /// Step b of claim-first and owner-keyed: CAS the slot field.
    Claim,
    /// CAS R → processing.
    WriteProcessing,
    /// Fail-open's step c: CAS Q count+1 after the processing write.
    CountUp,
    RereadQueueForCountUp,
    /// Owner-keyed, after a lost processing write.
    RereadRequest,
    /// Give back a slot claimed by an admit that lost (retried on conflict).
    Unwind,
    RereadQueueForUnwind,
    /// `signal` and `dlq`: release, then write the outcome.
    Release,
    WriteOutcome,
    /// Repairs: supersede a stale head, then release its slot (`Unwind`).
    SupersedeThenRelease,
    /// Repairs: a closed gate first releases the owners whose request is
    /// terminal.
    Reap,
    /// Repairs: `dlq` cancels R's build and waits for it to stop; then it
    /// releases R's slot (when its read saw one) and writes the outcome.
    CancelBuild {
        release: bool,
    },
}

impl Pc {
    /// Whether the step is a write the database may refuse: a CAS, a
    /// transaction or a reap.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Pc::ReleaseBeforeSupersede
                | Pc::Supersede
                | Pc::Claim
                | Pc::WriteProcessing
                | Pc::CountUp
                | Pc::Unwind
                | Pc::Release
                | Pc::WriteOutcome
                | Pc::SupersedeThenRelease
                | Pc::Reap
        )
    }
}

/// The steps without a read in progress, in a fixed order (their codes).
const PLAIN_PCS: [Pc; 19] = [
    Pc::Read,
    Pc::Hold,
    Pc::Ack,
    Pc::SubmitBuild,
    Pc::ReleaseBeforeSupersede,
    Pc::Supersede,
    Pc::Claim,
    Pc::WriteProcessing,
    Pc::CountUp,
    Pc::RereadQueueForCountUp,
    Pc::RereadRequest,
    Pc::Unwind,
    Pc::RereadQueueForUnwind,
    Pc::Release,
    Pc::WriteOutcome,
    Pc::SupersedeThenRelease,
    Pc::Reap,
    Pc::CancelBuild { release: false },
    Pc::CancelBuild { release: true },
];

impl Pc {
    /// Every step as a small number (6 bits), for the packed state.
    pub(crate) fn code(self) -> u32 {
        let plain = PLAIN_PCS.len() as u32;
        match self {
            Pc::ReadQueue { request } => plain + request as u32,
            Pc::ReadHead { request, slots } => {
                plain + 5 + request as u32 * 4 + slots.has_slot as u32 * 2 + slots.full as u32
            }
            plain => plain.plain_code(),
        }
    }

    /// A step's place in [`PLAIN_PCS`], by a match rather than a search of
    /// the list (every worker's word is encoded with it; a test holds the
    /// two in the same order).
    fn plain_code(self) -> u32 {
        match self {
            Pc::Read => 0,
            Pc::Hold => 1,
            Pc::Ack => 2,
            Pc::SubmitBuild => 3,
            Pc::ReleaseBeforeSupersede => 4,
            Pc::Supersede => 5,
            Pc::Claim => 6,
            Pc::WriteProcessing => 7,
            Pc::CountUp => 8,
            Pc::RereadQueueForCountUp => 9,
            Pc::RereadRequest => 10,
            Pc::Unwind => 11,
            Pc::RereadQueueForUnwind => 12,
            Pc::Release => 13,
            Pc::WriteOutcome => 14,
            Pc::SupersedeThenRelease => 15,
            Pc::Reap => 16,
            Pc::CancelBuild { release: false } => 17,
            Pc::CancelBuild { release: true } => 18,
            Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
                unreachable!("a read part has its own codes")
            }
        }
    }

    pub(crate) fn from_code(code: u32) -> Pc {
        let plain = PLAIN_PCS.len() as u32;
        if code < plain {
            PLAIN_PCS[code as usize]
        } else if code < plain + 5 {
            Pc::ReadQueue {
                request: RequestState::ALL[(code - plain) as usize],
            }
        } else {
            let rest = code - plain - 5;
            Pc::ReadHead {
                request: RequestState::ALL[(rest / 4) as usize],
                slots: SlotView {
                    has_slot: rest & 2 != 0,
                    full: rest & 1 != 0,
                },
            }
        }
    }

    /// The steps that read: what they read is overwritten, so nothing from
    /// an earlier read is live at them.
    pub fn is_read(self) -> bool {
        matches!(self, Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. })
    }

    /// The step's name without what a split read carries: `ReadHead`.
    pub fn name(self) -> &'static str {
        match self {
            Pc::Read => "Read",
            Pc::ReadQueue { .. } => "ReadQueue",
            Pc::ReadHead { .. } => "ReadHead",
            Pc::Hold => "Hold",
            Pc::Ack => "Ack",
            Pc::SubmitBuild => "SubmitBuild",
            Pc::ReleaseBeforeSupersede => "ReleaseBeforeSupersede",
            Pc::Supersede => "Supersede",
            Pc::Claim => "Claim",
            Pc::WriteProcessing => "WriteProcessing",
            Pc::CountUp => "CountUp",
            Pc::RereadQueueForCountUp => "RereadQueueForCountUp",
            Pc::RereadRequest => "RereadRequest",
            Pc::Unwind => "Unwind",
            Pc::RereadQueueForUnwind => "RereadQueueForUnwind",
            Pc::Release => "Release",
            Pc::WriteOutcome => "WriteOutcome",
            Pc::SupersedeThenRelease => "SupersedeThenRelease",
            Pc::Reap => "Reap",
            Pc::CancelBuild { .. } => "CancelBuild",
        }
    }
}

/// What is left of a worker's last read: whether each thing it read is still
/// as it read it (a CAS wins exactly when its row is), and no more. What it
/// read is not kept: a decision is taken at the read, and a CAS that wins
/// writes a value derived from the row as it is, which is the row as read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fresh {
    /// R's row is at the version read.
    pub request: bool,
    /// The queue row is at the version read.
    pub queue: bool,
    /// No request arrived since the read (a hold asks it).
    pub head: bool,
}

impl Fresh {
    pub const ALL: Fresh = Fresh {
        request: true,
        queue: true,
        head: true,
    };
    pub const NONE: Fresh = Fresh {
        request: false,
        queue: false,
        head: false,
    };

    /// Only what `live` keeps.
    pub fn within(self, live: Fresh) -> Fresh {
        Fresh {
            request: self.request && live.request,
            queue: self.queue && live.queue,
            head: self.head && live.head,
        }
    }

    pub fn all(self) -> bool {
        self.request && self.queue && self.head
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Worker {
    pub message: MessageKind,
    pub request: Req,
    pub pc: Pc,
    /// False once its message's visibility expired (a stall): its ack and its
    /// hold then change nothing.
    pub holds_message: bool,
    pub fresh: Fresh,
}

impl Worker {
    pub fn handler(&self) -> Handler {
        self.message.handler()
    }
}

/// The bounds of one check: part of every scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// N: how many requests arrive, in ID order, at any time.
    pub requests: u8,
    /// K: the queue's limit.
    pub max_concurrent: u8,
    /// How many times a worker may die.
    pub crashes: u8,
    /// How many times a message's visibility may expire while its worker runs.
    pub stalls: u8,
    /// Attempts before a message is dead-lettered.
    pub max_deliveries: u8,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            requests: 2,
            max_concurrent: 1,
            crashes: 1,
            stalls: 0,
            max_deliveries: 2,
        }
    }
}

impl Bounds {
    /// Checks the bounds a model can be built with; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(format!(
                "requests must be from 1 to {MAX_REQUESTS}, not {}",
                self.requests
            ));
        }
        if self.max_concurrent == 0 {
            return Err("max_concurrent must be at least 1".into());
        }
        if self.crashes > MAX_FAULTS {
            return Err(format!(
                "crashes must be at most {MAX_FAULTS}, not {}",
                self.crashes
            ));
        }
        if self.stalls > MAX_FAULTS {
            return Err(format!(
                "stalls must be at most {MAX_FAULTS}, not {}",
                self.stalls
            ));
        }
        if self.max_deliveries == 0 || self.max_deliveries > MAX_DELIVERIES {
            return Err(format!(
                "max_deliveries must be from 1 to {MAX_DELIVERIES}, not {}",
                self.max_deliveries
            ));
        }
        Ok(())
    }

    /// The most workers that can run at once: one holding each message
    /// (a request has at most a process or dead-process message and a signal
    /// or dead-signal message), and one per stall that left its worker
    /// running without its message.
    pub fn max_workers(&self) -> usize {
        2 * self.requests as usize + self.stalls as usize
    }
}

/// Refinements of the contract's readings, each off by default so that results
/// stay comparable with the contract.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// `split-read`: a read takes R's row, the queue row and the latest head
    /// in three steps, so writes can fall between them (the contract's finer
    /// option; its default is one consistent snapshot).
    pub split_read: bool,
    /// `delayed-hold`: the broker holds a message by delaying it (SQS's
    /// `ChangeMessageVisibility`), so a held message may come back whatever
    /// was written, not only after the next durable write (the contract's
    /// second reading; its default parks).
    pub delayed_hold: bool,
    /// `aborts`: the database may refuse any write, a CAS, a transaction
    /// or a reap (a serialization failure, a deadlock): nothing is
    /// written and the worker restarts its handler from the read (the
    /// contract's "real databases abort").
    pub aborts: bool,
}

impl crate::NamedOptions for Options {
    const MODEL: &'static str = "stovepipe";

    fn flags(&mut self) -> Vec<(&'static str, &mut bool)> {
        vec![
            ("split-read", &mut self.split_read),
            ("delayed-hold", &mut self.delayed_hold),
            ("aborts", &mut self.aborts),
        ]
    }
}

/// The model: the bounds, a design and the options.
#[derive(Clone, Copy, Debug)]
pub struct Stovepipe {
    pub bounds: Bounds,
    pub design: Design,
    pub options: Options,
    /// Forget what no later step can use (the default). Off, a worker keeps
    /// whether each row it read is still current until it ends, which merges
    /// fewer states and gives the same verdicts: the exactness test compares
    /// the two.
    pub forget_dead_reads: bool,
    /// A mutant of the design: one step changed (see [`mutation`]); `None`
    /// for the design itself.
    pub mutation: Option<mutation::Mutation>,
    /// With `split-read`, take a split read's next part at once after the
    /// part before it, unless a write to the row just read comes between,
    /// and its first part at once where no one else can write the row it
    /// reads (the default; see [`Stovepipe::mid_split_read`] and
    /// [`Stovepipe::first_part_alone`]). Off, every other
    /// step may fall between the parts, which reaches more states and the
    /// same verdicts and shortest paths' lengths: the split-read exactness
    /// test compares the two.
    pub reduce_split_reads: bool,
    /// Store the requests below the latest head in order of what of each
    /// lasts, those alike in it in arrival order: one form for their
    /// namings (the default; see [`Stovepipe::stored`]). Off, the checker
    /// stores every naming: the same verdicts and shortest paths' lengths,
    /// which the renaming's exactness test compares.
    pub rename_requests: bool,
}

impl Stovepipe {
    pub fn new(design: Design, bounds: Bounds) -> Self {
        Stovepipe {
            bounds,
            design,
            options: Options::default(),
            forget_dead_reads: true,
            mutation: None,
            reduce_split_reads: true,
            rename_requests: true,
        }
    }

    /// The mutant of this model that changes `mutation`'s step: it keeps
    /// every read whole, since a changed step may use what the design's
    /// liveness says its step forgets.
    pub fn mutant(&self, mutation: mutation::Mutation) -> Stovepipe {
        Stovepipe {
            mutation: Some(mutation),
            forget_dead_reads: false,
            ..*self
        }
    }

    pub fn initial_state(&self) -> State {
        State::initial(self.bounds.crashes, self.bounds.stalls)
    }

    /// The slot field as it is now.
    pub fn slots(&self, s: &State) -> Slots {
        self.design.slots.read(s)
    }

    /// Whether the broker may hand `m` out now: a visible message, and with
    /// `delayed-hold` a held one too (its delay may end before any write;
    /// a write since its hold made it visible anyway). Redelivering a held
    /// message with nothing written since only holds again, so a state
    /// whose only messages are held is still wedged.
    pub fn deliverable(&self, m: &Message) -> bool {
        m.status == Delivery::Visible || (self.options.delayed_hold && m.status == Delivery::Parked)
    }

    /// Whether anything at all can happen without a fault: an arrival, a
    /// delivery, a worker step or a build finishing.
    pub fn can_progress(&self, s: &State) -> bool {
        s.arrived() < self.bounds.requests
            || s.workers_len() > 0
            || s.messages().any(|m| m.status == Delivery::Visible)
            || s.running_builds().next().is_some()
    }

    /// Nothing can happen while some request is not terminal.
    pub fn is_wedged(&self, s: &State) -> bool {
        !self.can_progress(s) && s.requests().any(|(_, state)| !state.is_terminal())
    }

    /// What a worker at `pc` may still use of its last read (see [`Fresh`]):
    /// a row it may CAS before it reads the row again, or, for a hold,
    /// everything it read. The rest is forgotten, so that states that differ
    /// only in it are one state. `handlers::step` checks, on every step it
    /// takes, that no step uses what was forgotten.
    pub fn live_reads(&self, handler: Handler, pc: Pc) -> Fresh {
        if !self.forget_dead_reads {
            return Fresh::ALL;
        }
        handlers::live_reads(handler, pc)
    }

    /// What a worker keeps of its last read once its step is done: what its
    /// next steps may use ([`Stovepipe::live_reads`]), and of a hold only
    /// whether anything it read has changed.
    pub fn remembered(&self, w: &Worker) -> Fresh {
        let kept = w.fresh.within(self.live_reads(w.handler(), w.pc));
        match w.pc {
            Pc::Hold if self.forget_dead_reads && !kept.all() => Fresh::NONE,
            _ => kept,
        }
    }

    /// Applies an action, recording what it did in `log`.
    pub(crate) fn apply(&self, state: &State, action: Action, log: &mut Log) -> State {
        let mut next = *state;
        self.apply_to(&mut next, action, log);
        next
    }

    /// [`Stovepipe::apply`] in place (a state is hundreds of bytes, and the
    /// search makes millions of successors: it copies each once).
    pub(crate) fn apply_to(&self, next: &mut State, action: Action, log: &mut Log) {
        match action {
            Action::Arrive => handlers::arrive(next, log),
            Action::Deliver { request, kind } => broker::deliver(next, request, kind, log),
            Action::Step(i) => handlers::step(self, next, i, log),
            Action::FinishBuild(r) => handlers::finish_build(next, r, log),
            Action::Crash(i) => handlers::crash(self, next, i, log),
            Action::Stall(i) => handlers::stall(self, next, i, log),
            Action::Abort(i) => handlers::abort(self, next, i, log),
        }
        if self.forget_dead_reads {
            next.forget_keyed(|key| self.remembered_by_key(key));
        } else {
            next.forget(|w| self.remembered(w));
        }
    }

    /// [`Stovepipe::remembered`] by a worker's [`state::MEMORY_KEYS`] key,
    /// worked out once a key and kept (it depends on nothing else while
    /// dead reads are forgotten).
    #[inline]
    fn remembered_by_key(&self, key: usize) -> u32 {
        use std::sync::atomic::{AtomicU8, Ordering};
        static KEPT: [AtomicU8; state::MEMORY_KEYS] =
            [const { AtomicU8::new(u8::MAX) }; state::MEMORY_KEYS];
        let encode = state::fresh_bits;
        #[cfg(test)]
        if handlers::CLAIM_FORGETS_QUEUE.get() {
            return encode(self.remembered(&state::worker_of_memory_key(key)));
        }
        match KEPT[key].load(Ordering::Relaxed) {
            u8::MAX => {
                let kept = encode(self.remembered(&state::worker_of_memory_key(key)));
                KEPT[key].store(kept as u8, Ordering::Relaxed);
                kept
            }
            kept => {
                // The one table serves every model: it must not depend on
                // the design.
                debug_assert_eq!(
                    kept as u32,
                    encode(self.remembered(&state::worker_of_memory_key(key)))
                );
                kept as u32
            }
        }
    }
}

/// Everything that can happen in one atomic step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// The next request arrives (its row is inserted, `process` published).
    Arrive,
    /// The broker hands a visible message to a new worker.
    Deliver { request: Req, kind: MessageKind },
    /// The worker at this index (in the sorted list) takes its next step.
    Step(usize),
    /// A running build finishes and publishes `signal`.
    FinishBuild(Req),
    /// Fault: the worker dies; its message is visible again, attempt +1.
    Crash(usize),
    /// Fault: the worker's message expires while it still runs.
    Stall(usize),
    /// The database refuses the worker's next step, a write (option
    /// `aborts`): nothing is written, and the worker reads again.
    Abort(usize),
}

impl Action {
    pub fn is_fault(self) -> bool {
        matches!(self, Action::Crash(_) | Action::Stall(_))
    }
}

/// The property names, as the contract names them.
pub const NO_WEDGE: &str = "no-wedge";
pub const BUILDS_WITHIN_LIMIT: &str = "builds-within-limit";
pub const COUNT_NOT_LOW: &str = "count-not-low";
pub const COUNT_NOT_HIGH: &str = "count-not-high";
pub const OUTCOME_FINAL: &str = "outcome-final";
pub const NO_MESSAGE_LEFT_IN_FLIGHT: &str = "no-message-left-in-flight";
pub const DEAD_LETTER_NEEDS_FAULTS: &str = "dead-letter-needs-faults";
pub const ALL_SUCCEED: &str = "all-succeed";
pub const SOME_SUPERSEDED: &str = "some-superseded";
pub const SOME_DEAD_LETTERED: &str = "some-dead-lettered";
pub const SOME_HELD: &str = "some-held";
/// Progress (checked under weak fairness, `docs/stovepipe.md`).
pub const REQUESTS_FINISH: &str = "requests-finish";
pub const HELD_RELEASED: &str = "held-released";
pub const SLOTS_SETTLE: &str = "slots-settle";

impl Stovepipe {
    /// The arrived requests that are not terminal, one bit each.
    pub fn unfinished(&self, s: &State) -> u64 {
        s.requests()
            .filter(|(_, state)| !state.is_terminal())
            .fold(0, |acc, (r, _)| acc | 1 << r)
    }

    /// The requests with a message held (parked), one bit each.
    pub fn held(&self, s: &State) -> u64 {
        s.messages()
            .filter(|m| m.status == Delivery::Parked)
            .fold(0, |acc, m| acc | 1 << m.request)
    }

    /// Whether the slot field is the processing set (a count: its size).
    pub fn slots_match(&self, s: &State) -> bool {
        self.design.slots.count_not_low(s) && self.design.slots.count_not_high(s)
    }

    /// Who takes `action`, as a number that stays the same while that actor
    /// lives: the environment's arrivals, a message's deliveries, a build, a
    /// worker known by its message and whether it still holds it (equal
    /// workers are one actor, as the actions offer only the first of them).
    pub fn actor_of(&self, s: &State, action: &Action) -> u64 {
        let message = |i: usize| {
            let w = s.worker(i);
            (w.message as u64 * MAX_REQUESTS as u64 + w.request as u64) << 1
                | u64::from(w.holds_message)
        };
        let (kind, who) = match *action {
            Action::Arrive => (0, 0),
            Action::Deliver { request, kind } => {
                (1, kind as u64 * MAX_REQUESTS as u64 + request as u64)
            }
            Action::Step(i) => (2, message(i)),
            Action::FinishBuild(r) => (3, r as u64),
            Action::Crash(i) => (4, message(i)),
            Action::Stall(i) => (5, message(i)),
            Action::Abort(i) => (6, message(i)),
        };
        kind << 32 | who
    }
}

impl Stovepipe {
    /// Every action enabled in `s`, before the reduction of split reads.
    pub fn every_action(&self, s: &State, actions: &mut Vec<Action>) {
        if s.arrived() < self.bounds.requests {
            actions.push(Action::Arrive);
        }
        for m in s.messages() {
            if self.deliverable(&m) {
                actions.push(Action::Deliver {
                    request: m.request,
                    kind: m.kind,
                });
            }
        }
        // Equal workers are interchangeable: acting on the first of a run of
        // equals stands for all of them.
        let n = s.workers_len();
        let distinct = |i: usize| i == 0 || !s.same_workers(i, i - 1);
        for i in (0..n).filter(|&i| distinct(i)) {
            actions.push(Action::Step(i));
        }
        for r in s.running_builds() {
            actions.push(Action::FinishBuild(r));
        }
        if self.options.aborts {
            for i in (0..n).filter(|&i| distinct(i) && s.worker(i).pc.writes()) {
                actions.push(Action::Abort(i));
            }
        }
        if s.crashes_left() > 0 {
            for i in (0..n).filter(|&i| distinct(i)) {
                actions.push(Action::Crash(i));
            }
        }
        if s.stalls_left() > 0 {
            for i in (0..n).filter(|&i| distinct(i) && s.worker(i).holds_message) {
                actions.push(Action::Stall(i));
            }
        }
    }

    /// With `split-read` and [`Stovepipe::reduce_split_reads`]: the worker
    /// (its index) whose split read goes on at once, if any: one that has
    /// just read a part (the row it read last is still as it read it: R's
    /// row, then the queue row), or one whose next part nothing can change
    /// any more ([`Stovepipe::settled`]).
    ///
    /// Why (`docs/stovepipe.md`, *One consistent read*): a read changes
    /// nothing but its worker, and no property looks at a worker's step, so
    /// a read commutes with every step of another actor but a write to the
    /// row it reads. In a shortest path a split read begun is finished
    /// (without its parts the path is shorter, and ends in a state that
    /// differs only in that worker's step). Reorder each such path: a part
    /// that nothing can change as early as it goes, then the queue's and
    /// R's reads as late as they commute. The path keeps its length and its
    /// last state, and in it R's read is followed by the queue's, by a
    /// write to R, or by another read that the write makes stale too (they
    /// wait for it together); the queue's read likewise; and a settled part
    /// comes as soon as its worker is at it. So such a state offers only
    /// those steps ([`Stovepipe::next_part_first`]).
    pub fn mid_split_read(&self, s: &State) -> Option<usize> {
        if !(self.options.split_read && self.reduce_split_reads) {
            return None;
        }
        (0..s.workers_len()).find(|&i| {
            let w = s.worker(i);
            match w.pc {
                Pc::ReadQueue { .. } => w.fresh.request || self.settled(s, &w),
                Pc::ReadHead { .. } => w.fresh.queue || self.settled(s, &w),
                _ => false,
            }
        })
    }

    /// With `split-read` and [`Stovepipe::reduce_split_reads`], where no
    /// other worker is mid-read ([`Stovepipe::mid_split_read`]): the worker
    /// (its index) at a split read's first part, R's row, that holds its
    /// message and whose row no step of another can write before this
    /// worker's next step: R is terminal, or this worker is R's only one,
    /// its message R's only message, and no build of R runs. It reads at
    /// once, or crashes or stalls.
    ///
    /// Why: R's row is written only by a CAS or a transaction of a worker
    /// of R that still has R as it read it, and each write makes the other
    /// readers of R stale; so a terminal row is never written again (a
    /// worker that reads it acks), and with no other worker of R, no
    /// message another could take and no build whose `signal` would bring
    /// one, no one writes R before this worker steps (its own crash or
    /// stall may hand its message on, so those stay offered). Its read of
    /// R therefore commutes with every step of another until then, and its
    /// next parts are ordered as [`Stovepipe::mid_split_read`] orders them.
    /// The step that brought the worker to its read commutes with every
    /// step of another too: its delivery (no one else acts on a message in
    /// flight) or a CAS it lost (that changes only the worker). Reorder a
    /// shortest path: that step as late as it commutes, just before the
    /// worker's next one. The path keeps its length and its last state,
    /// and in it a state where such a worker waits at its read is followed
    /// by a step of that worker. It does not end there either: without the
    /// delivery or the lost CAS it would be shorter, and end in a state
    /// that no property tells apart (a visible message for one in flight
    /// with a worker that has done nothing; a worker back at its write).
    ///
    /// Not for a mutant, which may write a row it did not read, nor for a
    /// reaping gate, whose reap writes the queue row and then reads again
    /// (that write cannot go later), nor under `aborts`: there a worker
    /// returns to its read with its message still held, so a fair cycle
    /// (the database refusing for ever) may begin in a state where two
    /// workers wait at their reads, which this order never reaches, and
    /// its lasso would be longer.
    pub fn first_part_alone(&self, s: &State) -> Option<usize> {
        if !(self.options.split_read && self.reduce_split_reads)
            || self.mutation.is_some()
            || self.options.aborts
            || self.design.gate == Gate::ReapThenHold
        {
            return None;
        }
        (0..s.workers_len()).find(|&i| {
            let w = s.worker(i);
            let r = w.request;
            let holds = |m: Message| m.kind == w.message && m.status == Delivery::InFlight;
            w.pc == Pc::Read
                && w.holds_message
                && s.message(r, w.message).is_some_and(holds)
                && (s.request(r).is_terminal()
                    || (s.build(r) != Build::Running
                        && s.workers().filter(|o| o.request == r).count() == 1
                        && s.messages().all(|m| m.request != r || holds(m))))
        })
    }

    /// Whether no write can change what `w`'s next part decides or keeps,
    /// so that it commutes with every other step. Of the head: once every
    /// request has arrived. And where the read only forgets the row (no
    /// mutant, which keeps every read): the head for a `signal` or `dlq`
    /// worker, which does not ask for it, and for R no longer the latest
    /// head, which a later arrival leaves so; the queue row and the head
    /// for R read terminal (the worker acks) or, by `process`, processing
    /// (it submits), and the queue row for `dlq` where the design does not
    /// release R in the state read.
    fn settled(&self, s: &State, w: &Worker) -> bool {
        let (request, queue) = match w.pc {
            Pc::ReadQueue { request } => (request, true),
            Pc::ReadHead { request, .. } => (request, false),
            _ => return false,
        };
        if !queue && s.arrived() == self.bounds.requests {
            return true;
        }
        if !self.forget_dead_reads || self.mutation.is_some() {
            return false;
        }
        let handler = w.handler();
        let done = request.is_terminal()
            || (handler == Handler::Process && request == RequestState::Processing);
        done || match (handler, queue) {
            (Handler::Process, true) | (Handler::Signal, true) => false,
            (Handler::Dlq, true) => !self.design.slots.dlq_releases(request),
            (Handler::Process, false) => w.request + 1 < s.arrived(),
            (_, false) => true,
        }
    }

    /// Keeps of `actions[from..]` the reader's next part and, unless that
    /// part is settled (nothing can change it), the steps that make the row
    /// it read last stale (a step at a write, tried: a mutant may write
    /// another row or none) and the reads such a write makes stale too.
    fn next_part_first(&self, s: &State, reader: usize, from: usize, actions: &mut Vec<Action>) {
        let r = s.worker(reader);
        let alone = self.settled(s, &r);
        let fresh = |w: &Worker| match r.pc {
            Pc::ReadQueue { .. } => w.fresh.request,
            _ => w.fresh.queue,
        };
        let readers = |s: &State| {
            s.workers()
                .filter(|w| {
                    (w.message, w.request, w.pc, w.holds_message)
                        == (r.message, r.request, r.pc, r.holds_message)
                        && fresh(w)
                })
                .count()
        };
        // Reads that the same write may make stale wait for it together,
        // in any order: R's row by another worker of R, the queue row by
        // any, and both where a transaction writes both rows.
        let transaction = matches!(
            self.design.admit,
            Admit::FencedClaim | Admit::OneTransaction
        );
        let reads_with = |w: &Worker| match (r.pc, w.pc) {
            (Pc::ReadQueue { .. }, Pc::Read) => w.request == r.request,
            (Pc::ReadQueue { .. }, Pc::ReadQueue { .. }) => transaction,
            (_, Pc::ReadQueue { .. }) => true,
            (_, Pc::Read) => transaction,
            _ => false,
        };
        let before = readers(s);
        keep_from(actions, from, |action| match action {
            Action::Step(i) if i == reader => true,
            Action::Step(_) if alone => false,
            Action::Step(i) if reads_with(&s.worker(i)) => true,
            Action::Step(i) => {
                s.worker(i).pc.writes()
                    && readers(&self.apply(s, action, &mut Log::quiet())) < before
            }
            _ => false,
        });
    }
}

/// Keeps of `actions[from..]` those `keep` says, in order (the reductions'
/// choice among the actions `every_action` appended).
fn keep_from(actions: &mut Vec<Action>, from: usize, mut keep: impl FnMut(Action) -> bool) {
    let mut kept = from;
    for j in from..actions.len() {
        if keep(actions[j]) {
            actions[kept] = actions[j];
            kept += 1;
        }
    }
    actions.truncate(kept);
}

impl Model for Stovepipe {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial_state()]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        let from = actions.len();
        self.every_action(s, actions);
        if !(self.options.split_read && self.reduce_split_reads) {
            return;
        }
        // The reader is chosen in the stored form, so that every naming of
        // the requests offers the same steps (the search expands stored
        // forms; a replay, whole states).
        let (form, to) = self.stored(s).unwrap_or((*s, rename::unrenamed()));
        let named = |j: usize| {
            rename::worker_in_whole(s, &form, &to, j).expect("a renamed worker is the state's")
        };
        if let Some(reader) = self.mid_split_read(&form).map(named) {
            self.next_part_first(s, reader, from, actions);
        } else if let Some(reader) = self.first_part_alone(&form).map(named) {
            // Its read, or a fault of its own.
            keep_from(
                actions,
                from,
                |action| matches!(action, Action::Step(i) | Action::Crash(i) | Action::Stall(i) if i == reader),
            );
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        Some(self.apply(s, action, &mut Log::quiet()))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(NO_WEDGE, |m: &Self, s: &State| !m.is_wedged(s)),
            Property::always(BUILDS_WITHIN_LIMIT, |m: &Self, s: &State| {
                s.running_builds().count() <= m.bounds.max_concurrent as usize
            }),
            Property::always(COUNT_NOT_LOW, |m: &Self, s: &State| {
                !s.is_quiescent() || m.design.slots.count_not_low(s)
            }),
            Property::always(COUNT_NOT_HIGH, |m: &Self, s: &State| {
                !s.is_quiescent() || m.design.slots.count_not_high(s)
            }),
            Property::always(OUTCOME_FINAL, |_, s: &State| {
                s.requests()
                    .all(|(r, state)| s.first_outcome(r).is_none_or(|first| first == state))
            }),
            Property::always(NO_MESSAGE_LEFT_IN_FLIGHT, |_, s: &State| {
                s.messages()
                    .filter(|m| m.status == Delivery::InFlight)
                    .all(|m| {
                        s.workers().any(|w| {
                            w.holds_message && w.request == m.request && w.message == m.kind
                        })
                    })
            }),
            Property::always(DEAD_LETTER_NEEDS_FAULTS, |m: &Self, s: &State| {
                let dead = s.requests_in(RequestState::DeadLettered).next().is_some()
                    || s.messages().any(|msg| msg.kind.is_dead());
                let faults =
                    (m.bounds.crashes - s.crashes_left()) + (m.bounds.stalls - s.stalls_left());
                !dead || faults >= m.bounds.max_deliveries
            }),
            Property::sometimes(ALL_SUCCEED, |m: &Self, s: &State| {
                s.arrived() == m.bounds.requests
                    && s.requests()
                        .all(|(_, state)| state == RequestState::Succeeded)
            }),
            Property::sometimes(SOME_SUPERSEDED, |_, s: &State| {
                s.requests_in(RequestState::Superseded).next().is_some()
            }),
            Property::sometimes(SOME_DEAD_LETTERED, |_, s: &State| {
                s.requests_in(RequestState::DeadLettered).next().is_some()
            }),
            Property::sometimes(SOME_HELD, |_, s: &State| {
                s.messages().any(|m| m.status == Delivery::Parked)
            }),
        ]
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}

#[cfg(test)]
mod tests;
