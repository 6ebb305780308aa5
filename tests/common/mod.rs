//! What the end-to-end tests share: running the built binary, and a fresh
//! scratch directory per test.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use stateright::{Expectation, Model};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_slotcheck");
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The binary, run from the repository root, without colour.
pub fn command() -> Command {
    let mut command = Command::new(BIN);
    command.current_dir(ROOT).env("NO_COLOR", "1");
    command
}

pub fn slotcheck(args: &[&str]) -> Output {
    command()
        .args(args)
        .output()
        .expect("the slotcheck binary runs")
}

/// `f` of each item, in the items' order, the items shared out among the
/// cores (each is a search of its own: the tests' biggest set-ups).
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    par_map_on(workers, items, f)
}

/// [`par_map`] on `workers` threads: for work that waits on the clock (live
/// runs on a real server), not on the CPU.
#[allow(dead_code)]
pub fn par_map_on<T: Sync, R: Send>(
    workers: usize,
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<R>>> =
        std::sync::Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                done.lock().unwrap()[i] = Some(r);
            });
        }
    });
    done.into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every item done"))
        .collect()
}

/// `--threads` for a test's biggest run: the machine's cores (the counts,
/// verdicts and traces do not depend on it; only the time does).
pub fn cores() -> String {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .to_string()
}

/// A fresh, empty directory for one test of a suite, removed when the
/// guard is dropped: at the end of the test, passed or panicked (a panic
/// unwinds through the drop). Keep the guard alive as long as a path inside
/// it is used; a helper that returns such a path returns the guard with it.
pub fn scratch(suite: &str, name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("slotcheck-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A test's scratch directory (see [`scratch`]); it reads as its path.
/// With the environment variable `SLOTCHECK_KEEP_SCRATCH` set (to
/// anything), the directory is kept, to look at what a failing test left.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn as_path(&self) -> &Path {
        &self.0
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("SLOTCHECK_KEEP_SCRATCH").is_none() {
            // Errors are ignored: a drop during a panic must not panic again.
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The exit code of a run that exited (not killed).
pub fn code(output: &Output) -> i32 {
    output.status.code().expect("exited, not killed")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs the binary, killed and failed with `why` if it outlives `limit`.
pub fn run_within(limit: std::time::Duration, args: &[&str], why: &str) -> Output {
    use std::process::Stdio;
    let mut child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!("{args:?} {why} ({limit:?})\n{}", stdout(&output));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The pages a reader sees: README.md, then every Markdown page of the book
/// under docs/ (sorted, at any depth), as paths from the repository root.
pub fn doc_pages() -> Vec<String> {
    fn walk(dir: &std::path::Path, from_root: &str, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap())
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = format!("{from_root}/{name}");
            if entry.file_type().unwrap().is_dir() {
                // The built book (`mdbook build docs`) is output, not a page.
                if path != "docs/book" {
                    walk(&entry.path(), &path, out);
                }
            } else if name.ends_with(".md") {
                out.push(path);
            }
        }
    }
    let mut pages = vec!["README.md".to_string()];
    walk(&PathBuf::from(ROOT).join("docs"), "docs", &mut pages);
    pages
}

/// Per property, in the model's order: its name and the depth of its first
/// discovery (a violation, or a witness), by a plain BFS over whole states
/// (the exactness tests' reference search).
pub fn shortest<M: Model>(model: &M) -> Vec<(&'static str, Option<usize>)>
where
    M::State: Clone + Eq + std::hash::Hash,
{
    let properties = model.properties();
    let mut found: Vec<Option<usize>> = vec![None; properties.len()];
    let mut seen: std::collections::HashSet<M::State> = std::collections::HashSet::new();
    let mut level: Vec<M::State> = model
        .init_states()
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .collect();
    let mut depth = 0;
    let mut actions = Vec::new();
    while !level.is_empty() {
        for s in &level {
            for (p, property) in properties.iter().enumerate() {
                let holds = (property.condition)(model, s);
                let discovery = match property.expectation {
                    Expectation::Always => !holds,
                    _ => holds,
                };
                if discovery && found[p].is_none() {
                    found[p] = Some(depth);
                }
            }
        }
        let mut next = Vec::new();
        for s in &level {
            model.actions(s, &mut actions);
            for action in actions.drain(..) {
                let n = model.next_state(s, action).expect("every action steps");
                if seen.insert(n.clone()) {
                    next.push(n);
                }
            }
        }
        level = next;
        depth += 1;
    }
    properties.iter().map(|p| p.name).zip(found).collect()
}

/// The admit transaction's reads under pct, which holds a worker between
/// its admit's reads and writes (where a plain `SELECT` lets another admit
/// commit in between): `live --schedule pct` on `engine`, run 1 from seed
/// 1, the recommendation, its exit and output.
pub fn admit_under_pct(
    engine: &str,
    isolation: &str,
    tx_read: &str,
    extra: &[&str],
) -> (i32, String) {
    let mut args = vec![
        "live",
        "--on",
        engine,
        "--design",
        "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        "--schedule",
        "pct",
        "--isolation",
        isolation,
        "--tx-read",
        tx_read,
        "--runs",
        "1",
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    let out = slotcheck(&args);
    (code(&out), format!("{}{}", stdout(&out), stderr(&out)))
}

/// Whether a live run's output shows the lost update of a plain admit
/// read: a queue's log departs at a claim that won (on a version another
/// admit had already written).
pub fn departs_at_a_won_claim(text: &str) -> bool {
    text.lines()
        .filter(|l| l.trim_start().starts_with("the log says:"))
        .any(|says| says.contains("\"event\":\"transaction\"") && says.contains("\"won\":true"))
}

/// A seeded random walk of `model` from `init`, at most `most` steps, cut
/// after its last step that `logs` a line (the steps after it leave none).
pub fn random_walk<M: Model>(
    model: &M,
    init: M::State,
    seed: u64,
    most: usize,
    logs: impl Fn(&M::Action) -> bool,
) -> Vec<M::Action>
where
    M::Action: Clone,
{
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut state = init;
    let mut actions = Vec::new();
    let mut enabled = Vec::new();
    for _ in 0..most {
        enabled.clear();
        model.actions(&state, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        let action = enabled.swap_remove(rng.random_range(0..enabled.len()));
        state = model.next_state(&state, action.clone()).unwrap();
        actions.push(action);
    }
    while actions.last().is_some_and(|a| !logs(a)) {
        actions.pop();
    }
    actions
}

/// Runs the binary with `args`, killed and failed if it outlives `limit`,
/// and returns how it ended and its peak resident memory in bytes: wait4's
/// `ru_maxrss`, the child's own high-water mark, which /proc no longer
/// shows once it has exited (and which polling VmHWM could miss at its end).
// Reaped by wait4 below, which clippy does not see.
#[allow(clippy::zombie_processes)]
pub fn run_measuring_peak(limit: std::time::Duration, args: &[&str]) -> (Output, u64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    /// glibc's `struct rusage` on 64-bit Linux: two timevals, then 14 longs,
    /// the first the peak resident size in KiB.
    #[repr(C)]
    struct Rusage {
        times: [i64; 4],
        maxrss: i64,
        rest: [i64; 13],
    }
    extern "C" {
        fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut Rusage) -> i32;
    }
    const WNOHANG: i32 = 1;
    let mut child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as i32;
    let started = std::time::Instant::now();
    let mut usage = Rusage {
        times: [0; 4],
        maxrss: 0,
        rest: [0; 13],
    };
    let mut status = 0;
    loop {
        // SAFETY: our own child, reaped here once (std's `Child` is not
        // waited on after); the pointers are to live locals.
        let reaped = unsafe { wait4(pid, &mut status, WNOHANG, &mut usage) };
        assert!(reaped >= 0, "wait4: {}", std::io::Error::last_os_error());
        if reaped == pid {
            break;
        }
        if started.elapsed() > limit {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("{args:?} outlived {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, usage.maxrss as u64 * 1024)
}

/// Every `.rs` file under `dir`, into `out` (the source trees' import tests).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a source file without its line comments (the trees have no
/// block comments).
pub fn code_without_comments(file: &Path) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A stovepipe design on `bounds` with the named options on.
pub fn stovepipe_with(
    design: slotcheck_models::stovepipe::Design,
    bounds: slotcheck_models::stovepipe::Bounds,
    options: &[&str],
) -> slotcheck_models::stovepipe::Stovepipe {
    use slotcheck_models::NamedOptions;
    let mut model = slotcheck_models::stovepipe::Stovepipe::new(design, bounds);
    for o in options {
        model.options.set(o).unwrap();
    }
    model
}

/// Stovepipe bounds, in the order the exactness grids write them.
pub fn bounds(
    requests: u8,
    max_concurrent: u8,
    crashes: u8,
    stalls: u8,
    deliveries: u8,
) -> slotcheck_models::stovepipe::Bounds {
    slotcheck_models::stovepipe::Bounds {
        requests,
        max_concurrent,
        crashes,
        stalls,
        max_deliveries: deliveries,
    }
}
