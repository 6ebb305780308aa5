//! A TCP proxy on loopback between one builder and the server that holds
//! every chunk of bytes, each way, for a set delay before passing it on, in
//! order (a TCP stream cannot reorder). The delay can be changed while it
//! runs; a change applies to bytes read from then on. `cut` drops every
//! connection at once, as a builder's machine dying does.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub struct Proxy {
    addr: SocketAddr,
    delay_us: Arc<AtomicU64>,
    pumps: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let delay_us = Arc::new(AtomicU64::new(0));
        let pumps: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = {
            let (delay_us, pumps) = (delay_us.clone(), pumps.clone());
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    let mut held = pumps.lock().expect("proxy pumps");
                    held.extend(pump(client_read, server_write, delay_us.clone()));
                    held.extend(pump(server_read, client_write, delay_us.clone()));
                }
            })
        };
        Ok(Proxy {
            addr,
            delay_us,
            pumps,
            accept,
        })
    }

    pub fn url(&self) -> String {
        format!("nats://{}", self.addr)
    }

    /// The one-way delay for bytes read from now on (each direction).
    pub fn set_delay(&self, delay: Duration) {
        self.delay_us
            .store(delay.as_micros() as u64, Ordering::SeqCst);
    }

    pub fn delay(&self) -> Duration {
        Duration::from_micros(self.delay_us.load(Ordering::SeqCst))
    }

    /// Drops every connection through the proxy, bytes in flight included.
    pub fn cut(&self) {
        for pump in self.pumps.lock().expect("proxy pumps").drain(..) {
            pump.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

/// One direction: a reader stamps each chunk with when it may go, a writer
/// sends the chunks in order at their times.
fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay_us: Arc<AtomicU64>,
) -> [JoinHandle<()>; 2] {
    let (send, mut receive) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let reader = tokio::spawn(async move {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let due =
                        Instant::now() + Duration::from_micros(delay_us.load(Ordering::SeqCst));
                    if send.send((due, buffer[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let writer = tokio::spawn(async move {
        while let Some((due, bytes)) = receive.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
        let _ = to.shutdown().await;
    });
    [reader, writer]
}
