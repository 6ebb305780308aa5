//! The link builders model, as `docs/link.md` describes it:
//! builders that take checks from a NATS JetStream work queue (issue 1649 of
//! the source). Time is discrete, one tick is 5 s of server time; every
//! builder step takes no time, so only builds, heartbeats, ack deadlines and
//! key ages advance with a tick.
//!
//! Timers are kept relative (ticks left, ticks since), so two states that
//! differ only in when they happen differ only in `now`, which exists for the
//! horizon and the stories. The builder steps live in `steps.rs`; the four
//! designs are two switches in `design.rs`. The state is fixed-size and
//! `Copy` (inline lists), and packs into a few words for the checker
//! (`pack.rs`).

mod bounds;
mod compose;
pub mod coverage;
mod design;
mod log;
pub mod mutation;
mod pack;
mod progress;
mod reduce;
mod steps;
mod story;
mod time;
pub mod trace;

pub use bounds::Bounds;
pub use compose::{compose, composition_help, REPAIR_PARTS};
pub use design::{
    all_designs, design_named, BusyBuffer, Design, Duplicate, DuplicateCheck, FetchWait, FinishAck,
    FinishKey, StartPut, DESIGNS, REPAIRS,
};
pub(crate) use log::Log;
pub use progress::{ASKS_COMPLETE, BUILDERS_FREE};

use crate::Inline;
use stateright::{Model, Property};

/// An ask, by index: `A1` is 0.
pub type Ask = u8;
/// A builder, by index: `b1` is 0. Builders keep their identity (the running
/// key names them); only their initial clock offsets are canonical.
pub type Bid = u8;

pub fn ask_name(a: Ask) -> String {
    format!("A{}", a + 1)
}

pub fn builder_name(b: Bid) -> String {
    format!("b{}", b + 1)
}

/// Seconds of server time in one tick.
pub const TICK_SECONDS: u16 = 5;
/// The contract's timings, in ticks: the defaults of the timing bounds.
pub const ACK_WAIT: u8 = 12;
pub const HEARTBEAT_EVERY: u8 = 2;
pub const FRESH_FOR: u8 = 5;
pub const KEY_LIFETIME: u8 = 24;

pub const MAX_ASKS: u8 = 8;
pub const MAX_BUILDERS: u8 = 4;
/// Room in a builder's buffer: an idle builder reads its buffer before it
/// fetches, so it holds at most a fetched message and a late answer.
pub const BUFFER_ROOM: usize = 4;

/// Where the consumer's copy of an ask is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Available,
    /// Delivered to a builder; redelivered when `ack_in` reaches zero.
    Delivered {
        to: Bid,
        ack_in: u8,
    },
    Acked,
    /// Its deadline passed `max_deliver` times: the server never hands it out
    /// again, so nobody will run it.
    Exhausted,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Message {
    pub status: Status,
    pub deliveries: u8,
    /// `redelivery-queue`: an available message's place in the server's
    /// redelivery queue, 1 the head; 0 never delivered (or not available,
    /// or the option off). Ack waits that run out in the same tick share a
    /// place: they ran out in some order within it.
    pub queue: u8,
    /// `--rewinds`: the server's cursor of new messages was wound back to
    /// it (a redelivery it failed to make, [`Action::Rewind`]), so it goes
    /// out once more as if never delivered, counted 1, whatever its status
    /// but acked (a work queue has removed an acked message).
    pub again: bool,
}

impl Default for Message {
    fn default() -> Self {
        Message {
            status: Status::Available,
            deliveries: 0,
            queue: 0,
            again: false,
        }
    }
}

impl Message {
    /// Whether the consumer can still hand it out.
    pub fn is_left(&self) -> bool {
        self.again || matches!(self.status, Status::Available | Status::Delivered { .. })
    }
}

/// A key of the bucket of checks running. One pull request per ask, so the
/// key names the ask; its id, head and trunk always match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub builder: Bid,
    /// Ticks since `seen` (the last put), clamped at the age where it is stale
    /// by every builder's clock (see [`Link::stale_at`]); a done key's is
    /// not clamped, since it counts until the end of its TTL.
    pub age: u8,
    /// Put by a finish that keeps the key (`FinishKey::MarkedDone`): the ask has its
    /// result, and any copy of it handed out again is acked and not run.
    pub done: bool,
}

impl Key {
    /// A key put now by `builder`, running or done.
    pub fn put(builder: Bid, done: bool) -> Key {
        Key {
            builder,
            age: 0,
            done,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Run {
    pub ask: Ask,
    /// Ticks the build has run.
    pub built: u8,
    /// Ticks to the next heartbeat; zero: it is due.
    pub heartbeat_in: u8,
    /// Ticks a due heartbeat may still be late (a fault).
    pub grace: u8,
    /// Whether the due heartbeat was already made late: each heartbeat is
    /// late at most once, so its lateness stays within `late_by`.
    pub delayed: bool,
}

/// What a builder decided from the running key it read (the split reading:
/// the decision waits for its next step, which acks or puts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Decided {
    pub ask: Ask,
    /// The key named another builder, fresh by this builder's clock.
    pub duplicate: bool,
    /// Another builder wrote the key since the read, so a revision-checked
    /// put fails (kept only by designs with `StartPut::RevisionChecked`).
    pub conflict: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Builder {
    /// Its clock minus the server's, in ticks (fixed for a run).
    pub offset: i8,
    pub run: Option<Run>,
    /// Messages that reached it and that it has not read, oldest first.
    pub buffer: Inline<Ask, BUFFER_ROOM>,
    /// A fetch gave up, and the server's answer to its pull request, this
    /// message, is still on the way: it lands in the buffer before time
    /// passes, whatever the builder does meanwhile.
    pub on_the_way: Option<Ask>,
    /// It read this ask and its running key and has not yet acted on what
    /// it decided.
    pub decided: Option<Decided>,
    /// The client's fetch: a pull request it sent and no longer waits on is open
    /// on the server (its fetch returned an earlier request's answer). The
    /// server answers it with the next available ask; it expires (a 408 the
    /// client ignores) before time passes. Never with an answer on the way.
    pub open: bool,
}

impl Builder {
    /// Neither running nor between a read and the step that acts on it.
    pub fn is_idle(&self) -> bool {
        self.run.is_none() && self.decided.is_none()
    }

    /// Idle with nothing buffered and nothing on the way: a crash would lose
    /// nothing, and nothing is left for it to do (an open pull request holds
    /// no ask, and expires before time passes).
    pub fn holds_nothing(&self) -> bool {
        self.is_idle() && self.buffer.is_empty() && self.on_the_way.is_none()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    /// Ticks since the asks were published.
    pub now: u8,
    /// One per ask.
    pub messages: Inline<Message, { MAX_ASKS as usize }>,
    /// The running key of each ask.
    pub keys: Inline<Option<Key>, { MAX_ASKS as usize }>,
    /// Whether each ask's result was announced.
    pub results: Inline<bool, { MAX_ASKS as usize }>,
    pub builders: Inline<Builder, { MAX_BUILDERS as usize }>,
    pub crashes_left: u8,
    pub lates_left: u8,
    /// Fault budgets the contract's reading leaves at zero: answers later
    /// than the fetch margin, lost acks, naks.
    pub slow_answers_left: u8,
    pub lost_acks_left: u8,
    pub naks_left: u8,
    pub rewinds_left: u8,
    /// A builder dropped an ask as a duplicate (for the witness).
    pub dropped: bool,
}

impl State {
    pub fn runners(&self, a: Ask) -> impl Iterator<Item = Bid> + '_ {
        (0..self.builders.len() as Bid)
            .filter(move |&b| self.builders[b as usize].run.is_some_and(|r| r.ask == a))
    }

    /// A builder holds a copy it has not run yet: in its buffer, on the way
    /// to it, or read and decided on.
    pub fn buffered(&self, a: Ask) -> bool {
        self.builders.iter().any(|b| {
            b.buffer.contains(&a)
                || b.on_the_way == Some(a)
                || b.decided.is_some_and(|d| d.ask == a)
        })
    }

    /// The first available message, which a fetch or a late answer gets:
    /// the lowest-numbered; under `redelivery-queue` the lowest-numbered of
    /// the head of the redelivery queue (a [`Action::Queue`] step puts
    /// another of the head first), else of those never delivered. Without
    /// the option every `queue` is 0, so both read alike. A message the
    /// server's cursor was wound back to (`again`) is one never delivered.
    pub fn first_available(&self) -> Option<Ask> {
        let available = |m: &&Message| m.status == Status::Available;
        let head = self
            .messages
            .iter()
            .filter(available)
            .map(|m| m.queue)
            .filter(|&q| q > 0)
            .min()
            .unwrap_or(0);
        self.messages
            .iter()
            .position(|m| {
                (m.status == Status::Available && m.queue == head) || (head == 0 && m.again)
            })
            .map(|a| a as Ask)
    }

    /// The first available message when it is a redelivery (the server's
    /// redelivery queue hands it out): the one a [`Action::Rewind`] fails.
    pub fn first_redelivery(&self) -> Option<Ask> {
        self.first_available().filter(|&a| {
            let m = &self.messages[a as usize];
            m.status == Status::Available && m.deliveries >= 1
        })
    }

    /// The message a rewind now would send out again: the last the server
    /// handed out as new (its cursor's place is one past it: messages are
    /// first handed out in order), unless acked (a work queue has removed
    /// it).
    pub fn rewound_to(&self) -> Option<Ask> {
        self.messages
            .iter()
            .rposition(|m| m.deliveries >= 1)
            .filter(|&y| self.messages[y].status != Status::Acked)
            .map(|a| a as Ask)
    }

    /// The last place taken in the redelivery queue (0: it is empty).
    pub fn queue_tail(&self) -> u8 {
        self.messages.iter().map(|m| m.queue).max().unwrap_or(0)
    }

    /// `redelivery-queue`: every message that is not available leaves the
    /// queue, and the places left are renumbered 1, 2, ... in their order,
    /// so that equal queues are equal states.
    pub fn renumber_queue(&mut self) {
        for m in self.messages.iter_mut() {
            if m.status != Status::Available {
                m.queue = 0;
            }
        }
        let mut places: Vec<u8> = self
            .messages
            .iter()
            .map(|m| m.queue)
            .filter(|&q| q > 0)
            .collect();
        places.sort_unstable();
        places.dedup();
        for m in self.messages.iter_mut().filter(|m| m.queue > 0) {
            m.queue = places.iter().position(|&q| q == m.queue).unwrap() as u8 + 1;
        }
    }

    /// Lost: no result, nobody runs it, no copy buffered, no message left.
    pub fn is_lost(&self, a: Ask) -> bool {
        !self.results[a as usize]
            && self.runners(a).next().is_none()
            && !self.buffered(a)
            && !self.messages[a as usize].is_left()
    }

    /// Nothing can happen any more, however long one waits: nothing runs,
    /// nothing is buffered or about to land, no message can be handed out.
    pub fn is_settled(&self) -> bool {
        self.builders.iter().all(Builder::holds_nothing)
            && self.messages.iter().all(|m| !m.is_left())
    }
}

/// Refinements of the contract's readings, off by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// `stale-ack-ignored`: an ack or in-progress from a builder that is not
    /// the message's current holder does nothing (nats-server issue 4786's
    /// wish); the default is JetStream's documented behaviour, where it counts.
    pub stale_ack_ignored: bool,
    /// `atomic-start`: a builder reads the running key, decides, and puts the
    /// key (or acks the duplicate) in one step, as if a compare-and-set made
    /// them one. The default is the source's order: a KV get, then later a
    /// put with nothing in between that stops another builder's steps.
    pub atomic_start: bool,
    /// `single-late-answer`: the contract's first reading of the fetch: at
    /// most one late answer per builder, and a fetch made while it is on
    /// the way gets the next ask itself. The default is the fetch as
    /// nats.go's `Subscription.Fetch` does it (`docs/link-reality.md`, *The
    /// real client's fetch*): a fetch made while an earlier request's answer is
    /// on the way returns that answer and leaves its own pull request open
    /// on the server, which answers it with the next available ask, into a
    /// builder that may be building.
    pub single_late_answer: bool,
    /// `expiry-less-10ms`: the client gives a fetch's pull request the wait
    /// less 10 ms (nats.go up to 1.36.0, Debian's 1.22.1), so every design's
    /// wait keeps the 10 ms margin. The default is the seed's
    /// `fetchExpiryOf`: the wait less a tenth, at most 5 s (nats.go 1.37.0
    /// on), which leaves the old 30 ms wait 3 ms.
    pub expiry_less_10ms: bool,
    /// `redelivery-queue`: the server's order of handing out messages, as
    /// nats-server 2.9.10's consumer.go keeps it: a message whose ack wait
    /// ran out (`checkPending`) or that was naked (`processNak`) joins the
    /// back of the redelivery queue, and `getNextMsg` hands out the queue's
    /// head (`getNextToRedeliver`) before any message never delivered. Ack
    /// waits that run out within one tick join in any order. The default
    /// hands out the lowest-numbered available message.
    pub redelivery_queue: bool,
}

impl crate::NamedOptions for Options {
    const MODEL: &'static str = "link";

    fn flags(&mut self) -> Vec<(&'static str, &mut bool)> {
        vec![
            ("stale-ack-ignored", &mut self.stale_ack_ignored),
            ("atomic-start", &mut self.atomic_start),
            ("single-late-answer", &mut self.single_late_answer),
            ("expiry-less-10ms", &mut self.expiry_less_10ms),
            ("redelivery-queue", &mut self.redelivery_queue),
        ]
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Link {
    pub bounds: Bounds,
    pub design: &'static Design,
    pub options: Options,
    /// A mutant of the design: one step changed (see [`mutation`]).
    pub mutation: Option<mutation::Mutation>,
    /// The checker stores the reduced state (the default, `reduce.rs`); off,
    /// the whole state, one per naming of builders: the exactness test
    /// compares the two.
    pub reduced: bool,
}

/// Everything that can happen in one atomic step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// An idle builder's fetch gets the first available message.
    Fetch(Bid),
    /// Without the margin: an idle builder's fetch gives up empty-handed while
    /// the server's answer to its pull request, the first available message,
    /// is on the way (the oldest pull request is served first).
    FetchLate(Bid),
    /// That late answer lands in the builder's buffer, whatever it does now.
    Land(Bid),
    /// The client's fetch: an idle builder with an answer on the way fetches:
    /// its new pull request goes out, the earlier answer arrives first and
    /// the fetch returns it; its own request stays open on the server.
    FetchEarlier(Bid),
    /// The client's fetch: the server answers a builder's open pull request
    /// with the first available message, on the way to a builder that no
    /// longer waits on it.
    Answer(Bid),
    /// An idle builder reads its oldest buffered message, decides, and runs it
    /// (putting the running key) or drops it (acking it), all in one step:
    /// designs without the duplicate check (which read nothing shared before
    /// the put), and every design under `atomic-start`.
    Take(Bid),
    /// With the duplicate check: an idle builder reads its oldest buffered
    /// message and gets its running key from the KV bucket, and decides.
    Read(Bid),
    /// It decided to run: it puts the running key and starts the build.
    Start(Bid),
    /// It decided the ask is a duplicate: it acks it and does not run it.
    Drop(Bid),
    /// A running builder puts its key and sends in-progress.
    Heartbeat(Bid),
    /// A running build ends: result, ack, key deleted.
    Finish(Bid),
    /// Five seconds of server time pass.
    Tick,
    /// Fault: the builder dies and restarts idle; its buffer and run are lost.
    Crash(Bid),
    /// Fault: the builder's due heartbeat is late (by up to `late_by`).
    Delay(Bid),
    /// Fault, with the margin: the network delays a fetch's answer past the
    /// margin, so it is on the way to a builder that gave up, as `FetchLate`.
    SlowAnswer(Bid),
    /// Fault: a running build ends as `Finish`, but its ack is lost.
    FinishAckLost(Bid),
    /// Fault: an idle builder naks its oldest buffered ask instead of
    /// reading it (immediate redelivery).
    Nak(Bid),
    /// Fault of nats-server before 2.10.14 (`--rewinds`): the pull request
    /// of a builder about to take a redelivery has just expired, so the
    /// server fails the delivery it made of it: the message is counted
    /// delivered but left to its ack wait, and the server winds its cursor
    /// of new messages back one, so the last message it handed out new goes
    /// out again as new, counted 1 (nats-server PR #5305).
    Rewind(Bid),
    /// `redelivery-queue`, the server: of the messages at the head of its
    /// redelivery queue (their ack waits ran out in the same tick), this
    /// one's ran out first, so it is handed out before the others.
    Queue(Ask),
}

impl Action {
    /// The builder a step is by: every step but a tick.
    pub fn builder(self) -> Option<Bid> {
        match self {
            Action::Tick | Action::Queue(_) => None,
            Action::Fetch(b)
            | Action::FetchLate(b)
            | Action::Land(b)
            | Action::FetchEarlier(b)
            | Action::Answer(b)
            | Action::Take(b)
            | Action::Read(b)
            | Action::Start(b)
            | Action::Drop(b)
            | Action::Heartbeat(b)
            | Action::Finish(b)
            | Action::Crash(b)
            | Action::Delay(b)
            | Action::SlowAnswer(b)
            | Action::FinishAckLost(b)
            | Action::Nak(b)
            | Action::Rewind(b) => Some(b),
        }
    }

    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Action::Crash(_)
                | Action::Delay(_)
                | Action::SlowAnswer(_)
                | Action::FinishAckLost(_)
                | Action::Nak(_)
                | Action::Rewind(_)
        )
    }
}

/// `t=65s`: a server time, in ticks, as stories write it.
pub(crate) fn at(ticks: i16) -> String {
    format!("t={}s", ticks * TICK_SECONDS as i16)
}

pub const NO_DOUBLE_RUN: &str = "no-double-run";
pub const NO_LOST_ASK: &str = "no-lost-ask";
pub const ASKS_FINISH: &str = "asks-finish";
pub const SOME_REDELIVERED: &str = "some-redelivered";
pub const SOME_DROPPED: &str = "some-dropped";
pub const NO_RUN_AFTER_RESULT: &str = "no-run-after-result";

impl Link {
    pub fn new(design: &'static Design, bounds: Bounds) -> Self {
        Link {
            bounds,
            design,
            options: Options::default(),
            mutation: None,
            reduced: true,
        }
    }

    /// The key age from which a key is stale by every builder's clock: older
    /// keys behave alike (as no key), so ages are clamped there, and a key
    /// whose lifetime ends first is removed at its lifetime.
    pub fn stale_at(&self) -> u8 {
        self.bounds.fresh_for_ticks() + self.bounds.skew_ticks()
    }

    /// One initial state per assignment of clock offsets, in whole ticks
    /// within the skew; offsets never decrease from b1 on, since builders that
    /// differ only in their names are the same run.
    pub fn initial_states(&self) -> Vec<State> {
        let s = self.bounds.skew_ticks() as i8;
        let mut offsets: Vec<Vec<i8>> = vec![Vec::new()];
        for _ in 0..self.bounds.builders {
            offsets = offsets
                .into_iter()
                .flat_map(|prefix| {
                    let low = prefix.last().copied().unwrap_or(-s);
                    (low..=s).map(move |o| {
                        let mut next = prefix.clone();
                        next.push(o);
                        next
                    })
                })
                .collect();
        }
        let n = self.bounds.asks as usize;
        offsets
            .into_iter()
            .map(|offsets| State {
                now: 0,
                messages: Inline::filled(n, Message::default()),
                keys: Inline::filled(n, None),
                results: Inline::filled(n, false),
                builders: offsets
                    .into_iter()
                    .map(|offset| Builder {
                        offset,
                        ..Builder::default()
                    })
                    .collect(),
                crashes_left: self.bounds.crashes,
                lates_left: self.bounds.late_heartbeats,
                slow_answers_left: self.bounds.slow_answers,
                lost_acks_left: self.bounds.lost_acks,
                naks_left: self.bounds.naks,
                rewinds_left: self.bounds.rewinds,
                dropped: false,
            })
            .collect()
    }

    /// Whether a fetch's pull request expires at least `minFetchMargin`
    /// (10 ms) before the fetch gives up, by the client's expiry rule
    /// (`design::fetch_margin_us`): then an answer never lands after its
    /// fetch gave up, unless the network is slower than the margin
    /// (`--slow-answers`).
    pub fn has_margin(&self) -> bool {
        design::fetch_margin_us(self.design.fetch_wait.ms(), self.options.expiry_less_10ms)
            >= design::MIN_FETCH_MARGIN_US
    }

    /// Whether the fetch is the client's (the default), not the single late
    /// answer of `single-late-answer`.
    pub fn client_fetch(&self) -> bool {
        !self.options.single_late_answer
    }

    /// Whether a builder reads the key and acts on it in separate steps.
    pub fn splits_start(&self) -> bool {
        self.design.check.reads_key() && !self.options.atomic_start
    }

    /// Something must happen before time may pass: an idle builder reads its
    /// buffer or fetches an available message at once (builders poll every
    /// second), a decision is acted on (milliseconds after the read), an
    /// answer on the way lands, a due heartbeat is sent unless it is late,
    /// and a build at its longest ends.
    pub fn must_act(&self, s: &State) -> bool {
        let available = s.first_available().is_some();
        s.builders.iter().any(|b| match b.run {
            _ if b.decided.is_some() || b.on_the_way.is_some() => true,
            _ if b.open && available => true,
            None => !b.buffer.is_empty() || available,
            Some(run) => {
                (run.heartbeat_in == 0 && run.grace == 0)
                    || run.built >= self.bounds.longest_build_ticks()
            }
        })
    }

    /// Whether a pull request that takes the first available message now
    /// may have just expired, failing a redelivery (`--rewinds`): one
    /// rewind at a time, the cursor wound back one place (a second before
    /// the first message goes out again would wind it back two).
    fn may_rewind(&self, s: &State) -> bool {
        s.rewinds_left > 0 && s.first_redelivery().is_some() && s.messages.iter().all(|m| !m.again)
    }

    pub fn can_tick(&self, s: &State) -> bool {
        s.now < self.bounds.horizon_ticks() && !s.is_settled() && !self.must_act(s)
    }

    pub(crate) fn apply(&self, state: &State, action: Action, log: &mut Log) -> State {
        let mut next = *state;
        match action {
            Action::Fetch(b) => steps::fetch(self, &mut next, b, log),
            Action::FetchLate(b) => steps::fetch_late(self, &mut next, b, log),
            Action::Land(b) => steps::land(self, &mut next, b, log),
            Action::FetchEarlier(b) => steps::fetch_earlier(self, &mut next, b, log),
            Action::Answer(b) => steps::answer(self, &mut next, b, log),
            Action::Take(b) => steps::take(self, &mut next, b, log),
            Action::Read(b) => steps::read(self, &mut next, b, log),
            Action::Start(b) | Action::Drop(b) => steps::act(self, &mut next, b, log),
            Action::Heartbeat(b) => steps::heartbeat(self, &mut next, b, log),
            Action::Finish(b) => steps::finish(self, &mut next, b, log),
            Action::Tick => time::tick(self, &mut next, log),
            Action::Crash(b) => time::crash(&mut next, b, log),
            Action::Delay(b) => time::delay(self, &mut next, b, log),
            Action::SlowAnswer(b) => {
                next.slow_answers_left -= 1;
                steps::fetch_late(self, &mut next, b, log)
            }
            Action::FinishAckLost(b) => {
                next.lost_acks_left -= 1;
                steps::finish_ack_lost(self, &mut next, b, log)
            }
            Action::Nak(b) => steps::nak_fault(self, &mut next, b, log),
            Action::Rewind(b) => steps::rewind(self, &mut next, b, log),
            Action::Queue(a) => time::queue_first(&mut next, a, log),
        }
        if self.options.redelivery_queue {
            next.renumber_queue();
        }
        next
    }
}

impl Model for Link {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        self.initial_states()
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        let available = s.first_available().is_some();
        for (i, b) in s.builders.iter().enumerate() {
            let i = i as Bid;
            match b.run {
                None if b.decided.is_some_and(|d| d.duplicate) => actions.push(Action::Drop(i)),
                None if b.decided.is_some() => actions.push(Action::Start(i)),
                None if !b.buffer.is_empty() && self.splits_start() => {
                    actions.push(Action::Read(i))
                }
                None if !b.buffer.is_empty() => actions.push(Action::Take(i)),
                // The earlier answer was sent before the new request, on the
                // same connection: it arrives first, and the fetch returns it.
                None if self.client_fetch() && b.on_the_way.is_some() => {
                    actions.push(Action::FetchEarlier(i))
                }
                // The server answers its open request first.
                None if b.open && available => {}
                None if available => {
                    actions.push(Action::Fetch(i));
                    if self.may_rewind(s) {
                        actions.push(Action::Rewind(i));
                    }
                    let margin = self.has_margin();
                    if !margin && b.on_the_way.is_none() {
                        actions.push(Action::FetchLate(i));
                    }
                    if margin && s.slow_answers_left > 0 && b.on_the_way.is_none() {
                        actions.push(Action::SlowAnswer(i));
                    }
                }
                None => {}
                Some(run) => {
                    if run.heartbeat_in == 0 {
                        actions.push(Action::Heartbeat(i));
                    }
                    if run.built >= 1 {
                        actions.push(Action::Finish(i));
                        if s.lost_acks_left > 0 && !self.sync_ack() {
                            actions.push(Action::FinishAckLost(i));
                        }
                    }
                }
            }
            if b.on_the_way.is_some() {
                actions.push(Action::Land(i));
            }
            if b.open && available {
                actions.push(Action::Answer(i));
                if self.may_rewind(s) {
                    actions.push(Action::Rewind(i));
                }
            }
        }
        if self.can_tick(s) {
            actions.push(Action::Tick);
        }
        // Only a message other than the one a delivery would take: any
        // order of handing out the head is then one path.
        if let (true, Some(first)) = (self.options.redelivery_queue, s.first_available()) {
            let head = s.messages[first as usize].queue;
            for (a, m) in s.messages.iter().enumerate() {
                if head > 0
                    && m.status == Status::Available
                    && m.queue == head
                    && a != first as usize
                {
                    actions.push(Action::Queue(a as Ask));
                }
            }
        }
        for (i, b) in s.builders.iter().enumerate() {
            let i = i as Bid;
            if s.crashes_left > 0 && !b.holds_nothing() {
                actions.push(Action::Crash(i));
            }
            if s.naks_left > 0 && b.is_idle() && !b.buffer.is_empty() {
                actions.push(Action::Nak(i));
            }
            if s.lates_left > 0
                && b.run
                    .is_some_and(|r| r.heartbeat_in == 0 && r.grace == 0 && !r.delayed)
            {
                actions.push(Action::Delay(i));
            }
        }
    }

    fn next_state(&self, s: &State, action: Action) -> Option<State> {
        Some(self.apply(s, action, &mut Log::quiet()))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(NO_DOUBLE_RUN, |_, s: &State| {
                (0..s.messages.len() as Ask).all(|a| s.runners(a).count() <= 1)
            }),
            Property::always(NO_LOST_ASK, |_, s: &State| {
                (0..s.messages.len() as Ask).all(|a| !s.is_lost(a))
            }),
            // A run of an ask whose result was announced builds it again
            // (one after the other, which no-double-run does not see).
            Property::always(NO_RUN_AFTER_RESULT, |_, s: &State| {
                (0..s.messages.len() as Ask)
                    .all(|a| !s.results[a as usize] || s.runners(a).next().is_none())
            }),
            // Judged where nothing can happen any more (not stateright's
            // `eventually`, which misses violations on paths that rejoin).
            Property::always(ASKS_FINISH, |_, s: &State| {
                !s.is_settled() || s.results.iter().all(|&r| r)
            }),
            Property::sometimes(SOME_REDELIVERED, |_, s: &State| {
                s.messages.iter().any(|m| m.deliveries >= 2)
            }),
            Property::sometimes(SOME_DROPPED, |_, s: &State| s.dropped),
        ]
    }

    fn format_action(&self, action: &Action) -> String {
        format!("{action:?}")
    }
}

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;
