//! A delaying TCP proxy: the netem container of post 003, in-process.
//!
//! On loopback a round trip costs some tens of microseconds, so a loop of
//! 1000 GETs looks harmless. Real networks cost 0.2 ms in one data centre
//! and more between zones. `DelayProxy` listens on a free local port and
//! forwards every connection to the server, holding each chunk of bytes for
//! half the round-trip time in each direction.
//!
//! Delay, not bandwidth: every chunk read is stamped with the moment it may
//! leave, and a writer sends it then. Chunks read back to back leave back to
//! back, so a pipeline of 1000 GETs pays one round trip, exactly as on a
//! real network, while 1000 sequential GETs pay 1000.
//!
//! Each connection gets two pumps (client -> server, server -> client), each
//! a reader thread and a writer thread joined by a channel. A half-close
//! (EOF) is forwarded as a shutdown of the write side, after the data before
//! it.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// How much one read takes from a socket at most.
const CHUNK: usize = 64 * 1024;

/// thread::sleep overshoots by tens of microseconds; the last stretch before
/// a deadline is waited out by yielding instead, so 0.1 ms delays hold.
const SPIN_BEFORE_DEADLINE: Duration = Duration::from_micros(150);

/// A running proxy. Dropping it stops accepting; open connections end when
/// either side closes.
pub struct DelayProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicU64>,
    accept_thread: Option<thread::JoinHandle<()>>,
}

impl DelayProxy {
    /// Listen on 127.0.0.1:<free port> and forward to `upstream`, delaying
    /// each direction by `one_way` (so a round trip gains 2 x `one_way`).
    pub fn start(upstream: SocketAddr, one_way: Duration) -> io::Result<DelayProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(AtomicU64::new(0));
        let (stop2, conns2) = (stop.clone(), connections.clone());
        let accept_thread = thread::Builder::new()
            .name("lab-proxy-accept".into())
            .spawn(move || {
                for incoming in listener.incoming() {
                    if stop2.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(client) = incoming else { continue };
                    conns2.fetch_add(1, Ordering::Relaxed);
                    // One connection's failure (server gone) ends only it.
                    let _ = serve_connection(client, upstream, one_way);
                }
            })?;
        Ok(DelayProxy {
            addr,
            stop,
            connections,
            accept_thread: Some(accept_thread),
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many connections it accepted so far.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the blocking accept() so the thread sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

/// Connect upstream and start both pumps of one connection.
fn serve_connection(client: TcpStream, upstream: SocketAddr, one_way: Duration) -> io::Result<()> {
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    pump(client.try_clone()?, server.try_clone()?, one_way, "up")?;
    pump(server, client, one_way, "down")?;
    Ok(())
}

/// One direction: read chunks from `from`, write each to `to` once its
/// delay is over.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration, dir: &str) -> io::Result<()> {
    let (tx, rx) = mpsc::channel::<Option<(Instant, Vec<u8>)>>();
    thread::Builder::new()
        .name(format!("lab-proxy-{dir}-read"))
        .spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(n) => {
                        let due = Instant::now() + delay;
                        if tx.send(Some((due, buf[..n].to_vec()))).is_err() {
                            return;
                        }
                    }
                }
            }
        })?;
    thread::Builder::new()
        .name(format!("lab-proxy-{dir}-write"))
        .spawn(move || {
            while let Ok(Some((due, bytes))) = rx.recv() {
                wait_until(due);
                if to.write_all(&bytes).is_err() {
                    let _ = to.shutdown(Shutdown::Both);
                    return;
                }
            }
            // EOF (or the reader failed): pass the half-close on.
            let _ = to.shutdown(Shutdown::Write);
        })?;
    Ok(())
}

/// Sleep until `due`, finishing the last stretch by yielding.
pub fn wait_until(due: Instant) {
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > SPIN_BEFORE_DEADLINE {
            thread::sleep(left - SPIN_BEFORE_DEADLINE);
        } else {
            thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free port; echoes until EOF, then closes.
    fn echo_server() -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { continue };
                thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    loop {
                        match c.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if c.write_all(&buf[..n]).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    fn connect(p: &DelayProxy) -> TcpStream {
        let c = TcpStream::connect(p.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.set_nodelay(true).unwrap();
        c
    }

    #[test]
    fn proxy_delivers_every_byte_in_order() {
        let p = DelayProxy::start(echo_server(), Duration::from_millis(1)).unwrap();
        let mut c = connect(&p);
        // 1 MB of a pattern that would show any reordering or loss.
        let data: Vec<u8> = (0..1_000_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let mut w = c.try_clone().unwrap();
        let sent = data.clone();
        let writer = thread::spawn(move || w.write_all(&sent).unwrap());
        let mut got = vec![0u8; data.len()];
        c.read_exact(&mut got).unwrap();
        writer.join().unwrap();
        assert!(got == data, "echoed bytes differ");
        assert_eq!(p.connections(), 1);
    }

    #[test]
    fn proxy_adds_at_least_the_round_trip_delay() {
        // Lower bound only: a loaded machine can make it slower, never faster.
        let p = DelayProxy::start(echo_server(), Duration::from_millis(25)).unwrap();
        let mut c = connect(&p);
        let mut buf = [0u8; 4];
        for _ in 0..3 {
            let t0 = Instant::now();
            c.write_all(b"ping").unwrap();
            c.read_exact(&mut buf).unwrap();
            assert!(
                t0.elapsed() >= Duration::from_millis(50),
                "{:?}",
                t0.elapsed()
            );
            assert_eq!(&buf, b"ping");
        }
    }

    #[test]
    fn pipelined_requests_share_one_delay() {
        // 20 requests written back to back: one round trip of 2 x 100 ms, not
        // 20 of them (4 s). The bound is generous on purpose.
        let p = DelayProxy::start(echo_server(), Duration::from_millis(100)).unwrap();
        let mut c = connect(&p);
        let t0 = Instant::now();
        for _ in 0..20 {
            c.write_all(b"x").unwrap();
        }
        let mut buf = [0u8; 20];
        c.read_exact(&mut buf).unwrap();
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(took < Duration::from_millis(2000), "serialized: {took:?}");
    }

    #[test]
    fn half_close_reaches_the_other_side() {
        let p = DelayProxy::start(echo_server(), Duration::from_millis(1)).unwrap();
        let mut c = connect(&p);
        c.write_all(b"last words").unwrap();
        c.shutdown(Shutdown::Write).unwrap();
        let mut all = Vec::new();
        c.read_to_end(&mut all).unwrap(); // returns only at EOF
        assert_eq!(all, b"last words");
    }

    #[test]
    fn unreachable_upstream_closes_the_client() {
        // A port nobody listens on: bind, note, close.
        let dead = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let p = DelayProxy::start(dead, Duration::from_millis(1)).unwrap();
        let mut c = connect(&p);
        let mut buf = [0u8; 1];
        let r = c.read(&mut buf);
        assert!(matches!(r, Ok(0) | Err(_)), "{r:?}");
    }

    #[test]
    fn wait_until_never_returns_early() {
        let due = Instant::now() + Duration::from_micros(300);
        wait_until(due);
        assert!(Instant::now() >= due);
    }
}
