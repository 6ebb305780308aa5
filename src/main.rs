//! The command line: `compare`, `check`, `bench` and the rest, each in
//! `slotcheck::commands`.

use slotcheck::commands::signals::is_closed_pipe;
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
    // The commands that own servers ignore SIGPIPE (see
    // `signals::clean_up_on_a_closed_pipe`): their closed pipe is a panic
    // that unwinds through the run, dropping its servers and folders, and
    // ends here, quietly, as the signal would have (141).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_closed_pipe(info.payload()) {
            default_hook(info);
        }
    }));
    match std::panic::catch_unwind(slotcheck::commands::run) {
        Ok(code) => code,
        Err(payload) if is_closed_pipe(&*payload) => ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}
