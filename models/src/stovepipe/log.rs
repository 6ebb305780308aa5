//! What a step did, once: each primitive (a worker's in `turn.rs`, the
//! world's in `handlers.rs`, the broker's in `broker.rs`) leaves one typed
//! [`Record`], in the event log's terms: the rows as the step found and set
//! them, without versions, which the state does not keep. The story tells
//! the records (`story/say.rs`), validation reads what the system logs off
//! them (`trace/observe.rs`), and mutation's sites and coverage's paths are
//! read off them here ([`Taken`]), so none of them can say a step did other
//! than what it did. Checking keeps none.
//!
//! The versions and what a worker last read, which the state does not keep,
//! the teller and the validator count along the path in a [`Ledger`], which
//! each record keeps up to date ([`Ledger::note`]). Every reader uses this
//! file, so it uses none of theirs.

use super::{Build, Handler, MessageKind, Pc, Req, RequestState, SlotField, Slots, MAX_REQUESTS};

/// What a primitive did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Record {
    /// A request arrived: its row inserted, `process` published.
    Arrive(Req),
    /// The broker handed `kind` of `request` to a new worker, at its
    /// `attempt`th delivery.
    Deliver {
        request: Req,
        kind: MessageKind,
        attempt: u8,
    },
    /// A read, of the parts it took: all three, or with split reads one (R's
    /// row and its state, the slot field, the latest head).
    Read {
        request: Option<(Req, RequestState)>,
        queue: Option<Slots>,
        head: Option<Req>,
        split: bool,
    },
    /// The queue row read again alone.
    RereadQueue(Slots),
    /// R's row read again alone.
    RereadRequest(Req, RequestState),
    /// A CAS of the slot field at `step`: it sets `write` of the field as
    /// the worker last read it; `now`, the field as the CAS found it.
    CasQueue {
        write: SlotWrite,
        now: Slots,
        outcome: Outcome,
        step: Pc,
    },
    /// A CAS of R's row to `set`; `now`, the row as the CAS found it.
    CasRequest {
        request: Req,
        set: RequestState,
        now: RequestState,
        outcome: Outcome,
        step: Pc,
    },
    /// The transaction on the queue row and R's row: R's slot claimed and,
    /// with `state`, R's row written; `queue` and `row`, the two rows as it
    /// found them.
    Transaction {
        request: Req,
        state: Option<RequestState>,
        queue: Slots,
        row: RequestState,
        outcome: Outcome,
        step: Pc,
    },
    /// The reap's statement, guarded by the queue row's version (`won`: the
    /// row was still as read): the owners it removes, and the owners whose
    /// request is terminal that it leaves (a mutant). Its write, when it
    /// removes any, follows as a [`Record::CasQueue`] of [`SlotWrite::Set`].
    Reap { removed: u32, left: u32, won: bool },
    Submit {
        request: Req,
        outcome: SubmitOutcome,
    },
    /// R's build cancelled, which `was` so.
    CancelBuild { request: Req, was: Build },
    Ack {
        request: Req,
        kind: MessageKind,
        outcome: AckOutcome,
    },
    Hold {
        request: Req,
        kind: MessageKind,
        outcome: HoldOutcome,
    },
    /// R's build finished and published `signal`.
    FinishBuild(Req),
    /// A worker's message is visible again, `attempts` used (a dead
    /// message counts none).
    Visible {
        request: Req,
        kind: MessageKind,
        attempts: u8,
    },
    /// Out of deliveries after `attempts`: the message is replaced by its
    /// dead letter.
    DeadLetter {
        request: Req,
        kind: MessageKind,
        attempts: u8,
    },
    /// Fault: the worker died between two steps.
    Crash {
        request: Req,
        kind: MessageKind,
        outcome: CrashOutcome,
    },
    /// Fault: the worker's message expired while it still runs (a
    /// [`Record::Visible`] or a [`Record::DeadLetter`] follows).
    Stall,
    /// The database refused the worker's write at `step` (option `aborts`):
    /// the records of what it would have done, none of it done; the worker
    /// reads again.
    Refused { step: Pc, records: Vec<Record> },
    /// A worker's step ended: from `from` it goes on to `to` (`None`: its
    /// handler ended, with an ack or a hold). The last record of every
    /// worker's step: where the handler went is its own decision, which no
    /// primitive records, and coverage's paths and mutation's sites are
    /// read from it ([`Taken`]); the story and the system's log say nothing
    /// of it.
    Next {
        handler: Handler,
        from: Pc,
        to: Option<Pc>,
    },
}

/// What a CAS of the slot field sets, as a change of the field it read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotWrite {
    /// R's slot claimed.
    Claim(Req),
    /// R's slot released; `twice`, a second one too (a mutant).
    Release { request: Req, twice: bool },
    /// The field set whole: the reap's write.
    Set(Slots),
}

impl SlotWrite {
    /// The field this write makes of `read`. A release where `read` holds
    /// none of R's slot leaves it as it is: only a mutant's does that (a
    /// release is decided at the read that saw R's slot).
    pub fn over(self, field: SlotField, read: Slots) -> Slots {
        match self {
            SlotWrite::Claim(r) => field.claimed(read, r),
            SlotWrite::Release { request, twice } => match field.released(read, request) {
                Some(once) if twice => field.released(once, request).unwrap_or(once),
                Some(once) => once,
                None => read,
            },
            SlotWrite::Set(slots) => slots,
        }
    }
}

/// What a write did: lost (its rows changed since the read), won and made,
/// or won and not made (a mutant: the step goes on as if it were).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Lost,
    Won,
    Skipped,
}

impl Outcome {
    pub fn won(self) -> bool {
        self != Outcome::Lost
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubmitOutcome {
    Starts,
    /// It starts a build already finished (a mutant: not idempotent).
    StartsAgain,
    AlreadySubmitted,
    /// Not made (a mutant).
    Skipped,
}

impl SubmitOutcome {
    pub fn started(self) -> bool {
        matches!(self, SubmitOutcome::Starts | SubmitOutcome::StartsAgain)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckOutcome {
    Removes,
    /// The message was handed out again: nothing changes.
    HandedOutAgain,
    /// It removes nothing (a mutant).
    Skipped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HoldOutcome {
    /// Parked until a durable write.
    Parked,
    /// Visible at once: a write since the worker's read.
    Visible,
    /// The message was handed out again: nothing changes.
    HandedOutAgain,
    /// It counts an attempt (a mutant; a [`Record::DeadLetter`] may follow).
    CountsAttempt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CrashOutcome {
    /// It held its message, which expires (a [`Record::Visible`] or a
    /// [`Record::DeadLetter`] follows).
    Held,
    /// Its message was handed out again: nothing is redelivered.
    HandedOutAgain,
    /// Its message was handed out again and is gone.
    Gone,
}

/// The records of a step, kept only when asked for.
pub(crate) type Log = crate::Recorder<Record>;

impl Log {
    /// The database refuses the write at `step`: what `take` would have
    /// done, taken on a copy of the world, as one [`Record::Refused`].
    pub fn refused(&mut self, step: Pc, take: impl FnOnce(&mut Log)) {
        if let Some(records) = &mut self.records {
            let mut dry = Log::recording();
            take(&mut dry);
            records.push(Record::Refused {
                step,
                records: dry.records(),
            });
        }
    }
}

/// Every row's version, counted as the path writes them: the queue row
/// starts at 1, a request row is inserted at 1, and each write that wins
/// adds one to every row it writes (the numbering a validated log uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Versions {
    pub queue: u16,
    pub requests: [u16; MAX_REQUESTS as usize],
}

impl Default for Versions {
    fn default() -> Self {
        Versions {
            queue: 1,
            requests: [0; MAX_REQUESTS as usize],
        }
    }
}

/// What a worker last read, with versions, as a story shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Seen {
    pub request: Option<(RequestState, u16)>,
    pub queue: Option<(Slots, u16)>,
    /// Requests arrived when it read the latest head.
    pub head: Option<u8>,
}

/// What the teller knows that the state does not.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ledger {
    pub versions: Versions,
    /// The acting worker's last read.
    pub seen: Seen,
    /// The number the teller gives the worker a delivery starts.
    pub next_worker: usize,
}

impl Ledger {
    /// After `record`: the rows it wrote have their next version, and what
    /// the worker read or wrote is what it last saw.
    pub fn note(&mut self, record: &Record, field: SlotField) {
        match *record {
            Record::Arrive(r) => self.versions.requests[r as usize] = 1,
            Record::Read {
                request,
                queue,
                head,
                ..
            } => {
                if let Some((r, row)) = request {
                    self.seen = Seen::default();
                    self.seen.request = Some((row, self.versions.requests[r as usize]));
                }
                if let Some(slots) = queue {
                    self.seen.queue = Some((slots, self.versions.queue));
                }
                if let Some(h) = head {
                    self.seen.head = Some(h + 1);
                }
            }
            Record::RereadQueue(slots) => self.seen.queue = Some((slots, self.versions.queue)),
            Record::RereadRequest(r, row) => {
                self.seen.request = Some((row, self.versions.requests[r as usize]))
            }
            Record::CasQueue {
                write,
                now,
                outcome: Outcome::Won,
                ..
            } => self.wrote_queue(write.over(field, now)),
            Record::CasRequest {
                request,
                set,
                outcome: Outcome::Won,
                ..
            } => self.wrote_request(request, set),
            Record::Transaction {
                request,
                state,
                queue,
                outcome: Outcome::Won,
                ..
            } => {
                self.wrote_queue(field.claimed(queue, request));
                if let Some(to) = state {
                    self.wrote_request(request, to);
                }
            }
            _ => {}
        }
    }

    fn wrote_queue(&mut self, slots: Slots) {
        self.versions.queue += 1;
        self.seen.queue = Some((slots, self.versions.queue));
    }

    fn wrote_request(&mut self, r: Req, row: RequestState) {
        self.versions.requests[r as usize] += 1;
        self.seen.request = Some((row, self.versions.requests[r as usize]));
    }
}

/// A path a handler's step took: the step (a read is one step however
/// many it takes), the step after it (`None`: the handler ended, with an
/// ack or a hold) and, for a write, whether it won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path {
    pub handler: Handler,
    pub from: Pc,
    pub to: Option<Pc>,
    pub won: Option<bool>,
}

/// A step of a handler: its handler and its program counter (a read is one
/// site however many steps it takes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    pub handler: Handler,
    pub pc: Pc,
}

impl Site {
    pub fn of(handler: Handler, pc: Pc) -> Site {
        let pc = if pc.is_read() { Pc::Read } else { pc };
        Site { handler, pc }
    }

    /// `claim`, `signal-release`: the step's name in a mutant's name; the
    /// handler is said unless it is `process`, whose admit steps are the
    /// contract's table.
    pub fn name(self) -> String {
        let mut kebab = String::new();
        for (i, c) in self.pc.name().chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                kebab.push('-');
            }
            kebab.push(c.to_ascii_lowercase());
        }
        match self.handler {
            Handler::Process => kebab,
            other => format!("{}-{kebab}", other.name()),
        }
    }
}

/// A write a step performs, as a swap moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Write {
    ClaimSlot,
    ReleaseSlot,
    Request(RequestState),
    Transaction(Option<RequestState>),
}

/// What a step does, as a mutant's site knows it (read off the step's
/// records: [`Taken`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    Read,
    Write(Write),
    Submit,
    Ack,
    Hold,
    Other,
}

/// A step taken: its site, what it did, whether its write won, and the step
/// after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SiteUse {
    pub site: Site,
    pub primitive: Primitive,
    pub won: Option<bool>,
    pub next: Option<Pc>,
}

/// A worker's step as its records tell it: its handler, the step it took
/// and the one after it (its [`Record::Next`]), and the primitives it
/// performed there, each with whether its write won: what coverage's paths
/// and mutation's sites are read from.
pub(crate) struct Taken {
    handler: Handler,
    from: Pc,
    to: Option<Pc>,
    primitives: Vec<(Primitive, Option<bool>)>,
}

impl Taken {
    /// The worker's step among `records`; `None` for any other action, and
    /// for a refused one (what it would have done is no step taken).
    pub fn of(records: &[Record]) -> Option<Taken> {
        let (handler, from, to) = records.iter().find_map(|r| match *r {
            Record::Next { handler, from, to } => Some((handler, from, to)),
            _ => None,
        })?;
        let primitives = records.iter().filter_map(|r| r.primitive(from)).collect();
        Some(Taken {
            handler,
            from,
            to,
            primitives,
        })
    }

    /// The path it took, with its last write's outcome; `None`: a read that
    /// goes on to its next read.
    pub fn path(&self) -> Option<Path> {
        let read = |pc: Pc| if pc.is_read() { Pc::Read } else { pc };
        let (from, to) = (read(self.from), self.to.map(read));
        (to != Some(Pc::Read) || from != Pc::Read).then(|| Path {
            handler: self.handler,
            from,
            to,
            won: self.primitives.iter().rev().find_map(|&(_, won)| won),
        })
    }

    /// Its primitives, each at its site.
    pub fn sites(&self) -> impl Iterator<Item = SiteUse> + '_ {
        let site = Site::of(self.handler, self.from);
        self.primitives
            .iter()
            .map(move |&(primitive, won)| SiteUse {
                site,
                primitive,
                won,
                next: self.to,
            })
    }
}

impl Record {
    /// The primitive this record shows a step at `pc` performed, as a
    /// mutant's site knows it, with whether its write won. A write is the
    /// one it made, which is the one its step asks for on the model a
    /// mutant is made from.
    fn primitive(&self, pc: Pc) -> Option<(Primitive, Option<bool>)> {
        let write = |write, outcome: Outcome| Some((Primitive::Write(write), Some(outcome.won())));
        match *self {
            // A split read's first parts are not a site of their own.
            Record::Read { head: Some(_), .. } => Some((Primitive::Read, None)),
            Record::CasQueue {
                write: SlotWrite::Claim(_),
                outcome,
                ..
            } => write(Write::ClaimSlot, outcome),
            Record::CasQueue {
                write: SlotWrite::Release { .. },
                outcome,
                ..
            } => write(Write::ReleaseSlot, outcome),
            Record::CasRequest { set, outcome, .. } => write(Write::Request(set), outcome),
            Record::Transaction { state, outcome, .. } => write(Write::Transaction(state), outcome),
            // The reap's write is its statement's.
            Record::Reap { won, .. } => Some((Primitive::Other, Some(won))),
            Record::Submit { .. } => Some((Primitive::Submit, None)),
            // Not the ack a mutant moves before a write.
            Record::Ack { .. } if pc == Pc::Ack => Some((Primitive::Ack, None)),
            Record::Hold { outcome, .. } if outcome != HoldOutcome::HandedOutAgain => {
                Some((Primitive::Hold, None))
            }
            _ => None,
        }
    }
}

/// A step's name as a log gives it: `write_processing` for `WriteProcessing`.
pub fn step_name(pc: Pc) -> String {
    let mut name = String::new();
    for (i, c) in pc.name().chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}
