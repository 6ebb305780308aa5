//! What the private servers' starts share (`mariadb.rs`, `postgres.rs`):
//! whether this process is root, the installer waited for unless stopped,
//! and the folder removed whatever ends a start but a started server.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Read from /proc and /etc/passwd, not from `id`: a child in slotcheck's
/// process group dies with a Ctrl-C or a SIGTERM to the group, and an `id`
/// killed so said "not root", which ran `initdb` as root (and left
/// mariadbd without `--user=root`).
pub(crate) fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Waits for a server's installer (`initdb`, `mariadb-install-db`, spawned
/// in a process group of its own with its standard error piped): its exit
/// and what it said, or `None` when `stop()` came first, its whole group
/// killed (its bootstrap server too, which would go on writing in the
/// folder).
pub(crate) fn finish_unless_stopped(
    mut child: std::process::Child,
    stop: &dyn Fn() -> bool,
) -> Option<(std::process::ExitStatus, String)> {
    let mut stderr = child.stderr.take().expect("piped");
    let said = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if stop() {
            let _ = Command::new("kill")
                .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                .stderr(Stdio::null())
                .status();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Some((status, said.join().unwrap_or_default()))
}

/// Runs `start` in the fresh folder `dir`: until the server owns the
/// folder (its drop removes it), every error and every stop removes it
/// here. An error while `stop()` holds is the stop: a Ctrl-C or a SIGTERM
/// to the group also kills the start's helpers (`chown`, `initdb`), whose
/// failure is then the signal's, not the start's.
pub(crate) fn in_folder<S>(
    dir: &Path,
    stop: &dyn Fn() -> bool,
    start: impl FnOnce(PathBuf) -> Result<Option<S>, String>,
) -> Result<Option<S>, String> {
    crate::sweep::sweep_beside(dir);
    let _ = std::fs::remove_dir_all(dir);
    let started = std::fs::create_dir_all(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .and_then(|()| start(dir.to_path_buf()));
    if !matches!(started, Ok(Some(_))) {
        let _ = std::fs::remove_dir_all(dir);
    }
    match started {
        Err(_) if stop() => Ok(None),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use crate::sweep::{dead_pids, TestFolder};

    /// A start sweeps its kind's folders whose process is gone (a group
    /// killed whole left them), and keeps a live process's.
    #[test]
    fn a_start_removes_a_dead_processs_folder_and_keeps_a_live_ones() {
        let folder = TestFolder::new("in-folder-test");
        let [dead, _] = dead_pids();
        let ours = std::process::id();
        let left = folder.0.join(format!("slotcheck-postgres-{dead}-0"));
        let live = folder.0.join(format!("slotcheck-postgres-{ours}-1"));
        for dir in [&left, &live] {
            std::fs::create_dir_all(dir.join("data")).unwrap();
        }
        let dir = folder.0.join(format!("slotcheck-postgres-{ours}-2"));
        let started = super::in_folder(&dir, &|| false, |d| Ok(Some(d)));
        assert_eq!(started, Ok(Some(dir.clone())));
        assert!(!left.exists(), "the dead process's folder was left");
        assert!(
            live.join("data").is_dir(),
            "the live process's folder was touched"
        );
        assert!(dir.is_dir(), "the start's own folder is made");
    }
}
