//! Telling a path of the stovepipe model as the source tells SP-OCT-003:
//! numbered steps, each naming its actor and what it did, with the rows that
//! changed. What each step says is in `say.rs`, told from the records it
//! left (`log.rs`). The checked state keeps no versions and no read values;
//! the teller replays the path with a [`Ledger`] that counts them.

mod say;

use super::log::{Ledger, Log, Seen, Versions};
use super::{
    request_name, Action, Build, Delivery, MessageKind, Pc, Req, RequestState, Slots, State,
    Stovepipe, Worker, ALL_SUCCEED, BUILDS_WITHIN_LIMIT, COUNT_NOT_HIGH, COUNT_NOT_LOW,
    DEAD_LETTER_NEEDS_FAULTS, HELD_RELEASED, MAX_REQUESTS, NO_MESSAGE_LEFT_IN_FLIGHT, NO_WEDGE,
    OUTCOME_FINAL, REQUESTS_FINISH, SLOTS_SETTLE, SOME_DEAD_LETTERED, SOME_HELD, SOME_SUPERSEDED,
};
use crate::{diff_rows, Narrated, Progress, ScriptError, StoryStep, Value};

/// A worker as the story names it: numbered in the order of deliveries, with
/// what it last read.
#[derive(Clone)]
struct Label {
    number: usize,
    delivery: u8,
    seen: Seen,
}

impl Label {
    fn name(&self, worker: &Worker) -> String {
        format!(
            "worker {} ({} {}, delivery {})",
            self.number,
            worker.handler().name(),
            request_name(worker.request),
            self.delivery
        )
    }
}

/// Follows a path: the workers (the state keeps them sorted, so each is
/// known by its contents from one step to the next), the row versions, and
/// where each request's slot was last released.
#[derive(Clone)]
struct Tracker {
    labels: Vec<Label>,
    delivered: usize,
    versions: Versions,
    /// The step at which a release by R's own worker last won, since R's
    /// own claim: a second one gives back a slot that is not R's.
    released_at: [Option<usize>; MAX_REQUESTS as usize],
    steps: usize,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker {
            labels: Vec::new(),
            delivered: 0,
            versions: Versions::default(),
            released_at: [None; MAX_REQUESTS as usize],
            steps: 0,
        }
    }
}

/// The step names a scripted story uses for a worker's actions.
pub(crate) fn acting_index(action: Action) -> Option<usize> {
    match action {
        Action::Step(i) | Action::Crash(i) | Action::Stall(i) | Action::Abort(i) => Some(i),
        _ => None,
    }
}

impl Tracker {
    fn actor(&self, state: &State, action: Action) -> String {
        match action {
            Action::Arrive => "client".to_string(),
            Action::Deliver { .. } => "broker".to_string(),
            Action::FinishBuild(_) => "build system".to_string(),
            Action::Step(i) | Action::Abort(i) => self.labels[i].name(&state.worker(i)),
            Action::Crash(i) | Action::Stall(i) => {
                format!("fault on {}", self.labels[i].name(&state.worker(i)))
            }
        }
    }

    /// The words that name `action` in a scripted story.
    fn words(&self, state: &State, action: Action) -> String {
        match action {
            Action::Arrive => format!("arrive {}", request_name(state.arrived())),
            Action::Deliver { request, kind } => {
                format!("deliver {} {}", kind_word(kind), request_name(request))
            }
            Action::FinishBuild(r) => format!("finish build {}", request_name(r)),
            Action::Step(i) => format!("step worker {}", self.labels[i].number),
            Action::Crash(i) => format!("crash worker {}", self.labels[i].number),
            Action::Stall(i) => format!("stall worker {}", self.labels[i].number),
            Action::Abort(i) => format!("abort worker {}", self.labels[i].number),
        }
    }

    /// The index of worker `number`, or of the first worker equal to it
    /// (equal workers are one and the same step).
    fn index_of(&self, state: &State, number: usize) -> Option<usize> {
        let at = self.labels.iter().position(|l| l.number == number)?;
        let worker = state.worker(at);
        (0..state.workers_len()).find(|&i| state.worker(i) == worker)
    }

    /// The ledger the acting worker sees.
    fn ledger(&self, action: Action) -> Ledger {
        Ledger {
            versions: self.versions,
            seen: acting_index(action).map_or(Seen::default(), |i| self.labels[i].seen),
            next_worker: self.delivered + 1,
        }
    }

    /// Applies `action` and tells it: the step, with the ledger kept up to
    /// date and every worker's label carried over.
    fn take(&mut self, model: &Stovepipe, state: &State, action: Action) -> (State, StoryStep) {
        let mut log = Log::recording();
        let next = model.apply(state, action, &mut log);
        let mut ledger = self.ledger(action);
        let mut text = model.say(&log.records(), &mut ledger);
        let actor = self.actor(state, action);
        let before_rows = rows(model, state, Some(&self.versions));
        let after_rows = rows(model, &next, Some(&ledger.versions));
        if let Some(note) = self.second_release(state, action, &ledger) {
            text.push_str(&note);
        }
        self.advance(model, state, action, &next, &ledger);
        self.steps += 1;
        let step = StoryStep {
            actor,
            action: text,
            changes: diff_rows(&before_rows, &after_rows),
        };
        (next, step)
    }

    /// A release by R's own worker that wins while R's slot was already
    /// released since R's claim gives back another request's slot: said so.
    fn second_release(&mut self, state: &State, action: Action, after: &Ledger) -> Option<String> {
        let i = match action {
            Action::Step(i) => i,
            _ => return None,
        };
        let worker = state.worker(i);
        let r = worker.request as usize;
        if after.versions.queue == self.versions.queue {
            return None;
        }
        let step = self.steps + 1;
        match worker.pc {
            Pc::Claim | Pc::CountUp => self.released_at[r] = None,
            Pc::Release | Pc::Unwind | Pc::ReleaseBeforeSupersede => {
                if let Some(first) = self.released_at[r].replace(step) {
                    return Some(format!(
                        " (the second release for {} since its claim: the first was step {first}, so this one gives back another request's slot)",
                        request_name(worker.request)
                    ));
                }
            }
            _ => {}
        }
        None
    }

    /// The labels after `action` took `before` to `after` (see
    /// [`carry_labels`]).
    fn advance(
        &mut self,
        model: &Stovepipe,
        before: &State,
        action: Action,
        after: &State,
        ledger: &Ledger,
    ) {
        let moved = match action {
            Action::Deliver { request, kind } => {
                self.delivered += 1;
                let attempts = before.message(request, kind).map_or(0, |m| m.attempts);
                Some(Label {
                    number: self.delivered,
                    delivery: attempts + 1,
                    seen: Seen::default(),
                })
            }
            _ => acting_index(action).map(|i| Label {
                seen: ledger.seen,
                ..self.labels[i].clone()
            }),
        };
        self.labels = carry_labels(
            model,
            before,
            action,
            after,
            &self.versions,
            ledger,
            &self.labels,
            moved,
        );
        self.versions = ledger.versions;
    }
}

/// The labels of the workers after `action` took `before` (whose workers
/// carry `labels`, with the rows at `versions`) to `after` (the rows at
/// `ledger`'s): a worker the step did not take keeps its label (its
/// contents change only by what the step wrote: a row it read is no longer
/// current); the one the step took or created gets `moved`. Shared by the
/// story teller and the validator, which label workers differently.
#[allow(clippy::too_many_arguments)]
pub(crate) fn carry_labels<L: Clone>(
    model: &Stovepipe,
    before: &State,
    action: Action,
    after: &State,
    versions: &Versions,
    ledger: &Ledger,
    labels: &[L],
    mut moved: Option<L>,
) -> Vec<L> {
    let acted = acting_index(action);
    let request_written =
        |r: Req| ledger.versions.requests[r as usize] != versions.requests[r as usize];
    let queue_written = ledger.versions.queue != versions.queue;
    let arrival = action == Action::Arrive;
    let mut unused: Vec<(usize, Worker)> = (0..before.workers_len())
        .filter(|&i| Some(i) != acted)
        .map(|i| {
            let mut w = before.worker(i);
            w.fresh.request &= !request_written(w.request);
            w.fresh.queue &= !queue_written;
            w.fresh.head &= !arrival;
            w.fresh = model.remembered(&w);
            (i, w)
        })
        .collect();
    after
        .workers()
        .map(|worker| {
            if let Some(at) = unused.iter().position(|(_, w)| *w == worker) {
                let (i, _) = unused.remove(at);
                labels[i].clone()
            } else {
                moved.take().expect("at most one worker changes in a step")
            }
        })
        .collect()
}

fn kind_word(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::Process => "process",
        MessageKind::Signal => "signal",
        MessageKind::DeadProcess => "dead-process",
        MessageKind::DeadSignal => "dead-signal",
    }
}

/// Parses `R3` into request 2.
fn parse_request(word: &str) -> Option<Req> {
    let n: u8 = word.strip_prefix('R')?.parse().ok()?;
    n.checked_sub(1)
}

/// The action named by a scripted step, in `state`; the error says why not.
fn parse_words(tracker: &Tracker, state: &State, text: &str) -> Result<Action, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let request =
        |w: &str| parse_request(w).ok_or_else(|| format!("`{w}` is not a request (R1, R2, ...)"));
    let worker = |w: &str| -> Result<usize, String> {
        let number: usize = w
            .parse()
            .map_err(|_| format!("`{w}` is not a worker number"))?;
        tracker
            .index_of(state, number)
            .ok_or_else(|| format!("worker {number} is not running"))
    };
    match words.as_slice() {
        ["arrive", r] => {
            let r = request(r)?;
            if r != state.arrived() {
                return Err(format!(
                    "requests arrive in ID order: the next to arrive is {}",
                    request_name(state.arrived())
                ));
            }
            Ok(Action::Arrive)
        }
        ["deliver", kind, r] => {
            let kind = match *kind {
                "process" => MessageKind::Process,
                "signal" => MessageKind::Signal,
                "dead-process" | "dead" => MessageKind::DeadProcess,
                "dead-signal" => MessageKind::DeadSignal,
                other => return Err(format!("`{other}` is not a message kind (process, signal, dead-process, dead-signal)")),
            };
            Ok(Action::Deliver {
                request: request(r)?,
                kind,
            })
        }
        ["finish", "build", r] => Ok(Action::FinishBuild(request(r)?)),
        ["step", "worker", n] => Ok(Action::Step(worker(n)?)),
        ["crash", "worker", n] => Ok(Action::Crash(worker(n)?)),
        ["stall", "worker", n] => Ok(Action::Stall(worker(n)?)),
        ["abort", "worker", n] => Ok(Action::Abort(worker(n)?)),
        _ => Err(format!(
            "`{text}` is not a step (arrive R1, deliver process R1, step worker 1, crash worker 1, stall worker 1, finish build R1)"
        )),
    }
}

/// The state as named rows, in a fixed order; with versions when a story
/// counts them.
fn rows(model: &Stovepipe, s: &State, versions: Option<&Versions>) -> Vec<(String, String)> {
    let version = |v: u16| versions.map_or(String::new(), |_| format!(" (v{v})"));
    let mut rows = vec![(
        "queue".to_string(),
        format!(
            "{}{}",
            model.slots(s).render(),
            version(versions.map_or(0, |v| v.queue))
        ),
    )];
    for (r, state) in s.requests() {
        let v = versions.map_or(0, |v| v.requests[r as usize]);
        rows.push((request_name(r), format!("{}{}", state.name(), version(v))));
    }
    for (r, _) in s.requests() {
        let build = match s.build(r) {
            Build::NotSubmitted => continue,
            Build::Running => "running",
            Build::Finished => "finished",
        };
        rows.push((format!("build {}", request_name(r)), build.into()));
    }
    for m in s.messages() {
        let status = match m.status {
            Delivery::Visible => "visible",
            Delivery::InFlight => "in flight",
            Delivery::Parked => "parked",
        };
        let attempts = if m.kind.is_dead() {
            String::new()
        } else {
            format!(", {}/{} attempts", m.attempts, model.bounds.max_deliveries)
        };
        rows.push((m.kind.render(m.request), format!("{status}{attempts}")));
    }
    rows
}

impl Narrated for Stovepipe {
    fn progress(&self) -> Vec<Progress<Self>> {
        vec![
            Progress {
                name: REQUESTS_FINISH,
                pending: |m: &Self, s: &State| m.unfinished(s),
            },
            Progress {
                name: HELD_RELEASED,
                pending: |m: &Self, s: &State| m.held(s),
            },
            Progress {
                name: SLOTS_SETTLE,
                pending: |m: &Self, s: &State| u64::from(!m.slots_match(s)),
            },
        ]
    }

    /// Weak fairness per actor (arrivals, each message's delivery, each
    /// build, each worker); crashes and stalls are faults, bounded and never
    /// owed.
    fn fairness(&self, s: &State, action: &Action) -> Option<u64> {
        (!action.is_fault()).then(|| self.actor_of(s, action))
    }

    /// The split reads' reduction offers a reader's next part alone
    /// ([`Stovepipe::mid_split_read`]), or a lone reader's first part and
    /// its faults ([`Stovepipe::first_part_alone`]); every other step
    /// stays enabled.
    fn enabled_actions(&self, s: &State, actions: &mut Vec<Action>) {
        self.every_action(s, actions)
    }

    fn rows(&self, s: &State) -> Vec<(String, String)> {
        rows(self, s, None)
    }

    /// Messages live in the broker, builds in the build system; the queue
    /// row and each request row are lanes of their own.
    fn lane(&self, row: &str) -> String {
        if row.starts_with("build ") {
            "build system".into()
        } else if row.contains('(') {
            "broker".into()
        } else {
            row.into()
        }
    }

    fn values(&self, s: &State) -> Vec<(String, Value)> {
        let int = |n: u64| Value::Int(n as i64);
        let text = |t: &str| Value::Str(t.to_string());
        let slots = match self.slots(s) {
            Slots::Count(n) => ("in_flight_count", int(n as u64)),
            Slots::Owners(set) => (
                "in_flight_request_ids",
                Value::Set(
                    (0..MAX_REQUESTS)
                        .filter(|r| set & (1 << r) != 0)
                        .map(|r| Value::Str(request_name(r)))
                        .collect(),
                ),
            ),
        };
        let queue = Value::Record(vec![(slots.0.into(), slots.1)]);
        let requests = Value::Map(
            s.requests()
                .map(|(r, state)| {
                    let build = match s.build(r) {
                        Build::NotSubmitted => "none",
                        Build::Running => "running",
                        Build::Finished => "finished",
                    };
                    (
                        Value::Str(request_name(r)),
                        Value::Record(vec![
                            ("state".into(), text(state.name())),
                            ("build".into(), text(build)),
                        ]),
                    )
                })
                .collect(),
        );
        let messages = Value::Map(
            s.messages()
                .map(|m| {
                    let status = match m.status {
                        Delivery::Visible => "visible",
                        Delivery::InFlight => "in_flight",
                        Delivery::Parked => "parked",
                    };
                    (
                        Value::Str(m.kind.render(m.request)),
                        Value::Record(vec![
                            ("status".into(), text(status)),
                            ("attempts".into(), int(m.attempts as u64)),
                        ]),
                    )
                })
                .collect(),
        );
        let workers = Value::List(
            s.workers()
                .map(|w| {
                    Value::Record(vec![
                        ("handler".into(), text(w.handler().name())),
                        ("request".into(), Value::Str(request_name(w.request))),
                        ("pc".into(), Value::Str(w.pc.name().into())),
                        ("holds_message".into(), Value::Bool(w.holds_message)),
                        ("request_current".into(), Value::Bool(w.fresh.request)),
                        ("queue_current".into(), Value::Bool(w.fresh.queue)),
                    ])
                })
                .collect(),
        );
        vec![
            ("queue".into(), queue),
            ("requests".into(), requests),
            ("messages".into(), messages),
            ("workers".into(), workers),
            ("crashes_left".into(), int(s.crashes_left() as u64)),
            ("stalls_left".into(), int(s.stalls_left() as u64)),
        ]
    }

    fn tell(&self, init: &State, actions: &[Action]) -> Vec<StoryStep> {
        let mut state = *init;
        let mut tracker = Tracker::default();
        let mut steps = Vec::new();
        for &action in actions {
            let (next, step) = tracker.take(self, &state, action);
            steps.push(step);
            state = next;
        }
        steps
    }

    fn words(&self, init: &State, actions: &[Action]) -> Vec<String> {
        let mut state = *init;
        let mut tracker = Tracker::default();
        let mut words = Vec::new();
        for &action in actions {
            words.push(tracker.words(&state, action));
            state = tracker.take(self, &state, action).0;
        }
        words
    }

    fn parse(&self, init: &State, script: &[String]) -> Result<Vec<Action>, ScriptError> {
        let mut state = *init;
        let mut tracker = Tracker::default();
        let mut actions = Vec::new();
        for (index, text) in script.iter().enumerate() {
            let fail = |message: String| ScriptError { index, message };
            let action = parse_words(&tracker, &state, text).map_err(fail)?;
            // A script may take any step enabled, not only those the
            // checker's reduction of split reads offers.
            let mut enabled = Vec::new();
            self.every_action(&state, &mut enabled);
            if !enabled.contains(&action) {
                return Err(fail(format!("`{text}` is not enabled here")));
            }
            state = tracker.take(self, &state, action).0;
            actions.push(action);
        }
        Ok(actions)
    }

    fn explain(&self, property: &str, s: &State) -> String {
        let k = self.bounds.max_concurrent;
        let processing: Vec<String> = s.processing().map(request_name).collect();
        let slots = self.slots(s).render();
        let requests = |n: usize| if n == 1 { "request is" } else { "requests are" };
        match property {
            NO_WEDGE => {
                let stuck: Vec<String> = s
                    .requests()
                    .filter(|(_, state)| !state.is_terminal())
                    .map(|(r, state)| {
                        let held: Vec<String> = s
                            .messages()
                            .filter(|m| m.request == r && m.status == Delivery::Parked)
                            .map(|m| format!("{} parked", m.kind.render(r)))
                            .collect();
                        if held.is_empty() {
                            format!("{} is {} with no message left", request_name(r), state.name())
                        } else {
                            format!("{} is {}, {}", request_name(r), state.name(), held.join(", "))
                        }
                    })
                    .collect();
                format!(
                    "no-wedge violated: nothing can happen any more (every request arrived, no message is visible, no worker runs, no build runs), yet {}; the queue holds {slots} with K = {k}",
                    stuck.join("; ")
                )
            }
            BUILDS_WITHIN_LIMIT => {
                let running: Vec<String> = s.running_builds().map(request_name).collect();
                format!(
                    "builds-within-limit violated: {} builds run at once ({}) but K = {k}",
                    running.len(),
                    running.join(", ")
                )
            }
            COUNT_NOT_LOW => format!(
                "count-not-low violated: the queue is quiescent and holds {slots}, but {} {} processing ({}): a slot in use is not accounted for, so the gate will admit more than K",
                processing.len(),
                requests(processing.len()),
                processing.join(", ")
            ),
            COUNT_NOT_HIGH => format!(
                "count-not-high violated: the queue is quiescent and holds {slots}, but {} {} processing ({}): a slot is held that nothing will release",
                processing.len(),
                requests(processing.len()),
                if processing.is_empty() { "none".to_string() } else { processing.join(", ") }
            ),
            OUTCOME_FINAL => {
                let changed: Vec<String> = s
                    .requests()
                    .filter_map(|(r, state)| {
                        let first = s.first_outcome(r)?;
                        (first != state).then(|| {
                            format!(
                                "{} was written {}, and is now {}",
                                request_name(r),
                                first.name(),
                                state.name()
                            )
                        })
                    })
                    .collect();
                format!(
                    "outcome-final violated: {}: an outcome, once written, was overwritten",
                    changed.join("; ")
                )
            }
            NO_MESSAGE_LEFT_IN_FLIGHT => {
                let left: Vec<String> = s
                    .messages()
                    .filter(|m| {
                        m.status == Delivery::InFlight
                            && !s.workers().any(|w| {
                                w.holds_message && w.request == m.request && w.message == m.kind
                            })
                    })
                    .map(|m| m.kind.render(m.request))
                    .collect();
                format!(
                    "no-message-left-in-flight violated: {} in flight, and no worker holds it: a handler ended without acking or holding its message, which the broker will hand out again at its timeout, a redelivery the design did not plan",
                    left.join(", ")
                )
            }
            DEAD_LETTER_NEEDS_FAULTS => {
                let faults = (self.bounds.crashes - s.crashes_left())
                    + (self.bounds.stalls - s.stalls_left());
                format!(
                    "dead-letter-needs-faults violated: a message was dead-lettered after {faults} fault(s), fewer than its {} deliveries: it ran out of deliveries it never failed",
                    self.bounds.max_deliveries
                )
            }
            ALL_SUCCEED => "all-succeed reached: every request succeeded".into(),
            SOME_SUPERSEDED => format!(
                "some-superseded reached: {} superseded",
                names(s, RequestState::Superseded)
            ),
            SOME_DEAD_LETTERED => format!(
                "some-dead-lettered reached: {} dead-lettered",
                names(s, RequestState::DeadLettered)
            ),
            SOME_HELD => "some-held reached: a message is parked behind the gate".into(),
            REQUESTS_FINISH => {
                let open: Vec<String> = s
                    .requests()
                    .filter(|(_, state)| !state.is_terminal())
                    .map(|(r, state)| format!("{} is {}", request_name(r), state.name()))
                    .collect();
                format!(
                    "requests-finish violated: {} and stays so for ever in a fair run; the queue holds {slots} with K = {k}",
                    open.join(", ")
                )
            }
            HELD_RELEASED => {
                let held: Vec<String> = s
                    .messages()
                    .filter(|m| m.status == Delivery::Parked)
                    .map(|m| m.kind.render(m.request))
                    .collect();
                format!(
                    "held-released violated: {} held, and never delivered again nor acknowledged in a fair run",
                    held.join(", ")
                )
            }
            SLOTS_SETTLE => format!(
                "slots-settle violated: the queue holds {slots} while {} {} processing, and it never comes to equal the processing set in a fair run",
                processing.len(),
                requests(processing.len())
            ),
            other => format!("{other}: no such property"),
        }
    }
}

fn names(s: &State, state: RequestState) -> String {
    s.requests_in(state)
        .map(request_name)
        .collect::<Vec<_>>()
        .join(", ")
}
