//! slotcheck's breadth-first search, over any stateright [`Model`] whose
//! states pack into words ([`Packed`]). Level by level, so that the first
//! state found to break a property is at the least depth (a shortest
//! counterexample), and in one canonical order, so that what is found does
//! not depend on how many threads searched. With one or two threads, in
//! order ([`IN_ORDER`]):
//!
//! - The level's states are taken in chunks of [`CHUNK`]; a chunk's
//!   successors are made (packed and fingerprinted) by either thread, up
//!   to a window of chunks ahead, and **judged** in chunk order by one: each
//!   successor is inserted into the table, and a new one numbered at once,
//!   its words appended to the next level. That is key order (a
//!   successor's key is its parent's number and its action's index), the
//!   order the next level is numbered in. The judge's part is nearly as
//!   much as the making; it makes chunks too while it waits.
//! - With progress properties, the level's steps are encoded for the
//!   progress check while the next level is expanded ([`Deferred`]): the
//!   second thread takes them first, the judge when it would wait.
//!
//! Whatever the thread count, a state is judged against the `always` and
//! `sometimes` properties by the thread that expands it ([`Seek`]), so
//! that the judge does none of it: the first state of a level to break a
//! property is the least-numbered, the least key.
//!
//! With more threads, a level's insertion is shared:
//!
//! 1. **Expand** (every thread): each successor not seen before this level
//!    is kept as a candidate, under its key and its fingerprint. A thread
//!    keeps only the first of its own duplicates.
//! 2. **Insert** (every thread, each on its own shards of the table): the
//!    candidates are merged in key order and inserted; the first insertion
//!    of a state is the one with the least key, whichever thread found it.
//! 3. **Number** the new states in key order: that is the order one thread
//!    would have found them in, and the next level's order.
//!
//! The search keeps, per state, its fingerprint (in [`Table`]), its parent's
//! number and its action's index (5 bytes), and the packed words of the
//! level being expanded and of the next: a counterexample's path is rebuilt
//! from the parents and replayed. Budgets (states, time, memory) are looked
//! at between chunks, so a run stops within a few milliseconds of one.
//!
//! With progress properties asked for, it also keeps the graph the progress
//! check walks ([`Kept`]): which states owe something, and each such state's
//! steps as state numbers (a few bytes a step), found while expanding it,
//! so that no state is expanded twice (the table then keeps numbers too).
//! Judged in order, every step's target is numbered when it is judged.
//! Shared, a step's target seen before is numbered already, and its number
//! is read where the expansion looks it up; a new one is numbered only in
//! the next level, so its step is kept as a fingerprint until the level
//! after it is numbered.

use super::kept::{Kept, Part};
use super::table::{fingerprint, Shard, Table, SHARDS};
use super::{Cut, Limits, Phases};
use crate::check::memory::resident_bytes;
use crate::check::progress::{checker_line, Meter};
use slotcheck_models::{Narrated, Packed, Progress};
use stateright::{Expectation, Model, Property};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many candidates ahead an insert asks for a candidate's place.
const AHEAD: usize = 8;
/// How many successors ahead a search asks for a successor's place in the
/// table: far enough for it to arrive before it is looked at (measured:
/// 8 to 32 alike, 8% faster than asking for a chunk's places at once).
const LOOK_AHEAD: usize = 16;
/// Up to how many threads a level's successors are judged in order by
/// one of them (the others make successors); more share the insertion.
/// The judge's part is nearly as much as the making, so a third thread
/// would wait on it.
const IN_ORDER: usize = 2;
/// How many chunks a thread may be made ahead of the one being judged.
const WINDOW: usize = 16;
/// States a thread takes at a time.
const CHUNK: usize = 256;
/// A step's target not numbered yet (numbered with the next level).
const UNNUMBERED: u32 = u32::MAX;
/// How often a thread looks at the process's memory.
const MEMORY_EVERY: Duration = Duration::from_millis(20);
/// The key of an initial state ([`Searched::key_of`]): this bit and its
/// index.
const INIT: u64 = 1 << 63;

/// A property's first discovery: the number of the state that made it,
/// and when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Discovery {
    pub number: usize,
    pub after: Duration,
}

/// What a search found and what it cost.
pub(crate) struct Searched {
    /// Per property (in the order given), its first discovery.
    pub found: Vec<Option<Discovery>>,
    /// States generated, the initial ones included.
    pub states: usize,
    pub unique: usize,
    /// Levels explored (the initial states are depth 1).
    pub depth: usize,
    pub cut: Option<Cut>,
    /// Where the search's time went.
    pub phases: Phases,
    /// Parents and actions of every state found, to rebuild paths; the
    /// first states are the initial ones, each with its index among them.
    parents: Vec<u32>,
    via: Vec<u8>,
    roots: Vec<u32>,
    /// With progress properties: the graph they are judged on.
    pub kept: Option<Kept>,
}

/// One chunk's part of the graph: its states' owing flags, step counts and
/// steps (numbers, or fingerprints until numbered), and its stutters (as
/// indices into the level).
struct ChunkSteps {
    chunk: usize,
    owing: Vec<bool>,
    counts: Vec<u32>,
    /// Each step's target's number if it was numbered when the step was
    /// made, else [`UNNUMBERED`] (it is numbered with the next level: shared
    /// insertion only) and its fingerprint beside it.
    numbers: Vec<u32>,
    fingerprints: Vec<u64>,
    stutters: Vec<u32>,
}

/// The time since `clock`, which moves on to now.
fn lap(clock: &mut Instant) -> Duration {
    let now = Instant::now();
    now - std::mem::replace(clock, now)
}

/// Whether `state` is a discovery for `property`: it breaks an `always`, or
/// it is a witness of a `sometimes`.
fn discovers<M: Model>(property: &Property<M>, model: &M, state: &M::State) -> bool {
    let holds = (property.condition)(model, state);
    match property.expectation {
        Expectation::Always => !holds,
        Expectation::Sometimes => holds,
        Expectation::Eventually => unreachable!("eventually properties are not searched"),
    }
}

/// What the makers look for in the states they expand: the properties
/// not found in an earlier level (`todo`, by index), and when the search
/// started. A state is judged against the properties when it is expanded,
/// by whichever thread makes its successors (it is unpacked then anyway),
/// not when it is found: every state is expanded once, in its level, and
/// the least number in a level is the least key, so the discovery is the
/// one judging at insertion would give, one level later.
struct Seek<'a, M: Model> {
    properties: &'a [Property<M>],
    todo: Vec<bool>,
    started: Instant,
}

impl<M: Model> Seek<'_, M> {
    /// Per property, none found in this level yet.
    fn none(&self) -> Vec<Option<(usize, Duration)>> {
        vec![None; self.properties.len()]
    }

    /// Notes in `first` the properties still to find that `state` (the
    /// level's `i`th) discovers, unless an earlier state did.
    fn look(&self, model: &M, state: &M::State, i: usize, first: &mut [Option<(usize, Duration)>]) {
        for (p, property) in self.properties.iter().enumerate() {
            if self.todo[p] && first[p].is_none() && discovers(property, model, state) {
                first[p] = Some((i, self.started.elapsed()));
            }
        }
    }
}

/// Keeps in `level` each discovery of `chunk` that comes before the one
/// `level` has (by the state's index in the level).
fn earliest(level: &mut [Option<(usize, Duration)>], chunk: &[Option<(usize, Duration)>]) {
    for (l, c) in level.iter_mut().zip(chunk) {
        if let Some(c) = c.filter(|c| l.is_none_or(|l| c.0 < l.0)) {
            *l = Some(c);
        }
    }
}

/// Notes in `found` the level's first discoveries (`first`, by index in the
/// level that starts at number `level_start`).
fn discovered(
    found: &mut [Option<Discovery>],
    first: &[Option<(usize, Duration)>],
    level_start: usize,
) {
    for (found, first) in found.iter_mut().zip(first) {
        if let (None, Some((i, after))) = (*found, *first) {
            *found = Some(Discovery {
                number: level_start + i,
                after,
            });
        }
    }
}

/// The budgets, shared by the threads: whichever runs out first cuts the run.
struct Budget {
    max_states: Option<usize>,
    deadline: Option<Instant>,
    max_memory: Option<u64>,
    generated: AtomicUsize,
    stop: AtomicBool,
    cut: AtomicU8,
}

impl Budget {
    fn cut_by(&self, cut: Cut) {
        let _ = self
            .cut
            .compare_exchange(0, cut as u8 + 1, Ordering::Relaxed, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn cut(&self) -> Option<Cut> {
        match self.cut.load(Ordering::Relaxed) {
            0 => None,
            n => Some(Cut::ALL[n as usize - 1]),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Takes `n` more generated states from the budget; false (and the run
    /// cut) if that would go over it.
    fn take_states(&self, n: usize) -> bool {
        let before = self.generated.fetch_add(n, Ordering::Relaxed);
        if self.max_states.is_some_and(|max| before + n > max) {
            self.generated.fetch_sub(n, Ordering::Relaxed);
            self.cut_by(Cut::MaxStates);
            return false;
        }
        true
    }

    fn look_at_time(&self) {
        if super::budget::cancelled() {
            self.cut_by(Cut::Signal);
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.cut_by(Cut::Timeout);
        }
    }

    fn look_at_memory(&self) {
        self.look_at_memory_for(0);
    }

    /// Whether the run may go on and take `bytes` more (none: no look).
    fn room_for(&self, bytes: usize) -> bool {
        if bytes > 0 {
            self.look_at_memory_for(bytes as u64);
        }
        !self.stopped()
    }

    /// Cuts the run if what it holds and `bytes` more, what the next phase
    /// builds before it can look again, would go over the memory budget: a
    /// level's insertion and numbering write tens of megabytes between two
    /// looks, past the budget by as much.
    fn look_at_memory_for(&self, bytes: u64) {
        if let (Some(max), Some(now)) = (self.max_memory, resident_bytes()) {
            if now.saturating_add(bytes) > max {
                self.cut_by(Cut::MaxMemory);
            }
        }
    }
}

/// The bytes `list` allocates to take `more` items (none if they fit).
fn grown_bytes<T>(list: &Vec<T>, more: usize) -> usize {
    if list.capacity() - list.len() >= more {
        0
    } else {
        (list.capacity() * 2).max(list.len() + more).max(4) * size_of::<T>()
    }
}

impl ChunkSteps {
    fn new(chunk: usize) -> ChunkSteps {
        ChunkSteps {
            chunk,
            owing: Vec::with_capacity(CHUNK),
            counts: Vec::with_capacity(CHUNK),
            fingerprints: Vec::new(),
            numbers: Vec::new(),
            stutters: Vec::new(),
        }
    }
}

/// A thread's lists for making a chunk's successors, kept from chunk to
/// chunk.
struct Scratch {
    /// Per state made (in order from the chunk's first): how many
    /// successors it has (whether it owes something is the chunk's
    /// [`ChunkSteps`]). Per successor, in order: its fingerprint, its
    /// action's index, its words (`k` a successor). The judge reads every
    /// successor a making thread wrote, each line from the other core's
    /// cache: 9 bytes a successor and 2 a state (a successor's state is
    /// where it falls in the counts).
    counts: Vec<u16>,
    fps: Vec<u64>,
    acts: Vec<u8>,
    words: Vec<u64>,
    /// Words a state.
    k: usize,
    /// Per property, the chunk's first state (its index in the level) that
    /// discovers it, and when.
    first: Vec<Option<(usize, Duration)>>,
}

impl Scratch {
    fn new(k: usize) -> Self {
        Scratch {
            counts: Vec::new(),
            fps: Vec::new(),
            acts: Vec::new(),
            words: Vec::new(),
            k,
            first: Vec::new(),
        }
    }

    /// Each successor in order: its state (its index in the chunk) and
    /// the successor's index.
    fn each(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .scan(0usize, |at, (i, &count)| {
                let from = *at;
                *at += usize::from(count);
                Some((from..*at).map(move |n| (i, n)))
            })
            .flatten()
    }

    /// Makes the successors of the level's states `range` (their words in
    /// `frontier`; `actions` is the thread's list for their actions), and
    /// with `steps` each state's part of the progress check's graph:
    /// whether it owes something, and whether it stutters; in `first`, the
    /// properties `seek` looks for that the states discover. Every successor
    /// is made first and judged after, so that their looks at the table
    /// can overlap (the table's look is most of a search's time). Stops
    /// early when the state budget runs out.
    #[allow(clippy::too_many_arguments)]
    fn successors<M>(
        &mut self,
        actions: &mut Vec<M::Action>,
        model: &M,
        progress: &[Progress<M>],
        seek: &Seek<M>,
        frontier: &[u64],
        range: std::ops::Range<usize>,
        mut steps: Option<&mut ChunkSteps>,
        budget: &Budget,
    ) where
        M: Narrated + Packed,
    {
        let k = self.k;
        let from = range.start;
        self.counts.clear();
        self.fps.clear();
        self.acts.clear();
        self.words.clear();
        self.first.clear();
        self.first.resize(seek.properties.len(), None);
        // Without a state budget, the chunk's states are counted once at its
        // end: a shared counter written every state keeps its cache line
        // moving between the threads.
        let mut taken = 0;
        for i in range {
            let state = model.unpack(&frontier[i * k..(i + 1) * k]);
            model.actions(&state, actions);
            if budget.max_states.is_none() {
                taken += actions.len();
            } else if !budget.take_states(actions.len()) {
                break;
            }
            seek.look(model, &state, i, &mut self.first);
            // The progress check's part: whether the state owes something,
            // and if so its steps, in action order.
            let owing = steps.as_deref_mut().is_some_and(|steps| {
                let owing = owes(progress, model, &state);
                steps.owing.push(owing);
                if owing {
                    // A reduction may offer fewer steps than are enabled: a
                    // stutter is judged on them all.
                    let fair = actions.iter().any(|a| model.fairness(&state, a).is_some()) || {
                        let mut all = Vec::new();
                        model.enabled_actions(&state, &mut all);
                        all.iter().any(|a| model.fairness(&state, a).is_some())
                    };
                    if !fair && !model.stopped_by_bounds(&state) {
                        steps.stutters.push((i - from) as u32);
                    }
                }
                owing
            });
            let before = self.fps.len();
            for (j, action) in actions.drain(..).enumerate() {
                // Packed in place: a copy less, and no small list of its own
                // that shares a cache line with the other thread's.
                let at = self.words.len();
                self.words.resize(at + k, 0);
                if !model.pack_next(&state, action, &mut self.words[at..]) {
                    self.words.truncate(at);
                    continue;
                }
                self.fps.push(fingerprint(&self.words[at..]));
                self.acts
                    .push(u8::try_from(j).expect("at most 256 actions from a state"));
            }
            let count = self.fps.len() - before;
            self.counts
                .push(u16::try_from(count).expect("at most 256 actions from a state"));
            // An owing state's steps are kept; another's are not.
            if let Some(steps) = steps.as_deref_mut() {
                steps.counts.push(if owing { count as u32 } else { 0 });
            }
        }
        budget.generated.fetch_add(taken, Ordering::Relaxed);
    }

    /// The successors whose places in the table to ask for before judging
    /// the `n`th: the first [`LOOK_AHEAD`] and it before the first, then
    /// the one [`LOOK_AHEAD`] after it.
    fn ahead(&self, n: usize) -> &[u64] {
        let ahead = if n == 0 {
            0..LOOK_AHEAD + 1
        } else {
            n + LOOK_AHEAD..n + LOOK_AHEAD + 1
        };
        &self.fps[ahead.start.min(self.fps.len())..ahead.end.min(self.fps.len())]
    }
}

/// A run's steps encoded, and its stutters (as state numbers).
type Encoded = (Part, Vec<u32>);

/// Encodes a run of a level's consecutive chunks (the level's first state
/// numbered `expanded_from`) for the progress check: their states' steps,
/// and their stutters. A step whose target was not numbered when it was
/// made is looked up in `table` (shared insertion only: judged in order,
/// every target is numbered).
fn encode(run: Vec<ChunkSteps>, expanded_from: usize, table: Option<&Table>) -> Encoded {
    let first = run.first().map_or(0, |c| expanded_from + c.chunk * CHUNK);
    let mut part = Part::new(first);
    let mut stutters = Vec::new();
    for chunk in run {
        let base = (expanded_from + chunk.chunk * CHUNK) as u32;
        // Every new target's place asked for first: their misses overlap.
        if let Some(table) = table {
            for (&fp, _) in chunk
                .fingerprints
                .iter()
                .zip(&chunk.numbers)
                .filter(|&(_, &n)| n == UNNUMBERED)
            {
                table.prefetch(fp);
            }
        }
        let mut at = 0usize;
        for (owing, count) in chunk.owing.into_iter().zip(chunk.counts) {
            let range = at..at + count as usize;
            at += count as usize;
            let fingerprints = &chunk.fingerprints;
            part.push(
                owing,
                range.map(|j| match chunk.numbers[j] {
                    UNNUMBERED => table
                        .and_then(|table| table.number(fingerprints[j]))
                        .expect("every step leads to a numbered state"),
                    n => n,
                }),
            );
        }
        stutters.extend(chunk.stutters.into_iter().map(|i| base + i));
    }
    (part, stutters)
}

/// Adds an encoded run to the graph: the next states in order.
fn append(kept: &mut Kept, (part, stutters): Encoded) {
    kept.append(part);
    kept.stutters.extend(stutters);
}

/// Runs of consecutive chunks about as many steps each, `runs` of them.
fn runs_of(level_steps: Vec<ChunkSteps>, runs: usize) -> Vec<Vec<ChunkSteps>> {
    let steps: usize = level_steps.iter().map(|c| c.numbers.len()).sum();
    let share = steps.div_ceil(runs.max(1)).max(1);
    let mut all: Vec<Vec<ChunkSteps>> = Vec::new();
    let mut in_run = 0usize;
    for chunk in level_steps {
        if all.is_empty() || in_run >= share {
            all.push(Vec::new());
            in_run = 0;
        }
        in_run += chunk.numbers.len();
        all.last_mut().expect("a run").push(chunk);
    }
    all
}

/// A level's steps judged in order (every target numbered), encoded for
/// the progress check while the next level is expanded: a run at a time,
/// by whichever thread is free, the parts appended to the graph by the
/// thread that encodes the last run.
struct Deferred {
    expanded_from: usize,
    runs: Vec<Mutex<Option<Vec<ChunkSteps>>>>,
    parts: Vec<Mutex<Option<Encoded>>>,
    next: AtomicUsize,
    encoded: AtomicUsize,
    kept: Mutex<Option<Kept>>,
}

impl Deferred {
    /// Runs per thread: small enough that neither thread waits long for
    /// the other's last.
    const RUNS: usize = 8;

    fn new(level_steps: Vec<ChunkSteps>, expanded_from: usize, kept: Kept, threads: usize) -> Self {
        let runs = runs_of(level_steps, Self::RUNS * threads);
        Deferred {
            expanded_from,
            parts: runs.iter().map(|_| Mutex::new(None)).collect(),
            runs: runs.into_iter().map(|r| Mutex::new(Some(r))).collect(),
            next: AtomicUsize::new(0),
            encoded: AtomicUsize::new(0),
            kept: Mutex::new(Some(kept)),
        }
    }

    /// Encodes a run if one is left (and with the last, appends every
    /// part); false when none was.
    fn work(&self) -> bool {
        // Looked at before it is taken: the maker asks before every chunk,
        // and a read leaves the line shared where a write would move it.
        if self.next.load(Ordering::Relaxed) >= self.runs.len() {
            return false;
        }
        let r = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(run) = self.runs.get(r) else {
            return false;
        };
        let run = run.lock().expect("a run").take().expect("a run taken once");
        *self.parts[r].lock().expect("a part") = Some(encode(run, self.expanded_from, None));
        if self.encoded.fetch_add(1, Ordering::AcqRel) + 1 == self.runs.len() {
            let mut kept = self.kept.lock().expect("the graph");
            let kept = kept.as_mut().expect("the graph");
            for part in &self.parts {
                append(kept, part.lock().expect("a part").take().expect("encoded"));
            }
        }
        true
    }

    /// The graph with every run encoded and appended (what is left done
    /// here).
    fn finish(self) -> Kept {
        while self.work() {}
        self.kept
            .into_inner()
            .expect("the graph")
            .expect("the graph")
    }
}

/// Sets its flag if the thread holding it panics.
struct Abandon<'a>(&'a AtomicBool);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A chunk's successors made, waiting in its slot to be judged in order.
struct Made {
    full: bool,
    scratch: Scratch,
    steps: Option<ChunkSteps>,
}

impl Made {
    fn new(k: usize) -> Self {
        Made {
            full: false,
            scratch: Scratch::new(k),
            steps: None,
        }
    }
}

/// What one thread gathers while it expands a level.
struct Expansion {
    /// Candidates per group of shards: key, fingerprint, then the words.
    buckets: Vec<Vec<u64>>,
    /// Fingerprints this thread has already made a candidate this level.
    mine: Shard,
    /// Per property, the first state this thread expanded (its index in
    /// the level) that discovers it.
    first: Vec<Option<(usize, Duration)>>,
    /// With progress properties: the steps of each chunk this thread took.
    steps: Vec<ChunkSteps>,
}

/// Whether a progress property is pending in `state`.
fn owes<M: Narrated>(progress: &[Progress<M>], model: &M, state: &M::State) -> bool {
    progress.iter().any(|p| (p.pending)(model, state) != 0)
}

/// Where the first `r` keys of the merged lists end in each list (list
/// `g`'s `i`th key is `key_at(g, i)`): each list is sorted, and no key is
/// in two of them.
fn co_rank(lens: &[usize], key_at: &impl Fn(usize, usize) -> u64, r: usize) -> Vec<usize> {
    let upto = |v: u64| -> Vec<usize> {
        lens.iter()
            .enumerate()
            .map(|(g, &len)| {
                let (mut a, mut b) = (0, len);
                while a < b {
                    let m = a + (b - a) / 2;
                    if key_at(g, m) <= v {
                        a = m + 1;
                    } else {
                        b = m;
                    }
                }
                a
            })
            .collect()
    };
    if r == 0 {
        return vec![0; lens.len()];
    }
    // The least key with `r` keys at most it: the `r`th key.
    let (mut lo, mut hi) = (0u64, u64::MAX);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if upto(mid).iter().sum::<usize>() >= r {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    upto(lo)
}

/// `progress` (none: no graph kept) is what the progress check will judge.
pub(crate) fn search<M>(
    model: &M,
    properties: &[Property<M>],
    progress: &[Progress<M>],
    limits: &Limits,
    started: Instant,
) -> Searched
where
    M: Narrated + Packed + Sync,
{
    let keep = !progress.is_empty();
    let k = model.packed_words();
    let threads = limits.threads.max(1);
    let groups = threads;
    let per_group = SHARDS.div_ceil(groups);
    let group_of = |fp: u64| Table::shard_of(fp) / per_group;
    let budget = Budget {
        max_states: limits.max_states,
        deadline: match (limits.timeout.map(|t| started + t), limits.deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        max_memory: limits.max_memory,
        generated: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        cut: AtomicU8::new(0),
    };
    let mut meter = Meter::new(limits.progress);
    let mut table = if keep {
        Table::numbered()
    } else {
        Table::default()
    };
    let mut parents: Vec<u32> = Vec::new();
    let mut via: Vec<u8> = Vec::new();
    let mut roots: Vec<u32> = Vec::new();
    let mut found: Vec<Option<Discovery>> = vec![None; properties.len()];
    let mut kept = keep.then(Kept::default);
    // Judged in order: the level before's steps, encoded while this level
    // is expanded (they hold the graph meanwhile).
    let mut deferred: Option<Deferred> = None;
    let mut phases = Phases::default();

    // Level 1: the initial states, in their order.
    let mut frontier: Vec<u64> = Vec::new();
    let mut words = vec![0u64; k];
    let inits = model.init_states();
    budget.take_states(inits.len());
    for (i, state) in inits.iter().enumerate() {
        words.fill(0);
        model.pack(state, &mut words);
        let fp = fingerprint(&words);
        if !table.insert(fp) {
            continue;
        }
        if keep {
            table.set_number(fp, parents.len() as u32);
        }
        parents.push(0);
        via.push(0);
        roots.push(u32::try_from(i).expect("at most 2^32 initial states"));
        frontier.extend_from_slice(&words);
    }
    let mut depth = usize::from(!frontier.is_empty());
    let mut uncounted = 0;
    // A candidate's record: its key, its fingerprint, its words.
    let stride = k + 2;
    let mut level_start = 0usize;

    while !frontier.is_empty() && !budget.stopped() {
        if limits.stop_once_found && found.iter().all(Option::is_some) {
            break;
        }
        let level_len = frontier.len() / k;
        let next_chunk = AtomicUsize::new(0);
        let seek = Seek {
            properties,
            todo: found.iter().map(Option::is_none).collect(),
            started,
        };
        // Per property, the level's first state that discovers it.
        let mut level_first = seek.none();
        let unique_so_far = table.len();

        let expanded_from = level_start;
        let mut clock = Instant::now();
        let (level_steps, next_frontier) = if threads <= IN_ORDER {
            // One thread judges the level's successors in order, inserting
            // and numbering each new state as it finds it: it finds them in
            // key order, the order the phases below number them in, so the
            // counts and traces are theirs, without the candidates' lists,
            // their merges and two copies of each new state's words. A
            // second thread makes successors, chunks ahead of the one
            // judged, and the judge makes them too while it waits.
            let chunks = level_len.div_ceil(CHUNK);
            let window = WINDOW * threads;
            let slots: Vec<Mutex<Made>> = (0..window.min(chunks))
                .map(|_| Mutex::new(Made::new(k)))
                .collect();
            let mut next_frontier: Vec<u64> = Vec::new();
            let next_chunk = AtomicUsize::new(0);
            let judged = AtomicUsize::new(0);
            let over = AtomicBool::new(false);
            let abandoned = AtomicBool::new(false);
            // The next chunk to make, if it is before `limit`.
            let take = |limit: usize| -> Option<usize> {
                let mut n = next_chunk.load(Ordering::Relaxed);
                loop {
                    if n >= limit.min(chunks) || budget.stopped() {
                        return None;
                    }
                    match next_chunk.compare_exchange_weak(
                        n,
                        n + 1,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return Some(n),
                        Err(now) => n = now,
                    }
                }
            };
            // Makes `chunk`'s successors and hands them to the judge (its
            // slot, which `made` leaves with and gets the slot's old lists).
            let make = |chunk: usize,
                        made: &mut Made,
                        actions: &mut Vec<M::Action>,
                        memory_at: &mut Instant| {
                budget.look_at_time();
                if memory_at.elapsed() >= MEMORY_EVERY {
                    budget.look_at_memory();
                    *memory_at = Instant::now();
                }
                let from = chunk * CHUNK;
                made.steps = keep.then(|| ChunkSteps::new(chunk));
                made.scratch.successors(
                    actions,
                    model,
                    progress,
                    &seek,
                    &frontier,
                    from..(from + CHUNK).min(level_len),
                    made.steps.as_mut(),
                    &budget,
                );
                made.full = true;
                let mut slot = slots[chunk % window].lock().expect("a slot");
                assert!(!slot.full, "a chunk made ahead of its window");
                std::mem::swap(&mut *slot, made);
            };
            let level_steps = std::thread::scope(|scope| {
                for _ in 1..threads.min(chunks) {
                    scope.spawn(|| {
                        // A panic here would leave the judge waiting for
                        // the chunk this thread took: it is told to stop.
                        let _guard = Abandon(&abandoned);
                        let mut made = Made::new(k);
                        let mut actions = Vec::new();
                        let mut memory_at = Instant::now();
                        while !over.load(Ordering::Relaxed) && !budget.stopped() {
                            // The level before's graph first: the judge
                            // makes chunks meanwhile.
                            if deferred.as_ref().is_some_and(Deferred::work) {
                                continue;
                            }
                            match take(judged.load(Ordering::Acquire) + window) {
                                Some(chunk) => make(chunk, &mut made, &mut actions, &mut memory_at),
                                None if next_chunk.load(Ordering::Relaxed) >= chunks => break,
                                None => std::thread::yield_now(),
                            }
                        }
                    });
                }
                // A panic of the judge would leave the other thread waiting
                // for room in the window: it is told the level is over.
                let _guard = Abandon(&over);
                let mut level_steps = Vec::new();
                let mut own = Made::new(k);
                let mut actions = Vec::new();
                let mut memory_at = Instant::now();
                'judge: for chunk in 0..chunks {
                    loop {
                        {
                            let mut slot = slots[chunk % window].lock().expect("a slot");
                            if slot.full {
                                std::mem::swap(&mut *slot, &mut own);
                                slot.full = false;
                                break;
                            }
                        }
                        if budget.stopped() || abandoned.load(Ordering::Relaxed) {
                            break 'judge;
                        }
                        match take(chunk + window) {
                            Some(ahead) => make(ahead, &mut own, &mut actions, &mut memory_at),
                            None if deferred.as_ref().is_some_and(Deferred::work) => {}
                            None => std::hint::spin_loop(),
                        }
                    }
                    let (scratch, mut steps) = (&own.scratch, own.steps.take());
                    let from = chunk * CHUNK;
                    earliest(&mut level_first, &scratch.first);
                    // Room for every successor being new, asked for first: a
                    // list that doubles holds its old copy beside the new one
                    // for a moment.
                    let n = scratch.fps.len();
                    if !budget.room_for(
                        grown_bytes(&next_frontier, n * k)
                            + grown_bytes(&parents, n)
                            + grown_bytes(&via, n),
                    ) {
                        break 'judge;
                    }
                    next_frontier.reserve(n * k);
                    parents.reserve(n);
                    via.reserve(n);
                    for (i, n) in scratch.each() {
                        // A slot's number comes with it (an owing state's
                        // steps need their targets' numbers).
                        for &fp in scratch.ahead(n) {
                            table.prefetch(fp);
                        }
                        let fp = scratch.fps[n];
                        let number = u32::try_from(parents.len()).expect("at most 2^32 states");
                        let seen = if keep {
                            table.insert_numbered(fp, number)
                        } else {
                            (!table.insert(fp)).then_some(number)
                        };
                        // Every target is numbered: no fingerprint kept.
                        if let Some(steps) = steps.as_mut().filter(|steps| steps.owing[i]) {
                            steps.numbers.push(seen.unwrap_or(number));
                        }
                        if seen.is_some() {
                            continue;
                        }
                        parents.push(
                            u32::try_from(level_start + from + i).expect("at most 2^32 states"),
                        );
                        via.push(scratch.acts[n]);
                        next_frontier.extend_from_slice(&scratch.words[n * k..(n + 1) * k]);
                    }
                    level_steps.extend(steps);
                    judged.store(chunk + 1, Ordering::Release);
                    meter.tick(|elapsed| {
                        checker_line(
                            budget.generated.load(Ordering::Relaxed),
                            table.len(),
                            Some(depth + 1),
                            elapsed,
                        )
                    });
                }
                over.store(true, Ordering::Relaxed);
                level_steps
            });
            if let Some(graph) = deferred.take() {
                kept = Some(graph.finish());
            }
            // What the judged chunks found stands, a cut or not.
            discovered(&mut found, &level_first, level_start);
            if budget.stopped() {
                // What a cut level inserted is not counted, as the phases
                // below count nothing of it.
                uncounted = table.len() - unique_so_far;
                break;
            }
            phases.expand += lap(&mut clock);
            (level_steps, next_frontier)
        } else {
            // 1. Expand, every thread reading the table.
            let mut expansions: Vec<Expansion> = std::thread::scope(|scope| {
                let expand = |meter: Option<&mut Meter>| {
                    let mut meter = meter;
                    let mut mine = Expansion {
                        buckets: vec![Vec::new(); groups],
                        mine: Shard::default(),
                        first: seek.none(),
                        steps: Vec::new(),
                    };
                    let mut scratch = Scratch::new(k);
                    let mut actions = Vec::new();
                    let mut memory_at = Instant::now();
                    loop {
                        let chunk = next_chunk.fetch_add(1, Ordering::Relaxed);
                        let from = chunk * CHUNK;
                        if from >= level_len || budget.stopped() {
                            break;
                        }
                        budget.look_at_time();
                        if memory_at.elapsed() >= MEMORY_EVERY {
                            budget.look_at_memory();
                            memory_at = Instant::now();
                        }
                        let mut steps = keep.then(|| ChunkSteps::new(chunk));
                        scratch.successors(
                            &mut actions,
                            model,
                            progress,
                            &seek,
                            &frontier,
                            from..(from + CHUNK).min(level_len),
                            steps.as_mut(),
                            &budget,
                        );
                        earliest(&mut mine.first, &scratch.first);
                        for (i, n) in scratch.each() {
                            for &fp in scratch.ahead(n) {
                                table.prefetch(fp);
                                mine.mine.prefetch(fp);
                            }
                            let words = &scratch.words[n * k..(n + 1) * k];
                            let fp = scratch.fps[n];
                            let seen = match steps.as_mut().filter(|steps| steps.owing[i]) {
                                Some(steps) => {
                                    let number = table.number(fp);
                                    steps.fingerprints.push(fp);
                                    steps.numbers.push(number.unwrap_or(UNNUMBERED));
                                    number.is_some()
                                }
                                None => table.contains(fp),
                            };
                            if seen {
                                continue;
                            }
                            // A set or a list that doubles holds its old copy
                            // beside the new one for a moment: room is asked
                            // for first.
                            if !budget.room_for(mine.mine.growth_bytes()) {
                                break;
                            }
                            if !mine.mine.insert(fp) {
                                continue;
                            }
                            let key =
                                ((level_start + from + i) as u64) << 8 | u64::from(scratch.acts[n]);
                            let bucket = &mut mine.buckets[group_of(fp)];
                            if !budget.room_for(grown_bytes(bucket, stride)) {
                                break;
                            }
                            bucket.push(key);
                            bucket.push(fp);
                            bucket.extend_from_slice(words);
                        }
                        mine.steps.extend(steps);
                        if let Some(meter) = meter.as_deref_mut() {
                            meter.tick(|elapsed| {
                                checker_line(
                                    budget.generated.load(Ordering::Relaxed),
                                    unique_so_far,
                                    Some(depth + 1),
                                    elapsed,
                                )
                            });
                        }
                    }
                    mine
                };
                // A level too small to share is expanded by one thread.
                let helpers: Vec<_> = (1..threads.min(level_len.div_ceil(CHUNK)))
                    .map(|_| scope.spawn(move || expand(None)))
                    .collect();
                let mut all = vec![expand(Some(&mut meter))];
                all.extend(
                    helpers
                        .into_iter()
                        .map(|h| h.join().expect("a search thread")),
                );
                all
            });
            for e in &expansions {
                earliest(&mut level_first, &e.first);
            }
            discovered(&mut found, &level_first, level_start);
            if budget.stopped() {
                break;
            }
            drop(frontier);
            let mut level_steps: Vec<ChunkSteps> = expansions
                .iter_mut()
                .flat_map(|e| std::mem::take(&mut e.steps))
                .collect();
            level_steps.sort_unstable_by_key(|c| c.chunk);

            phases.expand += lap(&mut clock);
            // 2. Insert, each group of shards by one thread, in key order.
            // The new states' lists are at most the candidates' size, and the
            // candidates are freed only once inserted.
            let candidates: usize = expansions
                .iter()
                .flat_map(|e| &e.buckets)
                .map(Vec::len)
                .sum();
            budget.look_at_memory_for(
                (candidates * 8) as u64 + table.growth_bytes(candidates / stride) as u64,
            );
            if budget.stopped() {
                break;
            }
            let mut buckets: Vec<Vec<Vec<u64>>> = (0..groups).map(|_| Vec::new()).collect();
            for expansion in expansions {
                for (g, bucket) in expansion.buckets.into_iter().enumerate() {
                    buckets[g].push(bucket);
                }
            }
            let insert = |shards: &mut [Shard], lists: Vec<Vec<u64>>| {
                // Room for every candidate at once: a doubling list would hold
                // two copies of itself for a moment, which the look above did
                // not count.
                let mut new = Vec::with_capacity(lists.iter().map(Vec::len).sum());
                let mut at = vec![0usize; lists.len()];
                loop {
                    // The least key among the lists' heads.
                    let next = (0..lists.len())
                        .filter(|&l| at[l] < lists[l].len())
                        .min_by_key(|&l| lists[l][at[l]]);
                    let Some(l) = next else { break };
                    let record = &lists[l][at[l]..at[l] + stride];
                    at[l] += stride;
                    // The place of a candidate a few ahead in this list read
                    // now, so that its miss overlaps the inserts before it.
                    if let Some(&ahead) = lists[l].get(at[l] + AHEAD * stride + 1) {
                        shards[Table::shard_of(ahead) % per_group].prefetch(ahead);
                    }
                    let fp = record[1];
                    if shards[Table::shard_of(fp) % per_group].insert(fp) {
                        new.push(record[0]);
                        if keep {
                            new.push(fp);
                        }
                        new.extend_from_slice(&record[2..]);
                    }
                }
                new
            };
            let new_states: Vec<Vec<u64>> = if groups == 1 {
                let lists = buckets.pop().expect("one group");
                vec![insert(&mut table.shards, lists)]
            } else {
                std::thread::scope(|scope| {
                    let handles: Vec<_> = table
                        .shards
                        .chunks_mut(per_group)
                        .zip(buckets)
                        .map(|(shards, lists)| scope.spawn(move || insert(shards, lists)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("an insert thread"))
                        .collect()
                })
            };

            phases.insert += lap(&mut clock);
            // 3. Number the new states in key order: the next level.
            let head = 1 + usize::from(keep);
            let record = k + head;
            let total: usize = new_states.iter().map(|n| n.len() / record).sum();
            // The next frontier and each new state's parent and action, while
            // the new states' lists are still held (the parents and actions
            // copied once more if their lists move).
            let moved = if parents.capacity() < parents.len() + total {
                parents.len()
            } else {
                0
            };
            budget.look_at_memory_for((total * k * 8 + (moved + total) * 5) as u64);
            if budget.stopped() {
                break;
            }
            let numbered_from = parents.len();
            parents.resize(numbered_from + total, 0);
            via.resize(numbered_from + total, 0);
            let mut next_frontier = vec![0u64; total * k];
            let key_at = |g: usize, i: usize| new_states[g][i * record];
            let lens: Vec<usize> = new_states.iter().map(|n| n.len() / record).collect();
            // Each thread writes one run of the next level, the runs cut where
            // the merged order reaches a thread's share.
            let cuts: Vec<Vec<usize>> = (0..=threads)
                .map(|t| co_rank(&lens, &key_at, total * t / threads))
                .collect();
            let merge_run =
                |t: usize, parents: &mut [u32], via: &mut [u8], frontier: &mut [u64]| {
                    let (mut at, end) = (cuts[t].clone(), &cuts[t + 1]);
                    for n in 0..parents.len() {
                        let g = (0..lens.len())
                            .filter(|&g| at[g] < end[g])
                            .min_by_key(|&g| key_at(g, at[g]))
                            .expect("a run's states are in its lists");
                        let r = &new_states[g][at[g] * record..(at[g] + 1) * record];
                        parents[n] = u32::try_from(r[0] >> 8).expect("at most 2^32 states");
                        via[n] = r[0] as u8;
                        frontier[n * k..(n + 1) * k].copy_from_slice(&r[head..]);
                        at[g] += 1;
                    }
                };
            // With progress, each group numbers its own states in its own
            // shards: a state's number is its rank among every group's keys.
            let number_group = |g: usize, shards: &mut [Shard]| {
                let mut others = vec![0usize; lens.len()];
                for i in 0..lens[g] {
                    let key = key_at(g, i);
                    let mut rank = i;
                    for (h, at) in others.iter_mut().enumerate().filter(|&(h, _)| h != g) {
                        while *at < lens[h] && key_at(h, *at) < key {
                            *at += 1;
                        }
                        rank += *at;
                    }
                    let fp = new_states[g][i * record + 1];
                    shards[Table::shard_of(fp) % per_group].set_number(
                        fp,
                        u32::try_from(numbered_from + rank).expect("at most 2^32 states"),
                    );
                }
            };
            {
                let mut runs = Vec::new();
                let (mut p, mut v, mut f) = (
                    &mut parents[numbered_from..],
                    &mut via[numbered_from..],
                    &mut next_frontier[..],
                );
                for t in 0..threads {
                    let n = cuts[t + 1].iter().sum::<usize>() - cuts[t].iter().sum::<usize>();
                    let (p0, p1) = p.split_at_mut(n);
                    let (v0, v1) = v.split_at_mut(n);
                    let (f0, f1) = f.split_at_mut(n * k);
                    runs.push((t, p0, v0, f0));
                    (p, v, f) = (p1, v1, f1);
                }
                std::thread::scope(|scope| {
                    if keep {
                        for (g, shards) in table.shards.chunks_mut(per_group).enumerate() {
                            scope.spawn(move || number_group(g, shards));
                        }
                    }
                    let mut runs = runs.into_iter();
                    let own = runs.next();
                    for (t, p, v, f) in runs {
                        scope.spawn(move || merge_run(t, p, v, f));
                    }
                    if let Some((t, p, v, f)) = own {
                        merge_run(t, p, v, f);
                    }
                });
            }
            drop(new_states);
            phases.number += lap(&mut clock);
            (level_steps, next_frontier)
        };
        level_start += level_len;
        // Every step of the level just expanded now leads to a numbered state.
        if let Some(kept) = kept.as_mut() {
            let states = level_steps.iter().map(|c| c.owing.len()).sum();
            let steps = level_steps.iter().map(|c| c.numbers.len()).sum();
            budget.look_at_memory_for(kept.level_bytes(states, steps) as u64);
            if budget.stopped() {
                break;
            }
            kept.reserve_level(states, steps);
        }
        if threads <= IN_ORDER {
            if let Some(graph) = kept.take() {
                deferred = Some(Deferred::new(level_steps, expanded_from, graph, threads));
            }
        } else if let Some(kept) = kept.as_mut() {
            // Each thread encodes a run of consecutive chunks (about as many
            // steps each), its steps looked up in the table; the runs are
            // appended in order.
            let table = &table;
            let parts: Vec<Encoded> = std::thread::scope(|scope| {
                let encoding: Vec<_> = runs_of(level_steps, threads)
                    .into_iter()
                    .map(|r| scope.spawn(move || encode(r, expanded_from, Some(table))))
                    .collect();
                encoding
                    .into_iter()
                    .map(|h| h.join().expect("an encoding thread"))
                    .collect()
            });
            for encoded in parts {
                append(kept, encoded);
            }
        }
        phases.graph += lap(&mut clock);
        frontier = next_frontier;
        if !frontier.is_empty() {
            depth += 1;
        }
        budget.look_at_memory();
    }
    if let Some(graph) = deferred.take() {
        let clock = Instant::now();
        kept = Some(graph.finish());
        phases.graph += clock.elapsed();
    }
    meter.finish();
    Searched {
        found,
        states: budget.generated.load(Ordering::Relaxed),
        unique: table.len() - uncounted,
        depth,
        cut: budget.cut(),
        phases,
        parents,
        via,
        roots,
        kept,
    }
}

impl Searched {
    /// The key of the state numbered `n` (as [`Searched::path`] takes it).
    pub fn key_of(&self, n: usize) -> u64 {
        if n < self.roots.len() {
            INIT | self.roots[n] as u64
        } else {
            (self.parents[n] as u64) << 8 | self.via[n] as u64
        }
    }

    /// The actions (as indices into each state's `actions`) from an initial
    /// state to the state of `key`, and that initial state's index.
    pub fn path(&self, key: u64) -> (usize, Vec<usize>) {
        if key & INIT != 0 {
            return ((key & !INIT) as usize, Vec::new());
        }
        let mut steps = vec![key as u8 as usize];
        let mut at = (key >> 8) as usize;
        while at >= self.roots.len() {
            steps.push(self.via[at] as usize);
            at = self.parents[at] as usize;
        }
        steps.reverse();
        (self.roots[at] as usize, steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level's steps as the judge leaves them: chunks of states, most
    /// owing, each owing state's steps as numbers, some stutters.
    fn level(chunks: usize, seed: u32) -> Vec<ChunkSteps> {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x >> 8
        };
        (0..chunks)
            .map(|chunk| {
                let mut steps = ChunkSteps::new(chunk);
                for i in 0..CHUNK as u32 {
                    let owing = next() % 4 != 0;
                    let count = if owing { next() % 6 } else { 0 };
                    steps.owing.push(owing);
                    steps.counts.push(count);
                    steps.numbers.extend((0..count).map(|_| next() % 100_000));
                    if owing && next() % 16 == 0 {
                        steps.stutters.push(i);
                    }
                }
                steps
            })
            .collect()
    }

    /// What one thread makes of levels one after the other: each encoded
    /// in one run and appended.
    fn at_once(levels: &[(usize, u32)]) -> Kept {
        let mut kept = Kept::default();
        for &(chunks, seed) in levels {
            let encoded = encode(level(chunks, seed), kept.len(), None);
            append(&mut kept, encoded);
        }
        kept
    }

    #[test]
    fn a_level_written_in_runs_by_two_threads_is_the_graph_one_writes_at_once() {
        let levels = [(1, 1), (3, 2), (40, 3), (7, 4)];
        let whole = at_once(&levels);
        let mut kept = Kept::default();
        for &(chunks, seed) in &levels {
            let from = kept.len();
            let deferred = Deferred::new(level(chunks, seed), from, kept, 2);
            std::thread::scope(|scope| {
                scope.spawn(|| while deferred.work() {});
                while deferred.work() {}
            });
            kept = deferred.finish();
        }
        assert_eq!(kept.len(), whole.len());
        assert_eq!(kept.stutters, whole.stutters);
        for n in 0..whole.len() as u32 {
            assert_eq!(kept.owing(n), whole.owing(n), "state {n}");
            assert_eq!(kept.steps(n), whole.steps(n), "state {n}");
        }
    }
}
