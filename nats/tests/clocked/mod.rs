//! The replays' harness (libtest-mimic, docs/dependencies.md). A replay
//! waits on the clock, real ticks of a scripted story, not on the CPU, so
//! they run twelve at a time rather than one per core; the names, filters,
//! `--ignored`, `--list` and `--test-threads` are cargo's own harness's.
//! A failure shows what the failed test's runs said.

use libtest_mimic::{Arguments, Trial};
use std::cell::RefCell;

/// Tests at once, unless `--test-threads` says otherwise.
const THREADS: usize = 12;

thread_local! {
    static SAID: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `text` (a run's words) to show if the running test fails.
pub fn say(text: String) {
    SAID.with(|s| s.borrow_mut().push(text));
}

/// `(name, test)` for each test function named: a table of a file's tests.
macro_rules! named {
    ($($test:ident),* $(,)?) => {
        &[$((stringify!($test), $test as fn())),*]
    };
}
pub(crate) use named;

/// A file's replays: their names (each shown after `prefix`), those the
/// nightly runs (ignored here) and whether a program they need is
/// `missing` (then all are ignored; the build script says which, where
/// cargo shows it).
pub struct Group {
    pub prefix: &'static str,
    pub tests: &'static [(&'static str, fn())],
    pub nightly: &'static [&'static str],
    pub missing: bool,
}

/// Runs the groups' tests and exits: each group's list is longest first,
/// and the groups take turns, so the longest of each start at once.
pub fn main(groups: &[Group]) -> ! {
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(THREADS);
    let most = groups.iter().map(|g| g.tests.len()).max().unwrap_or(0);
    let trials = (0..most)
        .flat_map(|i| {
            groups
                .iter()
                .filter_map(move |g| g.tests.get(i).map(|t| (g, t)))
        })
        .map(|(group, &(name, test))| {
            Trial::test(format!("{}{name}", group.prefix), move || {
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
            .with_ignored_flag(group.missing || group.nightly.contains(&name))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}
