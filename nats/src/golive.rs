//! `slotcheck live --model link --builder go`: the Go builder in free mode,
//! as a team runs it. Several builder processes (`-mode free`) run on their
//! own against the private server, each through its own proxy, and write
//! their logs through slotlog into files of their own; slotcheck injects
//! the faults from outside the processes: SIGKILL for a crash (a new process
//! starts under the builder's name), SIGSTOP and, later, SIGCONT for a late
//! heartbeat, a clock offset per builder, the proxy's delay for a slow
//! network; each process loses at most one ack, by its seed. A fault lands
//! only on a builder asleep in its build, so that its log holds every step
//! the server saw (the model's steps are whole). At the end the files (and
//! the client's, with the publishes) are merged by time and judged as a
//! live run of the reference builder is. The merge is one file to keep
//! (`--log`) and the judge's lines in time order; validate does not rely on
//! its order: each line keeps its `process` and `seq`, and validate reads
//! them in each process's own order and infers the rest.
//!
//! Each builder process says one JSON line after each step, and one before
//! each heartbeat, on its standard output (the step, what it holds, what it
//! builds while it sleeps in its build, the repairs' costs). A
//! process that exits unasked, says something else or fails is an error
//! naming the builder and its last step. Every process is in a process
//! group of its own (a Ctrl-C to slotcheck's group reaches slotcheck, which
//! ends them), killed when its handle goes, and exits by itself when its
//! input closes (slotcheck gone); a process stopped then gets SIGHUP and
//! SIGCONT from the kernel, its group orphaned, and exits.

use crate::builder::Costs;
use crate::bus::{Bus, Error, Names};
use crate::design::{Timing, TAKE_IDLE_WAIT};
use crate::gobuilder::{design_flags, program};
use crate::live::{LiveOptions, LiveOutcome, Rng, STALL_TICKS};
use crate::proxy::Proxy;
use crate::verdict;
use serde::Deserialize;
use slotcheck_models::events::link::Event;
use slotcheck_models::events::{Header, ModelName, Record};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many faults of each kind a builder may suffer in a run, at most.
#[derive(Clone, Copy, Debug)]
pub struct FaultBounds {
    pub crashes: u32,
    pub stalls: u32,
}

impl Default for FaultBounds {
    fn default() -> FaultBounds {
        FaultBounds {
            crashes: 1,
            stalls: 1,
        }
    }
}

/// The line a free builder says after each step.
#[derive(Deserialize)]
struct Status {
    step: String,
    held: Vec<String>,
    #[serde(default)]
    building: Option<String>,
    #[serde(default)]
    error: Option<String>,
    costs: GoCosts,
}

#[derive(Deserialize, Clone, Copy, Default)]
struct GoCosts {
    probe_puts: u64,
    hand_backs: u64,
    deferred: u64,
    done_puts: u64,
}

/// One builder process.
struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    step: String,
    held: Vec<String>,
    building: Option<String>,
    costs: GoCosts,
    /// SIGSTOPped until then.
    stopped_until: Option<Instant>,
    /// It said `ready` (and may have moved on since).
    ready: bool,
}

impl Drop for Process {
    fn drop(&mut self) {
        // SIGKILL reaches a stopped process too.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// A builder: its name, its current process and what its ended ones cost.
struct Slot {
    name: String,
    args: Vec<String>,
    incarnation: u32,
    process: Process,
    rng: Rng,
    crashes: u32,
    stalls: u32,
    spent: Costs,
}

fn costs_of(c: GoCosts) -> Costs {
    Costs {
        probe_puts: c.probe_puts,
        hand_backs: c.hand_backs,
        deferred: c.deferred,
        done_puts: c.done_puts,
    }
}

/// How long the lines a stopped builder wrote take to be read, at most in
/// practice: its reader thread wakes on the pipe and forwards them.
const PIPE_DRAIN: Duration = Duration::from_millis(5);

/// Whether the process is stopped (state `T` in /proc/PID/stat, after the
/// command in parentheses).
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s == "T"))
        })
        .unwrap_or(false)
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args(["-s", name, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

impl Slot {
    fn fail(&self, what: String) -> Error {
        format!(
            "the Go builder {} (process {}.{}) at its step `{}`: {what}",
            self.name, self.name, self.incarnation, self.process.step
        )
        .into()
    }

    fn said(&self) -> String {
        let text = self
            .process
            .stderr
            .lock()
            .expect("stderr")
            .trim()
            .to_string();
        if text.is_empty() {
            String::new()
        } else {
            format!("; it said: {text}")
        }
    }

    /// Reads what the process said since the last look; an exit not asked
    /// for, a line that is not the protocol or a failure is an error.
    fn look(&mut self) -> Result<(), Error> {
        loop {
            match self.process.lines.try_recv() {
                Ok(line) => {
                    let status: Status = serde_json::from_str(&line).map_err(|e| {
                        self.fail(format!("broke the protocol: {e} in the line {line:?}"))
                    })?;
                    self.process.ready |= status.step == "ready";
                    self.process.step = status.step;
                    self.process.held = status.held;
                    self.process.building = status.building;
                    self.process.costs = status.costs;
                    if let Some(error) = status.error {
                        return Err(self.fail(format!("failed: {error}")));
                    }
                }
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    // Its output closed: it exited (or is about to).
                    let started = Instant::now();
                    let status = loop {
                        if let Ok(Some(s)) = self.process.child.try_wait() {
                            break s.to_string();
                        }
                        if started.elapsed() > Duration::from_secs(2) {
                            break "its output closed, the process still running".into();
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    };
                    std::thread::sleep(Duration::from_millis(20));
                    return Err(self.fail(format!(
                        "the process ended unasked ({status}){}",
                        self.said()
                    )));
                }
            }
        }
    }

    /// Stops the process (SIGSTOP) for a fault and says whether it sleeps
    /// in its build there, its last line read after the stop: then it stays
    /// stopped, for the caller's SIGKILL or SIGCONT. A builder that has
    /// begun a heartbeat or its finish is continued at once (false): a
    /// SIGKILL there leaves on the server what that step sent with no line
    /// for it (an in-progress that restarted the ack wait, an ack), which
    /// the model, whose steps are whole, cannot explain; a stop there splits
    /// the heartbeat's put from its in-progress.
    fn pause_asleep(&mut self) -> Result<bool, Error> {
        let pid = self.process.child.id();
        signal(pid, "STOP");
        let asked = Instant::now();
        while !is_stopped(pid) && asked.elapsed() < Duration::from_millis(100) {
            std::thread::sleep(Duration::from_millis(1));
        }
        // What it said before the stop is in the pipe: its reader thread
        // forwards it within a few ms.
        std::thread::sleep(PIPE_DRAIN);
        self.look()?;
        if self.process.building.is_some() {
            return Ok(true);
        }
        signal(pid, "CONT");
        Ok(false)
    }

    fn spawn(&mut self, program: &Path) -> Result<(), Error> {
        self.incarnation += 1;
        let mut args = self.args.clone();
        args.push(format!("-process={}.{}", self.name, self.incarnation));
        args.push(format!("-seed={}", self.rng.next() >> 1));
        let mut child = Command::new(program)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("the Go builder {}: {}: {e}", self.name, program.display()))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let mut from = child.stderr.take().expect("piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        let stderr: Arc<Mutex<String>> = Arc::default();
        let into = stderr.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = from.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .expect("stderr")
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        self.process = Process {
            child,
            stdin,
            lines,
            stderr,
            step: "its start".into(),
            held: Vec::new(),
            building: None,
            costs: GoCosts::default(),
            stopped_until: None,
            ready: false,
        };
        Ok(())
    }

    /// Waits (at most 15 s) for the process to say it is ready.
    async fn ready(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        while !self.process.ready {
            self.look()?;
            if started.elapsed() > Duration::from_secs(15) {
                return Err(self.fail("not ready in 15 s (killed)".into()));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        Ok(())
    }

    /// Lets a ready process start its loop, its log's clock at `ms` of the
    /// run.
    fn start(&mut self, ms: u64) -> Result<(), Error> {
        let sent = match self.process.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(format!("start {ms}\n").as_bytes())
                .and_then(|()| stdin.flush()),
            None => Ok(()),
        };
        sent.map_err(|e| self.fail(format!("its input is closed ({e}): the process died")))
    }

    /// Ends the process: continued if stopped, its input closed, killed if
    /// it has not exited within a second. What it cost is kept.
    fn end(&mut self) {
        if self.process.stopped_until.take().is_some() {
            signal(self.process.child.id(), "CONT");
        }
        drop(self.process.stdin.take());
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(1) {
            if let Ok(Some(_)) = self.process.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.process.child.kill();
        let _ = self.process.child.wait();
        // Its last lines, for what it held and cost.
        while let Ok(line) = self.process.lines.try_recv() {
            if let Ok(status) = serde_json::from_str::<Status>(&line) {
                self.process.held = status.held;
                self.process.costs = status.costs;
            }
        }
    }
}

/// The header every file of the run carries (validate's merge wants them
/// alike).
fn header_of(options: &LiveOptions, nats_server: String) -> Header {
    Header {
        // As each Go builder's connection reports it.
        nats_server: Some(nats_server),
        model: Some(ModelName::Link),
        design: Some(options.design.name().to_string()),
        ms_per_tick: Some(options.timing.ms_per_tick),
        max_deliver: Some(options.max_deliver as u8),
        skew_s: (options.skew_s > 0).then(|| (options.skew_s as u16).div_ceil(5) * 5),
        // A step of the slow builder takes a round trip or more: its lines
        // come that much after the model's moment.
        network_delay_ms: options
            .delay
            .filter(|d| !d.is_zero())
            .map(|d| 2 * d.as_millis() as u64),
        ..Default::default()
    }
}

fn header_line(header: &Header) -> String {
    let mut first = serde_json::to_value(header)
        .expect("a header is JSON")
        .as_object()
        .cloned()
        .unwrap_or_default();
    first.insert("event".into(), "header".into());
    serde_json::Value::Object(first).to_string()
}

/// The run's files merged into one log: the header, then every line by its
/// time, each process's lines in the order of their `seq`.
fn merged(dir: &Path, header: &Header) -> Result<(String, Vec<Record<Event>>), Error> {
    let mut lines: Vec<(u64, String, u64, String)> = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ndjson"))
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| format!("{}: not JSON: {e}: {line}", path.display()))?;
            if value["event"] == "header" {
                continue;
            }
            let ts = value["ts_ms"].as_u64().unwrap_or(0);
            let process = value["process"].as_str().unwrap_or("").to_string();
            let seq = value["seq"].as_u64().unwrap_or(0);
            lines.push((ts, process, seq, line.to_string()));
        }
    }
    lines.sort();
    let mut text = header_line(header);
    text.push('\n');
    let mut records = Vec::new();
    for (_, _, _, line) in lines {
        let mut record: Record<Event> =
            serde_json::from_str(&line).map_err(|e| format!("a builder's line {line}: {e}"))?;
        record.model = Some(ModelName::Link);
        records.push(record);
        text.push_str(&line);
        text.push('\n');
    }
    Ok((text, records))
}

/// One free run of Go builders on the server at `server`; the logs go into
/// a folder under `scratch` (removed with it).
pub async fn free(
    server: SocketAddr,
    scratch: &Path,
    options: &LiveOptions,
    bounds: FaultBounds,
) -> Result<LiveOutcome, Error> {
    let program = program()?;
    let run = format!(
        "go_{}_{}",
        options.design.name().replace('-', "_"),
        options.seed
    );
    let names = Names::of(&run);
    let dir = scratch.join(&run);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let url = format!("nats://{server}");
    let header = header_of(options, crate::bus::server_version(&url).await?);
    let log = crate::log::Log::new(&header, &names.stream);
    let mut bus = Bus::create(
        &url,
        names.clone(),
        options.timing,
        options.max_deliver,
        log,
    )
    .await?;
    let timing: Timing = options.timing;
    let began = Instant::now();
    // Every file's ts_ms counts from here, as the reference builder's log
    // counts from its run's start, on the monotonic clock: a step of the
    // wall clock (NTP on a fresh machine) would open a gap no process made.
    // The builders get the count with their start line.
    let since = move || began.elapsed().as_millis() as u64;
    let mut seeds = Rng(options.seed);
    let mut proxies = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
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
        let mut args = vec![
            "-mode=free".to_string(),
            format!("-name={name}"),
            format!("-url={}", proxy.url()),
            format!("-stream={}", names.stream),
            format!("-consumer={}", names.consumer),
            format!("-running={}", names.running),
            format!("-results={}", names.results),
            format!("-fresh-for={}ms", timing.fresh_for().as_millis()),
            format!("-offset={}ms", timing.skew_ms(offset_s)),
            format!("-log-dir={}", dir.display()),
            format!("-ms-per-tick={}", timing.ms_per_tick),
            format!("-max-deliver={}", options.max_deliver),
            format!("-take-wait={}ms", options.design.take_wait().as_millis()),
            format!(
                "-idle-wait={}ms",
                TAKE_IDLE_WAIT.min(timing.tick() * 4).as_millis()
            ),
            format!("-tick={}ms", timing.ms_per_tick),
            format!("-heartbeat={}ms", timing.heartbeat().as_millis()),
            format!(
                "-longest-build-ticks={}",
                options.longest_build_ticks.max(1)
            ),
            format!(
                "-lost-ack-percent={}",
                (options.lost_ack_rate * 100.0).round() as u32
            ),
            "-lost-acks=1".to_string(),
        ];
        if let Some(skew) = header.skew_s {
            args.push(format!("-skew-s={skew}"));
        }
        if let Some(ms) = header.network_delay_ms {
            args.push(format!("-network-delay-ms={ms}"));
        }
        args.extend(design_flags(options.design));
        let mut slot = Slot {
            name,
            args,
            incarnation: 0,
            // Replaced at once by spawn.
            process: placeholder()?,
            rng: Rng(seeds.next()),
            crashes: 0,
            stalls: 0,
            spent: Costs::default(),
        };
        slot.spawn(&program)?;
        proxies.push(proxy);
        slots.push(slot);
    }
    for slot in &mut slots {
        slot.ready().await?;
    }
    // The client's lines: the publishes, in a file of their own, once every
    // builder is connected and before any acts: the model publishes every
    // ask at its start and its builders act from then on.
    let mut client = std::fs::File::create(dir.join("client.ndjson"))?;
    writeln!(client, "{}", header_line(&header))?;
    for i in 0..options.asks {
        let ask = format!("A{}", i + 1);
        bus.publish(&ask).await?;
        let record = Record {
            model: Some(ModelName::Link),
            queue: names.stream.clone(),
            ts_ms: Some(since()),
            process: Some("client".into()),
            seq: Some(i as u64 + 1),
            actor: "client".into(),
            event: Event::Publish { ask },
        };
        writeln!(client, "{}", serde_json::to_string(&record)?)?;
    }
    drop(client);
    for slot in &mut slots {
        slot.start(since())?;
    }
    let deadline = began + options.limit;
    let mut faults: Vec<(u64, String, String)> = Vec::new();
    let mut crashes: Vec<(String, u64)> = Vec::new();
    let asks: Vec<String> = bus.published.iter().map(|(a, _)| a.clone()).collect();
    let mut next_roll = Instant::now() + timing.tick();
    let mut next_results = Instant::now();
    let mut finished = false;
    let mut stalled: Option<(u64, u64)> = None;
    let ran = loop {
        if options.stop.why().is_some() || Instant::now() >= deadline {
            break Ok(());
        }
        if Instant::now() >= next_results {
            next_results = Instant::now() + Duration::from_millis(50);
            let mut done = 0;
            for ask in &asks {
                if matches!(bus.results.entry(ask.as_str()).await, Ok(Some(_))) {
                    done += 1;
                }
            }
            if done == asks.len() {
                finished = true;
                break Ok(());
            }
        }
        let mut failed = None;
        for slot in &mut slots {
            if let Err(e) = slot.look() {
                failed = Some(e);
                break;
            }
            if slot
                .process
                .stopped_until
                .is_some_and(|t| Instant::now() >= t)
            {
                slot.process.stopped_until = None;
                signal(slot.process.child.id(), "CONT");
            }
        }
        if let Some(e) = failed {
            break Err(e);
        }
        if Instant::now() >= next_roll {
            next_roll += timing.tick();
            // Faults land on builders that build: a crash loses what they
            // hold, a stop makes their next heartbeat late.
            for (i, slot) in slots.iter_mut().enumerate() {
                if slot.process.building.is_none() || slot.process.stopped_until.is_some() {
                    continue;
                }
                let crash = slot.crashes < bounds.crashes && slot.rng.chance(options.crash_rate);
                let stall =
                    !crash && slot.stalls < bounds.stalls && slot.rng.chance(options.late_rate);
                let late = if stall {
                    timing.tick() * slot.rng.range(1, options.late_by_ticks.max(1)) as u32
                } else {
                    Duration::ZERO
                };
                if !(crash || stall) || !slot.pause_asleep()? {
                    continue;
                }
                let ms = began.elapsed().as_millis() as u64;
                if crash {
                    slot.crashes += 1;
                    faults.push((ms, slot.name.clone(), "crash (SIGKILL)".into()));
                    crashes.push((slot.name.clone(), since()));
                    let _ = slot.process.child.kill();
                    let _ = slot.process.child.wait();
                    proxies[i].cut();
                    slot.spent += costs_of(slot.process.costs);
                    slot.spawn(&program)?;
                    slot.ready().await?;
                    slot.start(since())?;
                } else {
                    slot.stalls += 1;
                    faults.push((
                        ms,
                        slot.name.clone(),
                        format!("stopped {} ms (SIGSTOP, SIGCONT)", late.as_millis()),
                    ));
                    slot.process.stopped_until = Some(Instant::now() + late);
                }
            }
        }
        // A 5 ms sleep that takes ticks is the machine's stall.
        let slept = Instant::now();
        tokio::time::sleep(Duration::from_millis(5)).await;
        let paused = slept.elapsed().as_millis() as u64;
        if paused >= timing.ms_per_tick * STALL_TICKS && stalled.is_none_or(|(_, p)| paused > p) {
            stalled = Some((since(), paused));
        }
    };
    for slot in &mut slots {
        slot.end();
    }
    ran?;
    finished &= options.stop.why().is_none();
    let held: Vec<String> = slots
        .iter()
        .flat_map(|s| s.process.held.iter().cloned())
        .collect();
    let evidence = bus.evidence().await?;
    for proxy in &proxies {
        proxy.cut();
    }
    let (text, records) = merged(&dir, &header)?;
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
    let mut costs = Costs::default();
    for slot in &slots {
        costs += slot.spent;
        costs += costs_of(slot.process.costs);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(LiveOutcome {
        costs,
        options: options.clone(),
        violations,
        evidence,
        builds,
        faults,
        finished,
        log: text,
        stalled,
    })
}

/// A process handle to fill a slot before its first spawn: `true`, ended.
fn placeholder() -> Result<Process, Error> {
    let mut child = Command::new("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()?;
    let _ = child.wait();
    let (_, lines) = mpsc::channel();
    Ok(Process {
        child,
        stdin: None,
        lines,
        stderr: Arc::default(),
        step: String::new(),
        held: Vec::new(),
        building: None,
        costs: GoCosts::default(),
        stopped_until: None,
        ready: false,
    })
}

/// Starts a private server, runs seeds `seed..seed+runs` of free Go
/// builders until the first violation, stops the server; the builders'
/// logs are kept in the server's folder while a run lasts.
pub fn free_blocking(
    options: &LiveOptions,
    runs: u64,
    bounds: FaultBounds,
) -> Result<Vec<LiveOutcome>, Error> {
    // Built before the server starts: a missing toolchain is said at once.
    program()?;
    let mut server = crate::server::Server::start()?;
    let address: SocketAddr = format!("127.0.0.1:{}", server.port()).parse()?;
    let scratch = server.dir().to_path_buf();
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
        let cut = Instant::now() + options.limit + Duration::from_secs(10);
        let stop = crate::server::Stop {
            deadline: Some(options.stop.deadline.map_or(cut, |d| d.min(cut))),
            ..options.stop
        };
        let outcome = crate::server::run_watched(
            &mut server,
            stop,
            free(address, &scratch, &run_options, bounds),
        )?;
        let violated = outcome.violated();
        outcomes.push(outcome);
        if violated {
            break;
        }
    }
    Ok(outcomes)
}
