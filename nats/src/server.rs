//! A private `nats-server` with JetStream: started by us on a free loopback
//! port with a temporary store directory, stopped (and the directory
//! removed) when dropped. Never a system service.

use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Where the binary is looked for, in order: `$SLOTCHECK_NATS_SERVER`,
/// Debian's `/usr/sbin/nats-server`, then `nats-server` on `$PATH`.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SLOTCHECK_NATS_SERVER") {
        return Some(PathBuf::from(path));
    }
    let debian = Path::new("/usr/sbin/nats-server");
    if debian.is_file() {
        return Some(debian.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("nats-server"))
            .find(|candidate| candidate.is_file())
    })
}

/// When a run on the server stops before its end: a deadline (the
/// command's `--timeout`) or a signal (`cancelled`, the command's SIGINT or
/// SIGTERM). A run asks `why` between its steps and stops there, keeping
/// what it did; [`run_watched`] cuts it, [`GRACE`] later, if it does not.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub deadline: Option<Instant>,
    pub cancelled: fn() -> bool,
}

impl Default for Stop {
    fn default() -> Stop {
        Stop {
            deadline: None,
            cancelled: || false,
        }
    }
}

impl Stop {
    /// Why the run should stop now, if it should.
    pub fn why(&self) -> Option<&'static str> {
        if (self.cancelled)() {
            return Some("a signal (SIGINT or SIGTERM) stopped the run");
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Some("the time budget (--timeout) ran out");
        }
        None
    }
}

/// How long past a stop a run may take to end by itself (its last step,
/// the evidence asked of the server) before it is cut where it is.
pub const GRACE: Duration = Duration::from_secs(5);

/// A running private server: `nats-server` our own child, in a process
/// group of its own (a Ctrl-C to the terminal's group reaches only
/// slotcheck, which stops it), and a watchdog that stops it and removes its
/// directory if this process ends without dropping it (killed, or a test
/// binary's shared server, never dropped).
pub struct Server {
    child: Child,
    watchdog: Option<Child>,
    port: u16,
    dir: PathBuf,
}

static STARTED: AtomicU32 = AtomicU32::new(0);

/// Why one try to start a server failed.
enum Failed {
    /// Another program had the port first (a lost port race): a new port
    /// may do.
    LostPort(String),
    Other(String),
}

impl Server {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> Result<Server, String> {
        let binary = binary().ok_or(
            "nats-server not found (install Debian's nats-server, or set SLOTCHECK_NATS_SERVER)",
        )?;
        // Checked first: a missing binary is named at once, not after a wait.
        if !binary.is_file() {
            return Err(format!(
                "nats-server: {} is not a file (install Debian's nats-server, or set SLOTCHECK_NATS_SERVER)",
                binary.display()
            ));
        }
        // A port found free can be taken before the server binds it (a lost
        // port race: rare, but many servers start at once in a loaded CI):
        // then a new port and folder, twice more.
        let mut tries = 1;
        loop {
            match Server::start_once(&binary) {
                Ok(server) => return Ok(server),
                Err(Failed::LostPort(_)) if tries < 3 => tries += 1,
                Err(Failed::LostPort(e) | Failed::Other(e)) => return Err(e),
            }
        }
    }

    /// One try of [`Server::start`], in a folder of its own.
    fn start_once(binary: &Path) -> Result<Server, Failed> {
        let dir = std::env::temp_dir().join(format!(
            "slotcheck-nats-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        crate::sweep::sweep_beside(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failed::Other(format!("{}: {e}", dir.display())))
            .and_then(|()| Server::start_in(binary, dir.clone()))
            .inspect_err(|_| {
                let _ = std::fs::remove_dir_all(&dir);
            })
    }

    fn start_in(binary: &Path, dir: PathBuf) -> Result<Server, Failed> {
        // The port is free when asked; the server takes it a moment later,
        // which on a loopback used only by us does not race in practice
        // (when it does, the server's log says so, quoted below).
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| Failed::Other(format!("no free loopback port: {e}")))?
            .port();
        let log = std::fs::File::create(dir.join("server.log"))
            .map_err(|e| Failed::Other(format!("{}: {e}", dir.display())))?;
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.join("store"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(|e| Failed::Other(format!("{}: {e}", binary.display())))?;
        let watchdog = watch(child.id(), &dir);
        let mut server = Server {
            child,
            watchdog,
            port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        let connection = loop {
            if let Ok(connection) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                // Before the server listens, a connect to a port in the
                // ephemeral range can be given that port as its own source:
                // a socket connected to itself, which says nothing (TCP
                // self-connect). Not the server: try again.
                let itself = connection.local_addr().ok() == connection.peer_addr().ok();
                if !itself {
                    break connection;
                }
            }
            if let Some(exited) = server.exited() {
                return Err(if server.lost_its_port() {
                    Failed::LostPort(exited)
                } else {
                    Failed::Other(exited)
                });
            }
            if Instant::now() > deadline {
                return Err(Failed::Other(format!(
                    "nats-server (pid {}) did not listen on 127.0.0.1:{port} in 15 s; its log: {}",
                    server.pid(),
                    server.log_tail()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        server.greets(connection).map_err(Failed::LostPort)?;
        Ok(server)
    }

    /// Whether what answers on the port is our server: a NATS server's
    /// first words on a connection are `INFO {...}`. Another program that
    /// took the port between our finding it free and the server's start
    /// (a lost port race) is named as such, not left to a client's
    /// "timed out" minutes later.
    fn greets(&mut self, mut connection: std::net::TcpStream) -> Result<(), String> {
        let mut first = [0u8; 4];
        let _ = connection.set_read_timeout(Some(Duration::from_secs(5)));
        let read = connection.read_exact(&mut first);
        if read.is_ok() && &first == b"INFO" {
            return Ok(());
        }
        // Our server, having lost the port, exits: say so if it has.
        std::thread::sleep(Duration::from_millis(200));
        let ours = match self.exited() {
            Some(exited) => exited,
            None => format!(
                "nats-server (pid {}) is running; its log: {}",
                self.pid(),
                self.log_tail()
            ),
        };
        let answer = match read {
            Ok(()) => format!("answered {:?}", String::from_utf8_lossy(&first)),
            Err(e) => format!("said nothing ({e})"),
        };
        Err(format!(
            "the connection to 127.0.0.1:{} {answer}, not a NATS server's INFO: another program took the port between our finding it free and the server's start (a lost port race; run again); {ours}",
            self.port
        ))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its private folder, removed with it (and by its watchdog): a run's
    /// other temporary files go there too.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// If the server has exited: how, with the last lines of its log.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(format!(
                "nats-server (pid {}) exited ({status}); the end of its log: {}",
                self.child.id(),
                self.log_tail()
            )),
            _ => None,
        }
    }

    /// Whether the server's log says another program had its port: Go's
    /// words for EADDRINUSE, as nats-server logs a failed listen (the only
    /// sign the server gives of it).
    fn lost_its_port(&self) -> bool {
        self.log_tail().contains("address already in use")
    }

    /// The last lines of the server's log, on one line.
    fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(self.dir.join("server.log")) {
            let length = file.metadata().map(|m| m.len()).unwrap_or(0);
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(4096)));
            let mut bytes = Vec::new();
            let _ = file.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        let lines: Vec<&str> = text.lines().rev().take(5).collect();
        if lines.is_empty() {
            return "(empty)".to_string();
        }
        lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
    }
}

/// A shell, in a process group of its own, that stops the server and
/// removes its directory once this process is gone.
fn watch(server: u32, dir: &Path) -> Option<Child> {
    let script = format!(
        "while kill -0 {parent} 2>/dev/null; do sleep 1; done; kill {server} 2>/dev/null; sleep 2; kill -9 {server} 2>/dev/null; rm -rf '{dir}'",
        parent = std::process::id(),
        dir = dir.display()
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
}

/// Runs `work` on a runtime of one thread while watching the server: the
/// server's exit ends it at once, with an error naming the exit and quoting
/// the server's log (a client would wait for a reconnection for ever), and
/// so does a `stop` that `work` has not honoured within [`GRACE`].
pub fn run_watched<T, E>(
    server: &mut Server,
    stop: Stop,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String>
where
    E: std::fmt::Display,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let watcher = async {
            let mut stopped_at: Option<Instant> = None;
            loop {
                if let Some(exited) = server.exited() {
                    return format!("the server stopped during the run: {exited}");
                }
                if let Some(why) = stop.why() {
                    let at = *stopped_at.get_or_insert_with(Instant::now);
                    if at.elapsed() >= GRACE {
                        return format!("{why}, and the run did not end within {GRACE:?} after it: cut where it waited on the server");
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::select! {
            done = work => done.map_err(|e| e.to_string()),
            why = watcher => Err(why),
        }
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM (a clean shutdown), then SIGKILL if it lingers.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .stderr(Stdio::null())
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
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
