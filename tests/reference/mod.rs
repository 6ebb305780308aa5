//! The reference for the exactness test: the stovepipe model as it was before
//! its state was reduced to what is live (commit aa90043), kept frozen. Its
//! states remember every worker's whole read (values, and whether each row
//! read is still at the version read), so comparing its verdicts and
//! shortest lengths with the reduced model's shows that the reduction merges
//! only states that no future step, property or witness can tell apart.

mod claim_first;
mod design;
mod fail_open;
mod handlers;
mod owner_keyed;

pub use design::{design_named, Design, InFlightCount, SlotField};

use stateright::{Model, Property};

/// A request, by index: `R1` is 0. Requests arrive in ID order.
pub type Req = u8;

/// `R1` for request 0.
pub fn request_name(r: Req) -> String {
    format!("R{}", r + 1)
}

/// The most requests a run may have (the owner set is a `u32` bit set).
pub const MAX_REQUESTS: u8 = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestState {
    Accepted,
    Processing,
    Succeeded,
    Superseded,
    DeadLettered,
}

impl RequestState {
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

/// A request row: its state and the version every CAS checks and bumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestRow {
    pub state: RequestState,
    pub version: u16,
}

/// The queue row's slot field, whose type is the design's choice.
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
}

/// The queue row `Q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueRow {
    pub version: u16,
    pub slots: Slots,
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

/// What a worker's last read saw: `R`'s row, `Q`, and the latest head (one
/// consistent snapshot, the contract's default reading).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Snapshot {
    pub request: RequestRow,
    pub queue: QueueRow,
    /// Requests arrived; the latest head is the last of them.
    pub arrived: u8,
}

/// A worker's program counter: the next step of its handler. The admit steps
/// are named after the contract's table; each design uses its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pc {
    Read,
    /// With `split-read`: the queue row, then the latest head, each a step.
    ReadQueue,
    ReadHead,
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
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Worker {
    pub message: MessageKind,
    pub request: Req,
    pub pc: Pc,
    pub read: Option<Snapshot>,
    /// False once its message's visibility expired (a stall): its ack and its
    /// hold then change nothing.
    pub holds_message: bool,
}

impl Worker {
    pub fn handler(&self) -> Handler {
        self.message.handler()
    }
}

/// The whole world. Workers are kept sorted (they are interchangeable, and
/// stateright's BFS ignores symmetry), messages sorted by request and kind.
///
/// Two states are the same state when they differ only in version numbers
/// that no worker's read can tell apart: a version matters only as "is this
/// worker's read still current?" (every CAS asks just that, and versions only
/// grow), so `Hash` and `Eq` see that relation, not the numbers. The stories
/// still show real versions: a path is replayed from the initial state.
#[derive(Clone, Debug)]
pub struct State {
    pub queue: QueueRow,
    /// One row per arrived request, in ID order.
    pub requests: Vec<RequestRow>,
    pub builds: Vec<Build>,
    pub messages: Vec<Message>,
    pub workers: Vec<Worker>,
    pub crashes_left: u8,
    pub stalls_left: u8,
}

/// What a worker is, up to version numbers: its read's values and whether
/// each row it read is still at the version it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkerKey {
    message: MessageKind,
    request: Req,
    pc: Pc,
    read: Option<(RequestState, bool, Slots, bool, u8)>,
    holds_message: bool,
}

impl State {
    pub fn worker_key(&self, w: &Worker) -> WorkerKey {
        WorkerKey {
            message: w.message,
            request: w.request,
            pc: w.pc,
            read: w.read.map(|seen| {
                let row = self.requests[w.request as usize];
                (
                    seen.request.state,
                    seen.request.version == row.version,
                    seen.queue.slots,
                    seen.queue.version == self.queue.version,
                    seen.arrived,
                )
            }),
            holds_message: w.holds_message,
        }
    }

    /// Keeps workers in their canonical order.
    pub(crate) fn sort_workers(&mut self) {
        let mut workers = std::mem::take(&mut self.workers);
        workers.sort_by_cached_key(|w| self.worker_key(w));
        self.workers = workers;
    }

    pub fn arrived(&self) -> u8 {
        self.requests.len() as u8
    }

    pub fn message(&self, r: Req, kind: MessageKind) -> Option<&Message> {
        self.messages
            .iter()
            .find(|m| m.request == r && m.kind == kind)
    }

    /// Requests in `processing`.
    pub fn processing(&self) -> impl Iterator<Item = Req> + '_ {
        self.requests_in(RequestState::Processing)
    }

    pub fn requests_in(&self, state: RequestState) -> impl Iterator<Item = Req> + '_ {
        (0..self.arrived()).filter(move |&r| self.requests[r as usize].state == state)
    }

    pub fn running_builds(&self) -> impl Iterator<Item = Req> + '_ {
        (0..self.arrived()).filter(move |&r| self.builds[r as usize] == Build::Running)
    }

    /// No workers and no visible or in-flight messages (parked ones may wait).
    pub fn is_quiescent(&self) -> bool {
        self.workers.is_empty() && self.messages.iter().all(|m| m.status == Delivery::Parked)
    }
}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.queue.slots.hash(h);
        h.write_usize(self.requests.len());
        for row in &self.requests {
            row.state.hash(h);
        }
        self.builds.hash(h);
        self.messages.hash(h);
        h.write_usize(self.workers.len());
        for w in &self.workers {
            self.worker_key(w).hash(h);
        }
        self.crashes_left.hash(h);
        self.stalls_left.hash(h);
    }
}

impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        self.queue.slots == other.queue.slots
            && self.requests.len() == other.requests.len()
            && self
                .requests
                .iter()
                .zip(&other.requests)
                .all(|(a, b)| a.state == b.state)
            && self.builds == other.builds
            && self.messages == other.messages
            && self.workers.len() == other.workers.len()
            && self
                .workers
                .iter()
                .zip(&other.workers)
                .all(|(a, b)| self.worker_key(a) == other.worker_key(b))
            && self.crashes_left == other.crashes_left
            && self.stalls_left == other.stalls_left
    }
}

impl Eq for State {}

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
        if self.max_deliveries == 0 {
            return Err("max_deliveries must be at least 1".into());
        }
        Ok(())
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
}

/// The model: the bounds, a design and the options.
#[derive(Clone, Copy, Debug)]
pub struct Stovepipe {
    pub bounds: Bounds,
    pub design: &'static dyn Design,
    pub options: Options,
}

impl Stovepipe {
    pub fn new(design: &'static dyn Design, bounds: Bounds) -> Self {
        Stovepipe {
            bounds,
            design,
            options: Options::default(),
        }
    }

    pub fn initial_state(&self) -> State {
        State {
            queue: QueueRow {
                version: 1,
                slots: self.design.slots().initial(),
            },
            requests: Vec::new(),
            builds: Vec::new(),
            messages: Vec::new(),
            workers: Vec::new(),
            crashes_left: self.bounds.crashes,
            stalls_left: self.bounds.stalls,
        }
    }

    /// Whether anything at all can happen without a fault: an arrival, a
    /// delivery, a worker step or a build finishing.
    pub fn can_progress(&self, s: &State) -> bool {
        s.arrived() < self.bounds.requests
            || !s.workers.is_empty()
            || s.messages.iter().any(|m| m.status == Delivery::Visible)
            || s.running_builds().next().is_some()
    }

    /// Nothing can happen while some request is not terminal.
    pub fn is_wedged(&self, s: &State) -> bool {
        !self.can_progress(s) && s.requests.iter().any(|row| !row.state.is_terminal())
    }

    /// Applies an action, saying what happened into `log`.
    pub(crate) fn apply(&self, state: &State, action: Action, log: &mut Log) -> State {
        let mut next = state.clone();
        match action {
            Action::Arrive => handlers::arrive(&mut next, log),
            Action::Deliver { request, kind } => handlers::deliver(&mut next, request, kind, log),
            Action::Step(i) => handlers::step(self, &mut next, i, log),
            Action::FinishBuild(r) => handlers::finish_build(&mut next, r, log),
            Action::Crash(i) => handlers::crash(self, &mut next, i, log),
            Action::Stall(i) => handlers::stall(self, &mut next, i, log),
        }
        next.sort_workers();
        next
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
}

impl Action {
    pub fn is_fault(self) -> bool {
        matches!(self, Action::Crash(_) | Action::Stall(_))
    }
}

/// What a step says happened; collects lines only when a story is being told.
#[derive(Default)]
pub(crate) struct Log {
    lines: Option<Vec<String>>,
}

impl Log {
    pub fn quiet() -> Self {
        Log { lines: None }
    }

    pub fn recording() -> Self {
        Log {
            lines: Some(Vec::new()),
        }
    }

    pub fn say(&mut self, line: impl FnOnce() -> String) {
        if let Some(lines) = &mut self.lines {
            lines.push(line());
        }
    }

    pub fn text(self) -> String {
        self.lines.unwrap_or_default().join("; ")
    }
}

/// The property names, as the contract names them.
pub const NO_WEDGE: &str = "no-wedge";
pub const BUILDS_WITHIN_LIMIT: &str = "builds-within-limit";
pub const COUNT_NOT_LOW: &str = "count-not-low";
pub const COUNT_NOT_HIGH: &str = "count-not-high";
pub const ALL_SUCCEED: &str = "all-succeed";
pub const SOME_SUPERSEDED: &str = "some-superseded";
pub const SOME_DEAD_LETTERED: &str = "some-dead-lettered";
pub const SOME_HELD: &str = "some-held";

impl Model for Stovepipe {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial_state()]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        if s.arrived() < self.bounds.requests {
            actions.push(Action::Arrive);
        }
        for m in &s.messages {
            if m.status == Delivery::Visible {
                actions.push(Action::Deliver {
                    request: m.request,
                    kind: m.kind,
                });
            }
        }
        // Equal workers are interchangeable: acting on the first of a run of
        // equals stands for all of them.
        let distinct =
            |i: usize| i == 0 || s.worker_key(&s.workers[i]) != s.worker_key(&s.workers[i - 1]);
        for i in (0..s.workers.len()).filter(|&i| distinct(i)) {
            actions.push(Action::Step(i));
        }
        for r in s.running_builds() {
            actions.push(Action::FinishBuild(r));
        }
        if s.crashes_left > 0 {
            for i in (0..s.workers.len()).filter(|&i| distinct(i)) {
                actions.push(Action::Crash(i));
            }
        }
        if s.stalls_left > 0 {
            for i in (0..s.workers.len()).filter(|&i| distinct(i) && s.workers[i].holds_message) {
                actions.push(Action::Stall(i));
            }
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
                !s.is_quiescent() || m.design.slots().count_not_low(s)
            }),
            Property::always(COUNT_NOT_HIGH, |m: &Self, s: &State| {
                !s.is_quiescent() || m.design.slots().count_not_high(s)
            }),
            Property::sometimes(ALL_SUCCEED, |m: &Self, s: &State| {
                s.arrived() == m.bounds.requests
                    && s.requests
                        .iter()
                        .all(|row| row.state == RequestState::Succeeded)
            }),
            Property::sometimes(SOME_SUPERSEDED, |_, s: &State| {
                s.requests_in(RequestState::Superseded).next().is_some()
            }),
            Property::sometimes(SOME_DEAD_LETTERED, |_, s: &State| {
                s.requests_in(RequestState::DeadLettered).next().is_some()
            }),
            Property::sometimes(SOME_HELD, |_, s: &State| {
                s.messages.iter().any(|m| m.status == Delivery::Parked)
            }),
        ]
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}
