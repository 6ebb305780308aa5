//! The command line: `compare`, `check`, `bench` and the rest, each in
//! `slotcheck::commands`.

use std::process::ExitCode;

/// A closed pipe (`slotcheck ... | head`) ends the program quietly, as it
/// ends `cat`, rather than in a panic at the next line printed.
fn exit_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    {
        extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGPIPE: i32 = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: resetting a signal to its default action, before any
        // thread starts.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

fn main() -> ExitCode {
    exit_quietly_on_a_closed_pipe();
    slotcheck::commands::run()
}
