//! Coverage marks: every branch a step can take, named, and which of them a
//! design's runs reach. A step's records mark each branch it took (a take's
//! read, what it decided and what its ack did are three), so a mark is what
//! the step did; which marks a design has is the table below, read
//! from its switches; a test explores every design under each option alone
//! with every fault and fails on a mark the table does not list.

pub use super::log::Path;
use super::log::{AckOutcome, Check, DropThen, Log, NakOutcome, Progress, Record};
use super::{Design, Link};
use crate::walk;
use std::collections::BTreeSet;

impl Path {
    /// `read: another's fresh key -> drop`: the step and where it went.
    pub fn name(self) -> &'static str {
        use Path::*;
        match self {
            Fetch => "fetch: answered at once",
            FetchGivesUp => "fetch: gives up before its request expires, the answer on the way",
            SlowAnswer => "fetch: the answer delayed past the margin, on the way",
            FetchEarlier => "fetch: returns the earlier answer, its own request left open",
            AnswerBusy => "answer: an open request answered, its builder busy",
            AnswerIdle => "answer: an open request answered, its builder idle",
            LandHandBack => "land: busy -> hand it back",
            LandBusy => "land: busy -> into the buffer",
            LandIdle => "land: idle -> into the buffer",
            ReadUnchecked => "read: no duplicate check -> run",
            ReadNoKey => "read: no running key -> run",
            ReadDoneKey => "read: a key marked done -> drop",
            ReadFreshKey => "read: another's fresh key -> drop",
            ReadOwnKey => "read: its own key -> run",
            ReadStaleKey => "read: another's stale key -> run",
            StartConflict => "start: revision-checked put fails -> drop",
            DropDeferred => "drop: no ack, left to its ack wait",
            DropAcked => "drop: ack",
            StartOverKey => "start: put over another's key",
            Start => "start: put",
            StartHandsBack => "start: busy -> hand the rest of the buffer back",
            AckRemoves => "ack: removes the message",
            AckRemovesHeld => "ack: removes the message another holds",
            AckAlreadyGone => "ack: already acked",
            AckExhausted => "ack: out of deliveries",
            AckIgnoredHeld => "ack: ignored, another holds it",
            AckIgnoredAvailable => "ack: ignored, it waits to be delivered again",
            NakAgain => "nak: delivered again at once",
            NakLast => "nak: at its last delivery, never again",
            NakNothing => "nak: nothing changes",
            NakFault => "nak: read and nak instead of running",
            HeartbeatRestarts => "heartbeat: restarts the ack wait",
            HeartbeatRestartsHeld => "heartbeat: restarts the ack wait of a message another holds",
            HeartbeatIgnored => "heartbeat: ignored, another holds it",
            HeartbeatAvailable => "heartbeat: nothing changes, the message available",
            HeartbeatAcked => "heartbeat: nothing changes, the message acked",
            HeartbeatExhausted => "heartbeat: nothing changes, the message out of deliveries",
            FinishResult => "finish: the result",
            FinishAgain => "finish: the result again",
            FinishAckLost => "finish: its ack lost",
            FinishKeyDeleted => "finish: the key deleted",
            FinishKeyDone => "finish: the key marked done",
            TickRedelivers => "tick: an ack wait runs out -> delivered again",
            TickLastDelivery => "tick: an ack wait runs out at its last delivery",
            TickBesideHeartbeat => "tick: an ack wait runs out as its heartbeat is due",
            TickKeyExpires => "tick: a running key expires",
            QueueFirst => "queue: one of those that ran out together first",
            CrashBuild => "crash: loses a build",
            CrashBuffer => "crash: loses a buffered ask",
            CrashOnTheWay => "crash: loses an answer on the way",
            CrashDecided => "crash: loses an ask read and not acted on",
            Delay => "delay: a heartbeat late",
            RewindBack => "rewind: a redelivery fails, the cursor wound back to a message left",
            RewindAcked => "rewind: a redelivery fails, the cursor wound back to an acked message",
            AsNew => "fetch: a message handed out again as new, counted 1",
        }
    }
}

impl Record {
    /// The branches the step that left this record took.
    fn mark(&self, reached: &mut BTreeSet<Path>) {
        use Path::*;
        let mut mark = |path| {
            reached.insert(path);
        };
        match *self {
            Record::Fetch { .. } => mark(Fetch),
            Record::FetchGivesUp { slow: true, .. } => mark(SlowAnswer),
            Record::FetchGivesUp { slow: false, .. } => mark(FetchGivesUp),
            Record::FetchEarlier { .. } => mark(FetchEarlier),
            Record::Answer { busy, .. } => mark(if busy.is_some() {
                AnswerBusy
            } else {
                AnswerIdle
            }),
            Record::Land {
                handed_back: true, ..
            } => mark(LandHandBack),
            Record::Land { busy, .. } => mark(if busy.is_some() { LandBusy } else { LandIdle }),
            Record::Read {
                check, duplicate, ..
            } => mark(match check {
                Check::Unchecked => ReadUnchecked,
                Check::NoKey => ReadNoKey,
                Check::Key { key, .. } if key.done => ReadDoneKey,
                Check::Key { .. } if duplicate => ReadFreshKey,
                Check::Key { own: true, .. } => ReadOwnKey,
                Check::Key { .. } => ReadStaleKey,
            }),
            Record::Drop {
                failed_put, then, ..
            } => {
                if failed_put {
                    mark(StartConflict);
                }
                match then {
                    DropThen::Deferred => mark(DropDeferred),
                    DropThen::Acked => mark(DropAcked),
                    DropThen::Nothing => {}
                }
            }
            Record::Start { over, .. } => mark(if over.is_some() { StartOverKey } else { Start }),
            Record::HandBack { .. } => mark(StartHandsBack),
            Record::Ack { outcome, .. } => mark(match outcome {
                AckOutcome::Removes => AckRemoves,
                AckOutcome::RemovesHeld(_) => AckRemovesHeld,
                AckOutcome::AlreadyGone => AckAlreadyGone,
                AckOutcome::Exhausted => AckExhausted,
                AckOutcome::IgnoredHeld(_) => AckIgnoredHeld,
                AckOutcome::IgnoredAvailable => AckIgnoredAvailable,
            }),
            Record::Nak { outcome, .. } => mark(match outcome {
                NakOutcome::Again => NakAgain,
                NakOutcome::Last => NakLast,
                NakOutcome::Nothing => NakNothing,
            }),
            Record::NakFault { .. } => mark(NakFault),
            Record::Heartbeat { progress, .. } => {
                if let Some(progress) = progress {
                    mark(match progress {
                        Progress::Restarts { held: None } => HeartbeatRestarts,
                        Progress::Restarts { held: Some(_) } => HeartbeatRestartsHeld,
                        Progress::Ignored(_) => HeartbeatIgnored,
                        Progress::Available => HeartbeatAvailable,
                        Progress::Acked => HeartbeatAcked,
                        Progress::Exhausted => HeartbeatExhausted,
                    })
                }
            }
            Record::Finish { again, .. } => mark(if again { FinishAgain } else { FinishResult }),
            Record::AckLost { .. } => mark(FinishAckLost),
            Record::KeyDone { .. } => mark(FinishKeyDone),
            Record::KeyDeleted { .. } => mark(FinishKeyDeleted),
            Record::Tick => {}
            Record::AckWaitRunsOut { last, due, .. } => {
                mark(if last {
                    TickLastDelivery
                } else {
                    TickRedelivers
                });
                if !due.is_empty() {
                    mark(TickBesideHeartbeat);
                }
            }
            Record::KeyExpires { .. } => mark(TickKeyExpires),
            Record::QueueFirst { .. } => mark(QueueFirst),
            Record::Crash { lost } => {
                for (lost, path) in [
                    (lost.run.is_some(), CrashBuild),
                    (!lost.buffer.is_empty(), CrashBuffer),
                    (lost.on_the_way.is_some(), CrashOnTheWay),
                    (lost.decided.is_some(), CrashDecided),
                ] {
                    if lost {
                        mark(path);
                    }
                }
            }
            Record::Delay { .. } => mark(Delay),
            Record::Rewind { back_to, .. } => mark(if back_to.is_some() {
                RewindBack
            } else {
                RewindAcked
            }),
            Record::AsNew { .. } => mark(AsNew),
        }
    }
}

/// Every mark the design's steps can make, in the order of `steps.rs` and
/// `time.rs`: what its code allows under any option, fault and bounds.
pub fn paths(d: &Design) -> Vec<Path> {
    use Path::*;
    let check = d.check.reads_key();
    let all = true;
    // A drop acks a done key, and every duplicate unless they are deferred.
    let drop_acks = check && (!d.duplicate.deferred() || d.finish_key.marks_done());
    [
        (Fetch, all),
        // 30 ms waits leave no margin under nats.go's expiry today; with
        // `expiry-less-10ms` they do, and a slow answer is possible.
        (FetchGivesUp, !d.fetch_wait.leaves_margin()),
        (SlowAnswer, all),
        (FetchEarlier, all),
        (AnswerBusy, all),
        (AnswerIdle, all),
        (LandHandBack, d.busy_buffer.hands_back()),
        (LandBusy, !d.busy_buffer.hands_back()),
        (LandIdle, all),
        (ReadUnchecked, !check),
        (ReadNoKey, check),
        (ReadDoneKey, check && d.finish_key.marks_done()),
        (ReadFreshKey, check),
        (ReadOwnKey, check),
        (ReadStaleKey, check),
        (StartConflict, d.start.revision_checked()),
        (DropDeferred, d.duplicate.deferred()),
        (DropAcked, drop_acks),
        // Without the check no step reads a key, and the stored state
        // forgets them all (`reduce.rs`): a put finds none to overwrite.
        (StartOverKey, check),
        (Start, all),
        (StartHandsBack, d.busy_buffer.hands_back()),
        (AckRemoves, all),
        (AckRemovesHeld, all),
        (AckAlreadyGone, all),
        (AckExhausted, all),
        (AckIgnoredHeld, all),
        (AckIgnoredAvailable, all),
        (NakAgain, all),
        (NakLast, all),
        (NakNothing, all),
        (NakFault, all),
        (HeartbeatRestarts, all),
        (HeartbeatRestartsHeld, all),
        (HeartbeatIgnored, all),
        (HeartbeatAvailable, all),
        (HeartbeatAcked, all),
        (HeartbeatExhausted, all),
        (FinishResult, all),
        (FinishAgain, all),
        (FinishAckLost, !d.finish_ack.sync()),
        (FinishKeyDeleted, !d.finish_key.marks_done()),
        (FinishKeyDone, d.finish_key.marks_done()),
        (TickRedelivers, all),
        (TickLastDelivery, all),
        (TickBesideHeartbeat, all),
        // A key's age is kept up to where every clock reads it stale, so it
        // expires there only with `fresh_for` and the skew past its TTL, or
        // marked done; without the check there are no keys (above).
        (TickKeyExpires, check),
        (QueueFirst, all),
        (CrashBuild, all),
        (CrashBuffer, all),
        (CrashOnTheWay, all),
        (CrashDecided, check),
        (Delay, all),
        (RewindBack, all),
        (RewindAcked, all),
        (AsNew, all),
    ]
    .into_iter()
    .filter(|&(_, has)| has)
    .map(|(path, _)| path)
    .collect()
}

/// Adds to `reached` the marks the model's steps make on its bounds, as it
/// explores; `None`: cut by `go_on` (`reached` then holds those made so
/// far).
pub fn reach_within(
    model: &Link,
    go_on: &mut dyn FnMut(usize) -> bool,
    reached: &mut BTreeSet<Path>,
) -> Option<()> {
    walk::each_step_within(model, go_on, &mut |state, action| {
        let mut log = Log::recording();
        let next = model.apply(state, action, &mut log);
        for record in log.records() {
            record.mark(reached);
        }
        next
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{all_designs, Bounds};
    use crate::NamedOptions;

    /// Every mark a design's steps make, on bounds with every fault and
    /// under each option alone, is one its table lists: a branch the table
    /// does not know fails here, naming its mark.
    #[test]
    fn every_mark_a_step_makes_is_in_its_designs_table() {
        let bounds = Bounds {
            slow_answers: 1,
            lost_acks: 1,
            naks: 1,
            rewinds: 1,
            ..Bounds::default()
        };
        let options = [
            "",
            "stale-ack-ignored",
            "atomic-start",
            "single-late-answer",
            "expiry-less-10ms",
            "redelivery-queue",
        ];
        for design in all_designs() {
            let table: BTreeSet<Path> = paths(design).into_iter().collect();
            let mut reached = BTreeSet::new();
            for option in options {
                let mut model = Link::new(design, bounds);
                if !option.is_empty() {
                    model.options.set(option).unwrap();
                }
                reach_within(&model, &mut |_| true, &mut reached).unwrap();
            }
            let unknown: Vec<&str> = reached.difference(&table).map(|p| p.name()).collect();
            assert!(
                unknown.is_empty(),
                "{} makes marks its table does not list: {unknown:?}",
                design.name
            );
            assert!(reached.len() > table.len() / 2, "{}", design.name);
        }
    }

    /// The names are the report's keys: no two marks share one.
    #[test]
    fn each_mark_has_its_own_name() {
        for design in all_designs() {
            let names: BTreeSet<&str> = paths(design).iter().map(|p| p.name()).collect();
            assert_eq!(names.len(), paths(design).len(), "{}", design.name);
        }
    }
}
