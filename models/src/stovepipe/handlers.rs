//! The handlers and the world around them, in the contract's order: arrivals,
//! deliveries, `process`, `signal`, `dlq`, builds, and the two faults. Every
//! read and every write is one step; the design decides only what the
//! contract's admit table and release rules say it decides.

use super::design::{Admit, Design, Dlq, Gate, Resume, SlotField, StaleHead};
use super::log::{Log, Seen};
use super::mutation::{Operator, Primitive, Site, Write};
use super::trace::Observation;
use super::{
    request_name, Build, Delivery, Fresh, Handler, MessageKind, Pc, Req, RequestState, SlotView,
    Slots, State, Stovepipe, Worker, MAX_REQUESTS,
};

/// A worker's turn: the world, the worker taken out of it, and what is said.
pub struct Turn<'a> {
    pub(crate) model: &'a Stovepipe,
    pub(crate) state: &'a mut State,
    pub(crate) worker: Worker,
    pub(crate) log: &'a mut Log,
    /// The rows this step read, or wrote and so knows afresh.
    refreshed: Fresh,
    /// The step is to be taken again (a mutant's ack moved before its write
    /// took this one).
    again: bool,
}

/// What a read saw: all that the decision after it uses.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    pub request: RequestState,
    pub slots: SlotView,
    /// R is the latest head (no later request has arrived).
    pub latest_head: bool,
}

impl Turn<'_> {
    fn slots_now(&self) -> Slots {
        self.model.slots(self.state)
    }

    /// This step, as a mutation names it.
    fn site(&self) -> Site {
        Site::of(self.worker.handler(), self.worker.pc)
    }

    /// The mutation's change, if it changes this step.
    fn operator(&self) -> Option<Operator> {
        self.model
            .mutation
            .filter(|m| m.site == self.site())
            .map(|m| m.operator)
    }

    /// The write a swapping mutant makes at this step instead, if any: at
    /// its step the next one's write, at the next step its own.
    fn swapped(&self) -> Option<Write> {
        let m = self.model.mutation?;
        let Operator::SwappedWithNext { next, this, other } = m.operator else {
            return None;
        };
        if m.site == self.site() {
            Some(other)
        } else if Site::of(m.site.handler, next) == self.site() {
            Some(this)
        } else {
            None
        }
    }

    /// What the slot field, as it is now, tells this worker.
    fn view_now(&self) -> SlotView {
        let slots = self.slots_now();
        let k = self.model.bounds.max_concurrent;
        let mut view = self.model.design.slots.view(slots, self.worker.request, k);
        if self.operator() == Some(Operator::GateOffByOne) {
            view.full = slots.taken() > k;
        }
        view
    }

    /// The read at `pc`: one consistent snapshot of R's row, the queue row
    /// and the latest head, or with `split-read` each in a step of its own.
    /// Returns what was read once all of it is, else the next read step.
    fn read(&mut self, pc: Pc) -> Result<Reading, Pc> {
        let r = self.worker.request;
        let split = self.model.options.split_read;
        let mut reading = match pc {
            Pc::ReadQueue { request } => Reading {
                request,
                slots: self.view_now(),
                latest_head: false,
            },
            Pc::ReadHead { request, slots } => Reading {
                request,
                slots,
                latest_head: false,
            },
            _ => Reading {
                request: self.state.request(r),
                slots: self.view_now(),
                latest_head: false,
            },
        };
        let (row, queue, arrived) = (
            self.state.request(r),
            self.slots_now(),
            self.state.arrived(),
        );
        let read_request = pc == Pc::Read;
        let read_queue = matches!(pc, Pc::ReadQueue { .. }) || (pc == Pc::Read && !split);
        let read_head = !split || matches!(pc, Pc::ReadHead { .. });
        let fresh = &mut self.worker.fresh;
        if read_request {
            fresh.request = true;
            self.refreshed.request = true;
        }
        if read_queue {
            fresh.queue = true;
            self.refreshed.queue = true;
        }
        if read_head {
            fresh.head = true;
            self.refreshed.head = true;
        }
        self.log.observe(|l| Observation::Read {
            request: read_request.then(|| (r, row, l.versions.requests[r as usize])),
            queue: read_queue.then_some((queue, l.versions.queue)),
            head: read_head.then(|| arrived - 1),
            split,
        });
        self.log.note(|l| {
            if read_request {
                l.seen = Seen::default();
                l.seen.request = Some((row, l.versions.requests[r as usize]));
            }
            if read_queue {
                l.seen.queue = Some((queue, l.versions.queue));
            }
            if read_head {
                l.seen.head = Some(arrived);
            }
        });
        self.log.say(|l| {
            let mut parts = Vec::new();
            if read_request {
                let version = l.versions.requests[r as usize];
                parts.push(format!(
                    "read {} {} v{version}",
                    request_name(r),
                    row.name()
                ));
            }
            if read_queue {
                let words = format!("queue {} v{}", queue.render(), l.versions.queue);
                parts.push(if read_request {
                    words
                } else {
                    format!("read {words}")
                });
            }
            if read_head {
                let words = format!("latest head {}", request_name(arrived - 1));
                parts.push(if read_request {
                    words
                } else {
                    format!("read {words}")
                });
            }
            parts.join(", ")
        });
        if split && pc == Pc::Read {
            return Err(Pc::ReadQueue { request: row });
        }
        if let Pc::ReadQueue { request } = pc {
            return Err(Pc::ReadHead {
                request,
                slots: reading.slots,
            });
        }
        reading.latest_head = match self.operator() {
            Some(Operator::LatestHeadSkipped) => true,
            Some(Operator::LatestHeadInverted) => r + 1 != arrived,
            _ => r + 1 == arrived,
        };
        self.log.site(self.site(), Primitive::Read, None);
        Ok(reading)
    }

    /// Whether `dlq` releases R's slot, by what its read saw.
    fn dlq_releases(&self, seen: &Reading) -> bool {
        let slots = self.model.design.slots;
        match self.operator() {
            Some(Operator::DlqReleasesAlways) => seen.slots.has_slot,
            Some(Operator::DlqReleasesNever) => false,
            _ => slots.dlq_releases(seen.request) && seen.slots.has_slot,
        }
    }

    /// Re-reads the queue row alone (a retry after a lost CAS on it).
    pub fn reread_queue(&mut self) -> SlotView {
        let queue = self.slots_now();
        self.worker.fresh.queue = true;
        self.refreshed.queue = true;
        self.log
            .observe(|l| Observation::RereadQueue(queue, l.versions.queue));
        self.log
            .note(|l| l.seen.queue = Some((queue, l.versions.queue)));
        self.log
            .say(|l| format!("re-read queue {} v{}", queue.render(), l.versions.queue));
        self.view_now()
    }

    /// Re-reads R's row alone.
    pub fn reread_request(&mut self) -> RequestState {
        let r = self.worker.request;
        let row = self.state.request(r);
        self.worker.fresh.request = true;
        self.refreshed.request = true;
        self.log
            .observe(|l| Observation::RereadRequest(r, row, l.versions.requests[r as usize]));
        self.log
            .note(|l| l.seen.request = Some((row, l.versions.requests[r as usize])));
        self.log.say(|l| {
            format!(
                "re-read {} {} v{}",
                request_name(r),
                row.name(),
                l.versions.requests[r as usize]
            )
        });
        row
    }

    /// Step b's claim: CAS the slot field to hold R's slot too.
    pub fn claim_slot(&mut self) -> bool {
        self.write(Write::ClaimSlot)
    }

    /// Release R's slot: a CAS of the slot field without it. Only taken
    /// where a read saw R's slot ([`SlotView::has_slot`]), so that no step
    /// writes nothing.
    pub fn release_slot(&mut self) -> bool {
        self.write(Write::ReleaseSlot)
    }

    /// CAS R's row to `to`: succeeds only if R is still at the version read.
    pub fn cas_request(&mut self, to: RequestState) -> bool {
        self.write(Write::Request(to))
    }

    /// Claim R's slot and, with `to`, write R's row, in one transaction on
    /// the two rows (`SELECT ... FOR UPDATE` on the queue row and R's row,
    /// the writes, `COMMIT`), one atomic step: it commits only if both rows
    /// are still as last read, and holds the queue row's lock while it runs.
    /// Repairs only: the contract's steps each write one row.
    pub fn claim_in_transaction(&mut self, to: Option<RequestState>) -> bool {
        self.write(Write::Transaction(to))
    }

    /// Every write of a step, where a mutant may change it.
    fn write(&mut self, asked: Write) -> bool {
        let operator = self.operator();
        if operator == Some(Operator::AckBeforeWrite) && self.worker.holds_message {
            // The ack is a step of its own, before the write: the worker no
            // longer holds its message, and takes this step again to write.
            self.ack();
            self.worker.holds_message = false;
            self.again = true;
            return false;
        }
        let won = match self.swapped().unwrap_or(asked) {
            Write::ClaimSlot => {
                let (slots, r) = (self.model.design.slots, self.worker.request);
                self.cas_queue(|now| slots.claimed(now, r))
            }
            Write::ReleaseSlot => {
                let (slots, r) = (self.model.design.slots, self.worker.request);
                let (twice, mutated) = (
                    operator == Some(Operator::ReleaseTwice),
                    self.model.mutation.is_some(),
                );
                self.cas_queue(|now| match slots.released(now, r) {
                    Some(once) if twice => slots.released(once, r).unwrap_or(once),
                    Some(once) => once,
                    // A mutant may release what it does not hold.
                    None if mutated => now,
                    None => panic!("a release is decided at the read that saw R's slot"),
                })
            }
            Write::Request(to) => self.cas_request_row(to),
            Write::Transaction(to) => self.transaction(to),
        };
        self.log
            .site(self.site(), Primitive::Write(asked), Some(won));
        won
    }

    /// Whether a CAS at this step wins: its row is as read (a mutant may
    /// not care).
    fn wins(&self, fresh: bool) -> bool {
        fresh || self.operator() == Some(Operator::CasIgnoresVersion)
    }

    /// A winning write that a mutant does not make.
    fn skipped(&mut self) -> bool {
        if self.operator() == Some(Operator::WriteSkipped) {
            self.log
                .say(|_| "the write is skipped (a mutant), as if made".to_string());
            return true;
        }
        false
    }

    /// Checks that the step at hand was declared to use `row` of its read.
    fn uses(&self, row: fn(Fresh) -> bool, name: &str) {
        let live = self.model.live_reads(self.worker.handler(), self.worker.pc);
        assert!(
            row(live),
            "{}: {} at {:?} CASes the {name} row, which its liveness says it has forgotten",
            self.model.design.name,
            self.worker.handler().name(),
            self.worker.pc
        );
    }

    /// CAS the queue's slot field to `write` of its value: succeeds only if
    /// the queue row is still at the version last read (the value written is
    /// then derived from the row as read), and bumps the version.
    fn cas_queue(&mut self, write: impl Fn(Slots) -> Slots) -> bool {
        self.uses(|f| f.queue, "queue");
        let won = self.wins(self.worker.fresh.queue);
        // The reap logs a statement of its own.
        if self.worker.pc != Pc::Reap {
            let step = self.worker.pc;
            self.log.observe(|l| {
                let (read, version) = l.seen.queue.expect("a CAS follows a read");
                Observation::CasQueue {
                    expected: version,
                    set: write(read),
                    won,
                    step,
                }
            });
        }
        if !won {
            self.log.say(|l| {
                let (read, version) = l.seen.queue.expect("a CAS follows a read");
                format!(
                    "CAS queue {} -> {} lost (queue is at v{}, read v{version})",
                    read.render(),
                    write(read).value(),
                    l.versions.queue
                )
            });
            return false;
        }
        if self.skipped() {
            return true;
        }
        let before = self.slots_now();
        let after = write(before);
        self.model.design.slots.write(self.state, after);
        self.state.for_each_worker(|w| w.fresh.queue = false);
        self.worker.fresh.queue = true;
        self.refreshed.queue = true;
        self.log.note(|l| {
            l.versions.queue += 1;
            l.seen.queue = Some((after, l.versions.queue));
        });
        self.log
            .say(|_| format!("CAS queue {} -> {}", before.render(), after.value()));
        durable_write(self.state);
        true
    }

    /// The CAS of R's row of [`Turn::cas_request`].
    fn cas_request_row(&mut self, to: RequestState) -> bool {
        self.uses(|f| f.request, "request");
        let r = self.worker.request;
        let won = self.wins(self.worker.fresh.request);
        let step = self.worker.pc;
        self.log.observe(|l| Observation::CasRequest {
            request: r,
            expected: l.seen.request.expect("a CAS follows a read").1,
            set: to,
            won,
            step,
        });
        if !won {
            let now = self.state.request(r);
            self.log.say(|l| {
                let (read, version) = l.seen.request.expect("a CAS follows a read");
                format!(
                    "CAS {} {} -> {} lost ({} is {} v{}, read v{version})",
                    request_name(r),
                    read.name(),
                    to.name(),
                    request_name(r),
                    now.name(),
                    l.versions.requests[r as usize]
                )
            });
            return false;
        }
        if self.skipped() {
            return true;
        }
        let before = self.state.request(r);
        self.state.set_request(r, to);
        self.state.for_each_worker(|w| {
            if w.request == r {
                w.fresh.request = false;
            }
        });
        self.refreshed.request = true;
        self.log.note(|l| {
            l.versions.requests[r as usize] += 1;
            l.seen.request = Some((to, l.versions.requests[r as usize]));
        });
        self.log
            .say(|_| format!("CAS {} {} -> {}", request_name(r), before.name(), to.name()));
        durable_write(self.state);
        true
    }

    /// The transaction of [`Turn::claim_in_transaction`].
    fn transaction(&mut self, to: Option<RequestState>) -> bool {
        self.uses(|f| f.queue, "queue");
        self.uses(|f| f.request, "request");
        let (slots, r) = (self.model.design.slots, self.worker.request);
        let what = |l: &super::log::Ledger, queue: Slots, row: RequestState| {
            let mut what = format!(
                "queue {} -> {}",
                queue.render(),
                slots.claimed(queue, r).value()
            );
            if let Some(to) = to {
                what.push_str(&format!(
                    ", {} {} -> {}",
                    request_name(r),
                    row.name(),
                    to.name()
                ));
            }
            let _ = l;
            what
        };
        let won = self.wins(self.worker.fresh.queue && self.worker.fresh.request);
        let step = self.worker.pc;
        self.log.observe(|l| {
            let (queue, queue_version) = l.seen.queue.expect("a transaction follows a read");
            let (_, row_version) = l.seen.request.expect("a transaction follows a read");
            Observation::Transaction {
                request: r,
                queue_expected: queue_version,
                request_expected: to.map(|_| row_version),
                slots: slots.claimed(queue, r),
                state: to,
                won,
                step,
            }
        });
        if !won {
            let (queue_now, row_now) = (self.slots_now(), self.state.request(r));
            self.log.say(|l| {
                let (queue, queue_version) = l.seen.queue.expect("a transaction follows a read");
                let (row, row_version) = l.seen.request.expect("a transaction follows a read");
                format!(
                    "transaction lost ({}): queue is {} v{} (read v{queue_version}), {} is {} v{} (read v{row_version})",
                    what(l, queue, row),
                    queue_now.value(),
                    l.versions.queue,
                    request_name(r),
                    row_now.name(),
                    l.versions.requests[r as usize]
                )
            });
            return false;
        }
        if self.skipped() {
            return true;
        }
        let (queue, row) = (self.slots_now(), self.state.request(r));
        slots.write(self.state, slots.claimed(queue, r));
        self.state.for_each_worker(|w| w.fresh.queue = false);
        if let Some(to) = to {
            self.state.set_request(r, to);
            self.state.for_each_worker(|w| {
                if w.request == r {
                    w.fresh.request = false;
                }
            });
        }
        self.refreshed.queue = true;
        self.refreshed.request = true;
        let written = slots.claimed(queue, r);
        self.log.say(|l| {
            format!(
                "transaction on queue and {}: {}",
                request_name(r),
                what(l, queue, row)
            )
        });
        self.log.note(|l| {
            l.versions.queue += 1;
            l.seen.queue = Some((written, l.versions.queue));
            if let Some(to) = to {
                l.versions.requests[r as usize] += 1;
                l.seen.request = Some((to, l.versions.requests[r as usize]));
            }
        });
        durable_write(self.state);
        true
    }

    /// Another request's state, as a statement that reads its row sees it
    /// now (a condition on other rows inside one statement). Repairs only.
    pub fn state_of(&self, r: Req) -> RequestState {
        self.state.request(r)
    }

    /// The slot field as the queue row holds it now (what a statement on
    /// the row sees).
    pub fn slots(&self) -> Slots {
        self.slots_now()
    }

    /// Whether the queue row is still as this worker last read it.
    pub fn queue_unchanged(&self) -> bool {
        self.uses(|f| f.queue, "queue");
        self.worker.fresh.queue
    }

    /// Writes the slot field in a statement guarded by the queue row's
    /// version, which the caller checked ([`Turn::queue_unchanged`]).
    pub fn write_slots(&mut self, after: Slots) {
        assert!(self.worker.fresh.queue, "a guarded write of a row read");
        self.cas_queue(|_| after);
    }

    /// The reap's statement, as the system logs it: the owners it removed
    /// (none: nothing was terminal) and whether the queue row was still as
    /// read.
    pub fn observe_reap(&mut self, removed: u32, won: bool) {
        self.log.observe(|l| Observation::Reap {
            expected: l.seen.queue.expect("a reap follows a read").1,
            removed,
            won,
        });
    }

    /// Something a design's own step says.
    pub fn say(&mut self, line: impl FnOnce() -> String) {
        self.log.say(|_| line());
    }

    /// Cancel R's build by request ID, and wait until it has stopped: a
    /// running build stops without publishing `signal`; a build never
    /// submitted is recorded as stopped, so that a later submit of R starts
    /// nothing (submitting is idempotent by request ID). The build is then
    /// `finished`. Repairs only: the contract's reconciler does not cancel.
    pub fn cancel_build(&mut self) {
        let r = self.worker.request;
        let was = self.state.build(r);
        self.state.set_build(r, Build::Finished);
        self.log.observe(|_| Observation::CancelBuild {
            request: r,
            stopped: was == Build::Running,
        });
        match was {
            Build::Running => {
                self.log
                    .say(|_| format!("cancel build {}: it stops, no signal", request_name(r)));
                durable_write(self.state);
            }
            Build::NotSubmitted => {
                self.log.say(|_| {
                    format!(
                        "cancel build {}: not submitted; recorded, so a later submit starts nothing",
                        request_name(r)
                    )
                });
                durable_write(self.state);
            }
            Build::Finished => self
                .log
                .say(|_| format!("cancel build {}: already stopped", request_name(r))),
        }
    }

    /// Submit R's build; idempotent by request ID.
    pub fn submit_build(&mut self) {
        let r = self.worker.request;
        self.log.site(self.site(), Primitive::Submit, None);
        let started = match self.operator() {
            Some(Operator::SubmitSkipped) => false,
            Some(Operator::SubmitNotIdempotent) => self.state.build(r) != Build::Running,
            _ => self.state.build(r) == Build::NotSubmitted,
        };
        self.log.observe(|_| Observation::Submit {
            request: r,
            started,
        });
        match self.operator() {
            Some(Operator::SubmitSkipped) => {
                self.log
                    .say(|_| format!("submit build {}: skipped (a mutant)", request_name(r)));
                return;
            }
            Some(Operator::SubmitNotIdempotent) if self.state.build(r) == Build::Finished => {
                self.state.set_build(r, Build::Running);
                self.log.say(|_| {
                    format!(
                        "submit build {}: it starts again (a mutant: not idempotent)",
                        request_name(r)
                    )
                });
                durable_write(self.state);
                return;
            }
            _ => {}
        }
        if self.state.build(r) == Build::NotSubmitted {
            self.state.set_build(r, Build::Running);
            self.log
                .say(|_| format!("submit build {}: it starts", request_name(r)));
            durable_write(self.state);
        } else {
            self.log.say(|_| {
                format!(
                    "submit build {}: already submitted, nothing starts",
                    request_name(r)
                )
            });
        }
    }

    /// Ack: removes the message, unless the worker no longer holds it.
    fn ack(&mut self) {
        let (r, kind) = (self.worker.request, self.worker.message);
        self.log.observe(|_| Observation::Ack { request: r, kind });
        if self.worker.pc == Pc::Ack {
            self.log.site(self.site(), Primitive::Ack, None);
            if self.operator() == Some(Operator::AckSkipped) {
                self.log
                    .say(|_| format!("ack {}: skipped (a mutant)", kind.render(r)));
                return;
            }
        }
        if self.worker.holds_message && self.state.message(r, kind).is_some() {
            self.state.set_message(r, kind, None);
            self.log.say(|_| format!("ack {}", kind.render(r)));
        } else {
            self.log.say(|_| {
                format!(
                    "ack {}: changes nothing, the message was handed out again",
                    kind.render(r)
                )
            });
        }
    }

    /// Hold: park the message without counting an attempt. A parked message
    /// waits for a durable write; if one already happened since this worker's
    /// read, the message is visible at once (see the README's choices).
    fn hold(&mut self) {
        let (r, kind) = (self.worker.request, self.worker.message);
        self.log.observe(|_| Observation::Hold { request: r, kind });
        let k = self.model.bounds.max_concurrent;
        let outdated = !self.worker.fresh.all() || hold_outdated(&self.model.design, self.state);
        if !self.worker.holds_message {
            self.log.say(|_| {
                format!(
                    "hold {}: changes nothing, the message was handed out again",
                    kind.render(r)
                )
            });
            return;
        }
        let status = if outdated {
            Delivery::Visible
        } else {
            Delivery::Parked
        };
        self.log.site(self.site(), Primitive::Hold, None);
        let attempts = self.state.message(r, kind).map_or(0, |m| m.attempts);
        if self.operator() == Some(Operator::HoldCountsAttempt) && !kind.is_dead() {
            let attempts = attempts + 1;
            self.log
                .say(|_| "the hold counts an attempt (a mutant)".to_string());
            if attempts >= self.model.bounds.max_deliveries {
                dead_letter(self.model, self.state, r, kind, attempts, self.log);
            } else {
                self.state.set_message(r, kind, Some((status, attempts)));
            }
            return;
        }
        self.state.set_message(r, kind, Some((status, attempts)));
        self.log.say(|l| {
            let seen = l.seen.queue.expect("a hold follows a read").0;
            let why = format!(
                "hold {}: gate closed ({} >= K {k})",
                kind.render(r),
                seen.gate_words()
            );
            if outdated {
                format!("{why}, but a write since the read makes it visible at once")
            } else {
                format!("{why}, parked until a durable write")
            }
        });
    }
}

/// What a worker at `pc` of `handler` may still use of its last read: the
/// rows it may CAS before it reads them again, and for a hold everything it
/// read (a hold asks whether anything changed since). One table for every
/// design: a step that a design never takes is never asked.
pub(crate) fn live_reads(handler: Handler, pc: Pc) -> Fresh {
    #[cfg(test)]
    if pc == Pc::Claim && CLAIM_FORGETS_QUEUE.get() {
        return Fresh::NONE;
    }
    let none = Fresh::NONE;
    let request = Fresh {
        request: true,
        ..none
    };
    let queue = Fresh {
        queue: true,
        ..none
    };
    let request_and_queue = Fresh {
        queue: true,
        ..request
    };
    match pc {
        // A read overwrites all it reads; an ack and a submit use nothing.
        Pc::Read | Pc::Ack | Pc::SubmitBuild => none,
        Pc::ReadQueue { .. } => request,
        Pc::ReadHead { .. } => request_and_queue,
        // A hold, and the reap that may hold after it, ask whether anything
        // the read saw has changed.
        Pc::Hold | Pc::Reap => Fresh::ALL,
        _ => match handler {
            Handler::Process => match pc {
                // Release (CAS Q) and supersede (CAS R), in either order; the
                // claim (or transaction) and the processing write use the read.
                Pc::ReleaseBeforeSupersede
                | Pc::SupersedeThenRelease
                | Pc::Claim
                | Pc::WriteProcessing => request_and_queue,
                Pc::Supersede => request,
                // After a lost processing write the unwind releases on the
                // queue row as last seen; fail-open's count write uses the
                // queue row as first read, until a re-read.
                Pc::RereadRequest | Pc::Unwind | Pc::CountUp => queue,
                _ => none,
            },
            // Release (CAS Q), then the outcome write (CAS R).
            Handler::Signal | Handler::Dlq => match pc {
                Pc::Release | Pc::CancelBuild { release: true } => request_and_queue,
                Pc::WriteOutcome | Pc::CancelBuild { release: false } => request,
                other => unreachable!("{} has no step {other:?}", handler.name()),
            },
        },
    }
}

#[cfg(test)]
thread_local! {
    /// A wrong liveness table, for the test that the wrong entry is caught:
    /// the claim says it forgot the row it CASes.
    pub(crate) static CLAIM_FORGETS_QUEUE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A durable write (a row inserted or changed, a build submitted or finished)
/// wakes every parked message.
fn durable_write(state: &mut State) {
    for r in 0..state.arrived() {
        for kind in MessageKind::ALL {
            if let Some(m) = state.message(r, kind) {
                if m.status == Delivery::Parked {
                    state.set_message(r, kind, Some((Delivery::Visible, m.attempts)));
                }
            }
        }
    }
}

fn publish(state: &mut State, r: Req, kind: MessageKind) {
    state.set_message(r, kind, Some((Delivery::Visible, 0)));
}

/// The next request arrives: its row is inserted and `process` published.
pub(super) fn arrive(state: &mut State, log: &mut Log) {
    let r = state.add_request();
    state.for_each_worker(|w| w.fresh.head = false);
    publish(state, r, MessageKind::Process);
    durable_write(state);
    log.observe(|_| Observation::Arrive(r));
    log.note(|l| l.versions.requests[r as usize] = 1);
    log.say(|_| {
        format!(
            "{} arrives (accepted, the latest head); publish {}",
            request_name(r),
            MessageKind::Process.render(r)
        )
    });
}

/// The broker hands a visible message to a new worker.
pub(super) fn deliver(state: &mut State, r: Req, kind: MessageKind, log: &mut Log) {
    let Some(m) = state.message(r, kind) else {
        unreachable!("deliver is enabled only for a visible message")
    };
    state.set_message(r, kind, Some((Delivery::InFlight, m.attempts)));
    state.add_worker(Worker {
        message: kind,
        request: r,
        pc: Pc::Read,
        holds_message: true,
        fresh: Fresh::NONE,
    });
    log.observe(|_| Observation::Deliver {
        request: r,
        kind,
        attempt: m.attempts + 1,
    });
    log.say(|l| {
        format!(
            "deliver {} to worker {} (attempt {})",
            kind.render(r),
            l.next_worker,
            m.attempts + 1
        )
    });
}

/// A running build finishes and publishes `signal`.
pub(super) fn finish_build(state: &mut State, r: Req, log: &mut Log) {
    state.set_build(r, Build::Finished);
    publish(state, r, MessageKind::Signal);
    durable_write(state);
    log.observe(|_| Observation::FinishBuild(r));
    log.say(|_| {
        format!(
            "build {} finishes; publish {}",
            request_name(r),
            MessageKind::Signal.render(r)
        )
    });
}

/// The message a worker held is visible again with one more attempt, or, out
/// of deliveries, replaced by `dead(R)`. Dead messages are retried forever.
fn expire(model: &Stovepipe, state: &mut State, r: Req, kind: MessageKind, log: &mut Log) {
    let max = model.bounds.max_deliveries;
    let Some(m) = state.message(r, kind) else {
        return;
    };
    if kind.is_dead() {
        state.set_message(r, kind, Some((Delivery::Visible, 0)));
        log.say(|_| format!("{} is visible again", kind.render(r)));
        return;
    }
    let attempts = m.attempts + 1;
    if attempts < max {
        state.set_message(r, kind, Some((Delivery::Visible, attempts)));
        log.say(|_| {
            format!(
                "{} is visible again ({attempts} of {max} attempts used)",
                kind.render(r)
            )
        });
        return;
    }
    dead_letter(model, state, r, kind, attempts, log);
}

/// Out of deliveries after `attempts`: the message is replaced by `dead(R)`.
fn dead_letter(
    model: &Stovepipe,
    state: &mut State,
    r: Req,
    kind: MessageKind,
    attempts: u8,
    log: &mut Log,
) {
    let max = model.bounds.max_deliveries;
    state.set_message(r, kind, None);
    let dead = match kind {
        MessageKind::Process => MessageKind::DeadProcess,
        _ => MessageKind::DeadSignal,
    };
    publish(state, r, dead);
    log.say(|_| {
        format!(
            "{} ran out of deliveries ({attempts} of {max}); publish {}",
            kind.render(r),
            dead.render(r)
        )
    });
}

/// Fault: the worker dies between two steps.
pub(super) fn crash(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.remove_worker(i);
    state.spend_crash();
    let (r, kind) = (worker.request, worker.message);
    if worker.holds_message {
        log.say(|_| "crash".to_string());
        expire(model, state, r, kind, log);
    } else if state.message(r, kind).is_some() {
        log.say(|_| {
            format!(
                "crash; {} was already handed out again, so nothing is redelivered",
                kind.render(r)
            )
        });
    } else {
        log.say(|_| {
            format!(
                "crash; {} was already handed out again and is gone",
                kind.render(r)
            )
        });
    }
}

/// Fault: the worker's message expires while it still runs; it goes on later
/// with what it read, and its ack will change nothing.
pub(super) fn stall(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let mut worker = state.remove_worker(i);
    worker.holds_message = false;
    let (r, kind) = (worker.request, worker.message);
    state.add_worker(worker);
    state.spend_stall();
    log.say(|_| "stall past the visibility timeout".to_string());
    expire(model, state, r, kind, log);
}

/// The worker at index `i` takes its next step.
pub(super) fn step(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.remove_worker(i);
    let (pc, handler) = (worker.pc, worker.handler());
    let mut turn = Turn {
        model,
        state,
        worker,
        log,
        refreshed: Fresh::NONE,
        again: false,
    };
    let next = match pc {
        Pc::Ack => {
            turn.ack();
            return;
        }
        Pc::Hold => {
            turn.hold();
            return;
        }
        _ => match handler {
            Handler::Process => process(&mut turn, pc),
            Handler::Signal => signal(&mut turn, pc),
            Handler::Dlq => dlq(&mut turn, pc),
        },
    };
    // The reduction forgets what a step declares it will not use; this
    // checks, on every step taken, that the next step does not need what
    // this one had forgotten (unless this step read or wrote it afresh).
    let (used, needed) = (
        model.live_reads(handler, pc),
        model.live_reads(handler, next),
    );
    let kept = |f: fn(Fresh) -> bool| !f(needed) || f(used) || f(turn.refreshed);
    assert!(
        kept(|f| f.request) && kept(|f| f.queue) && kept(|f| f.head),
        "{}: {} goes from {pc:?} to {next:?}, which uses a read that {pc:?} forgot",
        model.design.name,
        handler.name()
    );
    let next = if turn.again { pc } else { next };
    turn.log.site_next(next);
    let mut worker = turn.worker;
    worker.pc = next;
    turn.state.add_worker(worker);
}

/// `process(R)`: read, then by what was read: ack a terminal request, submit a
/// duplicate admission, supersede a head that is no longer the latest, or
/// admit the latest head by the design's table.
fn process(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            match seen.request {
                state if state.is_terminal() => Pc::Ack,
                RequestState::Processing => Pc::SubmitBuild,
                _ if !seen.latest_head => stale_head(&design, seen.slots),
                _ => gate(&design, seen.slots),
            }
        }
        Pc::ReleaseBeforeSupersede => {
            if turn.release_slot() {
                Pc::Supersede
            } else {
                Pc::Read
            }
        }
        Pc::Supersede => {
            if turn.cas_request(RequestState::Superseded) {
                Pc::Ack
            } else {
                Pc::Read
            }
        }
        // Then the unwind gives the slot back.
        Pc::SupersedeThenRelease => {
            if turn.cas_request(RequestState::Superseded) {
                Pc::Unwind
            } else {
                Pc::Read
            }
        }
        Pc::SubmitBuild => {
            turn.submit_build();
            Pc::Ack
        }
        Pc::Reap => reap(turn),
        admit_step => admit(turn, admit_step),
    }
}

/// The design's stale head: what `process` does first with a head that is
/// no longer the latest, by whether its read saw R hold a slot.
fn stale_head(design: &Design, seen: SlotView) -> Pc {
    match design.stale_head {
        _ if !seen.has_slot => Pc::Supersede,
        StaleHead::Supersede => Pc::Supersede,
        StaleHead::ReleaseThenSupersede => Pc::ReleaseBeforeSupersede,
        StaleHead::SupersedeThenRelease => Pc::SupersedeThenRelease,
    }
}

/// Step a, after a read found R accepted and the latest head. An owner
/// already in the set resumes at c (a redelivery of its own claim), or
/// with one transaction claims again; a closed gate holds, or reaps first;
/// an open one goes to the design's first write.
fn gate(design: &Design, seen: SlotView) -> Pc {
    if design.slots == SlotField::Owners && seen.has_slot {
        return match design.admit {
            Admit::OneTransaction => Pc::Claim,
            _ => Pc::WriteProcessing,
        };
    }
    if seen.full {
        return match design.gate {
            Gate::Hold => Pc::Hold,
            Gate::ReapThenHold => Pc::Reap,
        };
    }
    match design.admit {
        Admit::ProcessingFirst => Pc::WriteProcessing,
        _ => Pc::Claim,
    }
}

/// Steps b and c and their conflict paths, by the design's admit; returns
/// the step after `pc`.
fn admit(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match (pc, design.admit) {
        // b: claim; a conflict restarts.
        (Pc::Claim, Admit::ClaimFirst) => {
            if turn.claim_slot() {
                Pc::WriteProcessing
            } else {
                Pc::Read
            }
        }
        // b: the fenced claim; a conflict on either row restarts.
        (Pc::Claim, Admit::FencedClaim) => {
            if turn.claim_in_transaction(None) {
                Pc::WriteProcessing
            } else {
                Pc::Read
            }
        }
        // b and c as one transaction.
        (Pc::Claim, Admit::OneTransaction) => {
            if turn.claim_in_transaction(Some(RequestState::Processing)) {
                Pc::SubmitBuild
            } else {
                Pc::Read
            }
        }
        // fail-open's b: processing first; a conflict acks, the count
        // untouched.
        (Pc::WriteProcessing, Admit::ProcessingFirst) => {
            if turn.cas_request(RequestState::Processing) {
                Pc::CountUp
            } else {
                Pc::Ack
            }
        }
        // c: processing; a conflict takes the resume path.
        (Pc::WriteProcessing, _) => {
            if turn.cas_request(RequestState::Processing) {
                Pc::SubmitBuild
            } else if design.resume == Resume::Unwind {
                Pc::Unwind
            } else {
                Pc::RereadRequest
            }
        }
        // The resume path. Terminal: give the slot back (R is in the set as
        // this worker last saw it: it claimed it or resumed on it);
        // processing: a duplicate admission keeps it. (Accepted cannot
        // follow a lost write: every write moves R out of accepted.)
        (Pc::RereadRequest, _) => match turn.reread_request() {
            state if state.is_terminal() => Pc::Unwind,
            RequestState::Processing if design.resume == Resume::Submit => Pc::SubmitBuild,
            RequestState::Processing => Pc::Ack,
            _ => Pc::Read,
        },
        // The unwind's release is retried on conflict, then acks.
        (Pc::Unwind, _) => {
            if turn.release_slot() {
                Pc::Ack
            } else {
                Pc::RereadQueueForUnwind
            }
        }
        // Re-read, then release only if R still holds a slot (a count
        // always may).
        (Pc::RereadQueueForUnwind, _) => {
            if turn.reread_queue().has_slot {
                Pc::Unwind
            } else {
                Pc::Ack
            }
        }
        // fail-open's c: count + 1; a conflict re-reads the queue and
        // retries (no re-gate, no coalescing: the admit is already durable).
        (Pc::CountUp, _) => {
            if turn.claim_slot() {
                Pc::SubmitBuild
            } else {
                Pc::RereadQueueForCountUp
            }
        }
        (Pc::RereadQueueForCountUp, _) => {
            turn.reread_queue();
            Pc::CountUp
        }
        (other, admit) => {
            unreachable!("{}: the admit {admit:?} has no step {other:?}", design.name)
        }
    }
}

/// The reaping gate's statement: remove every owner whose request is
/// terminal, guarded by the queue row's version.
fn reap(turn: &mut Turn) -> Pc {
    if !turn.queue_unchanged() {
        turn.observe_reap(0, false);
        turn.say(|| "reap: the queue row changed since the read, nothing written".to_string());
        return Pc::Read;
    }
    let Slots::Owners(set) = turn.slots() else {
        unreachable!("the reaping gate needs an owner set")
    };
    let terminal = (0..MAX_REQUESTS)
        .filter(|&o| set & (1 << o) != 0 && turn.state_of(o).is_terminal())
        .fold(0u32, |acc, o| acc | 1 << o);
    turn.observe_reap(terminal, true);
    if terminal == 0 {
        turn.say(|| "reap: no owner's request is terminal".to_string());
        return Pc::Hold;
    }
    turn.say(|| {
        let names: Vec<String> = (0..MAX_REQUESTS)
            .filter(|o| terminal & (1 << o) != 0)
            .map(request_name)
            .collect();
        format!("reap {}: terminal", names.join(", "))
    });
    turn.write_slots(Slots::Owners(set & !terminal));
    // Re-read and re-gate, with the slot free.
    Pc::Read
}

/// Whether a hold now rests on rows the gate read beyond R's row, the queue
/// row and the head, that have changed since (so its message is visible at
/// once rather than parked). Only the reap reads more: the owners' rows,
/// none terminal then; one that is terminal now (terminal states are final)
/// changed since.
fn hold_outdated(design: &Design, s: &State) -> bool {
    design.gate == Gate::ReapThenHold
        && s.requests()
            .any(|(o, state)| s.owns_slot(o) && state.is_terminal())
}

/// `signal(R)`, the buildsignal handler: release, then write `succeeded`.
fn signal(turn: &mut Turn, pc: Pc) -> Pc {
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            if seen.request.is_terminal() {
                Pc::Ack
            } else if seen.slots.has_slot {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => {
            if turn.release_slot() {
                Pc::WriteOutcome
            } else {
                Pc::Read
            }
        }
        Pc::WriteOutcome => {
            if turn.cas_request(RequestState::Succeeded) {
                Pc::Ack
            } else {
                Pc::Read
            }
        }
        other => unreachable!("signal has no step {other:?}"),
    }
}

/// `dlq(R)`, the DLQ reconciler: release if the design releases a request in
/// this state, then write `dead_lettered`. A running build is not cancelled,
/// unless a repaired design cancels it first.
fn dlq(turn: &mut Turn, pc: Pc) -> Pc {
    let design = turn.model.design;
    match pc {
        Pc::Read | Pc::ReadQueue { .. } | Pc::ReadHead { .. } => {
            let seen = match turn.read(pc) {
                Ok(seen) => seen,
                Err(next_read) => return next_read,
            };
            let release = turn.dlq_releases(&seen);
            if seen.request.is_terminal() {
                Pc::Ack
            } else if design.dlq == Dlq::CancelFirst {
                Pc::CancelBuild { release }
            } else if release {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::CancelBuild { release } => {
            turn.cancel_build();
            if release {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => {
            if turn.release_slot() {
                Pc::WriteOutcome
            } else {
                Pc::Read
            }
        }
        Pc::WriteOutcome => {
            if turn.cas_request(RequestState::DeadLettered) {
                Pc::Ack
            } else {
                Pc::Read
            }
        }
        other => unreachable!("dlq has no step {other:?}"),
    }
}
