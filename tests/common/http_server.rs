//! A tiny threaded HTTP/1.1 server for the web tools' tests, on 127.0.0.1
//! or ::1, plain or HTTPS (a CA and a certificate made at test time with
//! rcgen, served with rustls). One request per connection, then the
//! connection is closed. The test's handler answers each request with a
//! [`Reply`]; the server keeps what it was asked ([`Server::seen`]), so a
//! test can tell that a refused fetch never reached it.
//!
//! ```ignore
//! let server = Server::start(|req| match req.path.as_str() {
//!     "/" => Reply::ok("text/html", "<h1>Hi</h1>"),
//!     "/away" => Reply::redirect(302, "/"),
//!     _ => Reply::status(404, "text/plain", "no"),
//! });
//! let url = server.url("/away");
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// A request as the server read it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The request target: path and query.
    pub path: String,
    /// Header names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
}

impl Seen {
    /// The first header of this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// How the body is sent.
#[derive(Debug, Clone)]
pub enum Delivery {
    /// With Content-Length, at once.
    Whole,
    /// Chunked transfer coding, in chunks of this size.
    Chunked(usize),
    /// Chunked, `chunk` bytes every `every`: a slow server.
    Trickle { chunk: usize, every: Duration },
    /// Chunked, the body repeated without end: a huge download.
    Endless,
}

/// A handler's answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delivery: Delivery,
}

impl Reply {
    /// 200 with this Content-Type and body.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200, content_type, body)
    }

    /// This status, Content-Type and body.
    pub fn status(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delivery: Delivery::Whole,
        }
    }

    /// A redirect (301, 302, 303, 307, 308) to `location`, as given.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status, "text/plain", "moved").header("Location", location)
    }

    /// 200, the body gzip-encoded (Content-Encoding: gzip).
    pub fn gzip(content_type: &str, body: &[u8]) -> Reply {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(body).unwrap();
        Reply::ok(content_type, encoder.finish().unwrap()).header("Content-Encoding", "gzip")
    }

    /// The same with one more header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The same, sent in chunks of `size` bytes.
    pub fn chunked(mut self, size: usize) -> Reply {
        self.delivery = Delivery::Chunked(size.max(1));
        self
    }

    /// The same, `chunk` bytes every `every`.
    pub fn trickle(mut self, chunk: usize, every: Duration) -> Reply {
        self.delivery = Delivery::Trickle { chunk: chunk.max(1), every };
        self
    }

    /// The same body, repeated without end.
    pub fn endless(mut self) -> Reply {
        self.delivery = Delivery::Endless;
        self
    }
}

/// A test certificate authority and a certificate it signed for
/// `localhost`, `127.0.0.1` and `::1`; the CA's PEM file is what
/// `IKIGAI_TOOLS_FETCH_CA` names.
pub struct TestCa {
    dir: tempfile::TempDir,
    chain: Vec<rustls::pki_types::CertificateDer<'static>>,
    key: Vec<u8>,
}

impl TestCa {
    pub fn new() -> TestCa {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, KeyUsagePurpose};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca_params.distinguished_name.push(rcgen::DnType::CommonName, "ikigai-tools test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca_params, ca_key);

        let leaf_key = KeyPair::generate().unwrap();
        let leaf_params = CertificateParams::new(vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ])
        .unwrap();
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();

        let dir = tempfile::Builder::new().prefix("ikigai-tools-ca").tempdir().unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca_cert.pem()).unwrap();
        // Readable by `nobody`, as whom the tools run when the tests run as root.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        TestCa {
            dir,
            chain: vec![leaf.der().clone(), ca_cert.der().clone()],
            key: leaf_key.serialize_der(),
        }
    }

    /// The CA's certificate, PEM.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(self.key.clone().into());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(self.chain.clone(), key)
        .unwrap();
        Arc::new(config)
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync + 'static;

/// A running server; it stops when dropped.
pub struct Server {
    addr: SocketAddr,
    tls: bool,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Plain HTTP on 127.0.0.1, a free port.
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), None, handler)
    }

    /// Plain HTTP on ::1.
    pub fn start_v6(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_on(IpAddr::V6(Ipv6Addr::LOCALHOST), None, handler)
    }

    /// HTTPS on 127.0.0.1 with `ca`'s certificate.
    pub fn start_tls(
        ca: &TestCa,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), Some(ca), handler)
    }

    /// On `ip`, a free port, HTTPS when `tls` is given.
    pub fn start_on(
        ip: IpAddr,
        tls: Option<&TestCa>,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let config = tls.map(TestCa::server_config);
        let (seen2, stop2) = (Arc::clone(&seen), Arc::clone(&stop));
        thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (handler, seen, config) =
                    (Arc::clone(&handler), Arc::clone(&seen2), config.clone());
                thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                    match config {
                        Some(config) => {
                            let Ok(conn) = rustls::ServerConnection::new(config) else { return };
                            let mut tls = rustls::StreamOwned::new(conn, stream);
                            serve(&mut tls, &*handler, &seen);
                        }
                        None => {
                            let mut stream = stream;
                            serve(&mut stream, &*handler, &seen);
                        }
                    }
                });
            }
        });
        Server { addr, tls: tls.is_some(), seen, stop }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/path` (`https`, `[::1]` as they apply).
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.addr)
    }

    /// The same with another host name (`localhost`).
    pub fn url_as(&self, host: &str, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{host}:{}{path}", self.addr.port())
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// How many requests were received.
    pub fn hits(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Reads one request from `stream`, answers it, and returns (closing).
fn serve(stream: &mut (impl Read + Write), handler: &Handler, seen: &Mutex<Vec<Seen>>) {
    let Some(request) = read_request(stream) else { return };
    seen.lock().unwrap().push(request.clone());
    let reply = handler(&request);
    let _ = write_reply(stream, &reply);
}

fn read_request(stream: &mut impl Read) -> Option<Seen> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    Some(Seen { method, path, headers })
}

fn write_reply(stream: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    match reply.delivery {
        Delivery::Whole => head.push_str(&format!("Content-Length: {}\r\n", reply.body.len())),
        _ => head.push_str("Transfer-Encoding: chunked\r\n"),
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    let chunk = |stream: &mut dyn Write, data: &[u8]| -> std::io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        write!(stream, "{:x}\r\n", data.len())?;
        stream.write_all(data)?;
        stream.write_all(b"\r\n")?;
        stream.flush()
    };
    match reply.delivery {
        Delivery::Whole => stream.write_all(&reply.body)?,
        Delivery::Chunked(size) => {
            for piece in reply.body.chunks(size) {
                chunk(stream, piece)?;
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Delivery::Trickle { chunk: size, every } => {
            for piece in reply.body.chunks(size) {
                chunk(stream, piece)?;
                thread::sleep(every);
            }
            stream.write_all(b"0\r\n\r\n")?;
        }
        Delivery::Endless => {
            // Bounded all the same: a client that never stops ends the test
            // at 1 GiB rather than never.
            let body = if reply.body.is_empty() { &b"x"[..] } else { &reply.body[..] };
            let mut sent = 0usize;
            while sent < 1 << 30 {
                chunk(stream, body)?;
                sent += body.len();
            }
        }
    }
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        _ => "Status",
    }
}
