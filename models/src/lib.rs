//! The models slotcheck checks. Each model is a plain stateright [`Model`]: a
//! small config struct, a `Clone + Hash` state, an action enum and named
//! properties. They know nothing of the command line; what they offer the tool
//! beyond stateright's trait is [`Narrated`]: how to tell a path as a story.

use stateright::Model;

pub mod events;
pub mod link;
pub mod stovepipe;
pub mod walk;

/// One step of a counterexample as a reviewer reads it: who acted, what it did,
/// and the rows that changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoryStep {
    /// `worker 1 (process R1, delivery 1)`, `broker`, `build system`, `fault`.
    pub actor: String,
    /// `CAS queue in_flight_count 0 -> 1`.
    pub action: String,
    /// Rows whose rendering differs after the step.
    pub changes: Vec<RowChange>,
}

/// A row before and after a step (`None`: the row did not exist).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowChange {
    pub row: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// A state variable's value, structured for machine-readable traces (ITF):
/// integers, strings, booleans, sets, maps and records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Str(String),
    Bool(bool),
    Set(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Record(Vec<(String, Value)>),
    List(Vec<Value>),
}

/// A model's options: flags, each off by default (the contract's reading),
/// set by name from the command line or a scenario file.
pub trait NamedOptions: Copy {
    /// The model's name, for errors: `stovepipe`.
    const MODEL: &'static str;

    /// Every option: its name and its flag.
    fn flags(&mut self) -> Vec<(&'static str, &mut bool)>;

    /// Turns the named option on; the error lists the known ones.
    fn set(&mut self, name: &str) -> Result<(), String> {
        let mut flags = self.flags();
        let known: Vec<&str> = flags.iter().map(|(n, _)| *n).collect();
        match flags.iter_mut().find(|(n, _)| *n == name) {
            Some((_, flag)) => {
                **flag = true;
                Ok(())
            }
            None => Err(format!(
                "unknown {} option `{name}` (known: {})",
                Self::MODEL,
                known.join(", ")
            )),
        }
    }

    /// The names of the options that are on.
    fn names(&self) -> Vec<&'static str> {
        let mut copy = *self;
        copy.flags()
            .into_iter()
            .filter(|(_, on)| **on)
            .map(|(name, _)| name)
            .collect()
    }
}

/// A model whose states pack into a fixed number of 64-bit words, the same
/// words for the same state: what the checker keeps of each state it has yet
/// to explore, and what it fingerprints. The working state may be roomier
/// (it has space for the largest bounds); the packed form has space for
/// these bounds only.
pub trait Packed: Model {
    /// Words per state on this model's bounds.
    fn packed_words(&self) -> usize;
    /// Writes `state` into `words` (`packed_words` long, zeroed).
    fn pack(&self, state: &Self::State, words: &mut [u64]);
    /// The state `pack` wrote.
    fn unpack(&self, words: &[u64]) -> Self::State;

    /// For a model whose stored form renames actors in a way that one
    /// state's renamings need not share (stovepipe's keeps arrival order
    /// among equals, so that a cycle renames nothing): the action of
    /// `whole` that takes the step `action` takes in `form`, the stored
    /// form of a renaming of `whole`. `None`, the default: the replay
    /// looks for an action of `whole` that reaches the same stored form.
    fn action_of_whole(
        &self,
        _whole: &Self::State,
        _form: &Self::State,
        _action: &Self::Action,
    ) -> Option<Self::Action> {
        None
    }

    /// Packs the state `action` leads to from `state` into `words` (zeroed),
    /// or says there is none. A model whose states are large may do it
    /// with fewer copies than `next_state` and `pack`.
    fn pack_next(&self, state: &Self::State, action: Self::Action, words: &mut [u64]) -> bool {
        match self.next_state(state, action) {
            Some(next) => {
                self.pack(&next, words);
                true
            }
            None => false,
        }
    }
}

/// Every ordering of the first `n` of `N` actors (the rest kept), the
/// identity first: the renamings the stored forms' tests try.
pub(crate) fn permutations<const N: usize>(n: usize) -> Vec<[u8; N]> {
    fn go<const N: usize>(k: usize, n: usize, p: &mut [u8; N], all: &mut Vec<[u8; N]>) {
        if k >= n {
            all.push(*p);
            return;
        }
        for i in k..n {
            p.swap(k, i);
            go(k + 1, n, p, all);
            p.swap(k, i);
        }
    }
    let mut all = Vec::new();
    go(0, n, &mut std::array::from_fn(|i| i as u8), &mut all);
    all
}

/// Whether `design` already has the choice `apply` makes: applying it
/// changes nothing (a repair of either model's compositions).
pub(crate) fn already_chosen<D: Copy + PartialEq>(apply: fn(&mut D), design: &D) -> bool {
    let mut applied = *design;
    apply(&mut applied);
    applied == *design
}

/// The records of a step, kept only when asked for: a check keeps none,
/// and builds none (a record is made by its closure only while recording).
/// Each model's `Log` is this over its own `Record`.
pub(crate) struct Recorder<R> {
    records: Option<Vec<R>>,
}

impl<R> Recorder<R> {
    pub fn quiet() -> Self {
        Recorder { records: None }
    }

    pub fn recording() -> Self {
        Recorder {
            records: Some(Vec::new()),
        }
    }

    pub fn record(&mut self, record: impl FnOnce() -> R) {
        if let Some(records) = &mut self.records {
            records.push(record());
        }
    }

    pub fn records(self) -> Vec<R> {
        self.records.unwrap_or_default()
    }
}

/// Writes fields of given widths one after the other into words.
pub struct BitWriter<'a> {
    words: &'a mut [u64],
    at: usize,
}

impl<'a> BitWriter<'a> {
    pub fn new(words: &'a mut [u64]) -> Self {
        BitWriter { words, at: 0 }
    }

    /// Appends the low `bits` bits of `value` (which must fit in them).
    pub fn put(&mut self, value: u64, bits: u32) {
        debug_assert!(
            bits == 64 || value < 1 << bits,
            "{value} is wider than {bits} bits"
        );
        let (word, offset) = (self.at / 64, (self.at % 64) as u32);
        assert!(
            (self.at + bits as usize).div_ceil(64) <= self.words.len(),
            "a state larger than its bounds allow"
        );
        if bits == 0 {
            return;
        }
        self.words[word] |= value << offset;
        if offset + bits > 64 {
            self.words[word + 1] |= value >> (64 - offset);
        }
        self.at += bits as usize;
    }

    /// The bits written.
    pub fn finish(self) -> usize {
        self.at
    }
}

/// Reads back what a [`BitWriter`] wrote, field by field.
pub struct BitReader<'a> {
    words: &'a [u64],
    at: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(words: &'a [u64]) -> Self {
        BitReader { words, at: 0 }
    }

    pub fn get(&mut self, bits: u32) -> u64 {
        if bits == 0 {
            return 0;
        }
        let (word, offset) = (self.at / 64, (self.at % 64) as u32);
        let mut value = self.words[word] >> offset;
        if offset + bits > 64 {
            value |= self.words[word + 1] << (64 - offset);
        }
        self.at += bits as usize;
        if bits == 64 {
            value
        } else {
            value & ((1 << bits) - 1)
        }
    }
}

/// A short list kept inline: `Copy`, fixed room, nothing on the heap, so a
/// state made of them is copied and hashed as bytes. Room left over holds
/// default values, so that equal lists are equal bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inline<T: Copy + Default, const N: usize> {
    len: u8,
    items: [T; N],
}

impl<T: Copy + Default, const N: usize> Default for Inline<T, N> {
    fn default() -> Self {
        Inline {
            len: 0,
            items: [T::default(); N],
        }
    }
}

impl<T: Copy + Default, const N: usize> Inline<T, N> {
    /// `n` copies of `item`.
    pub fn filled(n: usize, item: T) -> Self {
        assert!(n <= N, "{n} items in room for {N}");
        let mut list = Self::default();
        list.items[..n].fill(item);
        list.len = n as u8;
        list
    }

    pub fn push(&mut self, item: T) {
        assert!((self.len as usize) < N, "more than {N} items");
        self.items[self.len as usize] = item;
        self.len += 1;
    }

    pub fn remove(&mut self, i: usize) -> T {
        let n = self.len as usize;
        let item = self.items[i];
        self.items.copy_within(i + 1..n, i);
        self.items[n - 1] = T::default();
        self.len -= 1;
        item
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

impl<T: Copy + Default, const N: usize> std::ops::Deref for Inline<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len as usize]
    }
}

impl<T: Copy + Default, const N: usize> std::ops::DerefMut for Inline<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len as usize]
    }
}

impl<T: Copy + Default + std::fmt::Debug, const N: usize> std::fmt::Debug for Inline<T, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for Inline<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut list = Self::default();
        for item in items {
            list.push(item);
        }
        list
    }
}

/// The bits a value up to `max` takes.
pub fn bits_for(max: u64) -> u32 {
    u64::BITS - max.leading_zeros()
}

/// A scripted step that cannot be taken: its index in the script and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError {
    pub index: usize,
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {}: {}", self.index + 1, self.message)
    }
}

/// What a property asserts, for reports: `always` properties fail when a state
/// breaks them, `sometimes` properties are witnesses that must be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyKind {
    Always,
    Sometimes,
    /// Progress under weak fairness: what is pending in some state is done
    /// in every fair run from it (violated by a lasso: a fair cycle, or a
    /// state where nothing fair can happen, in which it stays pending).
    Progress,
}

/// A progress property: something every fair run eventually does. `pending`
/// says what is still owed in a state, one bit per thing owed (a request, a
/// message, a builder), 0 when nothing is; the property is violated by a
/// reachable fair cycle along which one bit stays set throughout, or by a
/// reachable state with a bit set where nothing weakly fair is enabled
/// (the run stutters there for ever) and the model's bounds did not stop it
/// ([`Narrated::stopped_by_bounds`]).
pub struct Progress<M: Model> {
    pub name: &'static str,
    pub pending: fn(&M, &M::State) -> u64,
}

/// How a model tells its paths. The tool turns these into stories, JSON and
/// traces; the model only knows its own rows and steps.
pub trait Narrated: Model {
    /// The state as named rows, in a fixed order (`queue`, `R1`, `process(R1)`...).
    fn rows(&self, state: &Self::State) -> Vec<(String, String)>;

    /// Tells each step of a path that starts in `init`.
    fn tell(&self, init: &Self::State, actions: &[Self::Action]) -> Vec<StoryStep>;

    /// The state as named variables with structured values, for traces
    /// (ITF); the same variables in every state of a model.
    fn values(&self, state: &Self::State) -> Vec<(String, Value)>;

    /// Each action of a path as the words a scripted story uses for it
    /// (`arrive R1`, `deliver process R1`, `step worker 1`, `crash worker 1`).
    fn words(&self, init: &Self::State, actions: &[Self::Action]) -> Vec<String>;

    /// The actions a scripted story names, from `init`; each must be enabled
    /// where it stands, or the error says which step and why.
    fn parse(
        &self,
        init: &Self::State,
        script: &[String],
    ) -> Result<Vec<Self::Action>, ScriptError>;

    /// Why `property` fails (or, for a witness, holds) in `state`, in words.
    fn explain(&self, property: &str, state: &Self::State) -> String;

    /// The lane of a sequence diagram that holds `row` (a name from
    /// [`rows`](Narrated::rows)): the part of the system the row lives in, so
    /// that a diagram has one lane per component rather than one per row. By
    /// default each row is its own lane.
    fn lane(&self, row: &str) -> String {
        row.to_string()
    }

    /// The model's progress properties, checked under weak fairness
    /// ([`Narrated::fairness`]). Default: none.
    fn progress(&self) -> Vec<Progress<Self>> {
        Vec::new()
    }

    /// The weak-fairness class of `action` in `state`: a step of the same
    /// class that stays enabled for ever is eventually taken (the same
    /// number for the same actor from one state to the next: a worker, a
    /// message's delivery, a build, the clock); `None` for a fault, which
    /// no fairness asks for (faults stay bounded). Default: one class.
    fn fairness(&self, _state: &Self::State, _action: &Self::Action) -> Option<u64> {
        Some(0)
    }

    /// Every action enabled in `state`, for weak fairness: where
    /// [`Model::actions`] offers fewer (a reduction that takes one step
    /// first and leaves the others for the next state), the others are
    /// still enabled, and a run that never takes them is still unfair.
    /// Default: the model's actions.
    fn enabled_actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        self.actions(state, actions)
    }

    /// Whether the model's own bounds, not the design, stop a run in
    /// `state` (a horizon of time): a state where nothing fair can happen
    /// is then no progress violation. Default: never.
    fn stopped_by_bounds(&self, _state: &Self::State) -> bool {
        false
    }

    /// Whether the named property is an `always`, a `sometimes` or a
    /// progress one.
    fn kind_of(&self, property: &str) -> Option<PropertyKind> {
        if self.progress().iter().any(|p| p.name == property) {
            return Some(PropertyKind::Progress);
        }
        self.properties()
            .into_iter()
            .find(|p| p.name == property)
            .map(|p| match p.expectation {
                stateright::Expectation::Sometimes => PropertyKind::Sometimes,
                _ => PropertyKind::Always,
            })
    }
}

/// A step that explains an event (`None`: no step of its own), and the
/// cursor after it.
pub type Explained<T> = (
    Option<<<T as Trace>::Model as Model>::Action>,
    <T as Trace>::Cursor,
);

/// Where a line stands on one thing the system itself orders (a row's
/// versions, a server's sequence): on `key`, somewhere from `lo` to `hi`.
/// A line comes before another of another process when they share a key
/// and its `hi` is below the other's `lo`; lines at the same point are not
/// ordered by it (two reads of one version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderValue {
    pub key: u64,
    pub lo: i64,
    pub hi: i64,
}

impl OrderValue {
    /// Exactly at `at` on `key`.
    pub fn at(key: u64, at: i64) -> Self {
        OrderValue {
            key,
            lo: at,
            hi: at,
        }
    }

    /// At `lo` on `key`, or anywhere after it.
    pub fn from(key: u64, lo: i64) -> Self {
        OrderValue {
            key,
            lo,
            hi: i64::MAX,
        }
    }
}

/// One queue of a real system's event log (`events`) read against a model:
/// which of the model's steps each logged event can be, and which steps the
/// system does not log. `slotcheck validate` searches with it, knowing no
/// model; the model's own handlers say what each step would log.
pub trait Trace {
    type Model: Narrated;
    /// A model state and what matching needs beyond it (row versions, what
    /// each worker read, which of the log's workers each model worker is).
    type Cursor: Clone + Eq + std::hash::Hash;

    fn model(&self) -> &Self::Model;

    /// The number of events.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The line of the log file event `k` is on.
    fn line(&self, k: usize) -> usize;

    /// What event `k` says, as the log has it.
    fn says(&self, k: usize) -> String;

    /// Before the first event.
    fn start(&self) -> Self::Cursor;

    /// Every cursor the log may start from (a model may leave its initial
    /// state open to the log, e.g. each clock's offset).
    fn starts(&self) -> Vec<Self::Cursor> {
        vec![self.start()]
    }

    fn state<'a>(&self, cursor: &'a Self::Cursor) -> &'a <Self::Model as Model>::State;

    /// Every model step that logs event `k` exactly as the log has it, from
    /// `cursor`, each with the cursor after it; `None` for an event that
    /// takes no step of its own (the second line a step logs, a line that
    /// only reports what an earlier step did).
    fn explain(&self, cursor: &Self::Cursor, k: usize, out: &mut Vec<Explained<Self>>);

    /// How many silent steps may come before event `k` (`len()`: after the
    /// last); `None` for the search's own bound. A model whose time passes
    /// in silent steps needs more where the log's clock says time passed.
    fn silent_bound(&self, _k: usize) -> Option<usize> {
        None
    }

    /// The steps the system does not log (faults, and whatever its header
    /// says it leaves out) that may come before event `k`.
    fn silent(
        &self,
        cursor: &Self::Cursor,
        k: usize,
        out: &mut Vec<(<Self::Model as Model>::Action, Self::Cursor)>,
    );

    /// The steps the system does not log that may come before the next
    /// event, when the log is in each process's own order: `pending(j)`
    /// says whether event `j` is still to come (`k`: the first event still
    /// to come). By default, [`Trace::silent`] at `k`, which looks ahead as
    /// if every event from `k` on were still to come.
    fn silent_pending(
        &self,
        cursor: &Self::Cursor,
        k: usize,
        _pending: &dyn Fn(usize) -> bool,
        out: &mut Vec<(<Self::Model as Model>::Action, Self::Cursor)>,
    ) {
        self.silent(cursor, k, out)
    }

    /// Whether a silent step is one a report lists as assumed (not time
    /// passing, which every timed explanation takes).
    fn assumes(&self, _action: &<Self::Model as Model>::Action) -> bool {
        true
    }

    /// The process that wrote event `k` (its lines are in the order it did
    /// its steps); `None`: the log's one process (its lines are in the
    /// order the system did them).
    fn process(&self, _k: usize) -> Option<&str> {
        None
    }

    /// Event `k`'s wall-clock time in milliseconds, if it has one.
    fn time(&self, _k: usize) -> Option<u64> {
        None
    }

    /// Lines of different processes whose times differ by more than this
    /// are in the order of their times (the log's header says it).
    fn order_slack_ms(&self) -> Option<u64> {
        None
    }

    /// What orders event `k` against other processes' events: the values
    /// the system itself orders (see [`OrderValue`]).
    fn order(&self, _k: usize, _out: &mut Vec<OrderValue>) {}

    /// What the model could log next from `cursor`, in the log's words, and
    /// the silent steps it could take, in the model's.
    fn allowed(&self, cursor: &Self::Cursor, k: usize) -> Vec<String>;

    /// The model's names for the log's (`R1 = pr-101`), if they differ.
    fn legend(&self) -> String {
        String::new()
    }

    /// Whether [`Trace::name_actors`] renames a story's actors (then
    /// `validate` finds the cursors along its path for it).
    const NAMES_ACTORS: bool = false;

    /// A story of `actions` told by the model, its actors renamed to the
    /// log's where the model numbers them otherwise; `before[j]` is the
    /// cursor step `j` was taken from.
    fn name_actors(
        &self,
        _story: &mut [StoryStep],
        _actions: &[<Self::Model as Model>::Action],
        _before: &[Self::Cursor],
    ) {
    }
}

/// The rows that differ between two renderings, in the order of `after`
/// (rows that disappeared come last).
pub fn diff_rows(before: &[(String, String)], after: &[(String, String)]) -> Vec<RowChange> {
    let find = |rows: &[(String, String)], name: &str| {
        rows.iter()
            .find(|(row, _)| row == name)
            .map(|(_, value)| value.clone())
    };
    let mut changes = Vec::new();
    for (row, value) in after {
        let old = find(before, row);
        if old.as_ref() != Some(value) {
            changes.push(RowChange {
                row: row.clone(),
                before: old,
                after: Some(value.clone()),
            });
        }
    }
    for (row, value) in before {
        if find(after, row).is_none() {
            changes.push(RowChange {
                row: row.clone(),
                before: Some(value.clone()),
                after: None,
            });
        }
    }
    changes
}

/// Runs actions in order from `init`, each of which must be enabled (the
/// models' unit tests).
#[cfg(test)]
pub(crate) fn run_enabled<M>(model: &M, init: &M::State, actions: &[M::Action]) -> M::State
where
    M: Model,
    M::State: Clone + std::fmt::Debug,
    M::Action: Copy + PartialEq + std::fmt::Debug,
{
    let mut state = init.clone();
    for &action in actions {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        assert!(
            enabled.contains(&action),
            "{action:?} not enabled in {state:#?}"
        );
        state = model.next_state(&state, action).unwrap();
    }
    state
}

/// Packs and unpacks every state reachable from the initial states (up to
/// `most` of them) and fails at the first that does not come back whole.
#[cfg(test)]
pub(crate) fn assert_every_reachable_state_unpacks<M>(model: &M, most: usize, label: &str)
where
    M: Packed,
    M::State: Clone + Eq + std::hash::Hash + std::fmt::Debug,
{
    let mut seen = std::collections::HashSet::new();
    let mut todo = model.init_states();
    let mut words = vec![0; model.packed_words()];
    while let Some(s) = todo.pop() {
        if seen.len() >= most || !seen.insert(s.clone()) {
            continue;
        }
        words.fill(0);
        model.pack(&s, &mut words);
        assert_eq!(model.unpack(&words), s, "{label}");
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        todo.extend(actions.into_iter().filter_map(|a| model.next_state(&s, a)));
    }
}
