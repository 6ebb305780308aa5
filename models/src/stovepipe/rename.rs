//! What the checker stores of a stovepipe state (`docs/checking.md`,
//! *Requests renamed*): the requests below the latest head put in order of
//! what of each lasts, those alike in it in arrival order, so that one form
//! stands for every such naming of them. The model's own steps keep the
//! names, so stories and logs name requests as they arrived; only
//! [`Packed::pack`](crate::Packed::pack) stores the renamed form, and the
//! checker replays a path it found on the whole state.
//!
//! - Below the latest head, requests are interchangeable: a step reads a
//!   request's own row, the queue row and whether the request is the latest
//!   head, never how two requests' IDs compare, and every property counts
//!   requests or asks of each alike. The latest head is kept where it is;
//!   the next arrival comes after all of them whatever their names.
//! - The stored form puts them in order of their *lasting key* (what of a
//!   request no later step can change and then change back), equal keys
//!   in their arrival order: so the renaming is the same along any cycle
//!   the search can close, which keeps the progress check's cycles, their
//!   fairness and what they owe exactly those of the whole model.
//!
//! Not for a mutant, whose steps may move a row back (its key would then
//! not last).

use super::{Action, MessageKind, Req, State, Stovepipe, Worker, MAX_REQUESTS};

/// A renaming of requests: the new index of each.
pub type Renaming = [Req; MAX_REQUESTS as usize];

/// The renaming that moves nothing.
pub(super) fn unrenamed() -> Renaming {
    std::array::from_fn(|r| r as Req)
}

impl Stovepipe {
    /// Whether the stored form renames requests: on by default
    /// ([`Stovepipe::rename_requests`]), never for a mutant.
    pub fn renames(&self) -> bool {
        self.rename_requests && self.mutation.is_none()
    }

    /// `s` as the checker stores it: the requests below the latest head in
    /// order of their lasting keys ([`lasting_key`]), equal keys in arrival
    /// order; and the renaming that made it (`None`: nothing moved).
    pub fn stored(&self, s: &State) -> Option<(State, Renaming)> {
        let n = s.arrived() as usize;
        if !self.renames() || n < 3 {
            return None;
        }
        let mut keys = [(0u64, 0 as Req); MAX_REQUESTS as usize];
        let below = &mut keys[..n - 1];
        for (r, key) in below.iter_mut().enumerate() {
            *key = (lasting_key(s, r as Req), r as Req);
        }
        if below.is_sorted() {
            return None;
        }
        below.sort_unstable();
        let mut to = unrenamed();
        for (new, &(_, old)) in below.iter().enumerate() {
            to[old as usize] = new as Req;
        }
        Some((s.renamed(&to), to))
    }

    /// The action of `whole` that takes the step `action` takes in `form`,
    /// the stored form of a renaming of `whole` (a path's replay): the same
    /// action with its request or its worker renamed back
    /// ([`Packed::action_of_whole`](crate::Packed::action_of_whole) for
    /// stovepipe). `None` where nothing is renamed.
    pub(crate) fn renamed_back(
        &self,
        whole: &State,
        form: &State,
        action: &Action,
    ) -> Option<Action> {
        if !self.renames() {
            return None;
        }
        let to = renaming_onto(whole, form)?;
        let mut from = unrenamed();
        for r in 0..whole.arrived() as usize {
            from[to[r] as usize] = r as Req;
        }
        let worker = |i: usize| worker_in_whole(whole, form, &to, i);
        Some(match *action {
            Action::Arrive => Action::Arrive,
            Action::Deliver { request, kind } => Action::Deliver {
                request: from[request as usize],
                kind,
            },
            Action::FinishBuild(r) => Action::FinishBuild(from[r as usize]),
            Action::Step(i) => Action::Step(worker(i)?),
            Action::Crash(i) => Action::Crash(worker(i)?),
            Action::Stall(i) => Action::Stall(worker(i)?),
            Action::Abort(i) => Action::Abort(worker(i)?),
        })
    }
}

/// The index in `whole` of `form`'s worker `i`, where `to` takes
/// `whole`'s requests to `form`'s (the first of equal workers, the one
/// the actions offer).
pub(super) fn worker_in_whole(
    whole: &State,
    form: &State,
    to: &Renaming,
    i: usize,
) -> Option<usize> {
    let w = form.worker(i);
    (0..whole.workers_len()).find(|&j| {
        let mine = whole.worker(j);
        Worker {
            request: to[mine.request as usize],
            ..mine
        } == w
    })
}

/// The renaming that takes `whole` to `form`, two namings of one state:
/// each request of `form` matched with the first request of `whole` not
/// yet matched that has the same word and the same workers (requests
/// alike in both are interchangeable), the latest head kept. `None` if
/// there is none.
fn renaming_onto(whole: &State, form: &State) -> Option<Renaming> {
    let n = whole.arrived() as usize;
    let mut to = unrenamed();
    if n != form.arrived() as usize {
        return None;
    }
    let alike = |s: &State, r: usize| {
        let mut workers: Vec<Worker> = s
            .workers()
            .filter(|w| w.request as usize == r)
            .map(|w| Worker { request: 0, ..w })
            .collect();
        workers.sort_unstable();
        (s.request_word(r as Req), workers)
    };
    if n == 0 || alike(whole, n - 1) != alike(form, n - 1) {
        return None;
    }
    // Below the latest head, which stays.
    let mut matched = 0u64;
    for p in 0..n - 1 {
        let mine = alike(form, p);
        let r = (0..n - 1).find(|&r| matched & 1 << r == 0 && alike(whole, r) == mine)?;
        matched |= 1 << r;
        to[r] = p as Req;
    }
    Some(to)
}

/// What of request `r` lasts: no step changes it unless the step moves it
/// on for good, so it is the same in every state of a cycle. Its row's
/// state (rows only move on, from `accepted` to `processing` to terminal:
/// every write is a CAS or a transaction from a nonterminal state read),
/// its build (never submitted, running, finished), its first outcome, and
/// of each message kind whether it is there and its attempts: `process` is
/// published once, on arrival, `signal` once, as the build finishes (so
/// with the build in the key, a `signal` there or not lasts too), a `dead`
/// one once, as the message it replaces goes; each is gone for good once
/// acked or replaced, and its attempts only count up. Its slot and its
/// messages' deliveries (visible, in flight, parked) come and go, and so
/// do its workers: they are not in it.
fn lasting_key(s: &State, r: Req) -> u64 {
    let first = s.first_outcome(r).map_or(0, |o| o as u64 + 1);
    let mut key = (s.request(r) as u64) << 8 | (s.build(r) as u64) << 4 | first;
    for kind in MessageKind::ALL {
        key = key << 6 | s.message(r, kind).map_or(0, |m| 1 << 5 | m.attempts as u64);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::{lasting_key, Renaming};
    use crate::permutations;
    use crate::stovepipe::{Bounds, MessageKind, Options, Req, State, Stovepipe, DESIGNS};
    use crate::{NamedOptions, Packed};
    use stateright::Model;
    use std::collections::HashSet;

    fn stored(m: &Stovepipe, s: &State) -> Vec<u64> {
        let mut words = vec![0; m.packed_words()];
        m.pack(s, &mut words);
        words
    }

    /// The models the tests walk: every design on three requests (a crash
    /// and a stall, two slots) and on four (no fault), with each option.
    fn models() -> Vec<Stovepipe> {
        let mut all = Vec::new();
        for design in DESIGNS {
            for (requests, max_concurrent, crashes, stalls) in [(3, 2, 1, 1), (4, 1, 0, 0)] {
                for option in [
                    None,
                    Some("split-read"),
                    Some("aborts"),
                    Some("delayed-hold"),
                ] {
                    let bounds = Bounds {
                        requests,
                        max_concurrent,
                        crashes,
                        stalls,
                        ..Bounds::default()
                    };
                    let mut m = Stovepipe::new(design, bounds);
                    let mut options = Options::default();
                    if let Some(name) = option {
                        options.set(name).unwrap();
                    }
                    m.options = options;
                    all.push(m);
                }
            }
        }
        all
    }

    /// Up to `most` states reachable in `m`, depth first, each with the
    /// states its steps reach.
    fn reachable(m: &Stovepipe, most: usize, mut each: impl FnMut(&State, &[State])) {
        let mut seen = HashSet::new();
        let mut todo = m.init_states();
        let mut actions = Vec::new();
        while let Some(s) = todo.pop() {
            if seen.len() >= most || !seen.insert(s) {
                continue;
            }
            actions.clear();
            m.actions(&s, &mut actions);
            let next: Vec<State> = actions
                .iter()
                .filter_map(|&a| m.next_state(&s, a))
                .collect();
            each(&s, &next);
            todo.extend(next);
        }
    }

    /// The model is symmetric in the requests below the latest head: the
    /// stored form's steps are the state's, renamed alike (what lets the
    /// checker search stored forms and replay a path on whole states, a
    /// split read's reader chosen in the stored form included); and the
    /// stored form of a stored form is itself.
    #[test]
    fn a_stored_forms_steps_are_the_states_renamed() {
        let mut renamed = 0;
        for m in models() {
            let next = |s: &State| {
                let mut actions = Vec::new();
                m.actions(s, &mut actions);
                let mut next: Vec<State> = actions
                    .into_iter()
                    .filter_map(|a| m.next_state(s, a))
                    .collect();
                next.sort_by_key(|t| {
                    stored(
                        &Stovepipe {
                            rename_requests: false,
                            ..m
                        },
                        t,
                    )
                });
                next.dedup();
                next
            };
            reachable(&m, 3_000, |s, _| {
                let words = stored(&m, s);
                assert_eq!(stored(&m, &m.unpack(&words)), words, "{}", m.design.name);
                let Some((form, to)) = m.stored(s) else {
                    return;
                };
                renamed += 1;
                let mut mine: Vec<State> = next(s).iter().map(|t| t.renamed(&to)).collect();
                mine.sort_by_key(|t| {
                    stored(
                        &Stovepipe {
                            rename_requests: false,
                            ..m
                        },
                        t,
                    )
                });
                assert_eq!(
                    mine,
                    next(&form),
                    "{} {:?}: {s:?}",
                    m.design.name,
                    m.options
                );
            });
        }
        assert!(renamed > 1_000, "{renamed} renamed states");
    }

    /// Every naming of the requests below the latest head that keeps equal
    /// lasting keys in arrival order is stored alike; the latest head and
    /// the requests still to come never move.
    #[test]
    fn every_naming_of_the_requests_below_the_head_is_stored_alike() {
        let bounds = Bounds {
            requests: 4,
            max_concurrent: 2,
            crashes: 1,
            stalls: 1,
            ..Bounds::default()
        };
        let m = Stovepipe::new(DESIGNS[2], bounds);
        let mut namings = 0;
        reachable(&m, 20_000, |s, _| {
            let n = s.arrived() as usize;
            if n < 2 {
                return;
            }
            let words = stored(&m, s);
            if let Some((_, to)) = m.stored(s) {
                assert!(to[n - 1..]
                    .iter()
                    .enumerate()
                    .all(|(i, &r)| r as usize == n - 1 + i));
            }
            // Every renaming below the latest head.
            let below_head: Vec<Renaming> = permutations(n - 1);
            for to in below_head {
                let other = s.renamed(&to);
                let key = |s: &State, r: usize| lasting_key(s, r as Req);
                let in_order = (0..n - 1)
                    .all(|a| (0..n - 1).all(|b| a >= b || key(s, a) != key(s, b) || to[a] < to[b]));
                if in_order {
                    assert_eq!(stored(&m, &other), words, "{to:?}: {s:?}");
                    namings += 1;
                }
            }
        });
        assert!(namings > 20_000, "{namings} namings");
    }

    /// What the key keeps lasts: on every step of every design (and each
    /// option), each of its parts only moves on (a row, a build and a
    /// first outcome go forward; a message comes once, as the contract
    /// publishes it, its attempts count up, and once gone it stays gone),
    /// so a step that changes a key never comes back round to it, and a
    /// cycle renames nothing.
    #[test]
    fn what_the_key_keeps_only_moves_on() {
        let mut changed = 0;
        for m in models() {
            reachable(&m, 3_000, |s, next| {
                for t in next {
                    for r in 0..s.arrived() {
                        assert!(forward(s, t, r), "{} R{r}: {s:?} -> {t:?}", m.design.name);
                        changed += usize::from(lasting_key(s, r) != lasting_key(t, r));
                    }
                }
            });
        }
        assert!(changed > 10_000, "{changed} keys moved on");
    }

    /// Whether R went from `s` to `t` only forward in what its key keeps.
    fn forward(s: &State, t: &State, r: Req) -> bool {
        use crate::stovepipe::Build;
        let row_on = s.request(r) == t.request(r)
            || (!s.request(r).is_terminal() && s.request(r) < t.request(r));
        let first_on = s.first_outcome(r).is_none() || s.first_outcome(r) == t.first_outcome(r);
        let attempts = |s: &State, kind| s.message(r, kind).map(|m| m.attempts);
        // What publishes each kind: arrival, the build's end, the loss of
        // the message it replaces.
        let finished = s.build(r) == Build::Running && t.build(r) == Build::Finished;
        let replaced = |kind| attempts(s, kind).is_some() && attempts(t, kind).is_none();
        let published = [
            false,
            finished,
            replaced(MessageKind::Process),
            replaced(MessageKind::Signal),
        ];
        let messages_on = MessageKind::ALL.iter().zip(published).all(|(&kind, new)| {
            match (attempts(s, kind), attempts(t, kind)) {
                (Some(a), Some(b)) => a <= b,
                (None, Some(_)) => new,
                _ => true,
            }
        });
        row_on && s.build(r) <= t.build(r) && first_on && messages_on
    }
}
