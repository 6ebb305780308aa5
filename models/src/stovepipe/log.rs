//! What a step says happened. Checking says nothing; a story says it in
//! words, with the row versions and read values the checked state does not
//! keep: the teller carries them along the path in a [`Ledger`] (the
//! versions of every row, and what the acting worker last read).
//!
//! The other records a step leaves are defined here too, with the log that
//! keeps them: the [`Path`] it took (coverage), the [`SiteUse`] of the
//! primitive it performed (mutation's sites) and the [`Observation`] of what
//! the system would log (validate). Every teller uses this file, so it uses
//! none of theirs.

use super::{Handler, MessageKind, Pc, Req, RequestState, Slots, MAX_REQUESTS};

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

/// What a step does, as the site log records it.
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

/// What a step would log, in the model's terms (requests by index, rows
/// with the model's versions).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Observation {
    Arrive(Req),
    Deliver {
        request: Req,
        kind: MessageKind,
        attempt: u8,
    },
    /// The parts a read took: all three, or with split reads one.
    Read {
        request: Option<(Req, RequestState, u16)>,
        queue: Option<(Slots, u16)>,
        head: Option<Req>,
        split: bool,
    },
    RereadQueue(Slots, u16),
    RereadRequest(Req, RequestState, u16),
    CasQueue {
        expected: u16,
        set: Slots,
        won: bool,
        step: Pc,
    },
    CasRequest {
        request: Req,
        expected: u16,
        set: RequestState,
        won: bool,
        step: Pc,
    },
    Transaction {
        request: Req,
        queue_expected: u16,
        /// With a request write: the version R's row had to be at.
        request_expected: Option<u16>,
        slots: Slots,
        state: Option<RequestState>,
        won: bool,
        step: Pc,
    },
    Reap {
        expected: u16,
        removed: u32,
        won: bool,
    },
    Submit {
        request: Req,
        started: bool,
    },
    CancelBuild {
        request: Req,
        stopped: bool,
    },
    Ack {
        request: Req,
        kind: MessageKind,
    },
    Hold {
        request: Req,
        kind: MessageKind,
    },
    FinishBuild(Req),
    /// A write the database refused (option `aborts`): as logged with
    /// `aborted: true` and `won: false`.
    Refused(Box<Observation>),
}

/// Lines and a ledger while a story is told; nothing while checking; the
/// primitives each step performs while the sites of mutants are found; the
/// path each step takes while coverage is listed; a ledger and what each
/// step would log, as the system's event log says it, while a log is
/// validated.
pub(crate) struct Log {
    lines: Option<Vec<String>>,
    ledger: Option<Ledger>,
    sites: Option<Vec<SiteUse>>,
    paths: Option<Vec<Path>>,
    /// The step's last write's outcome (kept only while paths are).
    won: Option<bool>,
    observed: Option<Vec<Observation>>,
}

impl Log {
    pub fn quiet() -> Self {
        Log {
            lines: None,
            ledger: None,
            sites: None,
            paths: None,
            won: None,
            observed: None,
        }
    }

    pub fn telling(ledger: Ledger) -> Self {
        Log {
            lines: Some(Vec::new()),
            ledger: Some(ledger),
            ..Log::quiet()
        }
    }

    pub fn recording_sites() -> Self {
        Log {
            sites: Some(Vec::new()),
            ..Log::quiet()
        }
    }

    pub fn recording_paths() -> Self {
        Log {
            paths: Some(Vec::new()),
            ..Log::quiet()
        }
    }

    pub fn observing(ledger: Ledger) -> Self {
        Log {
            ledger: Some(ledger),
            observed: Some(Vec::new()),
            ..Log::quiet()
        }
    }

    /// What a step would log (recorded only while validating), from the
    /// ledger as it is before the step's own note.
    pub fn observe(&mut self, event: impl FnOnce(&Ledger) -> Observation) {
        if let (Some(observed), Some(ledger)) = (&mut self.observed, &self.ledger) {
            observed.push(event(ledger));
        }
    }

    /// What `step` would log had the database refused it (recorded only
    /// while validating): its observations, each marked refused; the
    /// ledger is left as it is.
    pub fn refused(&mut self, step: impl FnOnce(&mut Log)) {
        if let (Some(observed), Some(ledger)) = (&mut self.observed, &self.ledger) {
            let mut dry = Log::observing(*ledger);
            step(&mut dry);
            observed.extend(
                dry.observed
                    .unwrap_or_default()
                    .into_iter()
                    .map(|o| Observation::Refused(Box::new(o))),
            );
        }
    }

    /// What the steps would log, and the ledger after them.
    pub fn finish_observing(self) -> (Vec<Observation>, Ledger) {
        (
            self.observed.unwrap_or_default(),
            self.ledger.unwrap_or_default(),
        )
    }

    /// A primitive a step performed (recorded only while finding sites).
    pub fn site(&mut self, site: Site, primitive: Primitive, won: Option<bool>) {
        if self.paths.is_some() && won.is_some() {
            self.won = won;
        }
        if let Some(sites) = &mut self.sites {
            sites.push(SiteUse {
                site,
                primitive,
                won,
                next: None,
            });
        }
    }

    /// The step after the one whose primitives were just recorded.
    pub fn site_next(&mut self, next: Pc) {
        if let Some(sites) = &mut self.sites {
            for u in sites.iter_mut().filter(|u| u.next.is_none()) {
                u.next = Some(next);
            }
        }
    }

    pub fn sites(self) -> Vec<SiteUse> {
        self.sites.unwrap_or_default()
    }

    /// The path a step took (recorded only while coverage is listed): a
    /// read that goes on to its next read is not one.
    pub fn path(&mut self, handler: Handler, from: Pc, to: Option<Pc>) {
        let read = |pc: Pc| if pc.is_read() { Pc::Read } else { pc };
        let (from, to) = (read(from), to.map(read));
        if let (Some(paths), false) = (&mut self.paths, to == Some(Pc::Read) && from == Pc::Read) {
            paths.push(Path {
                handler,
                from,
                to,
                won: self.won,
            });
        }
    }

    pub fn paths(self) -> Vec<Path> {
        self.paths.unwrap_or_default()
    }

    /// Says a line, which may show what the ledger knows.
    pub fn say(&mut self, line: impl FnOnce(&Ledger) -> String) {
        if let (Some(lines), Some(ledger)) = (&mut self.lines, &self.ledger) {
            lines.push(line(ledger));
        }
    }

    /// Keeps the ledger up to date with what the step did.
    pub fn note(&mut self, change: impl FnOnce(&mut Ledger)) {
        if let Some(ledger) = &mut self.ledger {
            change(ledger);
        }
    }

    /// The lines, joined, and the ledger after the step.
    pub fn finish(self) -> (String, Ledger) {
        (
            self.lines.unwrap_or_default().join("; "),
            self.ledger.unwrap_or_default(),
        )
    }
}
