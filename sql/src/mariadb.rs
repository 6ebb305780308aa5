//! A private MariaDB server: a data directory in a temporary folder, a Unix
//! socket in it, no TCP (`--skip-networking`), no system service. Started by
//! the commands and the tests themselves, and stopped when dropped; a small
//! watchdog stops it too if this process dies without dropping it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian's `mariadb-server` puts the server and its installer.
const SERVER: &[&str] = &["/usr/sbin/mariadbd", "/usr/sbin/mysqld"];
const INSTALL: &[&str] = &["/usr/bin/mariadb-install-db", "/usr/bin/mysql_install_db"];

/// The server binary and its installer, if installed.
pub fn binaries() -> Option<(PathBuf, PathBuf)> {
    let found = |paths: &[&str]| paths.iter().map(PathBuf::from).find(|p| p.exists());
    Some((found(SERVER)?, found(INSTALL)?))
}

/// Why no server can be started here, for a message: `None` when one can.
pub fn missing() -> Option<String> {
    match binaries() {
        Some(_) => None,
        None => Some(format!(
            "MariaDB is not installed: none of {} (Debian: apt-get install mariadb-server)",
            SERVER.join(", ")
        )),
    }
}

/// A running private server.
pub struct Server {
    dir: PathBuf,
    child: Child,
    watchdog: Option<Child>,
}

impl Server {
    /// Installs a fresh data directory and starts the server on it; waits
    /// until it accepts connections on its socket.
    pub fn start() -> Result<Server, String> {
        Server::start_until(&|| false).map(|s| s.expect("never stopped"))
    }

    /// As [`Server::start`], but `None` as soon as `stop()` says so (a
    /// deadline passed, a signal came): the installer or the server is
    /// stopped and the folder removed.
    pub fn start_until(stop: &dyn Fn() -> bool) -> Result<Option<Server>, String> {
        let (server, install) = binaries().ok_or_else(|| missing().unwrap())?;
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("slotcheck-mariadb-{}-{n}", std::process::id()));
        crate::private::in_folder(&dir, stop, |dir| {
            Server::start_in(&server, &install, dir, stop)
        })
    }

    fn start_in(
        server: &Path,
        install: &Path,
        dir: PathBuf,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Server>, String> {
        let data = dir.join("data");
        let root = crate::private::is_root();
        let mut installer = Command::new(install);
        installer
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            // No fsync (its bootstrap server takes the option): the folder
            // is thrown away, and synced files took 3 s more to install and
            // 0.7 s to remove on a disk that discards what is freed, past a
            // --timeout.
            .arg("--debug-no-sync")
            // Its bootstrap server's temporary tables in the folder too: an
            // installer stopped mid-bootstrap (a --timeout) left them in
            // $TMPDIR.
            .env("TMPDIR", &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Out of the terminal's process group: Ctrl-C reaches only
            // slotcheck, which then stops what it started.
            .process_group(0);
        if root {
            installer.arg("--user=root");
        }
        let child = installer
            .spawn()
            .map_err(|e| format!("{}: {e}", install.display()))?;
        let Some((status, said)) = crate::private::finish_unless_stopped(child, stop) else {
            return Ok(None);
        };
        if !status.success() {
            return Err(format!(
                "{} failed ({status}): {}",
                install.display(),
                said.trim()
            ));
        }
        let socket = dir.join("mysqld.sock");
        let mut command = Command::new(server);
        command
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            // Its temporary tables in its own folder, not $TMPDIR: a
            // server killed mid-query leaves them where its folder goes.
            .arg(format!("--tmpdir={}", dir.display()))
            .arg("--skip-networking")
            .arg("--skip-log-bin")
            // Durability is not what is tested: a commit need not reach
            // the disk, which keeps a run fast on a shared machine.
            .arg("--innodb-flush-log-at-trx-commit=0")
            .arg("--innodb-buffer-pool-size=32M")
            .arg("--innodb-doublewrite=0")
            .arg("--debug-no-sync")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // mariadbd ignores SIGINT, and the terminal's Ctrl-C goes to its
            // process group: in a group of its own, only slotcheck gets the
            // signal, and stops it (its drop), or the watchdog does.
            .process_group(0);
        if root {
            command.arg("--user=root");
        }
        let child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", server.display()))?;
        let watchdog = watch(child.id(), &dir);
        let mut server = Server {
            dir,
            child,
            watchdog,
        };
        // Stopped while it started, it is killed (its drop): a SIGTERM
        // before it is up went unheeded for 20 s, past a --timeout.
        Ok(server.wait_ready(stop)?.then_some(server))
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    /// Whether it accepts connections (false: `stop()` came first).
    fn wait_ready(&mut self, stop: &dyn Fn() -> bool) -> Result<bool, String> {
        let start = Instant::now();
        loop {
            if stop() {
                return Ok(false);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "mariadbd exited ({status}) before accepting connections: {}",
                    self.error_log()
                ));
            }
            if self.socket().exists() {
                let opts = mysql::OptsBuilder::new()
                    .socket(Some(self.socket().to_string_lossy().into_owned()))
                    .user(Some("root"))
                    .prefer_socket(true);
                if mysql::Conn::new(opts).is_ok() {
                    return Ok(true);
                }
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "mariadbd did not accept connections within 60 s: {}",
                    self.error_log()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log"))
            .map(|log| log.lines().rev().take(5).collect::<Vec<_>>().join(" | "))
            .unwrap_or_default()
    }

    /// Creates an empty database (dropping one of that name).
    pub fn create_database(&self, name: &str) -> Result<(), String> {
        use mysql::prelude::Queryable;
        let opts = mysql::OptsBuilder::new()
            .socket(Some(self.socket().to_string_lossy().into_owned()))
            .user(Some("root"))
            .prefer_socket(true);
        let mut c = mysql::Conn::new(opts).map_err(|e| e.to_string())?;
        c.query_drop(format!("DROP DATABASE IF EXISTS `{name}`"))
            .map_err(|e| e.to_string())?;
        c.query_drop(format!("CREATE DATABASE `{name}`"))
            .map_err(|e| e.to_string())
    }
}

/// A shell that stops the server and removes its folder once this process
/// is gone (a test binary ends without dropping its statics).
fn watch(server: u32, dir: &Path) -> Option<Child> {
    let script = format!(
        "while kill -0 {parent} 2>/dev/null; do sleep 1; done; kill {server} 2>/dev/null; sleep 5; kill -9 {server} 2>/dev/null; rm -rf '{dir}'",
        parent = std::process::id(),
        dir = dir.display()
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A signal to slotcheck's process group must not end the watchdog.
        .process_group(0)
        .spawn()
        .ok()
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGKILL: its data goes with its folder, so a clean shutdown (a
        // second and more after a run's queues, past a command's
        // --timeout) would keep nothing.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
