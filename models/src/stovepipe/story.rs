//! Telling a path of the stovepipe model as the source tells SP-OCT-003:
//! numbered steps, each naming its actor and what it did, with the rows that
//! changed.

use super::{
    request_name, Action, Build, Delivery, Log, RequestState, State, Stovepipe, Worker,
    ALL_SUCCEED, BUILDS_WITHIN_LIMIT, COUNT_NOT_HIGH, COUNT_NOT_LOW, NO_WEDGE, SOME_DEAD_LETTERED,
    SOME_HELD, SOME_SUPERSEDED,
};
use crate::{diff_rows, Narrated, StoryStep};

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

/// Labels for the workers after a step, given those before it: every worker
/// the step did not touch keeps its label; the one it changed or created gets
/// `moved`.
fn relabel(
    before: &[Worker],
    labels: &[Label],
    after: &[Worker],
    acted: Option<usize>,
    moved: Option<Label>,
) -> Vec<Label> {
    let mut unused: Vec<(usize, &Worker)> = before
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != acted)
        .collect();
    let mut moved = moved;
    after
        .iter()
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

    fn tell(&self, init: &State, actions: &[Action]) -> Vec<StoryStep> {
        let mut state = init.clone();
        let mut labels: Vec<Label> = Vec::new();
        let mut delivered = 0;
        let mut steps = Vec::new();
        for &action in actions {
            let mut log = Log::recording();
            let next = self.apply(&state, action, &mut log);
            let acting = match action {
                Action::Step(i) | Action::Crash(i) | Action::Stall(i) => Some(i),
                _ => None,
            };
            let actor = match action {
                Action::Arrive => "client".to_string(),
                Action::Deliver { .. } => "broker".to_string(),
                Action::FinishBuild(_) => "build system".to_string(),
                Action::Step(i) => labels[i].name(&state.workers[i]),
                Action::Crash(i) | Action::Stall(i) => {
                    format!("fault on {}", labels[i].name(&state.workers[i]))
                }
            };
            let moved = match action {
                Action::Deliver { request, kind } => {
                    delivered += 1;
                    let attempts = state.message(request, kind).map_or(0, |m| m.attempts);
                    Some(Label {
                        number: delivered,
                        delivery: attempts + 1,
                    })
                }
                _ => acting.map(|i| labels[i].clone()),
            };
            labels = relabel(&state.workers, &labels, &next.workers, acting, moved);
            steps.push(StoryStep {
                actor,
                action: log.text(),
                changes: diff_rows(&self.rows(&state), &self.rows(&next)),
            });
            state = next;
        }
        steps
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
