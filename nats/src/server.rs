//! A private `nats-server` with JetStream: started by us on a free loopback
//! port with a temporary store directory, stopped (and the directory
//! removed) when dropped. Never a system service.

use std::net::TcpListener;
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

/// A running private server. It runs under a small shell that stops it and
/// removes its directory when our end of its stdin closes: when this is
/// dropped, or when our process ends in any way (a test binary's shared
/// server is never dropped).
pub struct Server {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    port: u16,
    dir: PathBuf,
}

static STARTED: AtomicU32 = AtomicU32::new(0);

impl Server {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> Result<Server, String> {
        let binary = binary().ok_or(
            "nats-server not found (install Debian's nats-server, or set SLOTCHECK_NATS_SERVER)",
        )?;
        // The port is free when asked; the server takes it a moment later,
        // which on a loopback used only by us does not race in practice.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free loopback port: {e}"))?
            .port();
        let dir = std::env::temp_dir().join(format!(
            "slotcheck-nats-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let log = std::fs::File::create(dir.join("server.log"))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"dir=$1; shift; "$@" & pid=$!; read _; kill $pid; wait $pid; rm -rf "$dir""#)
            .arg("slotcheck-nats-server")
            .arg(&dir)
            .arg(&binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(dir.join("store"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("sh for {}: {e}", binary.display()))?;
        let stdin = child.stdin.take();
        let mut server = Server {
            child,
            stdin,
            port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "nats-server exited ({status}); its log: {}",
                    server.dir.join("server.log").display()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "nats-server did not listen on 127.0.0.1:{port} in 15 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
