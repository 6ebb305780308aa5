//! A live run: the handlers as a deployed service runs them, on real
//! threads, each worker thread with its own connection, many independent
//! queues at once (each within the model's bounds), and a seeded fault
//! injector: a crash between two statements (the connection dropped, the
//! message left in flight until its deadline), a stall (a sleep past the
//! visibility deadline, then on with what was read), redelivery by the
//! message table's deadline, and builds that finish after a random time.
//! Every step logs what its statements returned, in `slotcheck validate`'s
//! format; at the end the invariants are judged on the real rows.
//!
//! The faults are seeded (which delivery crashes or stalls, and where; how
//! long builds take; when requests arrive); the interleavings are the
//! database's and the scheduler's, so two runs of one seed may differ.

use crate::backend::Backend;
use crate::engine::{Conn, DbError, Dialect, Turnstile};
use crate::handlers::{Ctx, Step, Variant, Worker};
use crate::parts::Parts;
use crate::replay::row_violations;
use crate::store::{self, BuildSystem, Kind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a live run does.
#[derive(Clone, Debug)]
pub struct Config {
    pub design: String,
    pub parts: Parts,
    pub variant: Variant,
    pub dialect: Dialect,
    pub seed: u64,
    pub queues: usize,
    /// Requests per queue (the model's N, at most 3).
    pub requests: u8,
    pub max_concurrent: u8,
    pub max_deliveries: u8,
    /// Faults per queue, at most (the model's bounds).
    pub crashes: u8,
    pub stalls: u8,
    /// The chance, per step, that a worker crashes or stalls before it.
    pub crash_percent: u32,
    pub stall_percent: u32,
    pub workers: usize,
    pub visibility_ms: u64,
    pub timeout: Duration,
    pub max_statements: u64,
    /// Asked every few milliseconds: true stops the run as its timeout
    /// does (the command's SIGINT or SIGTERM).
    pub cancelled: fn() -> bool,
    /// Each queue's steps one at a time from commit to log line, so that
    /// its log is in commit order; without it each worker thread logs as a
    /// service does, its lines naming their process (the thread), and
    /// validate infers the order across threads.
    pub turnstile: bool,
}

impl Config {
    pub fn new(design: &str, parts: Parts, dialect: Dialect, seed: u64) -> Config {
        Config {
            design: design.to_string(),
            parts,
            variant: Variant::default(),
            dialect,
            seed,
            queues: 20,
            requests: 3,
            max_concurrent: 1,
            max_deliveries: 2,
            crashes: 1,
            stalls: 1,
            crash_percent: 4,
            stall_percent: 4,
            workers: 8,
            visibility_ms: 150,
            timeout: Duration::from_secs(30),
            max_statements: 200_000,
            cancelled: || false,
            turnstile: true,
        }
    }
}

/// One queue's end.
#[derive(Clone, Debug)]
pub struct QueueEnd {
    pub queue: i64,
    pub violations: Vec<&'static str>,
    pub rows: Vec<(String, String)>,
    /// The most builds running at any build's start, from the build table.
    pub max_running: i64,
}

/// A live run's outcome.
pub struct Outcome {
    pub queues: Vec<QueueEnd>,
    /// Log lines (statements' returns) written.
    pub statements: u64,
    /// The log, NDJSON lines, a header first.
    pub log: Vec<Json>,
    /// Why the run stopped before every queue drained, if it did.
    pub cut: Option<String>,
    pub seconds: f64,
}

impl Outcome {
    pub fn violated(&self) -> Vec<&QueueEnd> {
        self.queues
            .iter()
            .filter(|q| !q.violations.is_empty())
            .collect()
    }

    /// The log lines of one queue.
    pub fn queue_log(&self, queue: i64) -> Vec<&Json> {
        let name = format!("q{queue}");
        self.log
            .iter()
            .filter(|l| l.get("queue").and_then(Json::as_str) == Some(name.as_str()))
            .collect()
    }
}

struct Delivery {
    queue: i64,
    num: i64,
    kind: Kind,
    token: i64,
}

/// What the threads share.
struct Shared {
    start: Instant,
    stop: AtomicBool,
    log: Mutex<Vec<Json>>,
    statements: AtomicU64,
    active: AtomicUsize,
    turnstiles: HashMap<i64, Arc<Turnstile>>,
    /// Whether the turnstiles order the steps (`Config::turnstile`).
    ordered: bool,
    crashes_left: HashMap<i64, AtomicI64>,
    stalls_left: HashMap<i64, AtomicI64>,
    builds: BuildSystem,
    error: Mutex<Option<String>>,
}

impl Shared {
    fn now_ms(&self) -> i64 {
        self.start.elapsed().as_millis() as i64
    }

    /// The queue's turnstile, when the run keeps them.
    fn turnstile(&self, queue: i64) -> Option<Arc<Turnstile>> {
        self.ordered.then(|| self.turnstiles[&queue].clone())
    }

    fn write(&self, queue: i64, actor: &str, events: Vec<Json>) {
        let ts = self.now_ms();
        // Without turnstiles a thread's lines are in its own order only.
        let process = (!self.ordered).then(|| format!("{:?}", std::thread::current().id()));
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        for mut event in events {
            let object = event.as_object_mut().expect("an event is an object");
            object.insert("queue".into(), json!(format!("q{queue}")));
            object.insert("actor".into(), json!(actor));
            object.insert("ts_ms".into(), json!(ts));
            if let Some(process) = &process {
                object.insert("process".into(), json!(process));
            }
            log.push(event);
            self.statements.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn fail(&self, message: String) {
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        error.get_or_insert(message);
        self.stop.store(true, Ordering::SeqCst);
    }

    fn take(counter: &AtomicI64) -> bool {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n > 0).then(|| n - 1)
            })
            .is_ok()
    }
}

/// Retries a step the engine asked to retry (a deadlock, a busy database).
fn retrying<T>(
    shared: &Shared,
    conn: &mut Conn,
    body: impl FnMut(&mut Conn) -> Result<T, DbError>,
) -> Option<T> {
    retry(conn, &|| false, &|e| shared.fail(e), body)
}

/// A step retried while the engine asks (a deadlock, a busy database), up
/// to 200 times; `None` after a fatal error (said to `fail`) or once
/// `stopped()` (the free run's and the steered run's one rule).
pub(crate) fn retry<T>(
    conn: &mut Conn,
    stopped: &dyn Fn() -> bool,
    fail: &dyn Fn(String),
    mut body: impl FnMut(&mut Conn) -> Result<T, DbError>,
) -> Option<T> {
    for attempt in 0..200 {
        if stopped() {
            return None;
        }
        match body(conn) {
            Ok(value) => return Some(value),
            Err(DbError::Retry(_)) => {
                conn.release();
                std::thread::sleep(Duration::from_millis(1 + attempt % 10));
            }
            Err(DbError::Fatal(e)) => {
                conn.release();
                fail(e);
                return None;
            }
        }
    }
    fail("a step was refused 200 times in a row".into());
    None
}

/// Runs `config` on `backend`; the error is a database failure.
pub fn run(backend: &Backend, config: &Config) -> Result<Outcome, String> {
    let queue_ids = backend.new_queues(config.queues as i64)?;
    // This run's queues: new IDs, one after another.
    let (low, high) = (queue_ids[0], *queue_ids.last().unwrap());
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
        active: AtomicUsize::new(0),
        turnstiles: queue_ids.iter().map(|&q| (q, Arc::default())).collect(),
        ordered: config.turnstile,
        crashes_left: queue_ids
            .iter()
            .map(|&q| (q, AtomicI64::new(config.crashes as i64)))
            .collect(),
        stalls_left: queue_ids
            .iter()
            .map(|&q| (q, AtomicI64::new(config.stalls as i64)))
            .collect(),
        builds: BuildSystem::default(),
        error: Mutex::new(None),
    });
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    // Arrivals: each queue's requests at seeded times within 100 ms.
    let mut arrivals: Vec<(i64, i64, i64)> = Vec::new();
    for &q in &queue_ids {
        let mut times: Vec<i64> = (0..config.requests)
            .map(|_| rng.random_range(0..100))
            .collect();
        times.sort_unstable();
        for (i, t) in times.into_iter().enumerate() {
            arrivals.push((t, q, i as i64 + 1));
        }
    }
    arrivals.sort_unstable();
    let arrived_all = Arc::new(AtomicBool::new(false));
    let (send, receive) = mpsc::channel::<Delivery>();
    let receive = Arc::new(Mutex::new(receive));
    let mut threads = Vec::new();
    // The client.
    {
        let (shared, backend_conn, arrived_all) = (
            shared.clone(),
            backend.connect(config.dialect)?,
            arrived_all.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let mut conn = backend_conn;
            for (at, q, num) in arrivals {
                while shared.now_ms() < at && !shared.stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                conn.order_on(shared.turnstile(q));
                if retrying(&shared, &mut conn, |c| store::arrive(c, q, num)).is_none() {
                    return;
                }
                shared.write(
                    q,
                    "client",
                    vec![json!({"event": "arrive", "request": format!("R{num}")})],
                );
                conn.release();
            }
            arrived_all.store(true, Ordering::SeqCst);
        }));
    }
    // The broker: expiries by deadline, and deliveries.
    {
        let (shared, mut conn) = (shared.clone(), backend.connect(config.dialect)?);
        let (visibility, max) = (config.visibility_ms as i64, config.max_deliveries as i64);
        threads.push(std::thread::spawn(move || {
            let mut token = 0i64;
            while !shared.stop.load(Ordering::SeqCst) {
                let now = shared.now_ms();
                let Some(overdue) = retrying(&shared, &mut conn, |c| store::overdue(c, now)) else {
                    return;
                };
                // Another run's queues (on the same database) are not ours.
                let overdue = overdue.into_iter().filter(|(q, ..)| (low..=high).contains(q));
                for (q, num, kind, t) in overdue {
                    conn.order_on(shared.turnstile(q));
                    retrying(&shared, &mut conn, |c| store::expire(c, q, num, kind, t, max));
                    conn.release();
                }
                let visible = retrying(&shared, &mut conn, |c| {
                    c.query(
                        "SELECT queue, num, kind FROM messages WHERE status = 'visible' AND queue BETWEEN ? AND ? ORDER BY queue, num, kind",
                        &[low.into(), high.into()],
                    )
                });
                let Some(visible) = visible else { return };
                for row in visible {
                    let (q, num, kind) = (row[0].int(), row[1].int(), Kind::from_column(&row[2].text()));
                    token += 1;
                    let deadline = shared.now_ms() + visibility;
                    conn.order_on(shared.turnstile(q));
                    let Some(delivered) = retrying(&shared, &mut conn, |c| store::deliver(c, q, num, kind, token, deadline)) else {
                        return;
                    };
                    if let Some(attempts) = delivered {
                        let attempt = if kind.is_dead() { 1 } else { attempts + 1 };
                        shared.write(q, "broker", vec![json!({"event": "deliver", "message": kind.event_name(), "request": format!("R{num}"), "worker": format!("worker-{token}"), "attempt": attempt})]);
                        shared.active.fetch_add(1, Ordering::SeqCst);
                        let _ = send.send(Delivery { queue: q, num, kind, token });
                    }
                    conn.release();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }));
    }
    // The build system: each running build finishes after a seeded time.
    {
        let (shared, mut conn, seed) = (
            shared.clone(),
            backend.connect(config.dialect)?,
            config.seed,
        );
        threads.push(std::thread::spawn(move || {
            let mut seen: HashMap<(i64, i64), i64> = HashMap::new();
            while !shared.stop.load(Ordering::SeqCst) {
                let running = retrying(&shared, &mut conn, |c| {
                    c.query(
                        "SELECT queue, num FROM builds WHERE state = 'running' AND queue BETWEEN ? AND ?",
                        &[low.into(), high.into()],
                    )
                });
                let Some(running) = running else { return };
                let now = shared.now_ms();
                for row in running {
                    let (q, num) = (row[0].int(), row[1].int());
                    let due = *seen.entry((q, num)).or_insert_with(|| {
                        let mut r = ChaCha8Rng::seed_from_u64(seed ^ (q as u64) << 8 ^ num as u64);
                        now + r.random_range(5..60)
                    });
                    if now >= due {
                        conn.order_on(shared.turnstile(q));
                        let finished =
                            retrying(&shared, &mut conn, |c| shared.builds.finish(c, q, num));
                        if finished == Some(true) {
                            shared.write(
                                q,
                                "build-system",
                                vec![
                                    json!({"event": "finish_build", "request": format!("R{num}")}),
                                ],
                            );
                        }
                        conn.release();
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }));
    }
    // The workers.
    for _ in 0..config.workers {
        let (shared, receive, config) = (shared.clone(), receive.clone(), config.clone());
        let target = backend.target.clone();
        threads.push(std::thread::spawn(move || {
            let mut conn: Option<Conn> = None;
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                let next = receive
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .recv_timeout(Duration::from_millis(20));
                let Ok(delivery) = next else { continue };
                if conn.is_none() {
                    match Conn::open(&target, config.dialect) {
                        Ok(c) => conn = Some(c),
                        Err(e) => {
                            shared.fail(e.to_string());
                            return;
                        }
                    }
                }
                let crashed = handle(&shared, &config, conn.as_mut().unwrap(), &delivery);
                if crashed {
                    // The connection is dropped with the worker.
                    conn = None;
                }
                shared.active.fetch_sub(1, Ordering::SeqCst);
            }
        }));
    }
    // Wait until every queue drained, or a bound is reached.
    let mut watcher = backend.connect(config.dialect)?;
    let cut = loop {
        std::thread::sleep(Duration::from_millis(10));
        // The guard is dropped here, before the joins: a worker that fails
        // meanwhile takes the lock too, and a join would wait on it.
        let failed = shared
            .error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if let Some(e) = failed {
            shared.stop.store(true, Ordering::SeqCst);
            for t in threads {
                let _ = t.join();
            }
            return Err(e);
        }
        if shared.start.elapsed() > config.timeout {
            break Some(format!("the timeout of {:?} passed", config.timeout));
        }
        if (config.cancelled)() {
            break Some("a signal (SIGINT or SIGTERM) stopped the run".to_string());
        }
        if shared.statements.load(Ordering::SeqCst) > config.max_statements {
            break Some(format!("more than {} statements", config.max_statements));
        }
        if !arrived_all.load(Ordering::SeqCst) || shared.active.load(Ordering::SeqCst) > 0 {
            continue;
        }
        let busy = match watcher.query_one(
            "SELECT (SELECT COUNT(*) FROM messages WHERE status IN ('visible', 'in_flight') AND queue BETWEEN ? AND ?) + (SELECT COUNT(*) FROM builds WHERE state = 'running' AND queue BETWEEN ? AND ?)",
            &[low.into(), high.into(), low.into(), high.into()],
        ) {
            Ok(row) => row.map_or(0, |r| r[0].int()),
            // Stopped and joined as the workers' errors are, above.
            Err(e) => {
                shared.fail(e.to_string());
                continue;
            }
        };
        if busy == 0 && shared.active.load(Ordering::SeqCst) == 0 {
            break None;
        }
    };
    shared.stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
    let queues = queue_ends(&mut watcher, config, &queue_ids, cut.is_some())?;
    let log = std::mem::take(&mut *shared.log.lock().unwrap());
    Ok(Outcome {
        queues,
        statements: shared.statements.load(Ordering::SeqCst),
        log,
        cut,
        seconds: shared.start.elapsed().as_secs_f64(),
    })
}

/// One delivery, handled to its end or to a crash (returns true then).
fn handle(shared: &Shared, config: &Config, conn: &mut Conn, d: &Delivery) -> bool {
    let mut rng = ChaCha8Rng::seed_from_u64(
        config.seed ^ (d.token as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let mut worker = Worker::new(
        d.token,
        d.queue,
        d.num,
        d.kind,
        config.parts,
        config.variant,
        config.max_concurrent as i64,
    );
    conn.order_on(shared.turnstile(d.queue));
    while worker.step != Step::Done {
        if shared.stop.load(Ordering::SeqCst) {
            return false;
        }
        if rng.random_range(0..100) < config.crash_percent
            && Shared::take(&shared.crashes_left[&d.queue])
        {
            conn.order_on(None);
            return true;
        }
        if rng.random_range(0..100) < config.stall_percent
            && Shared::take(&shared.stalls_left[&d.queue])
        {
            // Cut short by the run's stop (its time, a signal): the run's
            // end waits for no sleeping worker.
            let until = Instant::now() + Duration::from_millis(config.visibility_ms + 60);
            while Instant::now() < until && !shared.stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if shared.stop.load(Ordering::SeqCst) {
                return false;
            }
        }
        let done = retrying(shared, conn, |c| {
            let mut ctx = Ctx {
                conn: c,
                builds: &shared.builds,
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
        });
        let Some(events) = done else { return false };
        shared.write(d.queue, &worker.name(), events);
        conn.release();
    }
    conn.order_on(None);
    false
}

/// Each queue's rows at the end of a run, and the invariants they break
/// (none judged when the run was cut: its rows are mid-step), with the most
/// builds ever running at once: the end of a free run and of a steered one.
pub(crate) fn queue_ends(
    conn: &mut Conn,
    config: &Config,
    queue_ids: &[i64],
    cut: bool,
) -> Result<Vec<QueueEnd>, String> {
    let k = config.max_concurrent as i64;
    let mut queues = Vec::new();
    for &q in queue_ids {
        let rows = store::rows(conn, q, config.parts.slot, config.max_deliveries as i64)
            .map_err(|e| e.to_string())?;
        let max_running = conn
            .query_one(
                "SELECT COALESCE(MAX(running_at_start), 0) FROM builds WHERE queue = ?",
                &[q.into()],
            )
            .map_err(|e| e.to_string())?
            .map_or(0, |r| r[0].int());
        let mut violations = if cut {
            Vec::new()
        } else {
            row_violations(&rows, k, true, &[])
        };
        if max_running > k && !violations.contains(&"builds-within-limit") {
            violations.insert(0, "builds-within-limit");
        }
        queues.push(QueueEnd {
            queue: q,
            violations,
            rows,
            max_running,
        });
    }
    Ok(queues)
}
