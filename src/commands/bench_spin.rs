//! `slotcheck bench`'s comparison with SPIN (issue 37: slotcheck in at
//! most half SPIN's time on the same bounds). The independent Promela model
//! of the stovepipe contract, `spin/stovepipe.pml`, is embedded, so that
//! bench runs from any folder; for each design it has, it is written to a
//! private temporary folder, compiled (`spin -a`, gcc) and run (pan), and
//! slotcheck checks the same design on the same bounds; the folder goes
//! when the design is done, on an error and after a signal alike.
//! `spin/README.md` says what the model is and why these options.

use crate::check::budget::cancelled;
use crate::check::memory::{peak_bytes, reset_peak};
use crate::check::{check, Limits, Verdict};
use crate::report::bench::{round, SpinComparison, SpinRow};
use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The Promela model, as bench writes it out.
pub const PROMELA: &str = include_str!("../../spin/stovepipe.pml");

/// The designs the Promela model has, and the macros that choose them.
pub const DESIGNS: [(&str, &[&str]); 2] = [
    ("owner-keyed", &[]),
    (
        "owner-keyed-atomic-admit-supersede-first-dlq-cancels",
        &["-DATOMIC_ADMIT=1", "-DSUPERSEDE_FIRST=1", "-DDLQ_CANCELS=1"],
    ),
];

/// slotcheck's safety properties; the Promela asserts each through a
/// variable of its name with underscores.
pub const SAFETY: [&str; 7] = [
    "no-wedge",
    "builds-within-limit",
    "count-not-low",
    "count-not-high",
    "outcome-final",
    "no-message-left-in-flight",
    "dead-letter-needs-faults",
];

/// The witnesses, asserted negated with `-DWITNESSES`: a violation of
/// `!(all_succeed)` is all-succeed reached.
pub const WITNESSES: [&str; 4] = [
    "all-succeed",
    "some-superseded",
    "some-dead-lettered",
    "some-held",
];

/// SAFETY: assertions and deadlock only, so no cycle search. NOREDUCE: the
/// model is one process, so partial-order reduction has nothing to reduce
/// and its bookkeeping only costs memory.
const CC: [&str; 6] = ["-O2", "-DSAFETY", "-DNOREDUCE", "-o", "pan", "pan.c"];

/// -m: a depth far past the deepest path (under a hundred steps), so the
/// search is never cut; -c0: go on past an error, so one run sees every
/// property violated and the whole space. The hash table is pan's default,
/// 2^24 slots, more than the states at the bench's bounds.
const PAN: [&str; 2] = ["-m10000", "-c0"];

/// Where `program` is on PATH.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Why SPIN cannot run here, or nothing: the programs not on PATH.
pub fn missing() -> Option<String> {
    let gone: Vec<&str> = ["spin", "gcc"]
        .into_iter()
        .filter(|p| on_path(p).is_none())
        .collect();
    (!gone.is_empty()).then(|| {
        format!(
            "{} not on PATH (Debian: apt-get install spin gcc)",
            gone.join(" and ")
        )
    })
}

/// A private folder for one run's files (mode 0700, a name no one else
/// has), removed when dropped: on return, on an error, and after a signal,
/// since a signal only sets `cancelled()` and the run returns.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "slotcheck-spin-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        // `create`, not `create_all`: a folder already there is not ours.
        builder
            .create(&dir)
            .map_err(|e| format!("spin: a temporary folder {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `program` in `dir`, its output in files there (pan's can be long),
/// polling so that a signal stops it rather than waiting it out: its
/// stdout and wall-clock seconds.
fn run_in(
    dir: &Path,
    program: &Path,
    args: &[String],
    name: &str,
) -> Result<(String, f64), String> {
    let file = |suffix: &str| {
        let path = dir.join(format!("{name}.{suffix}"));
        std::fs::File::create(&path)
            .map(|f| (f, path))
            .map_err(|e| format!("{name}: {e}"))
    };
    let (out, out_path) = file("out")?;
    let (err, err_path) = file("err")?;
    let started = Instant::now();
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        // gcc's own temporary files go in the folder too, and with it.
        .env("TMPDIR", dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    // A group of its own, so that a stop kills gcc's cc1 and as too, not
    // the driver alone.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("{name}: {}: {e}", program.display()))?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{name}: {e}"))? {
            break status;
        }
        if cancelled() {
            kill_group(&mut child);
            return Err(format!("{name}: stopped by a signal"));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let seconds = started.elapsed().as_secs_f64();
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    if !status.success() {
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().chain(stdout.lines()).take(20).collect();
        return Err(format!("{name} failed ({status}):\n{}", tail.join("\n")));
    }
    Ok((stdout, seconds))
}

/// Kills the child's process group (its own: `run_in`) and reaps it.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        extern "C" {
            fn kill(pid: i32, signal: i32) -> i32;
        }
        const SIGKILL: i32 = 9;
        // SAFETY: a signal to the group the child leads, which this process
        // started and has not reaped yet, so its id is not reused.
        unsafe {
            kill(-(child.id() as i32), SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// One pan run: what it stored, its memory, its time, and the properties
/// its assertions found violated (slotcheck's names).
#[derive(Clone, Debug, Default)]
pub struct Pan {
    pub states: usize,
    pub transitions: usize,
    /// pan's "total actual memory usage", in MiB.
    pub memory_mib: f64,
    /// pan's run, wall clock.
    pub seconds: f64,
    /// `spin -a` and gcc.
    pub compile_seconds: f64,
    /// Every assertion violated (a witness's: reached), by name.
    pub violated: BTreeSet<String>,
}

/// What pan printed, read: an error unless it searched the whole space.
pub fn parse_pan(text: &str) -> Result<Pan, String> {
    let first = |needle: &str| -> Option<f64> {
        let line = text.lines().find(|l| l.contains(needle))?;
        line.split_whitespace().next()?.parse().ok()
    };
    for bad in ["out of memory", "max search depth too small"] {
        if text.contains(bad) {
            return Err(format!("pan: {bad}: the search is not whole"));
        }
    }
    let states = first("states, stored").ok_or("pan printed no states stored")?;
    let transitions = first("transitions (= stored+matched)").unwrap_or(0.0);
    let memory_mib = first("total actual memory usage").ok_or("pan printed no memory")?;
    let violated = text
        .lines()
        .filter_map(|l| l.split_once("assertion violated"))
        .map(|(_, what)| {
            let what = what.split(" (at depth").next().unwrap_or(what).trim();
            let what = what.trim_start_matches("!(").trim_end_matches(')');
            what.replace('_', "-")
        })
        .collect();
    Ok(Pan {
        states: states as usize,
        transitions: transitions as usize,
        memory_mib,
        seconds: 0.0,
        compile_seconds: 0.0,
        violated,
    })
}

/// Generates, compiles and runs the Promela model of `design` on `bounds`
/// in a private folder, with `extra` macros (`-DOFF_no_wedge`,
/// `-DWITNESSES`).
pub fn run_spin(design: &str, bounds: Bounds, extra: &[String]) -> Result<Pan, String> {
    let (_, macros) = DESIGNS
        .iter()
        .find(|(name, _)| *name == design)
        .ok_or_else(|| format!("spin: no Promela for the design {design}"))?;
    // The model packs a request in three bits and has a worker's steps for
    // at most ten workers (2N + stalls).
    if !(1..=4).contains(&bounds.requests) || 2 * bounds.requests + bounds.stalls > 10 {
        return Err(format!(
            "spin: the Promela model takes 1 to 4 requests and 2N + stalls <= 10 (N {}, stalls {})",
            bounds.requests, bounds.stalls
        ));
    }
    let program = |name: &str| on_path(name).ok_or_else(|| format!("{name} is not on PATH"));
    let (spin, gcc) = (program("spin")?, program("gcc")?);
    let dir = Scratch::new()?;
    std::fs::write(dir.0.join("stovepipe.pml"), PROMELA).map_err(|e| format!("spin: {e}"))?;
    let mut args: Vec<String> = vec![
        format!("-DN={}", bounds.requests),
        format!("-DK={}", bounds.max_concurrent),
        format!("-DCRASHES={}", bounds.crashes),
        format!("-DSTALLS={}", bounds.stalls),
        format!("-DMAXDEL={}", bounds.max_deliveries),
    ];
    args.extend(macros.iter().map(|m| m.to_string()));
    args.extend(extra.iter().cloned());
    args.extend(["-a".to_string(), "stovepipe.pml".to_string()]);
    let (_, generate) = run_in(&dir.0, &spin, &args, "spin")?;
    let cc: Vec<String> = CC.iter().map(|a| a.to_string()).collect();
    let (_, compile) = run_in(&dir.0, &gcc, &cc, "gcc")?;
    let flags: Vec<String> = PAN.iter().map(|a| a.to_string()).collect();
    let (text, seconds) = run_in(&dir.0, &dir.0.join("pan"), &flags, "pan")?;
    Ok(Pan {
        seconds,
        compile_seconds: generate + compile,
        ..parse_pan(&text)?
    })
}

/// SPIN's verdicts from one run with every assertion: each safety property
/// (true: violated) and, with `witnesses`, each witness (true: reached).
pub fn verdicts(
    design: &str,
    bounds: Bounds,
    witnesses: bool,
) -> Result<(BTreeMap<&'static str, bool>, Pan), String> {
    let extra = if witnesses {
        vec!["-DWITNESSES".to_string()]
    } else {
        Vec::new()
    };
    let pan = run_spin(design, bounds, &extra)?;
    let names = SAFETY
        .iter()
        .chain(if witnesses { &WITNESSES[..] } else { &[] });
    let verdicts = names.map(|&p| (p, pan.violated.contains(p))).collect();
    Ok((verdicts, pan))
}

/// The bounds compared: the (three requests, K 1, a crash, a
/// stall, two deliveries), or two requests for `--quick`.
pub fn bounds(quick: bool) -> (&'static str, Bounds) {
    let requests = if quick { 2 } else { 3 };
    let name = if quick { "N2 K1 c1 s1" } else { "N3 K1 c1 s1" };
    (
        name,
        Bounds {
            requests,
            max_concurrent: 1,
            crashes: 1,
            stalls: 1,
            max_deliveries: 2,
        },
    )
}

/// Each design on the bench's bounds, by slotcheck and by SPIN; without
/// spin or gcc, the comparison says so and has no rows.
pub fn compare(quick: bool, progress: bool) -> Result<SpinComparison, String> {
    let (name, bounds) = bounds(quick);
    if let Some(why) = missing() {
        return Ok(SpinComparison {
            bounds: name.to_string(),
            rows: Vec::new(),
            skipped: Some(why),
        });
    }
    let mut rows = Vec::new();
    for (design, _) in DESIGNS {
        if cancelled() {
            break;
        }
        rows.push(row(design, bounds, progress)?);
    }
    Ok(SpinComparison {
        bounds: name.to_string(),
        rows,
        skipped: None,
    })
}

/// `slotcheck bench --spin`: the comparison alone, as text or as JSON (the
/// `spin` field of `bench --json`). Exit 1 if a verdict differs, 3 after a
/// signal.
pub fn run(quick: bool, as_json: bool, progress: bool) -> Result<u8, String> {
    let comparison = match compare(quick, progress) {
        Err(_) if cancelled() => {
            eprintln!("a signal (SIGINT or SIGTERM) stopped the comparison with SPIN");
            return Ok(3);
        }
        other => other?,
    };
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&comparison).expect("a report is JSON")
        );
    } else {
        print!("{}", comparison.text().trim_start());
    }
    let differ = comparison.rows.iter().any(|r| !r.disagreements.is_empty());
    Ok(if cancelled() {
        3
    } else if differ {
        1
    } else {
        0
    })
}

/// One design: slotcheck on the safety properties alone (what SPIN's run
/// asserts: the like-for-like time) and as `check --design` runs it (every
/// property), with the default one thread; then pan timed over the whole
/// space, the properties slotcheck found violated compiled out of it (pan
/// would stop at, or print, each violation); those are judged by a run of
/// their own with every assertion.
fn row(design: &'static str, bounds: Bounds, progress: bool) -> Result<SpinRow, String> {
    let model = Stovepipe::new(
        design_named(design).ok_or_else(|| format!("no design {design}"))?,
        bounds,
    );
    let limits = Limits {
        progress,
        ..Limits::default()
    };
    let own_peak = reset_peak();
    let outcome = check(model, &SAFETY, &limits);
    let peak = own_peak.then(peak_bytes).flatten();
    let whole = check(model, &[], &limits).stats.seconds;
    let slotcheck: Vec<(&str, Verdict)> = SAFETY
        .iter()
        .map(|&p| {
            (
                p,
                outcome
                    .result(p)
                    .map_or(Verdict::Inconclusive, |r| r.verdict),
            )
        })
        .collect();
    let off: Vec<&str> = slotcheck
        .iter()
        .filter(|(_, v)| *v == Verdict::Violated)
        .map(|(p, _)| *p)
        .collect();
    let defines: Vec<String> = off
        .iter()
        .map(|p| format!("-DOFF_{}", p.replace('-', "_")))
        .collect();
    let timed = run_spin(design, bounds, &defines)?;
    let judged = if off.is_empty() {
        timed.violated.clone()
    } else {
        verdicts(design, bounds, false)?.1.violated
    };
    let disagreements = slotcheck
        .iter()
        .filter(|(p, v)| (*v == Verdict::Violated) != judged.contains(*p))
        .map(|(p, v)| {
            let spin = if judged.contains(*p) {
                "violated"
            } else {
                "holds"
            };
            format!("{p}: slotcheck {}, SPIN {spin}", v.word())
        })
        .collect();
    Ok(SpinRow {
        design: design.to_string(),
        disagreements,
        ratio: round(outcome.stats.seconds / timed.seconds.max(1e-9), 2),
        slotcheck_check_seconds: round(whole, 3),
        slotcheck_peak_mib: peak.map(|b| round(b as f64 / (1 << 20) as f64, 1)),
        slotcheck_seconds: round(outcome.stats.seconds, 3),
        slotcheck_threads: limits.threads,
        slotcheck_unique: outcome.stats.unique,
        spin_compile_seconds: round(timed.compile_seconds, 3),
        spin_memory_mib: timed.memory_mib,
        spin_off: off.iter().map(|p| p.to_string()).collect(),
        spin_seconds: round(timed.seconds, 3),
        spin_states: timed.states,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pan_output_is_read() {
        let text = "pan:1: assertion violated builds_within_limit (at depth 30)\n\
                    pan:2: assertion violated  !(all_succeed) (at depth 12)\n\
                    State-vector 52 byte, depth reached 73, errors: 2\n  \
                    2384302 states, stored\n 11847554 transitions (= stored+matched)\n  \
                    292.499\ttotal actual memory usage\n";
        let pan = parse_pan(text).unwrap();
        assert_eq!(pan.states, 2384302);
        assert_eq!(pan.transitions, 11847554);
        assert_eq!(pan.memory_mib, 292.499);
        let violated: Vec<&str> = pan.violated.iter().map(String::as_str).collect();
        assert_eq!(violated, ["all-succeed", "builds-within-limit"]);
        assert!(parse_pan("pan: out of memory\n").is_err());
    }
}
