//! Steered live runs (`live --schedule pct|guided`): the same handlers, SQL
//! and log as a free live run (`live.rs`), but each queue's actors (the
//! client, the broker, the build system, one thread and one connection per
//! delivery) take a step only when the queue's director says so, and the
//! director places the faults. It chooses, among the actions the real rows
//! and the actors' states enable, as the model's schedulers do:
//!
//! - `pct`: each actor a seeded priority, the highest enabled one goes, and
//!   a seeded number (1 to 3) of change points at seeded steps drop the
//!   actor about to go to the lowest priority (probabilistic concurrency
//!   testing); a worker is also held inside its admit transaction, between
//!   its reads and its writes, so that another's reads can come between.
//! - `guided`: a model story's words (`step worker 3`) one at a time, each
//!   model step run whole; where the real rows do not enable the next word
//!   (the engine answered otherwise), or after the last word, the run goes
//!   on free (seeded random choices).
//!
//! A step whose statement waits for a lock (another worker holds it inside
//! its transaction) is left waiting and the director goes on with the
//! others, as the engine would. There are no deadlines: messages come back
//! only by the faults the director places (a crash drops the worker and its
//! connection; a stall lets the message's deadline pass while the worker
//! goes on later), as in the model.

use crate::backend::Backend;
use crate::engine::{Conn, DbError, Turnstile};
use crate::handlers::{Ctx, Step, Worker};
use crate::live::{Config, Outcome};
use crate::store::{self, BuildSystem, Kind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the director chooses.
#[derive(Clone, Debug)]
pub enum Schedule {
    /// Priorities and seeded change points.
    Pct,
    /// A model story's words, then free.
    Guided(Vec<String>),
}

/// What the queues' directors share.
struct Shared {
    start: Instant,
    stop: AtomicBool,
    log: Mutex<Vec<Json>>,
    statements: AtomicU64,
    error: Mutex<Option<String>>,
}

impl Shared {
    fn write(&self, queue: i64, actor: &str, events: Vec<Json>) {
        let ts = self.start.elapsed().as_millis() as i64;
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        for mut event in events {
            let object = event.as_object_mut().expect("an event is an object");
            object.insert("queue".into(), json!(format!("q{queue}")));
            object.insert("actor".into(), json!(actor));
            object.insert("ts_ms".into(), json!(ts));
            log.push(event);
            self.statements.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn fail(&self, message: String) {
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        error.get_or_insert(message);
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Retries a step the engine asked to retry; `None` after a fatal error or
/// when the run stops.
fn retrying<T>(
    shared: &Shared,
    conn: &mut Conn,
    body: impl FnMut(&mut Conn) -> Result<T, DbError>,
) -> Option<T> {
    crate::live::retry(
        conn,
        &|| shared.stop.load(Ordering::SeqCst),
        &|e| shared.fail(e),
        body,
    )
}

/// A model action, as a story words it: the replay's (one parser of the
/// story's words for both).
use crate::replay::Move as Action;

impl Action {
    /// The actor that takes it (a fault is the broker's doing).
    fn actor(&self) -> usize {
        match self {
            Action::Arrive(_) => CLIENT,
            Action::Deliver(..) | Action::Crash(_) | Action::Stall(_) => BROKER,
            Action::Finish(_) => BUILDS,
            Action::Step(n) => worker_actor(*n),
        }
    }

    /// Who pct gives a priority: each request's arrival, each message's
    /// delivery and each build's finish its own, as each worker.
    fn source(&self) -> usize {
        let kind = |k: &Kind| match k {
            Kind::Process => 0,
            Kind::Signal => 1,
            Kind::DeadProcess => 2,
            Kind::DeadSignal => 3,
        };
        match self {
            Action::Arrive(n) => 1_000 + *n as usize,
            Action::Deliver(k, n) => 2_000 + 4 * *n as usize + kind(k),
            Action::Finish(n) => 3_000 + *n as usize,
            other => other.actor(),
        }
    }

    fn fault(&self) -> bool {
        matches!(self, Action::Crash(_) | Action::Stall(_))
    }
}

const CLIENT: usize = 0;
const BROKER: usize = 1;
const BUILDS: usize = 2;

fn worker_actor(n: usize) -> usize {
    2 + n
}

/// What an actor's job hands back.
enum Done {
    Nothing,
    /// A worker after its step.
    Worker(Box<Worker>),
    /// A delivery's new worker, if the delivery went through.
    Delivered(Option<Box<Worker>>),
}

enum Reply {
    Done(Done),
    /// Held inside its transaction, until resumed.
    Paused,
}

type Job = Box<dyn FnOnce(&mut Conn) -> Option<Done> + Send>;

/// An actor: a thread with its own connection, taking jobs one at a time.
struct Actor {
    jobs: Option<Sender<Job>>,
    resume: Option<Sender<()>>,
    /// Whether the next job may pause inside a transaction.
    may_pause: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Actor {
    fn start(
        id: usize,
        mut conn: Conn,
        turnstile: Arc<Turnstile>,
        replies: Sender<(usize, Reply)>,
    ) -> Actor {
        let (jobs, receive) = mpsc::channel::<Job>();
        let (resume, resumed) = mpsc::channel::<()>();
        let may_pause = Arc::new(AtomicBool::new(false));
        let (pause_replies, pausing) = (replies.clone(), may_pause.clone());
        conn.order_on(Some(turnstile));
        conn.on_pause(Some(Box::new(move || {
            if pausing.load(Ordering::SeqCst) {
                let _ = pause_replies.send((id, Reply::Paused));
                // Resumed, or the director is gone (the run stopped).
                let _ = resumed.recv();
            }
        })));
        let thread = std::thread::spawn(move || {
            while let Ok(job) = receive.recv() {
                let done = job(&mut conn);
                conn.release();
                let Some(done) = done else { return };
                if replies.send((id, Reply::Done(done))).is_err() {
                    return;
                }
            }
        });
        Actor {
            jobs: Some(jobs),
            resume: Some(resume),
            may_pause,
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        self.jobs = None;
        self.resume = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An actor's state as the director knows it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Busy {
    Idle,
    Running,
    Paused,
}

/// A delivery's worker, as the director knows it.
struct Delivery {
    worker: Option<Box<Worker>>,
    num: i64,
    kind: Kind,
    stalled: bool,
}

/// Runs `config` steered by `schedule` on `backend`.
pub fn run(backend: &Backend, config: &Config, schedule: &Schedule) -> Result<Outcome, String> {
    let queue_ids = backend.new_queues(config.queues as i64)?;
    let shared = Arc::new(Shared {
        start: Instant::now(),
        stop: AtomicBool::new(false),
        log: Mutex::new(vec![json!({
            "event": "header",
            "model": "stovepipe",
            "design": config.design,
            "max_concurrent": config.max_concurrent,
            "max_deliveries": config.max_deliveries,
        })]),
        statements: AtomicU64::new(0),
        error: Mutex::new(None),
    });
    // A bound or a signal stops every director: they look at `stop`.
    let watcher = {
        let shared = shared.clone();
        let (timeout, cancelled, max) = (config.timeout, config.cancelled, config.max_statements);
        std::thread::spawn(move || loop {
            if shared.stop.load(Ordering::SeqCst) {
                return None;
            }
            let why = if shared.start.elapsed() > timeout {
                Some(format!("the timeout of {timeout:?} passed"))
            } else if cancelled() {
                Some("a signal (SIGINT or SIGTERM) stopped the run".to_string())
            } else if shared.statements.load(Ordering::SeqCst) > max {
                Some(format!("more than {max} statements"))
            } else {
                None
            };
            if why.is_some() {
                shared.stop.store(true, Ordering::SeqCst);
                return why;
            }
            std::thread::sleep(Duration::from_millis(10));
        })
    };
    let mut cut: Option<String> = None;
    std::thread::scope(|scope| {
        let mut directors = Vec::new();
        for (i, &q) in queue_ids.iter().enumerate() {
            let shared = &shared;
            directors.push(scope.spawn(move || {
                let seed = config.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                match direct(backend, config, schedule, shared, q, seed) {
                    Ok(cut) => cut,
                    Err(e) => {
                        shared.fail(e);
                        None
                    }
                }
            }));
        }
        for d in directors {
            match d.join() {
                Ok(Some(why)) => {
                    cut.get_or_insert(why);
                }
                Ok(None) => {}
                Err(_) => shared.fail("a queue's director panicked".into()),
            }
        }
    });
    let stopped = shared.stop.swap(true, Ordering::SeqCst);
    if let Ok(Some(why)) = watcher.join() {
        cut = Some(why);
    } else if stopped && cut.is_none() {
        cut = shared.error.lock().unwrap().clone();
    }
    if let Some(e) = shared.error.lock().unwrap().clone() {
        return Err(e);
    }
    let mut conn = backend.connect(config.dialect)?;
    let queues = crate::live::queue_ends(&mut conn, config, &queue_ids, cut.is_some())?;
    let log = std::mem::take(&mut *shared.log.lock().unwrap());
    Ok(Outcome {
        queues,
        statements: shared.statements.load(Ordering::SeqCst),
        log,
        cut,
        seconds: shared.start.elapsed().as_secs_f64(),
    })
}

/// The chooser's state.
struct Chooser {
    rng: ChaCha8Rng,
    /// Story words left (guided), or none.
    words: Vec<Action>,
    next_word: usize,
    following: bool,
    pct: bool,
    priority: HashMap<usize, u64>,
    change_points: Vec<usize>,
    taken: usize,
    /// The next lowered priority (below every first one).
    lowered: u64,
    /// pct's faults: the step from which each is placed (as soon as one of
    /// its kind is enabled), true for a crash.
    faults: Vec<(usize, bool)>,
}

impl Chooser {
    fn new(schedule: &Schedule, config: &Config, seed: u64) -> Result<Chooser, String> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (words, pct) = match schedule {
            Schedule::Pct => (Vec::new(), true),
            Schedule::Guided(words) => (
                words
                    .iter()
                    .map(|w| Action::parse(w).ok_or_else(|| format!("a story's step: `{w}`")))
                    .collect::<Result<Vec<_>, _>>()?,
                false,
            ),
        };
        // Change points: 1 to 3, within the first 30 steps (the stories
        // lengths).
        let depth = if pct { rng.random_range(1..=3) } else { 0 };
        let change_points = (0..depth).map(|_| rng.random_range(1..30)).collect();
        let mut faults = Vec::new();
        if pct {
            for _ in 0..config.crashes {
                faults.push((rng.random_range(1..20), true));
            }
            for _ in 0..config.stalls {
                faults.push((rng.random_range(1..20), false));
            }
        }
        Ok(Chooser {
            rng,
            following: !words.is_empty(),
            words,
            next_word: 0,
            pct,
            priority: HashMap::new(),
            change_points,
            taken: 0,
            lowered: 9,
            faults,
        })
    }

    fn priority(&mut self, actor: usize) -> u64 {
        let rng = &mut self.rng;
        *self
            .priority
            .entry(actor)
            .or_insert_with(|| rng.random_range(10..1_000_000))
    }

    /// The next action among `enabled`; `None` to wait for a running actor.
    fn choose(&mut self, config: &Config, enabled: &[Action], running: &[usize]) -> Option<Action> {
        if self.following {
            let word = self.words[self.next_word].clone();
            if enabled.contains(&word) {
                self.next_word += 1;
                self.following = self.next_word < self.words.len();
                return Some(word);
            }
            if running.contains(&word.actor()) {
                return None;
            }
            // The engine answered otherwise than the model: free from here.
            self.following = false;
        }
        if enabled.is_empty() {
            return None;
        }
        self.taken += 1;
        let faults: Vec<&Action> = enabled.iter().filter(|a| a.fault()).collect();
        let pick = |rng: &mut ChaCha8Rng, of: &[&Action]| of[rng.random_range(0..of.len())].clone();
        if self.pct {
            // A fault whose step has come, as soon as one of its kind can
            // happen.
            for i in 0..self.faults.len() {
                let (at, crash) = self.faults[i];
                let of: Vec<&Action> = faults
                    .iter()
                    .copied()
                    .filter(|a| matches!(a, Action::Crash(_)) == crash)
                    .collect();
                if at <= self.taken && !of.is_empty() {
                    self.faults.remove(i);
                    return Some(pick(&mut self.rng, &of));
                }
            }
        }
        let roll = if self.pct {
            100
        } else {
            self.rng.random_range(0..100)
        };
        let crashes: Vec<&Action> = faults
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Crash(_)))
            .collect();
        let stalls: Vec<&Action> = faults
            .iter()
            .copied()
            .filter(|a| matches!(a, Action::Stall(_)))
            .collect();
        if roll < config.crash_percent && !crashes.is_empty() {
            return Some(pick(&mut self.rng, &crashes));
        }
        if roll < 100 && roll >= 100 - config.stall_percent && !stalls.is_empty() {
            return Some(pick(&mut self.rng, &stalls));
        }
        let moves: Vec<&Action> = enabled.iter().filter(|a| !a.fault()).collect();
        if moves.is_empty() {
            // Only faults enabled: pct waits for none (the queue is done).
            return (!self.pct).then(|| pick(&mut self.rng, &faults));
        }
        if !self.pct {
            return Some(pick(&mut self.rng, &moves));
        }
        let mut best: Option<(u64, &Action)> = None;
        for a in moves {
            let p = self.priority(a.source());
            if best.is_none_or(|(b, _)| p > b) {
                best = Some((p, a));
            }
        }
        let chosen = best.expect("a move").1.clone();
        // A change point: the actor about to go drops below every other,
        // from the next step on.
        if self.change_points.contains(&self.taken) {
            self.lowered = self.lowered.saturating_sub(1);
            self.priority.insert(chosen.source(), self.lowered);
        }
        Some(chosen)
    }
}

/// One queue's director: runs its actors until nothing is enabled (the
/// queue quiescent) or the run stops; returns why it stopped early.
fn direct(
    backend: &Backend,
    config: &Config,
    schedule: &Schedule,
    shared: &Arc<Shared>,
    queue: i64,
    seed: u64,
) -> Result<Option<String>, String> {
    let turnstile: Arc<Turnstile> = Arc::default();
    let builds = Arc::new(BuildSystem::default());
    let (replies, answers) = mpsc::channel::<(usize, Reply)>();
    let mut actors: BTreeMap<usize, Actor> = BTreeMap::new();
    for id in [CLIENT, BROKER, BUILDS] {
        let conn = backend.connect(config.dialect)?;
        actors.insert(
            id,
            Actor::start(id, conn, turnstile.clone(), replies.clone()),
        );
    }
    let mut look = backend.connect(config.dialect)?;
    let mut busy: HashMap<usize, Busy> = HashMap::new();
    let mut deliveries: BTreeMap<usize, Delivery> = BTreeMap::new();
    let mut arrived = 0i64;
    let (mut crashes, mut stalls) = (config.crashes as i64, config.stalls as i64);
    let mut chooser = Chooser::new(schedule, config, seed)?;
    let max = config.max_deliveries as i64;
    let k = config.max_concurrent as i64;
    let mut steps = 0usize;
    let outcome = loop {
        if shared.stop.load(Ordering::SeqCst) {
            break Some("the run stopped".to_string());
        }
        if steps > 2_000 {
            break Some("more than 2,000 steps on a queue".to_string());
        }
        // Replies that came meanwhile.
        while let Ok((id, reply)) = answers.try_recv() {
            settle(id, reply, &mut busy, &mut deliveries, &mut actors);
        }
        // A new delivery's worker: its own thread and connection.
        for (&n, d) in deliveries.iter_mut() {
            let id = worker_actor(n);
            if d.worker.is_some() && !actors.contains_key(&id) {
                let conn = backend.connect(config.dialect)?;
                actors.insert(
                    id,
                    Actor::start(id, conn, turnstile.clone(), replies.clone()),
                );
            }
        }
        let idle = |id: usize, busy: &HashMap<usize, Busy>| {
            busy.get(&id).copied().unwrap_or(Busy::Idle) == Busy::Idle
        };
        let mut enabled = Vec::new();
        if arrived < config.requests as i64 && idle(CLIENT, &busy) {
            enabled.push(Action::Arrive(arrived + 1));
        }
        if idle(BROKER, &busy) {
            let visible = look
                .query(
                    "SELECT num, kind FROM messages WHERE queue = ? AND status = 'visible' ORDER BY num, kind",
                    &[queue.into()],
                )
                .map_err(|e| e.to_string())?;
            for row in visible {
                enabled.push(Action::Deliver(
                    Kind::from_column(&row[1].text()),
                    row[0].int(),
                ));
            }
        }
        for (&n, d) in &deliveries {
            let state = busy.get(&worker_actor(n)).copied().unwrap_or(Busy::Idle);
            if state == Busy::Paused || (state == Busy::Idle && d.worker.is_some()) {
                enabled.push(Action::Step(n));
            }
            if state == Busy::Idle && d.worker.is_some() && idle(BROKER, &busy) {
                if crashes > 0 {
                    enabled.push(Action::Crash(n));
                }
                if stalls > 0 && !d.stalled {
                    enabled.push(Action::Stall(n));
                }
            }
        }
        if idle(BUILDS, &busy) {
            for num in builds
                .running(&mut look, queue)
                .map_err(|e| e.to_string())?
            {
                enabled.push(Action::Finish(num));
            }
        }
        let running: Vec<usize> = busy
            .iter()
            .filter(|(_, b)| **b == Busy::Running)
            .map(|(id, _)| *id)
            .collect();
        let only_faults = enabled.iter().all(Action::fault);
        if only_faults && running.is_empty() && !deliveries.values().any(|d| d.worker.is_some()) {
            // Quiescent: nothing but (no) faults left.
            break None;
        }
        let Some(action) = chooser.choose(config, &enabled, &running) else {
            // Wait for a running actor.
            match answers.recv_timeout(Duration::from_millis(50)) {
                Ok((id, reply)) => settle(id, reply, &mut busy, &mut deliveries, &mut actors),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break Some("an actor ended".into()),
            }
            continue;
        };
        steps += 1;
        let actor = action.actor();
        // A story's step is taken whole; free choices may stop a worker
        // inside its admit transaction.
        let may_pause = !chooser.following && chooser.pct;
        match action {
            Action::Arrive(num) => {
                arrived = num;
                let shared = shared.clone();
                dispatch(
                    &actors[&CLIENT],
                    false,
                    Box::new(move |c: &mut Conn| {
                        retrying(&shared, c, |c| store::arrive(c, queue, num))?;
                        shared.write(
                            queue,
                            "client",
                            vec![json!({"event": "arrive", "request": format!("R{num}")})],
                        );
                        Some(Done::Nothing)
                    }),
                );
            }
            Action::Deliver(kind, num) => {
                let n = deliveries.len() + 1;
                deliveries.insert(
                    n,
                    Delivery {
                        worker: None,
                        num,
                        kind,
                        stalled: false,
                    },
                );
                let shared = shared.clone();
                let (parts, variant) = (config.parts, config.variant);
                dispatch(
                    &actors[&BROKER],
                    false,
                    Box::new(move |c: &mut Conn| {
                        let token = n as i64;
                        let delivered = retrying(&shared, c, |c| {
                            store::deliver(c, queue, num, kind, token, i64::MAX)
                        })?;
                        let worker = delivered.map(|attempts| {
                        let attempt = if kind.is_dead() { 1 } else { attempts + 1 };
                        let worker = Worker::new(token, queue, num, kind, parts, variant, k);
                        shared.write(queue, "broker", vec![json!({"event": "deliver", "message": kind.event_name(), "request": format!("R{num}"), "worker": worker.name(), "attempt": attempt})]);
                        Box::new(worker)
                    });
                        Some(Done::Delivered(worker))
                    }),
                );
            }
            Action::Step(n) => {
                let id = worker_actor(n);
                if busy.get(&id) == Some(&Busy::Paused) {
                    busy.insert(id, Busy::Running);
                    let a = &actors[&id];
                    a.may_pause.store(may_pause, Ordering::SeqCst);
                    if let Some(r) = &a.resume {
                        let _ = r.send(());
                    }
                } else {
                    let mut worker = deliveries
                        .get_mut(&n)
                        .and_then(|d| d.worker.take())
                        .expect("an idle worker");
                    let (shared, builds) = (shared.clone(), builds.clone());
                    dispatch(
                        &actors[&id],
                        may_pause,
                        Box::new(move |c: &mut Conn| {
                            let events = retrying(&shared, c, |c| {
                                let mut ctx = Ctx {
                                    conn: c,
                                    builds: &builds,
                                    events: Vec::new(),
                                };
                                let before = worker.step;
                                match worker.step(&mut ctx) {
                                    Ok(()) => Ok(ctx.events),
                                    Err(e) => {
                                        worker.step = before;
                                        Err(e)
                                    }
                                }
                            })?;
                            shared.write(queue, &worker.name(), events);
                            Some(Done::Worker(worker))
                        }),
                    );
                }
            }
            Action::Crash(n) | Action::Stall(n) => {
                let crash = matches!(action, Action::Crash(_));
                let d = deliveries.get_mut(&n).expect("a delivery");
                if crash {
                    crashes -= 1;
                    // The worker and its connection are gone.
                    d.worker = None;
                    if let Some(mut a) = actors.remove(&worker_actor(n)) {
                        a.stop();
                    }
                } else {
                    stalls -= 1;
                    d.stalled = true;
                }
                let (num, kind, shared) = (d.num, d.kind, shared.clone());
                dispatch(
                    &actors[&BROKER],
                    false,
                    Box::new(move |c: &mut Conn| {
                        retrying(&shared, c, |c| {
                            store::expire(c, queue, num, kind, n as i64, max)
                        })?;
                        Some(Done::Nothing)
                    }),
                );
            }
            Action::Finish(num) => {
                let (shared, builds) = (shared.clone(), builds.clone());
                dispatch(
                    &actors[&BUILDS],
                    false,
                    Box::new(move |c: &mut Conn| {
                        let finished = retrying(&shared, c, |c| builds.finish(c, queue, num))?;
                        if finished {
                            shared.write(
                                queue,
                                "build-system",
                                vec![
                                    json!({"event": "finish_build", "request": format!("R{num}")}),
                                ],
                            );
                        }
                        Some(Done::Nothing)
                    }),
                );
            }
        }
        busy.insert(actor, Busy::Running);
        // Wait for this step; a step that waits on a lock longer is left
        // waiting (a story's step gets longer: the model takes it whole).
        let patience = Duration::from_millis(if chooser.following { 2_000 } else { 200 });
        let until = Instant::now() + patience;
        while busy.get(&actor) == Some(&Busy::Running) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match answers.recv_timeout(left) {
                Ok((id, reply)) => settle(id, reply, &mut busy, &mut deliveries, &mut actors),
                Err(_) => break,
            }
        }
    };
    // Every actor let go first (a paused one goes on, and frees the locks
    // another may wait on), then joined.
    for a in actors.values_mut() {
        a.jobs = None;
        a.resume = None;
    }
    for (_, mut a) in std::mem::take(&mut actors) {
        a.stop();
    }
    Ok(outcome)
}

fn dispatch(actor: &Actor, may_pause: bool, job: Job) {
    actor.may_pause.store(may_pause, Ordering::SeqCst);
    if let Some(jobs) = &actor.jobs {
        let _ = jobs.send(job);
    }
}

/// Applies an actor's reply to the director's view.
fn settle(
    id: usize,
    reply: Reply,
    busy: &mut HashMap<usize, Busy>,
    deliveries: &mut BTreeMap<usize, Delivery>,
    actors: &mut BTreeMap<usize, Actor>,
) {
    match reply {
        Reply::Paused => {
            busy.insert(id, Busy::Paused);
        }
        Reply::Done(done) => {
            busy.insert(id, Busy::Idle);
            match done {
                Done::Nothing => {}
                Done::Delivered(worker) => {
                    // The last delivery is the one this reply is about.
                    let n = deliveries.len();
                    match worker {
                        Some(w) => {
                            if let Some(d) = deliveries.get_mut(&n) {
                                d.worker = Some(w);
                            }
                        }
                        None => {
                            deliveries.remove(&n);
                        }
                    }
                }
                Done::Worker(worker) => {
                    let n = id - 2;
                    if worker.step == Step::Done {
                        deliveries.entry(n).and_modify(|d| d.worker = None);
                        if let Some(mut a) = actors.remove(&id) {
                            a.stop();
                        }
                    } else if let Some(d) = deliveries.get_mut(&n) {
                        d.worker = Some(worker);
                    }
                }
            }
        }
    }
}
