//! SIGINT and SIGTERM during a run: the first asks every budget to run out
//! (`check::budget::cancel`), so the command stops as at a reached deadline,
//! prints and writes every report with what it decided and the rest
//! inconclusive, and exits 3; a second ends the process at once, exit 128 +
//! the signal, as a signal's default action would have.

#[cfg(unix)]
mod unix {
    use crate::check::budget::{cancel, cancelled};

    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn write(fd: i32, buffer: *const u8, count: usize) -> isize;
        fn _exit(status: i32) -> !;
    }

    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;

    /// Only async-signal-safe calls: an atomic load and store, write, _exit.
    extern "C" fn on_signal(signum: i32) {
        let said: &[u8] = if cancelled() {
            b"\nslotcheck: a second signal: stopped at once, nothing written\n"
        } else {
            b"\nslotcheck: stopping as at a deadline, writing the reports (a second signal stops at once)\n"
        };
        // SAFETY: writing a static buffer to stderr; ending the process.
        unsafe {
            write(2, said.as_ptr(), said.len());
            if cancelled() {
                _exit(128 + signum);
            }
        }
        cancel();
    }

    pub fn install() {
        // SAFETY: a handler that makes only async-signal-safe calls,
        // installed before the run starts its threads. glibc's `signal`
        // keeps the handler installed after it runs (BSD semantics).
        unsafe {
            signal(SIGINT, on_signal as extern "C" fn(i32) as usize);
            signal(SIGTERM, on_signal as extern "C" fn(i32) as usize);
        }
    }
}

/// From now on, a first SIGINT or SIGTERM stops the run as a deadline does.
pub fn stop_runs_on_signals() {
    #[cfg(unix)]
    unix::install();
}
