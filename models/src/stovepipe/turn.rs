//! A worker's turn and its primitives: the reads, the CASes and the
//! transaction, the submit, the cancel, the ack and the hold. Each is one
//! step of the contract: it changes the state and records what it did
//! (`log.rs`); the words are the story's. A mutant changes one at a single
//! hook ([`Turn::decide`], answered in `mutation.rs`), so that the handlers
//! and the design are the same code for every mutant.

use super::broker::{dead_letter, durable_write};
use super::log::{
    AckOutcome, HoldOutcome, Log, Outcome, Record, Site, SlotWrite, SubmitOutcome, Write,
};
use super::mutation::{self, Decision, Operator};
use super::{
    Build, Delivery, Fresh, Pc, Req, RequestState, SlotView, Slots, State, Stovepipe, Worker,
};

/// A worker's turn: the world, the worker taken out of it, and the records
/// of what it does.
pub struct Turn<'a> {
    pub(crate) model: &'a Stovepipe,
    pub(crate) state: &'a mut State,
    pub(crate) worker: Worker,
    pub(crate) log: &'a mut Log,
    /// The rows this step read, or wrote and so knows afresh.
    pub(super) refreshed: Fresh,
    /// The step is to be taken again (a mutant's ack moved before its write
    /// took this one).
    pub(super) again: bool,
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

    /// The one hook where a mutant acts: the decision at this step, as the
    /// design makes it or as the mutation changes it (`mutation::decide`).
    fn decide(&self, decision: Decision) -> bool {
        mutation::decide(self.operator(), decision)
    }

    /// What the slot field, as it is now, tells this worker.
    fn view_now(&self) -> SlotView {
        let slots = self.slots_now();
        let k = self.model.bounds.max_concurrent;
        let mut view = self.model.design.slots.view(slots, self.worker.request, k);
        view.full = self.decide(Decision::GateClosed {
            taken: slots.taken(),
            k,
        });
        view
    }

    /// The read at `pc`: one consistent snapshot of R's row, the queue row
    /// and the latest head, or with `split-read` each in a step of its own.
    /// Returns what was read once all of it is, else the next read step.
    pub(super) fn read(&mut self, pc: Pc) -> Result<Reading, Pc> {
        let r = self.worker.request;
        let split = self.model.options.split_read;
        let (request, slots) = match pc {
            Pc::ReadQueue { request } => (request, self.view_now()),
            Pc::ReadHead { request, slots } => (request, slots),
            _ => (self.state.request(r), self.view_now()),
        };
        let (row, queue, arrived) = (
            self.state.request(r),
            self.slots_now(),
            self.state.arrived(),
        );
        let read_request = pc == Pc::Read;
        let read_queue = matches!(pc, Pc::ReadQueue { .. }) || (pc == Pc::Read && !split);
        let read_head = !split || matches!(pc, Pc::ReadHead { .. });
        for fresh in [&mut self.worker.fresh, &mut self.refreshed] {
            fresh.request |= read_request;
            fresh.queue |= read_queue;
            fresh.head |= read_head;
        }
        self.log.record(|| Record::Read {
            request: read_request.then_some((r, row)),
            queue: read_queue.then_some(queue),
            head: read_head.then(|| arrived - 1),
            split,
        });
        if split && pc == Pc::Read {
            return Err(Pc::ReadQueue { request: row });
        }
        if let Pc::ReadQueue { .. } = pc {
            return Err(Pc::ReadHead { request, slots });
        }
        let latest_head = self.decide(Decision::LatestHead {
            request: r,
            arrived,
        });
        Ok(Reading {
            request,
            slots,
            latest_head,
        })
    }

    /// Whether `dlq` releases R's slot, by what its read saw.
    pub(super) fn dlq_releases(&self, seen: &Reading) -> bool {
        self.decide(Decision::DlqReleases {
            rule: self.model.design.slots.dlq_releases(seen.request),
            has_slot: seen.slots.has_slot,
        })
    }

    /// Re-reads the queue row alone (a retry after a lost CAS on it).
    pub fn reread_queue(&mut self) -> SlotView {
        let queue = self.slots_now();
        self.worker.fresh.queue = true;
        self.refreshed.queue = true;
        self.log.record(|| Record::RereadQueue(queue));
        self.view_now()
    }

    /// Re-reads R's row alone.
    pub fn reread_request(&mut self) -> RequestState {
        let r = self.worker.request;
        let row = self.state.request(r);
        self.worker.fresh.request = true;
        self.refreshed.request = true;
        self.log.record(|| Record::RereadRequest(r, row));
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
        if self.decide(Decision::AckBeforeWrite) && self.worker.holds_message {
            // The ack is a step of its own, before the write: the worker no
            // longer holds its message, and takes this step again to write.
            self.ack();
            self.worker.holds_message = false;
            self.again = true;
            return false;
        }
        let r = self.worker.request;
        match mutation::write_at(self.model.mutation, self.site(), asked) {
            Write::ClaimSlot => self.cas_queue(SlotWrite::Claim(r)),
            Write::ReleaseSlot => {
                let twice = self.decide(Decision::ReleaseTwice);
                self.cas_queue(SlotWrite::Release { request: r, twice })
            }
            Write::Request(to) => self.cas_request_row(to),
            Write::Transaction(to) => self.transaction(to),
        }
    }

    /// What a write whose rows are `fresh`, as read, does: a CAS wins only
    /// then (a mutant may not care), and a winning write is made (unless a
    /// mutant skips it).
    fn outcome(&self, fresh: bool) -> Outcome {
        if !self.decide(Decision::CasWins { fresh }) {
            Outcome::Lost
        } else if self.decide(Decision::WriteMade) {
            Outcome::Won
        } else {
            Outcome::Skipped
        }
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
    fn cas_queue(&mut self, write: SlotWrite) -> bool {
        self.uses(|f| f.queue, "queue");
        let (now, step) = (self.slots_now(), self.worker.pc);
        let outcome = self.outcome(self.worker.fresh.queue);
        self.log.record(|| Record::CasQueue {
            write,
            now,
            outcome,
            step,
        });
        if outcome != Outcome::Won {
            return outcome.won();
        }
        let field = self.model.design.slots;
        if let SlotWrite::Release { request, .. } = write {
            assert!(
                self.model.mutation.is_some() || field.released(now, request).is_some(),
                "a release is decided at the read that saw R's slot"
            );
        }
        field.write(self.state, write.over(field, now));
        self.state.for_each_worker(|w| w.fresh.queue = false);
        self.worker.fresh.queue = true;
        self.refreshed.queue = true;
        durable_write(self.state);
        true
    }

    /// The CAS of R's row of [`Turn::cas_request`].
    fn cas_request_row(&mut self, to: RequestState) -> bool {
        self.uses(|f| f.request, "request");
        let (r, step) = (self.worker.request, self.worker.pc);
        let now = self.state.request(r);
        let outcome = self.outcome(self.worker.fresh.request);
        self.log.record(|| Record::CasRequest {
            request: r,
            set: to,
            now,
            outcome,
            step,
        });
        if outcome != Outcome::Won {
            return outcome.won();
        }
        self.state.set_request(r, to);
        self.state.for_each_worker(|w| {
            if w.request == r {
                w.fresh.request = false;
            }
        });
        self.refreshed.request = true;
        durable_write(self.state);
        true
    }

    /// The transaction of [`Turn::claim_in_transaction`].
    fn transaction(&mut self, to: Option<RequestState>) -> bool {
        self.uses(|f| f.queue, "queue");
        self.uses(|f| f.request, "request");
        let (field, r, step) = (self.model.design.slots, self.worker.request, self.worker.pc);
        let (queue, row) = (self.slots_now(), self.state.request(r));
        let outcome = self.outcome(self.worker.fresh.queue && self.worker.fresh.request);
        self.log.record(|| Record::Transaction {
            request: r,
            state: to,
            queue,
            row,
            outcome,
            step,
        });
        if outcome != Outcome::Won {
            return outcome.won();
        }
        field.write(self.state, field.claimed(queue, r));
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
        durable_write(self.state);
        true
    }

    /// Another request's state, as a statement that reads its row sees it
    /// now (a condition on other rows inside one statement). Repairs only.
    pub fn state_of(&self, r: Req) -> RequestState {
        self.state.request(r)
    }

    /// Whether the reap removes an owner whose request is in `state` (a
    /// terminal one, unless a mutant says otherwise).
    pub fn reaps(&self, state: RequestState) -> bool {
        self.decide(Decision::Reaps { state })
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
        self.cas_queue(SlotWrite::Set(after));
    }

    /// The reap's statement, as the system logs it: the owners it removes
    /// (none: nothing was terminal), the terminal owners it leaves (a
    /// mutant), and whether the queue row was still as read. Its write is
    /// [`Turn::write_slots`].
    pub fn reaped(&mut self, removed: u32, left: u32, won: bool) {
        self.log.record(|| Record::Reap { removed, left, won });
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
        self.log.record(|| Record::CancelBuild { request: r, was });
        if was != Build::Finished {
            durable_write(self.state);
        }
    }

    /// Submit R's build; idempotent by request ID.
    pub fn submit_build(&mut self) {
        let r = self.worker.request;
        let build = self.state.build(r);
        let outcome = if !self.decide(Decision::Submitted) {
            SubmitOutcome::Skipped
        } else if !self.decide(Decision::SubmitStarts { build }) {
            SubmitOutcome::AlreadySubmitted
        } else if build == Build::Finished {
            SubmitOutcome::StartsAgain
        } else {
            SubmitOutcome::Starts
        };
        self.log.record(|| Record::Submit {
            request: r,
            outcome,
        });
        if outcome.started() {
            self.state.set_build(r, Build::Running);
            durable_write(self.state);
        }
    }

    /// Ack: removes the message, unless the worker no longer holds it.
    pub(super) fn ack(&mut self) {
        let (r, kind) = (self.worker.request, self.worker.message);
        let outcome = if self.worker.pc == Pc::Ack && !self.decide(Decision::AckRemoves) {
            AckOutcome::Skipped
        } else if self.worker.holds_message && self.state.message(r, kind).is_some() {
            self.state.set_message(r, kind, None);
            AckOutcome::Removes
        } else {
            AckOutcome::HandedOutAgain
        };
        self.log.record(|| Record::Ack {
            request: r,
            kind,
            outcome,
        });
    }

    /// Hold: park the message without counting an attempt. A parked message
    /// waits for a durable write; if one already happened since this worker's
    /// read, the message is visible at once (see the README's choices).
    pub(super) fn hold(&mut self) {
        let (r, kind, held) = (
            self.worker.request,
            self.worker.message,
            self.worker.holds_message,
        );
        let outdated = !self.worker.fresh.all() || self.model.design.gate.hold_outdated(self.state);
        let counts = held
            && self.decide(Decision::HoldCountsAttempt {
                dead: kind.is_dead(),
            });
        let outcome = if !held {
            HoldOutcome::HandedOutAgain
        } else if counts {
            HoldOutcome::CountsAttempt
        } else if outdated {
            HoldOutcome::Visible
        } else {
            HoldOutcome::Parked
        };
        self.log.record(|| Record::Hold {
            request: r,
            kind,
            outcome,
        });
        if !held {
            return;
        }
        let status = if outdated {
            Delivery::Visible
        } else {
            Delivery::Parked
        };
        let attempts = self.state.message(r, kind).map_or(0, |m| m.attempts) + u8::from(counts);
        if counts && attempts >= self.model.bounds.max_deliveries {
            dead_letter(self.state, r, kind, attempts, self.log);
        } else {
            self.state.set_message(r, kind, Some((status, attempts)));
        }
    }
}
