//! The world as the checker stores it: fixed-size, `Copy`, nothing on the
//! heap, and nothing that no future step can use. Each request is one word
//! (its row's state, its build, whether it holds a slot in an owner set, and
//! its messages) and each worker one word (its message, request, step, and
//! what is left of its last read), kept sorted since workers are
//! interchangeable. Versions are not kept: a version only ever answers "is
//! this worker's read of the row still current?", and each worker keeps that
//! answer (see [`Fresh`]).
//!
//! The fields are packed behind accessors, so the handlers read rows,
//! messages and workers by name. For the checker the state packs further
//! into a few 64-bit words ([`Packed`]): 32 bytes for three requests.

use super::log::Log;
use super::{
    Action, Bounds, Build, Delivery, Fresh, Message, MessageKind, Pc, Req, RequestState, Stovepipe,
    Worker, MAX_FAULTS, MAX_REQUESTS,
};
use crate::{BitReader, BitWriter, Packed};

/// Room for the most workers a run can have (see [`Bounds::max_workers`]).
pub const MAX_WORKERS: usize = 2 * MAX_REQUESTS as usize + MAX_FAULTS as usize;

/// A field of a word: its shift and width in bits.
#[derive(Clone, Copy)]
struct Field(u32, u32);

impl Field {
    fn get(self, word: u32) -> u32 {
        (word >> self.0) & ((1 << self.1) - 1)
    }

    fn set(self, word: &mut u32, value: u32) {
        let mask = ((1 << self.1) - 1) << self.0;
        debug_assert!(value < 1 << self.1, "a value wider than its field");
        *word = (*word & !mask) | (value << self.0);
    }
}

// A request's word.
const ROW: Field = Field(0, 3);
const BUILD: Field = Field(3, 2);
const OWNS_SLOT: Field = Field(5, 1);
/// Each message kind's delivery (0: none, then visible, in flight, parked)
/// and attempts (the dead ones count none).
const STATUS: [Field; 4] = [Field(6, 2), Field(12, 2), Field(18, 2), Field(20, 2)];
const ATTEMPTS: [Option<Field>; 4] = [Some(Field(8, 4)), Some(Field(14, 4)), None, None];
/// The first terminal state written (0: none yet), to judge `outcome-final`:
/// in every design of the contract it is the row's state once terminal, so
/// it adds no state.
const FIRST_OUTCOME: Field = Field(22, 3);
const REQUEST_BITS: u32 = 25;

// A worker's word, most significant first, so that workers sort by request.
const W_FRESH: Field = Field(0, 3);
const W_HOLDS: Field = Field(3, 1);
const W_PC: Field = Field(4, 6);
const W_KIND: Field = Field(10, 2);
const W_REQUEST: Field = Field(12, 5);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct State {
    /// `in_flight_count`, for the counter designs.
    count: u8,
    arrived: u8,
    crashes_left: u8,
    stalls_left: u8,
    workers_len: u8,
    requests: [u32; MAX_REQUESTS as usize],
    /// Sorted; the first `workers_len` are workers.
    workers: [u32; MAX_WORKERS],
}

fn kind_index(kind: MessageKind) -> usize {
    kind as usize
}

fn encode_worker(w: Worker) -> u32 {
    let mut word = 0;
    W_FRESH.set(&mut word, fresh_bits(w.fresh));
    W_HOLDS.set(&mut word, w.holds_message as u32);
    W_PC.set(&mut word, w.pc.code());
    W_KIND.set(&mut word, kind_index(w.message) as u32);
    W_REQUEST.set(&mut word, w.request as u32);
    word
}

/// A worker's read as its word keeps it.
pub(crate) fn fresh_bits(f: Fresh) -> u32 {
    f.request as u32 | (f.queue as u32) << 1 | (f.head as u32) << 2
}

/// A worker's message kind, step and fresh bits: all that what it keeps
/// of its read depends on (11 bits).
pub(crate) const MEMORY_KEYS: usize = 1 << 11;

fn memory_key(word: u32) -> usize {
    (W_FRESH.get(word) | (word >> W_PC.0 & 0xff) << W_FRESH.1) as usize
}

/// A worker with the kind, step and read of `key` (on request 0).
pub(crate) fn worker_of_memory_key(key: usize) -> Worker {
    let key = key as u32;
    decode_worker((key & 7) | (key >> W_FRESH.1) << W_PC.0)
}

fn decode_worker(word: u32) -> Worker {
    let fresh = W_FRESH.get(word);
    Worker {
        message: MessageKind::ALL[W_KIND.get(word) as usize],
        request: W_REQUEST.get(word) as Req,
        pc: Pc::from_code(W_PC.get(word)),
        holds_message: W_HOLDS.get(word) == 1,
        fresh: Fresh {
            request: fresh & 1 != 0,
            queue: fresh & 2 != 0,
            head: fresh & 4 != 0,
        },
    }
}

impl State {
    pub const fn initial(crashes: u8, stalls: u8) -> State {
        State {
            count: 0,
            arrived: 0,
            crashes_left: crashes,
            stalls_left: stalls,
            workers_len: 0,
            requests: [0; MAX_REQUESTS as usize],
            workers: [0; MAX_WORKERS],
        }
    }

    // Requests.

    pub fn arrived(&self) -> u8 {
        self.arrived
    }

    /// The next request arrives: accepted, no build, no slot, no message.
    pub fn add_request(&mut self) -> Req {
        let r = self.arrived;
        self.requests[r as usize] = 0;
        self.arrived += 1;
        r
    }

    pub fn request(&self, r: Req) -> RequestState {
        RequestState::ALL[ROW.get(self.requests[r as usize]) as usize]
    }

    pub fn set_request(&mut self, r: Req, state: RequestState) {
        let word = &mut self.requests[r as usize];
        ROW.set(word, state as u32);
        if state.is_terminal() && FIRST_OUTCOME.get(*word) == 0 {
            FIRST_OUTCOME.set(word, state as u32);
        }
    }

    /// R's word as stored: all that R's row, build, slot and messages are.
    pub(crate) fn request_word(&self, r: Req) -> u32 {
        self.requests[r as usize]
    }

    /// This state with request `r` renamed `to[r]`, every mention of it
    /// included (its word, and its workers'), the workers sorted again.
    pub(crate) fn renamed(&self, to: &[Req]) -> State {
        let mut out = *self;
        let arrived = self.arrived as usize;
        for (&word, &new) in self.requests[..arrived].iter().zip(to) {
            out.requests[new as usize] = word;
        }
        let n = self.workers_len();
        for word in &mut out.workers[..n] {
            W_REQUEST.set(word, to[W_REQUEST.get(*word) as usize] as u32);
        }
        out.workers[..n].sort_unstable();
        out
    }

    /// The first terminal state written to R's row, if any.
    pub fn first_outcome(&self, r: Req) -> Option<RequestState> {
        match FIRST_OUTCOME.get(self.requests[r as usize]) {
            0 => None,
            n => Some(RequestState::ALL[n as usize]),
        }
    }

    /// Every arrived request with its row's state, in ID order.
    pub fn requests(&self) -> impl Iterator<Item = (Req, RequestState)> + '_ {
        (0..self.arrived).map(|r| (r, self.request(r)))
    }

    pub fn requests_in(&self, state: RequestState) -> impl Iterator<Item = Req> + '_ {
        self.requests()
            .filter(move |&(_, s)| s == state)
            .map(|(r, _)| r)
    }

    /// Requests in `processing`.
    pub fn processing(&self) -> impl Iterator<Item = Req> + '_ {
        self.requests_in(RequestState::Processing)
    }

    pub fn build(&self, r: Req) -> Build {
        [Build::NotSubmitted, Build::Running, Build::Finished]
            [BUILD.get(self.requests[r as usize]) as usize]
    }

    pub fn set_build(&mut self, r: Req, build: Build) {
        BUILD.set(&mut self.requests[r as usize], build as u32);
    }

    pub fn running_builds(&self) -> impl Iterator<Item = Req> + '_ {
        (0..self.arrived).filter(move |&r| self.build(r) == Build::Running)
    }

    // The slot field: the count, or each request's place in the owner set.

    pub fn count(&self) -> u8 {
        self.count
    }

    pub fn set_count(&mut self, count: u8) {
        self.count = count;
    }

    pub fn owns_slot(&self, r: Req) -> bool {
        OWNS_SLOT.get(self.requests[r as usize]) == 1
    }

    pub fn set_owns_slot(&mut self, r: Req, owns: bool) {
        OWNS_SLOT.set(&mut self.requests[r as usize], owns as u32);
    }

    // Messages: at most one of each kind per request.

    pub fn message(&self, r: Req, kind: MessageKind) -> Option<Message> {
        let word = self.requests[r as usize];
        let status = match STATUS[kind_index(kind)].get(word) {
            0 => return None,
            1 => Delivery::Visible,
            2 => Delivery::InFlight,
            _ => Delivery::Parked,
        };
        let attempts = ATTEMPTS[kind_index(kind)].map_or(0, |f| f.get(word)) as u8;
        Some(Message {
            request: r,
            kind,
            status,
            attempts,
        })
    }

    /// Sets (or, with `None`, removes) R's message of this kind.
    pub fn set_message(&mut self, r: Req, kind: MessageKind, message: Option<(Delivery, u8)>) {
        let word = &mut self.requests[r as usize];
        let (status, attempts) = match message {
            None => (0, 0),
            Some((Delivery::Visible, a)) => (1, a),
            Some((Delivery::InFlight, a)) => (2, a),
            Some((Delivery::Parked, a)) => (3, a),
        };
        STATUS[kind_index(kind)].set(word, status);
        if let Some(field) = ATTEMPTS[kind_index(kind)] {
            field.set(word, attempts as u32);
        }
    }

    /// Every message, by request and kind.
    pub fn messages(&self) -> impl Iterator<Item = Message> + '_ {
        (0..self.arrived).flat_map(move |r| {
            MessageKind::ALL
                .into_iter()
                .filter_map(move |k| self.message(r, k))
        })
    }

    // Workers, kept sorted.

    pub fn workers_len(&self) -> usize {
        self.workers_len as usize
    }

    pub fn worker(&self, i: usize) -> Worker {
        debug_assert!(i < self.workers_len());
        decode_worker(self.workers[i])
    }

    /// Whether the workers at `i` and `j` are equal (their words are).
    pub fn same_workers(&self, i: usize, j: usize) -> bool {
        self.workers[i] == self.workers[j]
    }

    pub fn workers(&self) -> impl Iterator<Item = Worker> + '_ {
        self.workers[..self.workers_len()]
            .iter()
            .map(|&w| decode_worker(w))
    }

    /// Adds a worker in its sorted place.
    pub fn add_worker(&mut self, worker: Worker) {
        let n = self.workers_len();
        assert!(n < MAX_WORKERS, "more workers than a run can have");
        let word = encode_worker(worker);
        let at = self.workers[..n].partition_point(|&w| w < word);
        self.workers.copy_within(at..n, at + 1);
        self.workers[at] = word;
        self.workers_len += 1;
    }

    /// Takes the worker at `i` out.
    pub fn remove_worker(&mut self, i: usize) -> Worker {
        let n = self.workers_len();
        let worker = decode_worker(self.workers[i]);
        self.workers.copy_within(i + 1..n, i);
        self.workers[n - 1] = 0;
        self.workers_len -= 1;
        worker
    }

    /// Changes every worker. They may be out of order until the step ends
    /// (`forget` sorts them).
    pub(crate) fn for_each_worker(&mut self, mut change: impl FnMut(&mut Worker)) {
        let n = self.workers_len();
        for word in &mut self.workers[..n] {
            let mut worker = decode_worker(*word);
            change(&mut worker);
            *word = encode_worker(worker);
        }
    }

    /// Keeps of each worker's read what `remembered` says its step can still
    /// use, and sorts the workers.
    pub(crate) fn forget(&mut self, remembered: impl Fn(&Worker) -> Fresh) {
        self.for_each_worker(|w| w.fresh = remembered(w));
        let n = self.workers_len();
        self.workers[..n].sort_unstable();
    }

    /// [`State::forget`] on the words: what a worker keeps depends on its
    /// message kind, step and read alone, its [`memory_key`], so `kept`
    /// maps that key to the fresh bits kept (a lookup; this runs for every
    /// worker of every successor).
    pub(crate) fn forget_keyed(&mut self, kept: impl Fn(usize) -> u32) {
        let n = self.workers_len();
        for word in &mut self.workers[..n] {
            W_FRESH.set(word, kept(memory_key(*word)));
        }
        self.workers[..n].sort_unstable();
    }

    /// Becomes `from` in all that is used: the counts, the first `requests`
    /// requests' words and the workers (what lies beyond is left as it was).
    fn copy_used(&mut self, from: &State, requests: usize) {
        let n = from.workers_len();
        self.count = from.count;
        self.arrived = from.arrived;
        self.crashes_left = from.crashes_left;
        self.stalls_left = from.stalls_left;
        self.workers_len = from.workers_len;
        self.requests[..requests].copy_from_slice(&from.requests[..requests]);
        self.workers[..n].copy_from_slice(&from.workers[..n]);
    }

    // Fault budgets.

    pub fn crashes_left(&self) -> u8 {
        self.crashes_left
    }

    pub fn stalls_left(&self) -> u8 {
        self.stalls_left
    }

    pub fn spend_crash(&mut self) {
        self.crashes_left -= 1;
    }

    pub fn spend_stall(&mut self) {
        self.stalls_left -= 1;
    }

    /// No workers and no visible or in-flight messages (parked ones may wait).
    pub fn is_quiescent(&self) -> bool {
        self.workers_len == 0 && self.messages().all(|m| m.status == Delivery::Parked)
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("count", &self.count)
            .field(
                "requests",
                &self
                    .requests()
                    .map(|(r, s)| (r, s, self.build(r), self.owns_slot(r)))
                    .collect::<Vec<_>>(),
            )
            .field("messages", &self.messages().collect::<Vec<_>>())
            .field("workers", &self.workers().collect::<Vec<_>>())
            .field("crashes_left", &self.crashes_left)
            .field("stalls_left", &self.stalls_left)
            .finish()
    }
}

/// The bits of a request index in a packed worker, on these bounds.
fn request_bits(bounds: &Bounds) -> u32 {
    (u8::BITS - (bounds.requests.max(2) - 1).leading_zeros()).max(1)
}

/// The packed form's layout on these bounds: the header, one field per
/// request that can arrive, and room for `workers` workers.
fn packed_bits(bounds: &Bounds, workers: usize) -> u32 {
    let worker = 2 + request_bits(bounds) + W_PC.1 + 1 + 3;
    29 + REQUEST_BITS * bounds.requests as u32 + worker * workers as u32
}

impl Stovepipe {
    /// Room for workers in the packed form: the most a design can have on
    /// these bounds, or, for a mutant, which may hand a message out while
    /// it is still held, the most any state can hold.
    fn worker_room(&self) -> usize {
        match self.mutation {
            None => self.bounds.max_workers(),
            Some(_) => MAX_WORKERS,
        }
    }
}

impl Packed for Stovepipe {
    fn packed_words(&self) -> usize {
        packed_bits(&self.bounds, self.worker_room()).div_ceil(64) as usize
    }

    /// Packs the stored form: the requests renamed ([`Stovepipe::stored`]).
    fn pack(&self, s: &State, words: &mut [u64]) {
        let form;
        let s = match self.stored(s) {
            Some((renamed, _)) => {
                form = renamed;
                &form
            }
            None => s,
        };
        let mut out = BitWriter::new(words);
        out.put(s.count as u64, 8);
        out.put(s.arrived as u64, 6);
        out.put(s.crashes_left as u64, 4);
        out.put(s.stalls_left as u64, 4);
        out.put(s.workers_len as u64, 7);
        for r in 0..self.bounds.requests as usize {
            out.put(s.requests[r] as u64, REQUEST_BITS);
        }
        let rbits = request_bits(&self.bounds);
        // A worker's word is its request above its other fields, so its
        // first bits are the packed worker.
        for &word in &s.workers[..s.workers_len()] {
            out.put(word as u64, W_REQUEST.0 + rbits);
        }
        out.finish();
    }

    /// The step is taken on a scratch state of this thread's, into which
    /// only what `s` uses is copied (a few words of its hundreds of bytes):
    /// what lies beyond is never read before `pack`, which reads only what
    /// is used.
    fn pack_next(&self, s: &State, action: Action, words: &mut [u64]) -> bool {
        thread_local! {
            static SCRATCH: std::cell::RefCell<State> =
                const { std::cell::RefCell::new(State::initial(0, 0)) };
        }
        SCRATCH.with_borrow_mut(|next| {
            next.copy_used(s, self.bounds.requests as usize);
            self.apply_to(next, action, &mut Log::quiet());
            self.pack(next, words);
        });
        true
    }

    fn action_of_whole(&self, whole: &State, form: &State, action: &Action) -> Option<Action> {
        self.renamed_back(whole, form, action)
    }

    fn unpack(&self, words: &[u64]) -> State {
        let mut input = BitReader::new(words);
        let mut s = State::initial(0, 0);
        s.count = input.get(8) as u8;
        s.arrived = input.get(6) as u8;
        s.crashes_left = input.get(4) as u8;
        s.stalls_left = input.get(4) as u8;
        s.workers_len = input.get(7) as u8;
        for r in 0..self.bounds.requests as usize {
            s.requests[r] = input.get(REQUEST_BITS) as u32;
        }
        let rbits = request_bits(&self.bounds);
        for i in 0..s.workers_len() {
            s.workers[i] = input.get(W_REQUEST.0 + rbits) as u32;
        }
        s
    }
}
