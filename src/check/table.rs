//! The set of states seen, as 64-bit fingerprints: open-addressing tables in
//! shards, chosen by a fingerprint's top bits. A search reads every shard
//! from every thread while it explores a level, and inserts a level's new
//! states shard by shard, each shard by one thread, so no lock is needed.
//! A shard grows on its own, so growing never holds two copies of the
//! whole table at once. A table made [`Table::numbered`] also keeps each
//! state's number beside its fingerprint (4 bytes a slot), for the progress
//! check's steps.

use super::memory::zeroed;

/// Shards: enough that growing one is a small step, and that threads
/// inserting into disjoint groups of them stay balanced.
pub const SHARDS: usize = 1024;
const SHARD_BITS: u32 = SHARDS.trailing_zeros();

/// Fingerprints of the packed words of a state. Fixed constants, so the
/// same state has the same fingerprint in every run; never zero (zero marks
/// an empty slot).
pub fn fingerprint(words: &[u64]) -> u64 {
    // Multiply-and-fold rounds (as wyhash does): each word changes every bit
    // of the result.
    const P0: u64 = 0xa076_1d64_78bd_642f;
    const P1: u64 = 0xe703_7ed1_a0b4_28db;
    const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
    fn fold(a: u64, b: u64) -> u64 {
        let product = a as u128 * b as u128;
        (product as u64) ^ (product >> 64) as u64
    }
    let mut h = P2 ^ words.len() as u64;
    for (i, &w) in words.iter().enumerate() {
        h = fold(h ^ w ^ P0, P1 ^ (i as u64).wrapping_mul(P2));
    }
    let h = fold(h ^ P1, P0);
    if h == 0 {
        1
    } else {
        h
    }
}

/// Asks the processor to bring `at` into its cache, and goes on.
fn prefetch<T>(at: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints at an address (a valid one here); it
    // reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((at as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// One shard: linear probing over a power-of-two table, grown at 3/4 full.
/// A slot is its fingerprint (zero: empty) and, in a numbered shard, its
/// state's number beside it, in one list: a look that needs the number
/// then misses the cache once, not twice (two lists did).
pub struct Shard {
    /// Per slot, `stride` words: the fingerprint's low and high halves,
    /// then the number if numbered.
    cells: Vec<u32>,
    /// [`PLAIN`] or [`NUMBERED`] words a slot.
    stride: usize,
    /// Slots (a power of two, or none): kept, not divided out of the
    /// cells' length at every look (a division there was a few percent
    /// of a search's time).
    slots: usize,
    len: usize,
}

/// Words a slot: a fingerprint; a fingerprint and a number.
const PLAIN: usize = 2;
const NUMBERED: usize = 3;

impl Default for Shard {
    fn default() -> Self {
        Shard {
            cells: Vec::new(),
            stride: PLAIN,
            slots: 0,
            len: 0,
        }
    }
}

impl Shard {
    fn numbered() -> Self {
        Shard {
            stride: NUMBERED,
            ..Shard::default()
        }
    }

    /// Whether the next insert grows the shard (past 3/4 full).
    fn grows_next(&self) -> bool {
        (self.len + 1) * 4 > self.slots * 3
    }

    fn index(&self, fp: u64) -> usize {
        // The top bits chose the shard; the low bits place it within.
        fp as usize & (self.slots - 1)
    }

    fn fp_at(&self, i: usize) -> u64 {
        let at = i * self.stride;
        u64::from(self.cells[at]) | u64::from(self.cells[at + 1]) << 32
    }

    fn set_fp(&mut self, i: usize, fp: u64) {
        let at = i * self.stride;
        self.cells[at] = fp as u32;
        self.cells[at + 1] = (fp >> 32) as u32;
    }

    // A plain shard's third word would be the next slot's: only a
    // numbered shard has numbers.
    fn number_at(&self, i: usize) -> u32 {
        assert_eq!(self.stride, NUMBERED, "a plain shard keeps no numbers");
        self.cells[i * NUMBERED + 2]
    }

    fn set_number_at(&mut self, i: usize, number: u32) {
        assert_eq!(self.stride, NUMBERED, "a plain shard keeps no numbers");
        self.cells[i * NUMBERED + 2] = number;
    }

    pub fn contains(&self, fp: u64) -> bool {
        self.find(fp).is_some()
    }

    /// Asks for the slot where a look for `fp` starts to be brought into
    /// the cache, without waiting for it.
    pub fn prefetch(&self, fp: u64) {
        if self.cells.is_empty() {
            return;
        }
        let at = self.index(fp) * self.stride;
        prefetch(&self.cells[at]);
        // A slot of three words may end in the next cache line.
        let last = &self.cells[at + self.stride - 1];
        if (last as *const u32 as usize) % 64 < 4 * (self.stride - 1) {
            prefetch(last);
        }
    }

    /// The slot holding `fp`.
    fn find(&self, fp: u64) -> Option<usize> {
        if self.cells.is_empty() {
            return None;
        }
        let mask = self.slots - 1;
        let mut i = self.index(fp);
        loop {
            match self.fp_at(i) {
                0 => return None,
                slot if slot == fp => return Some(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Inserts `fp`; false if it was there already.
    pub fn insert(&mut self, fp: u64) -> bool {
        self.place(fp).is_ok()
    }

    /// Inserts `fp` with its number (none: it is given `number`), or gives
    /// the number it was inserted with.
    pub fn insert_numbered(&mut self, fp: u64, number: u32) -> Option<u32> {
        match self.place(fp) {
            Ok(i) => {
                self.set_number_at(i, number);
                None
            }
            Err(i) => Some(self.number_at(i)),
        }
    }

    /// The slot `fp` is put in (`Ok`), or the one it was in already.
    fn place(&mut self, fp: u64) -> Result<usize, usize> {
        if self.grows_next() {
            self.grow();
        }
        let mask = self.slots - 1;
        let mut i = self.index(fp);
        loop {
            match self.fp_at(i) {
                0 => {
                    self.set_fp(i, fp);
                    self.len += 1;
                    return Ok(i);
                }
                slot if slot == fp => return Err(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The bytes the next insert allocates if it grows the shard, else 0.
    pub fn growth_bytes(&self) -> usize {
        if self.grows_next() {
            (self.slots * 2).max(64) * self.stride * 4
        } else {
            0
        }
    }

    fn grow(&mut self) {
        let size = (self.slots * 2).max(64);
        let old = Shard {
            cells: std::mem::replace(&mut self.cells, zeroed(size * self.stride)),
            ..*self
        };
        self.slots = size;
        self.len = 0;
        let mask = size - 1;
        for at in 0..old.slots {
            let fp = old.fp_at(at);
            if fp == 0 {
                continue;
            }
            let mut i = self.index(fp);
            while self.fp_at(i) != 0 {
                i = (i + 1) & mask;
            }
            self.set_fp(i, fp);
            if self.stride == NUMBERED {
                self.set_number_at(i, old.number_at(at));
            }
            self.len += 1;
        }
    }

    /// Gives the state of `fp` (inserted) its number.
    pub fn set_number(&mut self, fp: u64, number: u32) {
        let i = self.find(fp).expect("a numbered state is in its shard");
        self.set_number_at(i, number);
    }

    /// The number of the state of `fp`, if it is in the shard.
    pub fn number(&self, fp: u64) -> Option<u32> {
        self.find(fp).map(|i| self.number_at(i))
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

/// Every shard.
pub struct Table {
    pub shards: Vec<Shard>,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

impl Table {
    /// A table that keeps each state's number too.
    pub fn numbered() -> Self {
        Table {
            shards: (0..SHARDS).map(|_| Shard::numbered()).collect(),
        }
    }

    pub fn set_number(&mut self, fp: u64, number: u32) {
        self.shards[Self::shard_of(fp)].set_number(fp, number);
    }

    pub fn number(&self, fp: u64) -> Option<u32> {
        self.shards[Self::shard_of(fp)].number(fp)
    }

    pub fn shard_of(fp: u64) -> usize {
        (fp >> (64 - SHARD_BITS)) as usize
    }

    pub fn contains(&self, fp: u64) -> bool {
        self.shards[Self::shard_of(fp)].contains(fp)
    }

    /// See [`Shard::prefetch`].
    pub fn prefetch(&self, fp: u64) {
        self.shards[Self::shard_of(fp)].prefetch(fp);
    }

    pub fn insert(&mut self, fp: u64) -> bool {
        self.shards[Self::shard_of(fp)].insert(fp)
    }

    /// See [`Shard::insert_numbered`].
    pub fn insert_numbered(&mut self, fp: u64, number: u32) -> Option<u32> {
        self.shards[Self::shard_of(fp)].insert_numbered(fp, number)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(Shard::len).sum()
    }

    /// About how many bytes the shards that grow allocate while `added`
    /// more fingerprints are inserted (spread evenly, as fingerprints are).
    pub fn growth_bytes(&self, added: usize) -> usize {
        let each = added.div_ceil(SHARDS);
        self.shards
            .iter()
            .map(|shard| {
                let slot = shard.stride * 4;
                let mut size = shard.slots;
                let mut bytes = 0;
                while (shard.len + each) * 4 > size * 3 {
                    size = (size * 2).max(64);
                    bytes += size * slot;
                }
                bytes
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_of_fingerprints_keeps_what_is_inserted_and_nothing_else() {
        let mut table = Table::default();
        let fps: Vec<u64> = (0..100_000u64).map(|i| fingerprint(&[i, i * 7])).collect();
        for &fp in &fps {
            assert!(table.insert(fp));
        }
        for &fp in &fps {
            assert!(table.contains(fp));
            assert!(!table.insert(fp), "inserted twice");
        }
        assert_eq!(table.len(), fps.len());
        assert!(!table.contains(fingerprint(&[1, 2, 3])));
    }

    #[test]
    fn a_numbered_table_keeps_each_number_through_growing() {
        let mut table = Table::numbered();
        let fps: Vec<u64> = (0..50_000u64).map(|i| fingerprint(&[i])).collect();
        for (n, &fp) in fps.iter().enumerate() {
            assert!(table.insert(fp));
            table.set_number(fp, n as u32);
        }
        for (n, &fp) in fps.iter().enumerate() {
            assert_eq!(table.number(fp), Some(n as u32));
        }
        assert_eq!(table.number(fingerprint(&[1, 2, 3])), None);
    }

    #[test]
    fn fingerprints_depend_on_every_word_and_its_place() {
        let a = fingerprint(&[1, 0, 0, 0]);
        assert_ne!(a, fingerprint(&[0, 1, 0, 0]));
        assert_ne!(a, fingerprint(&[1, 0, 0]));
        assert_ne!(fingerprint(&[0, 0]), fingerprint(&[0]));
        assert_eq!(a, fingerprint(&[1, 0, 0, 0]), "the same every time");
        // Spread over the shards.
        let mut used = std::collections::HashSet::new();
        for i in 0..10_000u64 {
            used.insert(Table::shard_of(fingerprint(&[i])));
        }
        assert!(used.len() > SHARDS * 9 / 10);
    }
}
