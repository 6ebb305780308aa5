//! The graph the progress check walks, kept by the search as it expands
//! each state ([`Kept`]): which states owe something, and each such state's
//! steps as state numbers, in the order of its actions.
//!
//! Compact, since it lives as long as the search and more: each state's
//! steps are a count and then, per step, the distance from the state before
//! (the state itself for the first step), zigzag-encoded in 7-bit groups
//! (LEB128). A state's new successors are numbered one after the other in
//! the next level (in the order of its actions), so most distances after
//! the first take a byte: about 2.4 bytes a step and one a state, against
//! 4 and 4 as plain numbers and offsets. The start of every [`EVERY`]th
//! state's steps is kept, and each state's distance from it in two bytes,
//! so a state's steps are read without decoding another's (the progress
//! check reads every owing state's steps, in no order).
//!
//! A level's steps are encoded in [`Part`]s, one per search thread, each
//! a run of consecutive states, and appended in order.

/// States between two kept starts.
const EVERY: usize = 16;

#[derive(Default)]
pub(crate) struct Kept {
    /// Bit `n`: some progress property is pending in state `n`.
    owing: Vec<u64>,
    len: usize,
    /// Each state's steps, one after the other (see the module's comment).
    bytes: Vec<u8>,
    /// Where the steps of states 0, EVERY, 2·EVERY... start in `bytes`.
    starts: Vec<u64>,
    /// Per state, where its steps start after its block's start.
    offsets: Vec<u16>,
    /// Owing states where no weakly fair step is enabled and the bounds did
    /// not stop the run (they stutter for ever), in order.
    pub stutters: Vec<u32>,
}

fn put(bytes: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        bytes.push(x as u8 | 0x80);
        x >>= 7;
    }
    bytes.push(x as u8);
}

fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let mut x = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        x |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return x;
        }
        shift += 7;
    }
}

impl Kept {
    /// The states numbered so far.
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn owing(&self, n: u32) -> bool {
        self.owing[n as usize / 64] >> (n % 64) & 1 == 1
    }

    /// Which states owe something: bit `n % 64` of word `n / 64`, one
    /// word for every 64 states, no bit past the last state.
    pub fn owing_bits(&self) -> &[u64] {
        &self.owing
    }

    /// Adds the next state: whether it owes something, and its steps (none
    /// for a state that owes nothing).
    #[cfg(test)]
    pub fn push(&mut self, owing: bool, steps: impl ExactSizeIterator<Item = u32>) {
        let mut part = Part::new(self.len);
        part.push(owing, steps);
        self.append(part);
    }

    /// Adds a part's states, the next ones in order.
    pub fn append(&mut self, part: Part) {
        assert_eq!(part.first, self.len, "parts are appended in order");
        let base = self.bytes.len() as u64;
        for (owing, at) in part.owing.into_iter().zip(part.offsets) {
            let n = self.len;
            if n.is_multiple_of(64) {
                self.owing.push(0);
            }
            if owing {
                self.owing[n / 64] |= 1 << (n % 64);
            }
            let at = base + at as u64;
            if n.is_multiple_of(EVERY) {
                self.starts.push(at);
            }
            let block = self.starts.last().expect("a block's start");
            self.offsets
                .push(u16::try_from(at - block).expect("a block's states take under 64 KiB"));
            self.len += 1;
        }
        self.bytes.extend_from_slice(&part.bytes);
    }

    /// At most how many bytes a level of `states` states and `steps` steps
    /// adds, at most 5 bytes a step, 5 a state (its count) and one start
    /// every [`EVERY`] states; the steps copied once more if they move.
    pub fn level_bytes(&self, states: usize, steps: usize) -> usize {
        let more = steps * 5 + states * 5;
        let moved = if self.bytes.capacity() < self.bytes.len() + more {
            self.bytes.len()
        } else {
            0
        };
        // The parts hold the level's bytes and an offset a state until
        // they are appended.
        let parts = more + states * 5;
        more + parts + moved + (states / EVERY + 1) * 8 + states * 2 + states / 8 + 8
    }

    /// Makes room for such a level, so that the lists move (if at all) only
    /// here, after [`Kept::level_bytes`] was looked at.
    pub fn reserve_level(&mut self, states: usize, steps: usize) {
        self.bytes.reserve(steps * 5 + states * 5);
        self.starts.reserve(states / EVERY + 1);
        self.offsets.reserve(states);
        self.owing.reserve(states / 64 + 1);
    }

    /// Whether state `n` stutters for ever ([`Kept::stutters`]).
    pub fn stutters_at(&self, n: u32) -> bool {
        self.stutters.binary_search(&n).is_ok()
    }

    /// The steps of state `n`, in the order of its actions.
    pub fn steps(&self, n: u32) -> Vec<u32> {
        let mut steps = Vec::new();
        self.steps_into(n, |to| steps.push(to));
        steps
    }

    /// Each step of state `n` given to `each`, in the order of its actions
    /// (nothing allocated: the progress walk reads every owing state's).
    pub fn steps_into(&self, n: u32, mut each: impl FnMut(u32)) {
        let n = n as usize;
        let mut at = self.starts[n / EVERY] as usize + self.offsets[n] as usize;
        let count = get(&self.bytes, &mut at) as usize;
        let mut before = n as i64;
        for _ in 0..count {
            let z = get(&self.bytes, &mut at);
            before += (z >> 1) as i64 ^ -((z & 1) as i64);
            each(before as u32);
        }
    }
}

/// Consecutive states' steps, encoded apart from the others (by one search
/// thread) and then appended ([`Kept::append`]).
pub(crate) struct Part {
    /// The number of its first state.
    first: usize,
    owing: Vec<bool>,
    bytes: Vec<u8>,
    /// Per state, where its steps start in `bytes`.
    offsets: Vec<u32>,
}

impl Part {
    pub fn new(first: usize) -> Part {
        Part {
            first,
            owing: Vec::new(),
            bytes: Vec::new(),
            offsets: Vec::new(),
        }
    }

    /// Adds the next state: whether it owes something, and its steps.
    pub fn push(&mut self, owing: bool, steps: impl ExactSizeIterator<Item = u32>) {
        let n = self.first + self.owing.len();
        self.owing.push(owing);
        self.offsets
            .push(u32::try_from(self.bytes.len()).expect("a part under 4 GiB"));
        put(&mut self.bytes, steps.len() as u64);
        let mut before = n as i64;
        for to in steps {
            let d = to as i64 - before;
            put(&mut self.bytes, ((d << 1) ^ (d >> 63)) as u64);
            before = to as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_gets_back_its_steps_in_order() {
        let mut kept = Kept::default();
        let mut all = Vec::new();
        for n in 0..1000u32 {
            let owing = n % 3 != 0;
            let steps: Vec<u32> = if owing {
                (0..n % 7)
                    .map(|i| match i % 3 {
                        0 => n + 1 + i,
                        1 => n / 2,
                        _ => u32::MAX - i,
                    })
                    .collect()
            } else {
                Vec::new()
            };
            kept.push(owing, steps.iter().copied());
            all.push((owing, steps));
        }
        assert_eq!(kept.len(), 1000);
        for (n, (owing, steps)) in all.iter().enumerate() {
            assert_eq!(kept.owing(n as u32), *owing);
            assert_eq!(&kept.steps(n as u32), steps);
        }
    }

    #[test]
    fn parts_of_any_length_read_back_as_one() {
        let steps_of = |n: u32| -> Vec<u32> { (0..n % 5).map(|i| n * 3 + i).collect() };
        let mut kept = Kept::default();
        let mut first = 0u32;
        // Parts that end inside a block and span several.
        for len in [7u32, 100, 333, 1, 59] {
            let mut part = Part::new(first as usize);
            for n in first..first + len {
                part.push(n % 2 == 0, steps_of(n).into_iter());
            }
            kept.append(part);
            first += len;
        }
        assert_eq!(kept.len(), first as usize);
        for n in 0..first {
            assert_eq!(kept.owing(n), n % 2 == 0);
            assert_eq!(kept.steps(n), steps_of(n));
        }
    }
}
