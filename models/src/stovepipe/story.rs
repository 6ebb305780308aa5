//! Telling a path of the stovepipe model as the source tells SP-OCT-003:
//! numbered steps, each naming its actor and what it did, with the rows that
//! changed.

use super::{
    request_name, Action, Build, Delivery, Log, MessageKind, Req, RequestState, Slots, State,
    Stovepipe, Worker, ALL_SUCCEED, BUILDS_WITHIN_LIMIT, COUNT_NOT_HIGH, COUNT_NOT_LOW,
    MAX_REQUESTS, NO_WEDGE, SOME_DEAD_LETTERED, SOME_HELD, SOME_SUPERSEDED,
};
use crate::{diff_rows, Narrated, ScriptError, StoryStep, Value};
use stateright::Model;

/// Workers are numbered in the order they were delivered; the state keeps
/// them sorted, so the story follows each one across steps by its contents.
#[derive(Clone)]
struct Label {
    number: usize,
    delivery: u8,
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

/// Follows workers across a path: the state keeps them sorted, so a worker
/// is known by its contents from one step to the next, and named by the
/// order in which it was delivered.
#[derive(Clone, Default)]
struct Tracker {
    labels: Vec<Label>,
    delivered: usize,
}

impl Tracker {
    fn actor(&self, state: &State, action: Action) -> String {
        match action {
            Action::Arrive => "client".to_string(),
            Action::Deliver { .. } => "broker".to_string(),
            Action::FinishBuild(_) => "build system".to_string(),
            Action::Step(i) => self.labels[i].name(&state.workers[i]),
            Action::Crash(i) | Action::Stall(i) => {
                format!("fault on {}", self.labels[i].name(&state.workers[i]))
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
        }
    }

    /// The index of worker `number`, or of the first worker equal to it
    /// (equal workers are one and the same step).
    fn index_of(&self, state: &State, number: usize) -> Option<usize> {
        let at = self.labels.iter().position(|l| l.number == number)?;
        let key = state.worker_key(&state.workers[at]);
        state
            .workers
            .iter()
            .position(|w| state.worker_key(w) == key)
    }

    /// The labels after `action` took `before` to `after`: every worker the
    /// step did not touch keeps its label; the one it changed or created gets
    /// the acting worker's label, or a new one for a delivery.
    fn advance(&mut self, before: &State, action: Action, after: &State) {
        let acted = match action {
            Action::Step(i) | Action::Crash(i) | Action::Stall(i) => Some(i),
            _ => None,
        };
        let mut moved = match action {
            Action::Deliver { request, kind } => {
                self.delivered += 1;
                let attempts = before.message(request, kind).map_or(0, |m| m.attempts);
                Some(Label {
                    number: self.delivered,
                    delivery: attempts + 1,
                })
            }
            _ => acted.map(|i| self.labels[i].clone()),
        };
        let mut unused: Vec<(usize, &Worker)> = before
            .workers
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != acted)
            .collect();
        self.labels = after
            .workers
            .iter()
            .map(|worker| {
                if let Some(at) = unused.iter().position(|(_, w)| *w == worker) {
                    let (i, _) = unused.remove(at);
                    self.labels[i].clone()
                } else {
                    moved.take().expect("at most one worker changes in a step")
                }
            })
            .collect();
    }
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
        _ => Err(format!(
            "`{text}` is not a step (arrive R1, deliver process R1, step worker 1, crash worker 1, stall worker 1, finish build R1)"
        )),
    }
}

impl Narrated for Stovepipe {
    fn rows(&self, s: &State) -> Vec<(String, String)> {
        let mut rows = vec![(
            "queue".to_string(),
            format!("{} (v{})", s.queue.slots.render(), s.queue.version),
        )];
        for (r, row) in s.requests.iter().enumerate() {
            rows.push((
                request_name(r as u8),
                format!("{} (v{})", row.state.name(), row.version),
            ));
        }
        for (r, build) in s.builds.iter().enumerate() {
            if *build != Build::NotSubmitted {
                let state = if *build == Build::Running {
                    "running"
                } else {
                    "finished"
                };
                rows.push((format!("build {}", request_name(r as u8)), state.into()));
            }
        }
        for m in &s.messages {
            let status = match m.status {
                Delivery::Visible => "visible",
                Delivery::InFlight => "in flight",
                Delivery::Parked => "parked",
            };
            let attempts = if m.kind.is_dead() {
                String::new()
            } else {
                format!(", {}/{} attempts", m.attempts, self.bounds.max_deliveries)
            };
            rows.push((m.kind.render(m.request), format!("{status}{attempts}")));
        }
        rows
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
        let slots = match s.queue.slots {
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
        let queue = Value::Record(vec![
            ("version".into(), int(s.queue.version as u64)),
            (slots.0.into(), slots.1),
        ]);
        let requests = Value::Map(
            s.requests
                .iter()
                .enumerate()
                .map(|(r, row)| {
                    let build = match s.builds[r] {
                        Build::NotSubmitted => "none",
                        Build::Running => "running",
                        Build::Finished => "finished",
                    };
                    (
                        Value::Str(request_name(r as u8)),
                        Value::Record(vec![
                            ("state".into(), text(row.state.name())),
                            ("version".into(), int(row.version as u64)),
                            ("build".into(), text(build)),
                        ]),
                    )
                })
                .collect(),
        );
        let messages = Value::Map(
            s.messages
                .iter()
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
            s.workers
                .iter()
                .map(|w| {
                    Value::Record(vec![
                        ("handler".into(), text(w.handler().name())),
                        ("request".into(), Value::Str(request_name(w.request))),
                        ("pc".into(), Value::Str(format!("{:?}", w.pc))),
                        ("holds_message".into(), Value::Bool(w.holds_message)),
                    ])
                })
                .collect(),
        );
        vec![
            ("queue".into(), queue),
            ("requests".into(), requests),
            ("messages".into(), messages),
            ("workers".into(), workers),
            ("crashes_left".into(), int(s.crashes_left as u64)),
            ("stalls_left".into(), int(s.stalls_left as u64)),
        ]
    }

    fn tell(&self, init: &State, actions: &[Action]) -> Vec<StoryStep> {
        let mut state = init.clone();
        let mut tracker = Tracker::default();
        let mut steps = Vec::new();
        for &action in actions {
            let mut log = Log::recording();
            let next = self.apply(&state, action, &mut log);
            steps.push(StoryStep {
                actor: tracker.actor(&state, action),
                action: log.text(),
                changes: diff_rows(&self.rows(&state), &self.rows(&next)),
            });
            tracker.advance(&state, action, &next);
            state = next;
        }
        steps
    }

    fn words(&self, init: &State, actions: &[Action]) -> Vec<String> {
        let mut state = init.clone();
        let mut tracker = Tracker::default();
        let mut words = Vec::new();
        for &action in actions {
            words.push(tracker.words(&state, action));
            let next = self.apply(&state, action, &mut Log::quiet());
            tracker.advance(&state, action, &next);
            state = next;
        }
        words
    }

    fn parse(&self, init: &State, script: &[String]) -> Result<Vec<Action>, ScriptError> {
        let mut state = init.clone();
        let mut tracker = Tracker::default();
        let mut actions = Vec::new();
        for (index, text) in script.iter().enumerate() {
            let fail = |message: String| ScriptError { index, message };
            let action = parse_words(&tracker, &state, text).map_err(fail)?;
            let mut enabled = Vec::new();
            self.actions(&state, &mut enabled);
            if !enabled.contains(&action) {
                return Err(fail(format!("`{text}` is not enabled here")));
            }
            let next = self.apply(&state, action, &mut Log::quiet());
            tracker.advance(&state, action, &next);
            state = next;
            actions.push(action);
        }
        Ok(actions)
    }

    fn explain(&self, property: &str, s: &State) -> String {
        let k = self.bounds.max_concurrent;
        let processing: Vec<String> = s.processing().map(request_name).collect();
        let slots = s.queue.slots.render();
        match property {
            NO_WEDGE => {
                let stuck: Vec<String> = (0..s.arrived())
                    .filter(|&r| !s.requests[r as usize].state.is_terminal())
                    .map(|r| {
                        let held: Vec<String> = s
                            .messages
                            .iter()
                            .filter(|m| m.request == r && m.status == Delivery::Parked)
                            .map(|m| format!("{} parked", m.kind.render(r)))
                            .collect();
                        let row = s.requests[r as usize].state.name();
                        if held.is_empty() {
                            format!("{} is {row} with no message left", request_name(r))
                        } else {
                            format!("{} is {row}, {}", request_name(r), held.join(", "))
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
                "count-not-low violated: the queue is quiescent and holds {slots}, but {} request(s) are processing ({}): a slot in use is not accounted for, so the gate will admit more than K",
                processing.len(),
                processing.join(", ")
            ),
            COUNT_NOT_HIGH => format!(
                "count-not-high violated: the queue is quiescent and holds {slots}, but {} request(s) are processing ({}): a slot is held that nothing will release",
                processing.len(),
                if processing.is_empty() { "none".to_string() } else { processing.join(", ") }
            ),
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
