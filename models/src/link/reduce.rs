//! What the checker stores of a link state (`docs/link-state.md`, *The
//! stored state*): only what a later step can read, and one form for every naming
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
//! - Only asks a builder may still read have their keys read: the key of an
//!   ask that is in no buffer, on the way to none, decided on by none
//!   (a drop reads whether the key is done), and whose message the
//!   server will not hand out again before the horizon (acked, out of
//!   deliveries, or held past the horizon) is not stored.
//! - A clock is read only in a freshness test, one comparison of a key's
//!   age on that clock with a threshold. The ages a later read can see lie
//!   between zero and the oldest key an ask still readable has plus the
//!   time left to the horizon (clamped where every clock reads it stale),
//!   so of an offset is stored only where it falls against them: every
//!   offset that reads all of them stale is one, every offset that reads all
//!   of them fresh is one, and when no ask is left to read, no offset is
//!   stored at all (as the timed automata's regions keep of a clock only
//!   what the comparisons left can tell apart).
//! - A build's length is read where it reaches the longest build, which ends
//!   it before time may pass; a build that cannot reach it before the
//!   horizon keeps only that it has run a tick.
//! - A late-heartbeat mark (`Run::delayed`) is read only while a heartbeat may
//!   still be made late.
//! - A message that is gone (acked, out of deliveries) keeps of its delivery
//!   count only whether it was delivered twice (the witness reads that).
//! - Builders with equal clocks are interchangeable (faults are budgets of
//!   the whole run, not of a builder): the stored form is the least packing
//!   over every renaming among them.

use super::mutation::Mutation;
use super::{Ask, Bid, Link, State, Status, MAX_BUILDERS};
use std::sync::OnceLock;

/// A renaming of builders: the new index of each.
pub type Renaming = [Bid; MAX_BUILDERS as usize];

impl Link {
    /// Whether some step reads a running key: the duplicate check's get.
    pub fn reads_keys(&self) -> bool {
        self.design.check.reads_key()
    }

    /// Whether some step reads a builder's clock: the duplicate check's
    /// freshness on the builder's own clock.
    pub fn reads_offsets(&self) -> bool {
        self.design.check.reads_key()
            && !self.server_clock()
            && self.mutation != Some(Mutation::FreshOnServerClock)
    }

    /// `s` with what no later step reads forgotten.
    pub fn forgotten(&self, s: &State) -> State {
        let mut s = *s;
        if !self.reads_keys() {
            s.keys.iter_mut().for_each(|k| *k = None);
        }
        if self.reads_keys() {
            for a in 0..s.keys.len() {
                if !self.may_read(&s, a as Ask) {
                    s.keys[a] = None;
                }
            }
        }
        if self.reads_offsets() {
            self.offsets_by_freshness(&mut s);
        } else {
            s.builders.iter_mut().for_each(|b| b.offset = 0);
        }
        let (horizon, longest) = (
            self.bounds.horizon_ticks() as i16,
            self.bounds.longest_build_ticks() as i16,
        );
        // Ticks stay possible while `now` is under the horizon: the last at
        // `horizon - 1`, where this build will have run `built + left`.
        let left = horizon - 1 - s.now as i16;
        for run in s.builders.iter_mut().filter_map(|b| b.run.as_mut()) {
            if run.built >= 1 && run.built as i16 + left < longest {
                run.built = 1;
            }
        }
        if s.lates_left == 0 {
            for run in s.builders.iter_mut().filter_map(|b| b.run.as_mut()) {
                run.delayed = false;
            }
        }
        // A rewind may send the last message handed out new out again,
        // out of deliveries or not: its count is read then.
        if s.rewinds_left == 0 {
            for m in s.messages.iter_mut().filter(|m| !m.is_left()) {
                m.deliveries = m.deliveries.min(2);
            }
        }
        s
    }

    /// Whether some builder may still read `a` (and its running key): it is
    /// buffered, on the way or decided on, or the server may hand its
    /// message out again before the horizon. A message is handed out again only when it is
    /// available, its ack wait runs out with deliveries left, or a nak
    /// (from a builder that holds a copy, so buffered) makes it available.
    fn may_read(&self, s: &State, a: Ask) -> bool {
        let left = self.bounds.horizon_ticks().saturating_sub(s.now);
        let msg = s.messages[a as usize];
        // A decided ask is read no more, but its drop reads whether the key
        // is done.
        let held = s.builders.iter().any(|b| {
            b.buffer.contains(&a)
                || b.on_the_way == Some(a)
                || b.decided.is_some_and(|d| d.ask == a)
        });
        // A rewind left may send the last message handed out new out
        // again (`--rewinds`), whatever its deliveries and ack wait.
        let rewound = msg.again || (s.rewinds_left > 0 && s.rewound_to() == Some(a));
        held || rewound
            || match msg.status {
                Status::Available => true,
                Status::Delivered { ack_in, .. } => {
                    ack_in <= left && msg.deliveries < self.bounds.max_deliver
                }
                Status::Acked | Status::Exhausted => false,
            }
    }

    /// Each builder's offset as the least or greatest of those that answer
    /// every freshness test left as it does (see the module's notes).
    fn offsets_by_freshness(&self, s: &mut State) {
        let readable: Vec<Ask> = (0..s.messages.len() as Ask)
            .filter(|&a| self.may_read(s, a))
            .collect();
        if readable.is_empty() {
            s.builders.iter_mut().for_each(|b| b.offset = 0);
            return;
        }
        let left = self.bounds.horizon_ticks().saturating_sub(s.now) as i16;
        let oldest = readable
            .iter()
            .filter_map(|&a| s.keys[a as usize].filter(|k| !k.done))
            .map(|k| k.age as i16)
            .max()
            .unwrap_or(0);
        // Every age a later read sees, a key's or one put from now on.
        let eldest = (oldest + left).min(self.stale_at() as i16);
        let threshold = self.fresh_threshold();
        let skew = self.bounds.skew_ticks() as i16;
        for b in s.builders.iter_mut() {
            let offset = b.offset as i16;
            // Fresh iff age + offset < threshold, for ages 0 to `eldest`.
            if offset >= threshold {
                b.offset = threshold.max(-skew) as i8;
            } else if offset + eldest < threshold {
                b.offset = (threshold - 1 - eldest).min(skew) as i8;
            }
        }
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
    &ALL.get_or_init(|| {
        (0..=MAX_BUILDERS as usize)
            .map(crate::permutations)
            .collect()
    })[n]
}

/// Whether renaming `to` keeps every builder's clock: a symmetry of `s`.
pub(crate) fn keeps_clocks(s: &State, to: &Renaming) -> bool {
    (0..s.builders.len()).all(|b| s.builders[to[b] as usize].offset == s.builders[b].offset)
}

#[cfg(test)]
mod tests {
    use super::{keeps_clocks, orderings};
    use crate::link::mutation::Mutation;
    use crate::link::{all_designs, Bounds, Link, State};
    use crate::permutations;
    use crate::Packed;
    use stateright::Model;
    use std::collections::HashSet;

    #[test]
    fn every_ordering_once() {
        for (n, count) in [(1, 1), (2, 2), (3, 6), (4, 24)] {
            let mut all: Vec<[u8; 4]> = permutations(n);
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

    /// Every freshness test, each mutant's included, is one comparison of
    /// the age on the reader's clock with `fresh_threshold`: what the stored
    /// offsets rest on.
    #[test]
    fn freshness_turns_at_its_threshold() {
        let design = crate::link::design_named("after-1649").unwrap();
        let mut m = Link::new(design, Bounds::default());
        for mutation in std::iter::once(None).chain(Mutation::ALL.map(Some)) {
            m.mutation = mutation;
            let threshold = m.fresh_threshold();
            let inverted = mutation == Some(Mutation::FreshInverted);
            for age_here in -30..30 {
                let age = if mutation == Some(Mutation::FreshOnServerClock) {
                    age_here
                } else {
                    7
                };
                assert_eq!(
                    m.is_fresh(age, age_here),
                    (age_here < threshold) != inverted,
                    "{mutation:?} at {age_here}"
                );
            }
        }
    }

    /// The stored form behaves as the state: on every state reachable in
    /// small bounds whose times the horizon cuts, for every design, the
    /// state and the state its stored form unpacks to reach the same stored
    /// forms in one step (what lets the checker search stored forms and
    /// replay a path on whole states).
    #[test]
    fn a_state_and_its_stored_form_reach_the_same_stored_forms() {
        let mut mutants = vec![None];
        mutants.extend(Mutation::ALL.map(Some));
        for design in all_designs() {
            for &mutation in &mutants {
                let bounds = Bounds {
                    asks: 2,
                    builders: 2,
                    skew: 25,
                    horizon: 45,
                    longest_build: 30,
                    ack_wait: 15,
                    late_heartbeats: 1,
                    late_by: 15,
                    ..Bounds::default()
                };
                let mut m = Link::new(design, bounds);
                m.mutation = mutation;
                let next = |s: &State| {
                    let mut actions = Vec::new();
                    m.actions(s, &mut actions);
                    let mut forms: Vec<Vec<u64>> = actions
                        .into_iter()
                        .filter_map(|a| m.next_state(s, a))
                        .map(|n| stored(&m, &n))
                        .collect();
                    forms.sort();
                    forms.dedup();
                    forms
                };
                let mut seen = HashSet::new();
                let mut todo = m.init_states();
                while let Some(s) = todo.pop() {
                    if seen.len() >= 5_000 || !seen.insert(s) {
                        continue;
                    }
                    let form = m.unpack(&stored(&m, &s));
                    assert_eq!(next(&s), next(&form), "{} {mutation:?}: {s:?}", design.name);
                    let mut actions = Vec::new();
                    m.actions(&s, &mut actions);
                    todo.extend(actions.into_iter().filter_map(|a| m.next_state(&s, a)));
                }
            }
        }
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
