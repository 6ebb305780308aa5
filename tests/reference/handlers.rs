//! The handlers and the world around them, in the contract's order: arrivals,
//! deliveries, `process`, `signal`, `dlq`, builds, and the two faults. Every
//! read and every write is one step; the design decides only what the
//! contract's admit table and release rules say it decides.

use super::{
    request_name, Build, Delivery, Handler, Log, Message, MessageKind, Pc, Req, RequestRow,
    RequestState, Slots, Snapshot, State, Stovepipe, Worker,
};

/// A worker's turn: the world, the worker taken out of it, and what is said.
pub struct Turn<'a> {
    pub(crate) model: &'a Stovepipe,
    pub(crate) state: &'a mut State,
    pub(crate) worker: Worker,
    pub(crate) log: &'a mut Log,
}

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// The slot field was written.
    Wrote,
    /// The CAS lost: the queue row changed since the read.
    Lost,
}

impl Turn<'_> {
    /// What the worker's last read saw. Every step after the first has read.
    pub fn seen(&self) -> Snapshot {
        self.worker
            .read
            .expect("a worker step after the read has a snapshot")
    }

    pub fn request(&self) -> Req {
        self.worker.request
    }

    /// The read, at `pc` (`Read`, or with `split-read` also `ReadQueue` and
    /// `ReadHead`). Returns the next read step while the snapshot is not
    /// complete, `None` once the worker has read everything.
    pub fn read(&mut self, pc: Pc) -> Option<Pc> {
        let r = self.worker.request;
        match pc {
            Pc::Read => {
                // One consistent snapshot; with `split-read` the queue row and
                // the head are read again, each in a step of its own.
                let seen = Snapshot {
                    request: self.state.requests[r as usize],
                    queue: self.state.queue,
                    arrived: self.state.arrived(),
                };
                self.worker.read = Some(seen);
                // Said only when a story is told: checking logs nothing.
                let row = move || {
                    format!(
                        "read {} {} v{}",
                        request_name(r),
                        seen.request.state.name(),
                        seen.request.version
                    )
                };
                if self.model.options.split_read {
                    self.log.say(row);
                    return Some(Pc::ReadQueue);
                }
                self.log.say(|| {
                    format!(
                        "{}, queue {} v{}, latest head {}",
                        row(),
                        seen.queue.slots.render(),
                        seen.queue.version,
                        request_name(seen.arrived - 1)
                    )
                });
                None
            }
            Pc::ReadQueue => {
                let queue = self.state.queue;
                if let Some(read) = &mut self.worker.read {
                    read.queue = queue;
                }
                self.log
                    .say(|| format!("read queue {} v{}", queue.slots.render(), queue.version));
                Some(Pc::ReadHead)
            }
            _ => {
                let arrived = self.state.arrived();
                if let Some(read) = &mut self.worker.read {
                    read.arrived = arrived;
                }
                self.log
                    .say(|| format!("read latest head {}", request_name(arrived - 1)));
                None
            }
        }
    }

    /// Read the queue row alone (a retry after a lost CAS on it).
    pub fn reread_queue(&mut self) {
        let queue = self.state.queue;
        if let Some(read) = &mut self.worker.read {
            read.queue = queue;
        }
        self.log
            .say(|| format!("re-read queue {} v{}", queue.slots.render(), queue.version));
    }

    /// Re-read R's row alone.
    pub fn reread_request(&mut self) {
        let row = self.state.requests[self.worker.request as usize];
        if let Some(read) = &mut self.worker.read {
            read.request = row;
        }
        let r = self.worker.request;
        self.log.say(|| {
            format!(
                "re-read {} {} v{}",
                request_name(r),
                row.state.name(),
                row.version
            )
        });
    }

    /// CAS the queue's slot field: succeeds only if the queue row is still at
    /// the version last read, and bumps it.
    pub fn cas_queue(&mut self, slots: Slots) -> bool {
        let read = self.seen().queue;
        let current = self.state.queue;
        if current.version != read.version {
            self.log.say(|| {
                format!(
                    "CAS queue {} -> {} lost (queue is at v{}, read v{})",
                    read.slots.render(),
                    slots.render(),
                    current.version,
                    read.version
                )
            });
            return false;
        }
        self.state.queue.slots = slots;
        self.state.queue.version += 1;
        let written = self.state.queue;
        if let Some(snapshot) = &mut self.worker.read {
            snapshot.queue = written;
        }
        self.log
            .say(|| format!("CAS queue {} -> {}", read.slots.render(), slots.value()));
        durable_write(self.state);
        true
    }

    /// CAS R's row to `to`: succeeds only if R is still at the version read.
    pub fn cas_request(&mut self, to: RequestState) -> bool {
        let r = self.worker.request;
        let read = self.seen().request;
        let current = self.state.requests[r as usize];
        if current.version != read.version {
            self.log.say(|| {
                format!(
                    "CAS {} {} -> {} lost ({} is {} v{}, read v{})",
                    request_name(r),
                    read.state.name(),
                    to.name(),
                    request_name(r),
                    current.state.name(),
                    current.version,
                    read.version
                )
            });
            return false;
        }
        let written = RequestRow {
            state: to,
            version: current.version + 1,
        };
        self.state.requests[r as usize] = written;
        if let Some(snapshot) = &mut self.worker.read {
            snapshot.request = written;
        }
        self.log.say(|| {
            format!(
                "CAS {} {} -> {}",
                request_name(r),
                read.state.name(),
                to.name()
            )
        });
        durable_write(self.state);
        true
    }

    /// Whether the queue row as last read holds a slot of R's to release: a
    /// counter always does (its release is a clamped write), an owner set
    /// when R is in it. Decided where the row is read, so that no step
    /// writes nothing (every step of the contract is a read or a write).
    pub fn has_slot_to_release(&self) -> bool {
        let slots = self.seen().queue.slots;
        self.model
            .design
            .slots()
            .release(slots, self.worker.request)
            .is_some()
    }

    /// Release R's slot, as the design releases: a CAS on the queue row. Only
    /// taken where [`Turn::has_slot_to_release`] said there is one.
    pub fn release(&mut self) -> Released {
        let r = self.worker.request;
        let Some(slots) = self
            .model
            .design
            .slots()
            .release(self.seen().queue.slots, r)
        else {
            unreachable!("a release is decided at the read that saw R's slot")
        };
        if self.cas_queue(slots) {
            Released::Wrote
        } else {
            Released::Lost
        }
    }

    /// Submit R's build; idempotent by request ID.
    pub fn submit_build(&mut self) {
        let r = self.worker.request;
        let build = &mut self.state.builds[r as usize];
        if *build == Build::NotSubmitted {
            *build = Build::Running;
            self.log
                .say(|| format!("submit build {}: it starts", request_name(r)));
            durable_write(self.state);
        } else {
            self.log.say(|| {
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
        if self.worker.holds_message {
            self.state
                .messages
                .retain(|m| !(m.request == r && m.kind == kind));
            self.log.say(|| format!("ack {}", kind.render(r)));
        } else {
            self.log.say(|| {
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
        let seen = self.seen();
        let k = self.model.bounds.max_concurrent;
        let outdated = seen.request != self.state.requests[r as usize]
            || seen.queue != self.state.queue
            || seen.arrived != self.state.arrived();
        if !self.worker.holds_message {
            self.log.say(|| {
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
        if let Some(m) = message_mut(self.state, r, kind) {
            m.status = status;
        }
        self.log.say(|| {
            let why = format!(
                "hold {}: gate closed ({} >= K {})",
                kind.render(r),
                seen.queue.slots.render(),
                k
            );
            if outdated {
                format!("{why}, but a write since the read makes it visible at once")
            } else {
                format!("{why}, parked until a durable write")
            }
        });
    }
}

/// A durable write (a row inserted or changed, a build submitted or finished)
/// wakes every parked message.
fn durable_write(state: &mut State) {
    for m in &mut state.messages {
        if m.status == Delivery::Parked {
            m.status = Delivery::Visible;
        }
    }
}

fn message_mut(state: &mut State, r: Req, kind: MessageKind) -> Option<&mut Message> {
    state
        .messages
        .iter_mut()
        .find(|m| m.request == r && m.kind == kind)
}

fn publish(state: &mut State, r: Req, kind: MessageKind) {
    state.messages.push(Message {
        request: r,
        kind,
        status: Delivery::Visible,
        attempts: 0,
    });
    state.messages.sort();
}

/// The next request arrives: its row is inserted and `process` published.
pub(super) fn arrive(state: &mut State, log: &mut Log) {
    let r = state.arrived();
    state.requests.push(RequestRow {
        state: RequestState::Accepted,
        version: 1,
    });
    state.builds.push(Build::NotSubmitted);
    publish(state, r, MessageKind::Process);
    durable_write(state);
    log.say(|| {
        format!(
            "{} arrives (accepted, the latest head); publish {}",
            request_name(r),
            MessageKind::Process.render(r)
        )
    });
}

/// The broker hands a visible message to a new worker.
pub(super) fn deliver(state: &mut State, r: Req, kind: MessageKind, log: &mut Log) {
    let Some(m) = message_mut(state, r, kind) else {
        unreachable!("deliver is enabled only for a visible message")
    };
    m.status = Delivery::InFlight;
    let attempt = m.attempts + 1;
    state.workers.push(Worker {
        message: kind,
        request: r,
        pc: Pc::Read,
        read: None,
        holds_message: true,
    });
    log.say(|| format!("deliver {} (attempt {attempt})", kind.render(r)));
}

/// A running build finishes and publishes `signal`.
pub(super) fn finish_build(state: &mut State, r: Req, log: &mut Log) {
    state.builds[r as usize] = Build::Finished;
    publish(state, r, MessageKind::Signal);
    durable_write(state);
    log.say(|| {
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
    let Some(m) = message_mut(state, r, kind) else {
        return;
    };
    m.status = Delivery::Visible;
    if kind.is_dead() {
        log.say(|| format!("{} is visible again", kind.render(r)));
        return;
    }
    m.attempts += 1;
    let attempts = m.attempts;
    if attempts < max {
        log.say(|| {
            format!(
                "{} is visible again ({attempts} of {max} attempts used)",
                kind.render(r)
            )
        });
        return;
    }
    state
        .messages
        .retain(|m| !(m.request == r && m.kind == kind));
    let dead = match kind {
        MessageKind::Process => MessageKind::DeadProcess,
        _ => MessageKind::DeadSignal,
    };
    publish(state, r, dead);
    log.say(|| {
        format!(
            "{} ran out of deliveries ({attempts} of {max}); publish {}",
            kind.render(r),
            dead.render(r)
        )
    });
}

/// Fault: the worker dies between two steps.
pub(super) fn crash(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.workers.remove(i);
    state.crashes_left -= 1;
    log.say(|| "crash".to_string());
    if worker.holds_message {
        expire(model, state, worker.request, worker.message, log);
    }
}

/// Fault: the worker's message expires while it still runs; it goes on later
/// with what it read, and its ack will change nothing.
pub(super) fn stall(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = &mut state.workers[i];
    worker.holds_message = false;
    let (r, kind) = (worker.request, worker.message);
    state.stalls_left -= 1;
    log.say(|| "stall past the visibility timeout".to_string());
    expire(model, state, r, kind, log);
}

/// The worker at index `i` takes its next step.
pub(super) fn step(model: &Stovepipe, state: &mut State, i: usize, log: &mut Log) {
    let worker = state.workers.remove(i);
    let pc = worker.pc;
    let handler = worker.handler();
    let mut turn = Turn {
        model,
        state,
        worker,
        log,
    };
    let next = match pc {
        Pc::Ack => {
            turn.ack();
            None
        }
        Pc::Hold => {
            turn.hold();
            None
        }
        _ => Some(match handler {
            Handler::Process => process(&mut turn, pc),
            Handler::Signal => signal(&mut turn, pc),
            Handler::Dlq => dlq(&mut turn, pc),
        }),
    };
    if let Some(pc) = next {
        let mut worker = turn.worker;
        worker.pc = pc;
        turn.state.workers.push(worker);
    }
}

/// `process(R)`: read, then by what was read: ack a terminal request, submit a
/// duplicate admission, supersede a head that is no longer the latest, or
/// admit the latest head by the design's table.
fn process(turn: &mut Turn, pc: Pc) -> Pc {
    let model = turn.model;
    match pc {
        Pc::Read | Pc::ReadQueue | Pc::ReadHead => {
            if let Some(more) = turn.read(pc) {
                return more;
            }
            let seen = turn.seen();
            let r = turn.request();
            match seen.request.state {
                state if state.is_terminal() => Pc::Ack,
                RequestState::Processing => Pc::SubmitBuild,
                _ if r + 1 != seen.arrived => {
                    if model
                        .design
                        .slots()
                        .releases_before_supersede(seen.queue.slots, r)
                    {
                        Pc::ReleaseBeforeSupersede
                    } else {
                        Pc::Supersede
                    }
                }
                _ => model.design.gate(&seen, r, model.bounds.max_concurrent),
            }
        }
        Pc::ReleaseBeforeSupersede => match turn.release() {
            Released::Lost => Pc::Read,
            Released::Wrote => Pc::Supersede,
        },
        Pc::Supersede => {
            if turn.cas_request(RequestState::Superseded) {
                Pc::Ack
            } else {
                Pc::Read
            }
        }
        Pc::SubmitBuild => {
            turn.submit_build();
            Pc::Ack
        }
        admit_step => model.design.admit(turn, admit_step),
    }
}

/// `signal(R)`, the buildsignal handler: release, then write `succeeded`.
fn signal(turn: &mut Turn, pc: Pc) -> Pc {
    match pc {
        Pc::Read | Pc::ReadQueue | Pc::ReadHead => {
            if let Some(more) = turn.read(pc) {
                return more;
            }
            if turn.seen().request.state.is_terminal() {
                Pc::Ack
            } else if turn.has_slot_to_release() {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => match turn.release() {
            Released::Lost => Pc::Read,
            Released::Wrote => Pc::WriteOutcome,
        },
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
/// this state, then write `dead_lettered`. A running build is not cancelled.
fn dlq(turn: &mut Turn, pc: Pc) -> Pc {
    match pc {
        Pc::Read | Pc::ReadQueue | Pc::ReadHead => {
            if let Some(more) = turn.read(pc) {
                return more;
            }
            let state = turn.seen().request.state;
            if state.is_terminal() {
                Pc::Ack
            } else if turn.model.design.slots().dlq_releases(state) && turn.has_slot_to_release() {
                Pc::Release
            } else {
                Pc::WriteOutcome
            }
        }
        Pc::Release => match turn.release() {
            Released::Lost => Pc::Read,
            Released::Wrote => Pc::WriteOutcome,
        },
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
