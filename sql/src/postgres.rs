//! A private PostgreSQL cluster: `initdb` into a temporary folder, the
//! server on a Unix socket in it (no TCP: `listen_addresses` empty), no
//! system service. The server refuses to run as root, so a root process
//! runs `initdb` and `postgres` as an unprivileged user (`postgres` where
//! Debian's package made it, else `nobody`) through `setpriv`, with the
//! folder theirs. Stopped when dropped; a small watchdog stops it and
//! removes the folder if this process dies without dropping it.
//!
//! Also the client side: the engine's statements are written with `?`
//! parameters and MariaDB's `INSERT IGNORE`; [`translate`] gives them in
//! PostgreSQL's words.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Debian's `postgresql` puts its binaries in /usr/lib/postgresql/<major>/bin.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("postgres").exists() && d.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// Why no cluster can be started here, for a message: `None` when one can.
pub fn missing() -> Option<String> {
    match bin_dir() {
        Some(_) => None,
        None => Some(
            "PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/postgres (Debian: apt-get install postgresql)"
                .into(),
        ),
    }
}

/// The database every run uses (one cluster per server).
pub const DATABASE: &str = "postgres";
/// The cluster's superuser, trusted on the socket.
pub const USER: &str = "slotcheck";

/// `user`'s line of /etc/passwd, split at its colons.
fn passwd(user: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines()
        .map(|l| l.split(':').map(str::to_string).collect::<Vec<_>>())
        .find(|fields| fields.first().map(String::as_str) == Some(user))
}

/// The unprivileged account a root process runs the cluster as.
fn account() -> &'static str {
    if passwd("postgres").is_some() {
        "postgres"
    } else {
        "nobody"
    }
}

/// `program`, run as `account` when this process is root.
fn as_account(program: &Path, account: Option<&str>) -> Command {
    match account {
        Some(user) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={user}"))
                .arg(format!("--regid={}", group_of(user)))
                .arg("--clear-groups")
                .arg(program);
            c
        }
        None => Command::new(program),
    }
}

fn group_of(user: &str) -> String {
    passwd(user)
        .and_then(|fields| fields.get(3).cloned())
        .unwrap_or_else(|| "nogroup".into())
}

/// A running private cluster.
pub struct Server {
    dir: PathBuf,
    child: Child,
    watchdog: Option<Child>,
}

impl Server {
    /// Initialises a fresh cluster and starts its server; waits until it
    /// accepts connections on its socket.
    pub fn start() -> Result<Server, String> {
        Server::start_until(&|| false).map(|s| s.expect("never stopped"))
    }

    /// As [`Server::start`], but `None` as soon as `stop()` says so (a
    /// deadline passed, a signal came): `initdb` or the server is stopped
    /// and the folder removed.
    pub fn start_until(stop: &dyn Fn() -> bool) -> Result<Option<Server>, String> {
        let bin = bin_dir().ok_or_else(|| missing().unwrap())?;
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("slotcheck-postgres-{}-{n}", std::process::id()));
        crate::private::in_folder(&dir, stop, |dir| Server::start_in(&bin, dir, stop))
    }

    fn start_in(
        bin: &Path,
        dir: PathBuf,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Server>, String> {
        let account = crate::private::is_root().then(account);
        if let Some(user) = account {
            let chown = Command::new("chown")
                .arg(format!("{user}:{}", group_of(user)))
                .arg(&dir)
                .status()
                .map_err(|e| format!("chown: {e}"))?;
            if !chown.success() {
                return Err(format!("chown {user} {} failed", dir.display()));
            }
        }
        let data = dir.join("data");
        let initdb = as_account(&bin.join("initdb"), account)
            .arg("-D")
            .arg(&data)
            .arg("-U")
            .arg(USER)
            .arg("--auth=trust")
            .arg("--no-sync")
            .arg("--encoding=UTF8")
            .arg("--locale=C")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Out of the terminal's process group: Ctrl-C reaches only
            // slotcheck, which then stops what it started.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("initdb: {e}"))?;
        let Some((status, said)) = crate::private::finish_unless_stopped(initdb, stop) else {
            return Ok(None);
        };
        if !status.success() {
            return Err(format!("initdb failed ({status}): {}", said.trim()));
        }
        let child = as_account(&bin.join("postgres"), account)
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&dir)
            .arg("-c")
            .arg("listen_addresses=")
            // Durability is not what is tested: a commit need not reach
            // the disk, which keeps a run fast on a shared machine.
            .arg("-c")
            .arg("fsync=off")
            .arg("-c")
            .arg("synchronous_commit=off")
            .arg("-c")
            .arg("full_page_writes=off")
            // A steered run holds a connection per actor of every queue
            // (the client, broker and build system, each delivery's
            // worker, the director's look): 20 queues take about 200.
            .arg("-c")
            .arg("max_connections=400")
            .arg("-c")
            .arg("shared_buffers=16MB")
            .arg("-c")
            .arg("deadlock_timeout=50ms")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(dir.join("server.log")).map_or(Stdio::null(), Stdio::from),
            )
            // In a group of its own: the terminal's Ctrl-C (SIGINT, a fast
            // shutdown to postgres) reaches only slotcheck, which stops the
            // server after the run (its drop), or the watchdog does.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("postgres: {e}"))?;
        let watchdog = watch(child.id(), &dir);
        let mut server = Server {
            dir,
            child,
            watchdog,
        };
        if server.wait_ready(stop)? {
            return Ok(Some(server));
        }
        // Stopped while it started: no shutdown to wait for (its folder
        // goes); its whole group, the postmaster's children too.
        let _ = Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", server.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = server.child.wait();
        Ok(None)
    }

    /// The folder of the server's socket (`host` for a client).
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.clone()
    }

    pub fn connect(&self) -> Result<postgres::Client, String> {
        connect(&self.dir, DATABASE)
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
                    "postgres exited ({status}) before accepting connections: {}",
                    self.error_log()
                ));
            }
            if self.dir.join(".s.PGSQL.5432").exists() && self.connect().is_ok() {
                return Ok(true);
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "postgres did not accept connections within 60 s: {}",
                    self.error_log()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log"))
            .map(|log| log.lines().rev().take(5).collect::<Vec<_>>().join(" | "))
            .unwrap_or_default()
    }

    /// Creates an empty schema named `name` (dropping one of that name):
    /// each backend of a run lives in a schema of its own.
    pub fn create_schema(&self, name: &str) -> Result<(), String> {
        let mut c = self.connect()?;
        c.batch_execute(&format!(
            "DROP SCHEMA IF EXISTS \"{name}\" CASCADE; CREATE SCHEMA \"{name}\""
        ))
        .map_err(|e| message(&e))
    }
}

/// An error with the server's own words: a `db error` says its SQLSTATE
/// and message only through `as_db_error` (its Display is "db error").
pub(crate) fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// A connection on the socket in `dir`, its search path `schema` (or the
/// default when `schema` is the database's name).
pub fn connect(dir: &Path, schema: &str) -> Result<postgres::Client, String> {
    let mut config = postgres::Config::new();
    config
        .host_path(dir)
        .user(USER)
        .dbname(DATABASE)
        .connect_timeout(Duration::from_secs(10));
    if schema != DATABASE {
        config.options(&format!("-c search_path={schema}"));
    }
    config
        .connect(postgres::NoTls)
        .map_err(|e| format!("postgres: {}", message(&e)))
}

/// A shell that stops the server and removes its folder once this process
/// is gone (a test binary ends without dropping its statics).
fn watch(server: u32, dir: &Path) -> Option<Child> {
    let script = format!(
        "while kill -0 {parent} 2>/dev/null; do sleep 1; done; kill -INT {server} 2>/dev/null; sleep 5; kill -9 {server} 2>/dev/null; rm -rf '{dir}'",
        parent = std::process::id(),
        dir = dir.display()
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGINT: PostgreSQL's fast shutdown (its sessions ended, no wait).
        // (Not to a server already reaped: its pid may be another's.)
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = Command::new("kill")
                .arg("-INT")
                .arg(self.child.id().to_string())
                .status();
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A statement of the engine's text in PostgreSQL's words: `?` parameters
/// numbered `$1`, `$2`, ... (outside quotes), and MariaDB's `INSERT IGNORE
/// INTO ...` as `INSERT INTO ... ON CONFLICT DO NOTHING`.
pub fn translate(sql: &str) -> String {
    // A parameter the server cannot type by itself (the reaping gate's
    // `? IS NOT NULL`) is given one.
    let sql = sql.replace("? IS NOT NULL", "?::bigint IS NOT NULL");
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    if let Some(rest) = out.strip_prefix("INSERT IGNORE INTO") {
        out = format!("INSERT INTO{rest} ON CONFLICT DO NOTHING");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::translate;

    #[test]
    fn statements_are_translated() {
        assert_eq!(
            translate("UPDATE t SET a = ?, s = 'x?' WHERE id = ? AND v = ?"),
            "UPDATE t SET a = $1, s = 'x?' WHERE id = $2 AND v = $3"
        );
        assert_eq!(
            translate("x AND ? IS NOT NULL"),
            "x AND $1::bigint IS NOT NULL"
        );
        assert_eq!(
            translate("INSERT IGNORE INTO builds (queue, num) VALUES (?, ?)"),
            "INSERT INTO builds (queue, num) VALUES ($1, $2) ON CONFLICT DO NOTHING"
        );
    }
}
