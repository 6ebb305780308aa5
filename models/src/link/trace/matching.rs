//! The search's view of a link log (the [`Trace`](crate::Trace) trait):
//! which steps a line can be, which steps no builder logs, and what the
//! model allowed where a log departs.

use super::{drains, Cursor, LinkTrace, MAX_ASKS, SILENT_PER_LINE};
use crate::events::link::Event;
use crate::link::{
    ask_name, builder_name, Action, Ask, Bid, Link, State, BUFFER_ROOM, TICK_SECONDS,
};
use stateright::Model;

impl crate::Trace for LinkTrace {
    /// Time passing and the order of the server's redelivery queue are
    /// not assumptions a report lists.
    fn assumes(&self, action: &Action) -> bool {
        !matches!(action, Action::Tick | Action::Queue(_))
    }

    type Model = Link;
    type Cursor = Cursor;

    fn model(&self) -> &Link {
        &self.model
    }

    fn len(&self) -> usize {
        self.events.len()
    }

    fn line(&self, k: usize) -> usize {
        self.events[k].0
    }

    fn says(&self, k: usize) -> String {
        let record = &self.events[k].1;
        let mut text = self.render(&record.actor, record.event.clone());
        if let Some(ts) = record.ts_ms {
            let (lo, hi) = self.windows[k];
            text.push_str(&format!(
                " (ts_ms {ts}: model time t={}s to t={}s)",
                lo as u16 * TICK_SECONDS,
                hi as u16 * TICK_SECONDS
            ));
        }
        text
    }

    fn start(&self) -> Cursor {
        Cursor {
            state: self.model.initial_states()[0],
            put_at: [None; MAX_ASKS as usize],
            pending: Default::default(),
            landed: Default::default(),
            answering: Default::default(),
            late: Default::default(),
            uncounted: 0,
        }
    }

    /// One start per assignment of clock offsets within the skew, to each
    /// builder as the log names it (the model's own initial states keep one
    /// per set of offsets, since its builders are interchangeable; the
    /// log's are not).
    fn starts(&self) -> Vec<Cursor> {
        let skew = self.model.bounds.skew_ticks() as i8;
        let mut starts = vec![self.start()];
        for b in (0..self.builders.len()).filter(|&b| self.clocked[b]) {
            starts = starts
                .into_iter()
                .flat_map(|c| {
                    (-skew..=skew).map(move |offset| {
                        let mut c = c.clone();
                        c.state.builders[b].offset = offset;
                        c
                    })
                })
                .collect();
        }
        starts
    }

    fn state<'a>(&self, cursor: &'a Cursor) -> &'a State {
        &cursor.state
    }

    fn explain(&self, c: &Cursor, k: usize, out: &mut Vec<(Option<Action>, Cursor)>) {
        let record = &self.events[k].1;
        // The log's time has passed the model's: time must pass first,
        // unless nothing is left to happen (then time changes nothing).
        if c.state.now < self.windows[k].0 && !c.state.is_settled() {
            return;
        }
        match &record.event {
            Event::Publish { .. } => return out.push((None, c.clone())),
            Event::Server {
                ask,
                num_delivered,
                consumer_seq,
            } => {
                let a = ask.as_ref().and_then(|a| self.ask_index.get(a)).copied();
                // After a late answer, the count it carried (the server
                // may have delivered the message again since); after a
                // fetch, the count the fetch made.
                let late = self
                    .builder_index
                    .get(&record.actor)
                    .and_then(|&b| c.late[b as usize].filter(|&(l, _, _)| Some(l) == a));
                let count = late
                    .map(|(_, n, _)| n)
                    .or_else(|| a.map(|a| c.state.messages[a as usize].deliveries));
                let agrees = match (count, num_delivered) {
                    (Some(count), Some(n)) => count as u64 == *n,
                    _ => true,
                };
                // The consumer's sequence is checked where the delivery is
                // known: after a fetch or a late answer.
                let in_order = match (late, consumer_seq) {
                    (Some((_, _, seq)), Some(logged)) => seq as u64 == *logged,
                    _ => true,
                };
                if agrees && in_order {
                    out.push((None, c.clone()));
                }
                return;
            }
            _ => {}
        }
        let Some(b) = self.builder_of_line(k) else {
            return;
        };
        let bi = b as usize;
        let event = &record.event;
        // Any line of the builder ends what its last late answer showed.
        let cleared;
        let c = if c.late[bi].is_some() {
            let mut n = c.clone();
            n.late[bi] = None;
            cleared = n;
            &cleared
        } else {
            c
        };
        if let Some(next) = c.pending[bi].first() {
            if self.agrees(b, next, event) {
                let mut n = c.clone();
                n.pending[bi].remove(0);
                out.push((None, n));
            }
            return;
        }
        let builder = &c.state.builders[bi];
        match event {
            Event::LateAnswer { ask } | Event::Fetch { got: Some(ask) } => {
                let a = self.ask_index[ask];
                if let Some(i) = c.landed[bi].iter().position(|&(x, _, _)| x == a) {
                    let mut n = c.clone();
                    n.late[bi] = Some(n.landed[bi][i]);
                    n.landed[bi].remove(i);
                    out.push((None, n));
                } else if matches!(event, Event::LateAnswer { .. }) && builder.on_the_way == Some(a)
                {
                    let (mut n, lines) = self.take(c, Action::Land(b));
                    if lines.is_empty() {
                        let (count, seq) = c.answering[bi];
                        n.late[bi] = Some((a, count, seq));
                        out.push((Some(Action::Land(b)), n));
                    }
                }
            }
            // A fetch that found nothing: no step of the model.
            Event::Fetch { got: None }
                if builder.is_idle() && builder.buffer.is_empty() && c.landed[bi].is_empty() =>
            {
                out.push((None, c.clone()));
            }
            _ => {}
        }
        for (action, mut n, lines) in self.steps_of(c, b) {
            if drains(action) && !c.landed[bi].is_empty() {
                continue;
            }
            if self.agrees(b, &lines[0], event) {
                n.pending[bi] = lines[1..].iter().copied().collect();
                out.push((Some(action), n));
            }
        }
    }

    fn silent(&self, c: &Cursor, k: usize, out: &mut Vec<(Action, Cursor)>) {
        self.silent_pending(c, k, &|j| j >= k, out)
    }

    /// In a log of several processes, a builder's next line is its first
    /// still to come, and its step is taken before a line it came after
    /// only where its process also logs another builder's steps (one
    /// process per builder writes each step's lines in the order of its
    /// steps, and the search tries that order among processes).
    fn silent_pending(
        &self,
        c: &Cursor,
        k: usize,
        pending: &dyn Fn(usize) -> bool,
        out: &mut Vec<(Action, Cursor)>,
    ) {
        let several = self.processes.several;
        let next_of = |b: Bid| {
            if several {
                self.next_pending(b, pending)
            } else {
                self.next_line_of(b, k)
            }
        };
        let ahead_of = |b: Bid| {
            if several {
                self.ahead_of(b, pending)
            } else {
                self.next_line_of(b, k + 1)
            }
        };
        let s = &c.state;
        let hi = self
            .windows
            .get(k)
            .or(self.windows.last())
            .map_or(0, |w| w.1);
        if s.now < hi && self.model.can_tick(s) {
            out.push((Action::Tick, self.take(c, Action::Tick).0));
        }
        let mut enabled = Vec::new();
        self.model.actions(s, &mut enabled);
        for action in enabled {
            // `redelivery-queue`: which of the asks whose ack waits ran
            // out in one tick the server hands out first; nothing logs it.
            if let Action::Queue(_) = action {
                out.push((action, self.take(c, action).0));
                continue;
            }
            let Some(b) = action.builder() else {
                continue;
            };
            let bi = b as usize;
            let quiet = c.pending[bi].is_empty();
            match action {
                Action::Land(_) => {
                    let a = s.builders[bi].on_the_way.expect("a late answer lands");
                    let (mut n, lines) = self.take(c, action);
                    if lines.is_empty() && n.landed[bi].len() < BUFFER_ROOM {
                        let (count, seq) = c.answering[bi];
                        n.landed[bi].push((a, count, seq));
                        out.push((action, n));
                    }
                }
                Action::Answer(_) => out.push((action, self.take(c, action).0)),
                // A rewind on an open pull request: nothing logs it.
                Action::Rewind(_) if s.builders[bi].open => {
                    out.push((action, self.take(c, action).0))
                }
                Action::Crash(_) if quiet && self.may_have_crashed(next_of(b)) => {
                    out.push((action, self.take(c, action).0));
                }
                Action::Delay(_) if quiet => out.push((action, self.take(c, action).0)),
                _ => {}
            }
        }
        // A step logged after lines it came before: concurrent builders
        // log in the order their calls returned, not the order the server
        // took them (three fetches answered A1, A2, A3 may be logged A3
        // first). Its lines are then all still to come.
        for b in 0..self.builders.len() as Bid {
            let bi = b as usize;
            if !c.pending[bi].is_empty() {
                continue;
            }
            let Some(ahead) = ahead_of(b) else {
                continue;
            };
            if self.windows[ahead].0 > s.now {
                continue;
            }
            let event = &self.events[ahead].1.event;
            for (action, mut n, lines) in self.steps_of(c, b) {
                if drains(action) && !c.landed[bi].is_empty() {
                    continue;
                }
                if self.agrees(b, &lines[0], event) {
                    n.pending[bi] = lines.iter().copied().collect();
                    out.push((action, n));
                }
            }
        }
    }

    fn silent_bound(&self, k: usize) -> Option<usize> {
        let before = k.checked_sub(1).map_or(0, |j| self.windows[j].0);
        let ticks = self
            .windows
            .get(k)
            .map_or(0, |w| w.1.saturating_sub(before));
        Some(ticks as usize + SILENT_PER_LINE)
    }

    fn process(&self, k: usize) -> Option<&str> {
        self.events[k].1.process.as_deref()
    }

    fn time(&self, k: usize) -> Option<u64> {
        self.events[k].1.ts_ms
    }

    fn order_slack_ms(&self) -> Option<u64> {
        self.order_slack_ms
    }

    fn order(&self, k: usize, out: &mut Vec<crate::OrderValue>) {
        self.order_values(k, out);
    }

    fn legend(&self) -> String {
        let asks = self
            .asks
            .iter()
            .enumerate()
            .map(|(a, name)| format!("{} = {name}", ask_name(a as Ask)));
        let builders = self
            .builders
            .iter()
            .enumerate()
            .map(|(b, name)| format!("{} = {name}", builder_name(b as Bid)));
        asks.chain(builders).collect::<Vec<_>>().join(", ")
    }

    fn allowed(&self, c: &Cursor, k: usize) -> Vec<String> {
        let s = &c.state;
        let mut allowed = Vec::new();
        let (lo, hi) = self.windows.get(k).copied().unwrap_or((0, 0));
        allowed.push(format!(
            "(time: the model is at t={}s; this line's time puts it at t={}s to t={}s)",
            s.now as u16 * TICK_SECONDS,
            lo as u16 * TICK_SECONDS,
            hi as u16 * TICK_SECONDS
        ));
        for b in 0..self.builders.len() as Bid {
            let actor = self.builder_name(b);
            if let Some(next) = c.pending[b as usize].first() {
                allowed.push(format!(
                    "{} (the rest of its last step)",
                    self.render(&actor, self.event_of(next))
                ));
                continue;
            }
            for &(a, _, _) in c.landed[b as usize].iter() {
                allowed.push(self.render(
                    &actor,
                    Event::LateAnswer {
                        ask: self.asks[a as usize].clone(),
                    },
                ));
            }
            for (action, _, lines) in self.steps_of(c, b) {
                let words: Vec<String> = lines
                    .iter()
                    .map(|o| self.render(&actor, self.event_of(o)))
                    .collect();
                allowed.push(format!(
                    "{} ({})",
                    words.join(" then "),
                    self.model.format_action(&action)
                ));
            }
        }
        if self.model.can_tick(s) {
            allowed.push("5 s pass (silent)".into());
        } else if !s.is_settled() {
            allowed.push(
                "no time may pass: a builder must act first (the model's builders act at once)"
                    .into(),
            );
        }
        if s.crashes_left > 0 && s.builders.iter().any(|b| !b.holds_nothing()) {
            allowed.push(
                "a builder crashes (silent; only a builder whose next line is a fetch)".into(),
            );
        }
        // A count of 1 for a message delivered before is nats-server's
        // failed redelivery, which only a header naming the server allows.
        if let Event::Server {
            ask: Some(ask),
            num_delivered: Some(1),
            ..
        } = &self.events[k].1.event
        {
            let before = self
                .ask_index
                .get(ask)
                .is_some_and(|&a| s.messages[a as usize].deliveries > 1);
            if before && self.model.bounds.rewinds == 0 {
                allowed.push("(a count of 1 for a message delivered before: nats-server before 2.10.14 does that after a redelivery it failed to make; a header naming the server, `nats_server`, lets validate allow it)".into());
            }
        }
        allowed
    }
}
