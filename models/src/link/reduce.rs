//! What the checker stores of a link state (`docs/link.md`, *The stored
//! state*): only what a later step can read, and one form for every naming
//! of builders that differ only in their names. The model's own steps keep
//! the whole state, so stories, scripts and the simulator see it all; only
//! [`Packed::pack`](crate::Packed::pack) stores the reduced form, and the
//! checker replays a path it found on the whole state (`check::replay`).
//!
//! - A design without the duplicate check never reads a running key: keys
//!   are not stored.
//! - A design that never reads a clock (no duplicate check, or freshness on
//!   server-stamped times) does not store the offsets: every builder's clock
//!   is then the same, and every initial state is one.
//! - A late-heartbeat mark (`Run::delayed`) is read only while a heartbeat may
//!   still be made late.
//! - A message that is gone (acked, out of deliveries) keeps of its delivery
//!   count only whether it was delivered twice (the witness reads that).
//! - Builders with equal clocks are interchangeable (faults are budgets of
//!   the whole run, not of a builder): the stored form is the least packing
//!   over every renaming among them.

use super::mutation::Mutation;
use super::{Bid, Link, State, Status, MAX_BUILDERS};
use std::sync::OnceLock;

/// A renaming of builders: the new index of each.
pub type Renaming = [Bid; MAX_BUILDERS as usize];

/// Every ordering of `n` builders, the identity first.
fn permutations(n: usize) -> Vec<Renaming> {
    let mut all = Vec::new();
    let mut p: Renaming = [0, 1, 2, 3];
    fn go(k: usize, n: usize, p: &mut Renaming, all: &mut Vec<Renaming>) {
        if k == n {
            all.push(*p);
            return;
        }
        for i in k..n {
            p.swap(k, i);
            go(k + 1, n, p, all);
            p.swap(k, i);
        }
    }
    go(0, n, &mut p, &mut all);
    all
}

impl Link {
    /// Whether some step reads a running key: the duplicate check's get.
    pub fn reads_keys(&self) -> bool {
        self.design.duplicate_check
    }

    /// Whether some step reads a builder's clock: the duplicate check's
    /// freshness on the builder's own clock.
    pub fn reads_offsets(&self) -> bool {
        self.design.duplicate_check
            && !self.server_clock()
            && self.mutation != Some(Mutation::FreshOnServerClock)
    }

    /// `s` with what no later step reads forgotten.
    pub fn forgotten(&self, s: &State) -> State {
        let mut s = *s;
        if !self.reads_keys() {
            s.keys.iter_mut().for_each(|k| *k = None);
        }
        if !self.reads_offsets() {
            s.builders.iter_mut().for_each(|b| b.offset = 0);
        }
        if s.lates_left == 0 {
            for run in s.builders.iter_mut().filter_map(|b| b.run.as_mut()) {
                run.delayed = false;
            }
        }
        for m in s.messages.iter_mut().filter(|m| !m.is_left()) {
            m.deliveries = m.deliveries.min(2);
        }
        s
    }

    /// `s` with builder `b` renamed `to[b]`, every mention of it included.
    pub fn renamed(s: &State, to: &[Bid]) -> State {
        let mut r = *s;
        for (b, builder) in s.builders.iter().enumerate() {
            r.builders[to[b] as usize] = *builder;
        }
        for m in r.messages.iter_mut() {
            if let Status::Delivered { to: holder, .. } = &mut m.status {
                *holder = to[*holder as usize];
            }
        }
        for key in r.keys.iter_mut().flatten() {
            key.builder = to[key.builder as usize];
        }
        r
    }
}

/// Every ordering of `n` builders (computed once), the identity first.
pub(crate) fn orderings(n: usize) -> &'static [Renaming] {
    static ALL: OnceLock<Vec<Vec<Renaming>>> = OnceLock::new();
    &ALL.get_or_init(|| (0..=MAX_BUILDERS as usize).map(permutations).collect())[n]
}

/// Whether renaming `to` keeps every builder's clock: a symmetry of `s`.
pub(crate) fn keeps_clocks(s: &State, to: &Renaming) -> bool {
    (0..s.builders.len()).all(|b| s.builders[to[b] as usize].offset == s.builders[b].offset)
}

#[cfg(test)]
mod tests {
    use super::{keeps_clocks, orderings, permutations};
    use crate::link::{all_designs, Bounds, Link, State};
    use crate::Packed;
    use stateright::Model;
    use std::collections::HashSet;

    #[test]
    fn every_ordering_once() {
        for (n, count) in [(1, 1), (2, 2), (3, 6), (4, 24)] {
            let mut all = permutations(n);
            assert_eq!(all.len(), count);
            assert_eq!(all[0][..n], [0, 1, 2, 3][..n], "the identity first");
            all.sort();
            all.dedup();
            assert_eq!(all.len(), count);
        }
    }

    fn stored(m: &Link, s: &State) -> Vec<u64> {
        let mut words = vec![0; m.packed_words()];
        m.pack(s, &mut words);
        words
    }

    /// On every state reachable in small bounds, for every design: the
    /// stored form of the stored form is itself, and every renaming of
    /// builders with equal clocks is stored alike.
    #[test]
    fn the_stored_form_is_one_per_renaming_and_stable() {
        for design in all_designs() {
            let bounds = Bounds {
                asks: 2,
                builders: 3,
                skew: 5,
                horizon: 60,
                late_heartbeats: 1,
                lost_acks: 1,
                naks: 1,
                ..Bounds::default()
            };
            let m = Link::new(design, bounds);
            let mut seen = HashSet::new();
            let mut todo = m.init_states();
            let mut renamed = 0;
            while let Some(s) = todo.pop() {
                if seen.len() >= 20_000 || !seen.insert(s) {
                    continue;
                }
                let words = stored(&m, &s);
                assert_eq!(stored(&m, &m.unpack(&words)), words, "{}", design.name);
                let forgotten = m.forgotten(&s);
                for to in orderings(s.builders.len()) {
                    if keeps_clocks(&forgotten, to) {
                        let other = Link::renamed(&s, to);
                        assert_eq!(stored(&m, &other), words, "{}: {to:?}", design.name);
                        renamed += 1;
                    }
                }
                let mut actions = Vec::new();
                m.actions(&s, &mut actions);
                todo.extend(actions.into_iter().filter_map(|a| m.next_state(&s, a)));
            }
            assert!(renamed > seen.len(), "{}: some renamings", design.name);
        }
    }
}
