//! A worker's turn and its primitives: the reads, the CASes and the
//! transaction, the submit, the cancel, the ack and the hold. Each is one
//! step of the contract; a mutant changes one at a single hook
//! ([`Turn::decide`], answered in `mutation.rs`), so that the handlers and
//! the design are the same code for every mutant.

use super::broker::{dead_letter, durable_write};
use super::log::{Log, Observation, Primitive, Seen, Site, Write};
use super::mutation::{self, Decision, Operator};
use super::{
    request_name, Build, Delivery, Fresh, Pc, Req, RequestState, SlotView, Slots, State, Stovepipe,
    Worker,
};

/// A worker's turn: the world, the worker taken out of it, and what is said.
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
        reading.latest_head = self.decide(Decision::LatestHead {
            request: r,
            arrived,
        });
        self.log.site(self.site(), Primitive::Read, None);
        Ok(reading)
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
        if self.decide(Decision::AckBeforeWrite) && self.worker.holds_message {
            // The ack is a step of its own, before the write: the worker no
            // longer holds its message, and takes this step again to write.
            self.ack();
            self.worker.holds_message = false;
            self.again = true;
            return false;
        }
        let site = self.site();
        let won = match mutation::write_at(self.model.mutation, site, asked) {
            Write::ClaimSlot => {
                let (slots, r) = (self.model.design.slots, self.worker.request);
                self.cas_queue(|now| slots.claimed(now, r))
            }
            Write::ReleaseSlot => {
                let (slots, r) = (self.model.design.slots, self.worker.request);
                let (twice, mutated) = (
                    self.decide(Decision::ReleaseTwice),
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
        self.log.site(site, Primitive::Write(asked), Some(won));
        won
    }

    /// Whether a CAS at this step wins: its row is as read (a mutant may
    /// not care).
    fn wins(&self, fresh: bool) -> bool {
        self.decide(Decision::CasWins { fresh })
    }

    /// A winning write that a mutant does not make.
    fn skipped(&mut self) -> bool {
        if !self.decide(Decision::WriteMade) {
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
        self.cas_queue(|_| after);
    }

    /// The reap's statement, as the system logs it: the owners it removed
    /// (none: nothing was terminal) and whether the queue row was still as
    /// read.
    pub fn observe_reap(&mut self, removed: u32, won: bool) {
        self.log.site(self.site(), Primitive::Other, Some(won));
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
        let build = self.state.build(r);
        let submitted = self.decide(Decision::Submitted);
        let started = submitted && self.decide(Decision::SubmitStarts { build });
        self.log.observe(|_| Observation::Submit {
            request: r,
            started,
        });
        if !submitted {
            self.log
                .say(|_| format!("submit build {}: skipped (a mutant)", request_name(r)));
        } else if started {
            self.state.set_build(r, Build::Running);
            self.log.say(|_| match build {
                Build::Finished => format!(
                    "submit build {}: it starts again (a mutant: not idempotent)",
                    request_name(r)
                ),
                _ => format!("submit build {}: it starts", request_name(r)),
            });
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
    pub(super) fn ack(&mut self) {
        let (r, kind) = (self.worker.request, self.worker.message);
        self.log.observe(|_| Observation::Ack { request: r, kind });
        if self.worker.pc == Pc::Ack {
            self.log.site(self.site(), Primitive::Ack, None);
            if !self.decide(Decision::AckRemoves) {
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
    pub(super) fn hold(&mut self) {
        let (r, kind) = (self.worker.request, self.worker.message);
        self.log.observe(|_| Observation::Hold { request: r, kind });
        let k = self.model.bounds.max_concurrent;
        let outdated = !self.worker.fresh.all() || self.model.design.gate.hold_outdated(self.state);
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
        if self.decide(Decision::HoldCountsAttempt {
            dead: kind.is_dead(),
        }) {
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
