//! The set of states seen, as 64-bit fingerprints: open-addressing tables in
//! shards, chosen by a fingerprint's top bits. A search reads every shard
//! from every thread while it explores a level, and inserts a level's new
//! states shard by shard, each shard by one thread, so no lock is needed.
//! A shard grows on its own, so growing never holds two copies of the
//! whole table at once.

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

/// One shard: linear probing over a power-of-two table, grown at 3/4 full.
#[derive(Default)]
pub struct Shard {
    slots: Vec<u64>,
    len: usize,
}

impl Shard {
    fn index(&self, fp: u64) -> usize {
        // The top bits chose the shard; the low bits place it within.
        fp as usize & (self.slots.len() - 1)
    }

    pub fn contains(&self, fp: u64) -> bool {
        if self.slots.is_empty() {
            return false;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.index(fp);
        loop {
            match self.slots[i] {
                0 => return false,
                slot if slot == fp => return true,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Inserts `fp`; false if it was there already.
    pub fn insert(&mut self, fp: u64) -> bool {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.index(fp);
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = fp;
                    self.len += 1;
                    return true;
                }
                slot if slot == fp => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(64);
        let old = std::mem::replace(&mut self.slots, vec![0; size]);
        self.len = 0;
        for fp in old.into_iter().filter(|&fp| fp != 0) {
            let mask = size - 1;
            let mut i = self.index(fp);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = fp;
            self.len += 1;
        }
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
    pub fn shard_of(fp: u64) -> usize {
        (fp >> (64 - SHARD_BITS)) as usize
    }

    pub fn contains(&self, fp: u64) -> bool {
        self.shards[Self::shard_of(fp)].contains(fp)
    }

    pub fn insert(&mut self, fp: u64) -> bool {
        self.shards[Self::shard_of(fp)].insert(fp)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(Shard::len).sum()
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
