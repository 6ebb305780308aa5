//! `slotcheck live --model link --on nats`: builders of one design running
//! freely on a private server under seeded random faults, bounded in time;
//! the properties judged from the server's evidence at the end.
//!
//! The faults each builder draws (crashes, late heartbeats, lost acks, its
//! clock's offset, each build's length) come from the seed; the order in
//! which the server serves the builders does not, so a seed names a fault
//! schedule, not a run.

use crate::builder::{Builder, Costs, Fetched, Started};
use crate::bus::{Bus, Error, Evidence, Names};
use crate::design::{Design, Timing, TAKE_IDLE_WAIT};
use crate::log::Log;
use crate::proxy::Proxy;
use crate::verdict::{self, Violations};
use slotcheck_models::events::link::Decision;
use slotcheck_models::events::{Header, ModelName};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug)]
pub struct LiveOptions {
    pub design: Design,
    pub seed: u64,
    pub asks: usize,
    pub builders: usize,
    pub timing: Timing,
    /// Real time the run may take at most.
    pub limit: Duration,
    /// Chance per heartbeat that the builder crashes instead.
    pub crash_rate: f64,
    /// Chance per heartbeat that its ticker is paused first, by up to
    /// `late_by_ticks` ticks.
    pub late_rate: f64,
    pub late_by_ticks: u64,
    /// Chance per finish that the ack is lost.
    pub lost_ack_rate: f64,
    /// Longest build, in ticks (at least one).
    pub longest_build_ticks: u64,
    /// Each builder's clock off the server's by up to this many seconds of
    /// source time, either way.
    pub skew_s: i64,
    /// One-way delay on b1's link (a proxy), if any.
    pub delay: Option<Duration>,
    pub max_deliver: i64,
    /// A signal (or the command's whole deadline): the run stops as at its
    /// limit, and no further run starts.
    pub stop: crate::server::Stop,
}

impl LiveOptions {
    pub fn new(design: Design, seed: u64) -> LiveOptions {
        LiveOptions {
            design,
            seed,
            asks: 6,
            builders: 3,
            timing: Timing::scaled(100),
            limit: Duration::from_secs(20),
            crash_rate: 0.05,
            late_rate: 0.05,
            late_by_ticks: 10,
            lost_ack_rate: 0.05,
            longest_build_ticks: 15,
            skew_s: 0,
            delay: None,
            max_deliver: 3,
            stop: crate::server::Stop::default(),
        }
    }
}

/// splitmix64: a seeded stream of numbers with no dependency (the free Go
/// run draws its faults with it too).
#[derive(Clone)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p && p > 0.0
    }
    /// In `low..=high`.
    pub(crate) fn range(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

pub struct LiveOutcome {
    pub options: LiveOptions,
    pub violations: Violations,
    pub evidence: Evidence,
    pub builds: Vec<verdict::Build>,
    /// The faults injected, in order: (ms, builder, what).
    pub faults: Vec<(u64, String, String)>,
    pub finished: bool,
    pub log: String,
    /// What the repairs cost, summed over the builders.
    pub costs: Costs,
    /// The longest pause of slotcheck's own loop, if it was long (ms into
    /// the run, ms paused): the machine stalled, and real time passed that
    /// no process used, which a model of the design does not explain.
    pub stalled: Option<(u64, u64)>,
}

/// A pause of slotcheck's own loop this long, in ticks, is the machine's
/// stall (the loop sleeps 5 ms; a heartbeat is 2 ticks).
pub const STALL_TICKS: u64 = 5;

type Faults = Arc<Mutex<Vec<(u64, String, String)>>>;

/// One run.
pub async fn live(server: SocketAddr, options: &LiveOptions) -> Result<LiveOutcome, Error> {
    let names = Names::of(&format!(
        "live_{}_{}",
        options.design.name().replace('-', "_"),
        options.seed
    ));
    let url = format!("nats://{server}");
    let header = Header {
        model: Some(ModelName::Link),
        design: Some(options.design.name().to_string()),
        ms_per_tick: Some(options.timing.ms_per_tick),
        max_deliver: Some(options.max_deliver as u8),
        // Each clock is off by up to this, in whole ticks (validate tries each).
        skew_s: (options.skew_s > 0).then(|| (options.skew_s as u16).div_ceil(5) * 5),
        nats_server: Some(crate::bus::server_version(&url).await?),
        ..Default::default()
    };
    let log = Log::new(&header, &names.stream);
    let mut bus = Bus::create(
        &url,
        names.clone(),
        options.timing,
        options.max_deliver,
        log.clone(),
    )
    .await?;
    let mut seeds = Rng(options.seed);
    let mut proxies = Vec::new();
    let mut builders = Vec::new();
    for i in 0..options.builders {
        let name = format!("b{}", i + 1);
        let offset_s = if options.skew_s > 0 {
            seeds.range(0, 2 * options.skew_s as u64) as i64 - options.skew_s
        } else {
            0
        };
        let proxy = Proxy::start(server).await?;
        if i == 0 {
            proxy.set_delay(options.delay.unwrap_or_default());
        }
        let builder = Builder::connect(
            &name,
            options.design,
            options.timing,
            options.timing.skew_ms(offset_s),
            &proxy.url(),
            &names,
            &log,
        )
        .await?;
        proxies.push(proxy);
        builders.push((builder, Rng(seeds.next())));
    }
    for i in 0..options.asks {
        bus.publish(&format!("A{}", i + 1)).await?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let faults: Faults = Arc::default();
    let deadline = Instant::now() + options.limit;
    let results = bus.results.clone();
    let asks: Vec<String> = bus.published.iter().map(|(a, _)| a.clone()).collect();
    let supervisor = {
        let stop = stop.clone();
        async move {
            // Stop when every ask has a result, or at the limit.
            while Instant::now() < deadline && options.stop.why().is_none() {
                let mut done = 0;
                for ask in &asks {
                    if matches!(results.entry(ask.as_str()).await, Ok(Some(_))) {
                        done += 1;
                    }
                }
                if done == asks.len() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            stop.store(true, Ordering::SeqCst);
        }
    };
    let runs = builders.iter_mut().enumerate().map(|(i, (builder, rng))| {
        let (stop, faults, log) = (stop.clone(), faults.clone(), log.clone());
        let proxy = &proxies[i];
        async move { run_builder(builder, rng, options, &stop, &faults, &log, proxy).await }
    });
    let (_, ended) = tokio::join!(supervisor, futures_util::future::join_all(runs));
    for e in ended {
        e?;
    }
    let finished = Instant::now() < deadline && options.stop.why().is_none();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let held: Vec<String> = builders.iter().flat_map(|(b, _)| b.held()).collect();
    let evidence = bus.evidence().await?;
    let records = log.records();
    let crashes: Vec<(String, u64)> = faults
        .lock()
        .expect("faults")
        .iter()
        .filter(|(_, _, what)| what == "crash")
        .map(|(ms, b, _)| (b.clone(), *ms))
        .collect();
    let builds = verdict::builds(&records, &crashes);
    let deliveries = verdict::deliveries_of(&records);
    let violations = verdict::judge(
        &builds,
        &records,
        &evidence,
        &held,
        &deliveries,
        options.max_deliver as u64,
    );
    for proxy in &proxies {
        proxy.cut();
    }
    let faults = faults.lock().expect("faults").clone();
    let mut costs = Costs::default();
    for (b, _) in &builders {
        costs += b.costs;
    }
    Ok(LiveOutcome {
        costs,
        options: options.clone(),
        violations,
        evidence,
        builds,
        faults,
        finished,
        log: log.text(),
        stalled: None,
    })
}

async fn run_builder(
    b: &mut Builder,
    rng: &mut Rng,
    o: &LiveOptions,
    stop: &AtomicBool,
    faults: &Faults,
    log: &Log,
    proxy: &Proxy,
) -> Result<(), Error> {
    let tick = o.timing.tick();
    let fault = |what: &str, b: &Builder| {
        faults
            .lock()
            .expect("faults")
            .push((log.ms(), b.name.clone(), what.to_string()));
    };
    while !stop.load(Ordering::SeqCst) {
        // Idle: the design's quick fetch, then the idle wait when empty.
        if b.fetch().await? == Fetched::Empty && b.buffer.is_empty() {
            b.fetch_waiting(TAKE_IDLE_WAIT.min(tick * 4)).await?;
        }
        b.drain();
        if b.buffer.is_empty() || stop.load(Ordering::SeqCst) {
            continue;
        }
        if o.design.duplicate_check() {
            match b.read().await? {
                Some((_, Decision::Run)) => {
                    // A revision-checked start that failed dropped it.
                    if !matches!(b.start().await?, Started::Runs(_)) {
                        continue;
                    }
                }
                Some((_, Decision::Drop)) => {
                    b.drop_duplicate().await?;
                    continue;
                }
                None => continue,
            }
        } else {
            b.take().await?;
        }
        let build = tick * rng.range(1, o.longest_build_ticks.max(1)) as u32;
        let began = Instant::now();
        let mut next_heartbeat = began + o.timing.heartbeat();
        let mut crashed = false;
        // A stop (the run's limit, a signal) ends a build where it is, its
        // finish not logged: at a tick of a second a build and a late
        // heartbeat ran up to 30 s past --timeout.
        let mut stopped = false;
        loop {
            let end = began + build;
            if end <= next_heartbeat {
                stopped = !until_or_stopped(end, stop).await;
                break;
            }
            if !until_or_stopped(next_heartbeat, stop).await {
                stopped = true;
                break;
            }
            if rng.chance(o.crash_rate) {
                fault("crash", b);
                proxy.cut();
                b.crash().await?;
                crashed = true;
                break;
            }
            if rng.chance(o.late_rate) {
                let late = tick * rng.range(1, o.late_by_ticks.max(1)) as u32;
                fault(&format!("late heartbeat by {} ms", late.as_millis()), b);
                if !until_or_stopped(Instant::now() + late, stop).await {
                    stopped = true;
                    break;
                }
            }
            b.heartbeat().await?;
            next_heartbeat = Instant::now() + o.timing.heartbeat();
        }
        if !crashed && !stopped {
            if rng.chance(o.lost_ack_rate) {
                fault("lost ack", b);
                b.lose_next_ack = true;
            }
            b.finish().await?;
        }
    }
    Ok(())
}

/// Sleeps until `at`, or less if `stop` is set meanwhile: whether `at`
/// was reached.
async fn until_or_stopped(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        tokio::time::sleep_until(at.min(now + Duration::from_millis(50))).await;
    }
}

impl LiveOutcome {
    pub fn violated(&self) -> bool {
        self.violations.any()
    }

    pub fn text(&self) -> String {
        let o = &self.options;
        let mut out = format!(
            "live run on a real nats-server: design {}, seed {}, {} asks, {} builders, {} ms a tick{}\n",
            o.design.name(),
            o.seed,
            o.asks,
            o.builders,
            o.timing.ms_per_tick,
            o.delay
                .map(|d| format!(", b1's link delayed {} ms each way", d.as_millis()))
                .unwrap_or_default()
        );
        out.push_str(&format!(
            "{} ({} builds, {} late answers)\n",
            if self.finished {
                "every ask has a result"
            } else {
                "stopped at the time limit"
            },
            self.builds.len(),
            self.log
                .lines()
                .filter(|l| l.contains("\"late_answer\""))
                .count()
        ));
        for (ms, b, what) in &self.faults {
            out.push_str(&format!("  fault at {ms} ms: {b} {what}\n"));
        }
        if let Some((at, paused)) = self.stalled {
            out.push_str(&format!(
                "  the machine stalled: slotcheck's own loop paused {paused} ms at {at} ms (real time no process used: a departure after it may be the machine's)\n"
            ));
        }
        out.push_str(&self.evidence.to_string());
        let d = o.design.model();
        if d.check.on_server_times()
            || d.busy_buffer.hands_back()
            || d.duplicate.deferred()
            || d.finish_key.marks_done()
        {
            let c = self.costs;
            let per_1000 = |n: u64| n as f64 * 1000.0 / o.asks.max(1) as f64;
            out.push_str(&format!(
                "the repairs' costs: {} probe puts, {} naks of answers landing on a busy builder, {} deferred duplicates, {} finish puts of the done key; per 1000 asks {:.0}, {:.0}, {:.0}, {:.0}\n",
                c.probe_puts,
                c.hand_backs,
                c.deferred,
                c.done_puts,
                per_1000(c.probe_puts),
                per_1000(c.hand_backs),
                per_1000(c.deferred),
                per_1000(c.done_puts),
            ));
        }
        for (name, found) in [
            ("no-double-run", &self.violations.double_runs),
            ("no-run-after-result", &self.violations.runs_after_result),
            ("no-lost-ask", &self.violations.lost_asks),
        ] {
            for f in found {
                out.push_str(&format!("  {name} violated: {f}\n"));
            }
        }
        out.push_str(if self.violated() {
            "=> a property is violated\n"
        } else {
            "=> every property holds on this run\n"
        });
        out
    }
}

/// Starts a private server, runs seeds `seed..seed+runs` until the first
/// violation, stops the server: for the command line.
/// The server's exit ends the runs at once, as an error naming it; a stop
/// ends the run going on (as its limit does) and starts no other.
pub fn live_blocking(options: &LiveOptions, runs: u64) -> Result<Vec<LiveOutcome>, Error> {
    let mut server = crate::server::Server::start()?;
    let address: SocketAddr = format!("127.0.0.1:{}", server.port()).parse()?;
    let mut outcomes = Vec::new();
    for seed in options.seed..options.seed + runs.max(1) {
        // Before the first run too: the command's deadline may have
        // passed while the server started (the caller says so).
        if options.stop.why().is_some() {
            break;
        }
        let run_options = LiveOptions {
            seed,
            ..options.clone()
        };
        // The run's own limit, then the evidence: cut only well past both.
        let cut = std::time::Instant::now() + options.limit + Duration::from_secs(10);
        let stop = crate::server::Stop {
            deadline: Some(options.stop.deadline.map_or(cut, |d| d.min(cut))),
            ..options.stop
        };
        let outcome = crate::server::run_watched(&mut server, stop, live(address, &run_options))?;
        let violated = outcome.violated();
        outcomes.push(outcome);
        if violated {
            break;
        }
    }
    Ok(outcomes)
}
