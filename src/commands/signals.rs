//! SIGINT and SIGTERM during a run: the first asks every budget to run out
//! (`check::budget::cancel`), so the command stops as at a reached deadline,
//! prints and writes every report with what it decided and the rest
//! inconclusive, and exits 3; a second ends the process at once, exit 128 +
//! the signal, as a signal's default action would have.

#[cfg(unix)]
mod unix {
    use crate::check::budget::cancel;

    extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn write(fd: i32, buffer: *const u8, count: usize) -> isize;
        fn _exit(status: i32) -> !;
    }

    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;

    /// Only async-signal-safe calls: an atomic swap, write, _exit. Whether
    /// this is the second signal is decided once, by the swap: two signals
    /// taken at once by two threads once both chose the first's words and
    /// then one of them the second's exit, saying nothing of it.
    extern "C" fn on_signal(signum: i32) {
        let second = cancel();
        let said: &[u8] = if second {
            b"\nslotcheck: a second signal: stopped at once, nothing written\n"
        } else {
            b"\nslotcheck: stopping as at a deadline, writing the reports (a second signal stops at once)\n"
        };
        // SAFETY: writing a static buffer to stderr; ending the process.
        unsafe {
            write(2, said.as_ptr(), said.len());
            if second {
                _exit(128 + signum);
            }
        }
    }

    /// A write to a closed pipe then fails (EPIPE) rather than ending the
    /// process: `print!` panics, the panic unwinds through the run, and
    /// the servers and folders it owns are dropped (stopped, removed).
    pub fn ignore_closed_pipes() {
        const SIGPIPE: i32 = 13;
        const SIG_IGN: usize = 1;
        // SAFETY: setting a signal's disposition, before any thread starts.
        unsafe {
            signal(SIGPIPE, SIG_IGN);
        }
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

/// For the commands that own private servers and temporary folders: a
/// closed stdout (`slotcheck live ... | head -1`) unwinds the run, which
/// stops and removes them, instead of killing the process with SIGPIPE
/// (which left them behind); `main` then exits 141 quietly, as `cat` would.
pub fn clean_up_on_a_closed_pipe() {
    #[cfg(unix)]
    unix::ignore_closed_pipes();
}

/// Whether a panic is `print!`'s on a closed stdout.
pub fn is_closed_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}
