//! The replays' harness (libtest-mimic, docs/dependencies.md). A replay
//! waits on the clock, real ticks of a scripted story, not on the CPU, so
//! they run eight at a time rather than one per core; the names, filters,
//! `--ignored`, `--list` and `--test-threads` are cargo's own harness's.
//! A failure shows what the failed test's runs said.

use libtest_mimic::{Arguments, Trial};
use std::cell::RefCell;

/// Tests at once, unless `--test-threads` says otherwise.
const THREADS: usize = 8;

thread_local! {
    static SAID: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `text` (a run's words) to show if the running test fails.
pub fn say(text: String) {
    SAID.with(|s| s.borrow_mut().push(text));
}

/// Runs `tests` and exits: those named in `nightly`, and all when a program
/// they need is `missing` (the build script says which, where cargo shows
/// it), are ignored.
pub fn main(tests: &[(&'static str, fn())], nightly: &[&str], missing: bool) -> ! {
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(THREADS);
    let trials = tests
        .iter()
        .map(|&(name, test)| {
            Trial::test(name, move || {
                SAID.with(|s| s.borrow_mut().clear());
                std::panic::catch_unwind(test).map_err(|panic| {
                    let said = SAID.with(|s| s.borrow().join("\n"));
                    let why = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    format!("{why}\nwhat its runs said:\n{said}").into()
                })
            })
            .with_ignored_flag(missing || nightly.contains(&name))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}
