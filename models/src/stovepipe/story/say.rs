//! A step's words: the story tells the records a step left (`log.rs`), with
//! the row versions and read values that its ledger counts and the state
//! does not keep. Every sentence a story says of a step is here.

use super::super::log::{
    step_name, AckOutcome, CrashOutcome, HoldOutcome, Ledger, Outcome, Record, SlotWrite,
    SubmitOutcome,
};
use super::super::{
    request_name, Build, MessageKind, RequestState, Slots, Stovepipe, MAX_REQUESTS,
};

impl Stovepipe {
    /// What a step that left `records` says: its sentences joined, each
    /// told from the ledger as the records before it left it; the ledger
    /// is then as the step leaves it.
    pub(super) fn say(&self, records: &[Record], ledger: &mut Ledger) -> String {
        let mut lines = Vec::new();
        for record in records {
            if let Some(line) = self.say_record(record, ledger) {
                lines.push(line);
            }
            ledger.note(record, self.design.slots);
        }
        lines.join("; ")
    }

    /// The sentence of one record, told from `l`, the ledger before it.
    fn say_record(&self, record: &Record, l: &Ledger) -> Option<String> {
        let field = self.design.slots;
        let max = self.bounds.max_deliveries;
        let skipped = || "the write is skipped (a mutant), as if made".to_string();
        let line = match *record {
            Record::Arrive(r) => format!(
                "{} arrives (accepted, the latest head); publish {}",
                request_name(r),
                MessageKind::Process.render(r)
            ),
            Record::Deliver {
                request,
                kind,
                attempt,
            } => format!(
                "deliver {} to worker {} (attempt {attempt})",
                kind.render(request),
                l.next_worker
            ),
            Record::Read {
                request,
                queue,
                head,
                ..
            } => {
                // After R's row, the other parts go without `read`.
                let read = |words: String| match request {
                    Some(_) => words,
                    None => format!("read {words}"),
                };
                let mut parts = Vec::new();
                if let Some((r, row)) = request {
                    let version = l.versions.requests[r as usize];
                    parts.push(format!("read {} {} v{version}", request_name(r), row.name()));
                }
                if let Some(slots) = queue {
                    parts.push(read(format!("queue {} v{}", slots.render(), l.versions.queue)));
                }
                if let Some(h) = head {
                    parts.push(read(format!("latest head {}", request_name(h))));
                }
                parts.join(", ")
            }
            Record::RereadQueue(slots) => {
                format!("re-read queue {} v{}", slots.render(), l.versions.queue)
            }
            Record::RereadRequest(r, row) => format!(
                "re-read {} {} v{}",
                request_name(r),
                row.name(),
                l.versions.requests[r as usize]
            ),
            Record::CasQueue {
                write,
                now,
                outcome,
                ..
            } => match outcome {
                Outcome::Lost => {
                    let (read, version) = l.seen.queue.expect("a CAS follows a read");
                    format!(
                        "CAS queue {} -> {} lost (queue is at v{}, read v{version})",
                        read.render(),
                        write.over(field, read).value(),
                        l.versions.queue
                    )
                }
                Outcome::Skipped => skipped(),
                Outcome::Won => format!(
                    "CAS queue {} -> {}",
                    now.render(),
                    write.over(field, now).value()
                ),
            },
            Record::CasRequest {
                request: r,
                set,
                now,
                outcome,
                ..
            } => match outcome {
                Outcome::Lost => {
                    let (read, version) = l.seen.request.expect("a CAS follows a read");
                    format!(
                        "CAS {} {} -> {} lost ({} is {} v{}, read v{version})",
                        request_name(r),
                        read.name(),
                        set.name(),
                        request_name(r),
                        now.name(),
                        l.versions.requests[r as usize]
                    )
                }
                Outcome::Skipped => skipped(),
                Outcome::Won => {
                    format!("CAS {} {} -> {}", request_name(r), now.name(), set.name())
                }
            },
            Record::Transaction {
                request: r,
                state,
                queue,
                row,
                outcome,
                ..
            } => {
                let what = |queue: Slots, row: RequestState| {
                    let mut what = format!(
                        "queue {} -> {}",
                        queue.render(),
                        SlotWrite::Claim(r).over(field, queue).value()
                    );
                    if let Some(to) = state {
                        what.push_str(&format!(
                            ", {} {} -> {}",
                            request_name(r),
                            row.name(),
                            to.name()
                        ));
                    }
                    what
                };
                match outcome {
                    Outcome::Lost => {
                        let read = "a transaction follows a read";
                        let (read_queue, queue_version) = l.seen.queue.expect(read);
                        let (read_row, row_version) = l.seen.request.expect(read);
                        format!(
                            "transaction lost ({}): queue is {} v{} (read v{queue_version}), {} is {} v{} (read v{row_version})",
                            what(read_queue, read_row),
                            queue.value(),
                            l.versions.queue,
                            request_name(r),
                            row.name(),
                            l.versions.requests[r as usize]
                        )
                    }
                    Outcome::Skipped => skipped(),
                    Outcome::Won => format!(
                        "transaction on queue and {}: {}",
                        request_name(r),
                        what(queue, row)
                    ),
                }
            }
            Record::Reap { won: false, .. } => {
                "reap: the queue row changed since the read, nothing written".to_string()
            }
            Record::Reap {
                removed: 0, left, ..
            } => if left != 0 {
                "reap: nothing reaped, though an owner's request is terminal (a mutant)"
            } else {
                "reap: no owner's request is terminal"
            }
            .to_string(),
            Record::Reap { removed, .. } => format!("reap {}: terminal", names(removed)),
            Record::Submit { request, outcome } => {
                let r = request_name(request);
                match outcome {
                    SubmitOutcome::Skipped => format!("submit build {r}: skipped (a mutant)"),
                    SubmitOutcome::StartsAgain => format!(
                        "submit build {r}: it starts again (a mutant: not idempotent)"
                    ),
                    SubmitOutcome::Starts => format!("submit build {r}: it starts"),
                    SubmitOutcome::AlreadySubmitted => {
                        format!("submit build {r}: already submitted, nothing starts")
                    }
                }
            }
            Record::CancelBuild { request, was } => {
                let r = request_name(request);
                match was {
                    Build::Running => format!("cancel build {r}: it stops, no signal"),
                    Build::NotSubmitted => format!(
                        "cancel build {r}: not submitted; recorded, so a later submit starts nothing"
                    ),
                    Build::Finished => format!("cancel build {r}: already stopped"),
                }
            }
            Record::Ack {
                request,
                kind,
                outcome,
            } => {
                let message = kind.render(request);
                match outcome {
                    AckOutcome::Skipped => format!("ack {message}: skipped (a mutant)"),
                    AckOutcome::Removes => format!("ack {message}"),
                    AckOutcome::HandedOutAgain => {
                        format!("ack {message}: changes nothing, the message was handed out again")
                    }
                }
            }
            Record::Hold {
                request,
                kind,
                outcome,
            } => {
                let message = kind.render(request);
                let closed = || {
                    let seen = l.seen.queue.expect("a hold follows a read").0;
                    format!(
                        "hold {message}: gate closed ({} >= K {})",
                        seen.gate_words(),
                        self.bounds.max_concurrent
                    )
                };
                match outcome {
                    HoldOutcome::HandedOutAgain => format!(
                        "hold {message}: changes nothing, the message was handed out again"
                    ),
                    HoldOutcome::CountsAttempt => "the hold counts an attempt (a mutant)".into(),
                    HoldOutcome::Visible => format!(
                        "{}, but a write since the read makes it visible at once",
                        closed()
                    ),
                    HoldOutcome::Parked => format!("{}, parked until a durable write", closed()),
                }
            }
            Record::FinishBuild(r) => format!(
                "build {} finishes; publish {}",
                request_name(r),
                MessageKind::Signal.render(r)
            ),
            Record::Visible {
                request,
                kind,
                attempts,
            } => {
                if kind.is_dead() {
                    format!("{} is visible again", kind.render(request))
                } else {
                    format!(
                        "{} is visible again ({attempts} of {max} attempts used)",
                        kind.render(request)
                    )
                }
            }
            Record::DeadLetter {
                request,
                kind,
                attempts,
            } => format!(
                "{} ran out of deliveries ({attempts} of {max}); publish {}",
                kind.render(request),
                kind.dead().render(request)
            ),
            Record::Crash {
                request,
                kind,
                outcome,
            } => match outcome {
                CrashOutcome::Held => "crash".to_string(),
                CrashOutcome::HandedOutAgain => format!(
                    "crash; {} was already handed out again, so nothing is redelivered",
                    kind.render(request)
                ),
                CrashOutcome::Gone => format!(
                    "crash; {} was already handed out again and is gone",
                    kind.render(request)
                ),
            },
            Record::Stall => "stall past the visibility timeout".to_string(),
            Record::Refused { step, .. } => format!(
                "the database refuses the {} step (a serialization failure, a deadlock): nothing written; read again",
                step_name(step)
            ),
            Record::Next { .. } => return None,
        };
        Some(line)
    }
}

/// `R1, R3`: the requests of a set.
fn names(set: u32) -> String {
    let names: Vec<String> = (0..MAX_REQUESTS)
        .filter(|o| set & (1 << o) != 0)
        .map(request_name)
        .collect();
    names.join(", ")
}
