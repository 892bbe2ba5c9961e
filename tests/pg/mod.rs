//! A Postgres server of the test's own: `initdb` in a temporary directory, `pg_ctl start` on a
//! free loopback port, stopped and removed when the guard drops. Shared by the Postgres tests
//! (`store_postgres.rs`, `claim_race.rs`) and the checkpoint-store benchmark.
//!
//! The binaries are found on `PATH`, then in `/usr/lib/postgresql/<version>/bin` (Debian's
//! `postgresql` package). Postgres refuses to run as root: when the effective user is root,
//! `initdb` and `pg_ctl` run as the `postgres` user (`runuser`), in a directory given to it.
//! Without Postgres the test fails, saying what to install.
//!
//! The database's default collation is ICU's `en` (not byte order), so a store that lists keys
//! without `COLLATE "C"` shows it.
//!
//! The server offers TLS ([`Postgres::start`]), with a certificate for `localhost` and
//! `127.0.0.1` signed by a CA of the test's own, made with the `openssl` command (Debian's
//! `postgresql` brings it, through `ssl-cert`: no Rust crate for certificates is needed by the
//! packages that share this helper); [`Postgres::config`] names that CA (`sslrootcert`), so
//! `PostgresCheckpointer::connect` checks the certificate as it would a real server's.
//! [`Postgres::start_without_tls`] starts one without TLS.

#![allow(dead_code)] // Each test file uses what it needs.

use std::ffi::OsString;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A running Postgres server, stopped (and its directory removed) on drop.
#[derive(Debug)]
pub(crate) struct Postgres {
    /// The temporary directory: the data directory, the socket directory, the logs.
    dir: PathBuf,
    /// `pg_ctl`.
    pg_ctl: PathBuf,
    /// Whether the binaries run as the `postgres` user (this process is root).
    as_postgres: bool,
    port: u16,
    /// Whether the server offers TLS.
    tls: bool,
}

impl Postgres {
    /// Starts a server offering TLS (`ssl=on`) with a certificate signed by the test's CA
    /// ([`Postgres::ca_file`]); panics (failing the test) with what went wrong, or what to
    /// install.
    pub(crate) fn start() -> Postgres {
        Postgres::start_with(true)
    }

    /// Starts a server without TLS (`ssl=off`).
    pub(crate) fn start_without_tls() -> Postgres {
        Postgres::start_with(false)
    }

    fn start_with(tls: bool) -> Postgres {
        let bin = binaries();
        let initdb = bin.join("initdb");
        let pg_ctl = bin.join("pg_ctl");
        let as_postgres = is_root();

        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hookchain-pg-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("socket")).expect("create the temporary directory");
        if as_postgres {
            give_to_postgres(&dir);
        }

        let data = dir.join("data");
        let mut server = Postgres {
            dir,
            pg_ctl,
            as_postgres,
            port: 0,
            tls,
        };
        let mut initdb_args = vec!["-D".into(), data.clone().into_os_string()];
        initdb_args.extend(
            [
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C.UTF-8",
                "--locale-provider=icu",
                "--icu-locale=en",
            ]
            .map(OsString::from),
        );
        server.run("initdb", &initdb, initdb_args);
        if tls {
            server.make_certificates(&data);
        }

        // A free port, as far as a bind can tell; another process may take it first, then
        // the start fails and is tried again on another.
        let mut failures = Vec::new();
        for _ in 0..5 {
            server.port = free_port();
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c ssl={}",
                server.port,
                server.dir.join("socket").display(),
                if tls { "on" } else { "off" },
            );
            let mut args: Vec<OsString> = vec!["-D".into(), data.clone().into_os_string()];
            args.push("-l".into());
            args.push(server.dir.join("server.log").into_os_string());
            args.extend(["-w", "-t", "60", "-o", &options, "start"].map(OsString::from));
            match server.try_run("pg_ctl start", &server.pg_ctl, args) {
                Ok(()) => {
                    server.wait_until_it_accepts_connections();
                    return server;
                }
                Err(failure) => failures.push(failure),
            }
        }
        server.port = 0; // Nothing to stop.
        panic!("Postgres did not start:\n{}", failures.join("\n---\n"));
    }

    /// The connection string of the server (libpq style): with the test's CA as the root
    /// certificates (`sslrootcert`) when the server offers TLS, for
    /// `PostgresCheckpointer::connect`; without, for `connect_insecure`.
    pub(crate) fn config(&self) -> String {
        if self.tls {
            format!(
                "{} sslrootcert={}",
                self.address(),
                self.ca_file().display()
            )
        } else {
            self.address()
        }
    }

    /// The connection string of the server without a word of TLS: its host, port, user and
    /// database.
    pub(crate) fn address(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    /// The directory of the server's Unix socket (`host=` of a connection through it).
    pub(crate) fn socket_dir(&self) -> PathBuf {
        self.dir.join("socket")
    }

    /// The PEM file of the test's CA, which signed the server's certificate (a server started
    /// with TLS).
    pub(crate) fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A CA (`ca.pem`, in the temporary directory) and the server's certificate and key signed
    /// by it, for `localhost` and `127.0.0.1` (`server.crt` and `server.key` in the data
    /// directory, where Postgres looks for them; the key the server's user's own, mode 0600,
    /// as Postgres demands).
    fn make_certificates(&self, data: &Path) {
        assert!(
            !self.dir.display().to_string().contains(char::is_whitespace),
            "the temporary directory {} holds a space, which the connection string would need \
             quoted",
            self.dir.display()
        );
        let openssl = |args: &[&str]| {
            let output = Command::new("openssl")
                .args(args)
                .current_dir(&self.dir)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|error| {
                    panic!(
                        "`openssl` could not be run ({error}): the Postgres tests make their \
                         server's certificate with it (Debian's `postgresql` brings it; else \
                         `apt-get install openssl`)"
                    )
                });
            assert!(
                output.status.success(),
                "openssl {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let p256 = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        openssl(
            &[
                &["req", "-x509", "-new"][..],
                &p256,
                &[
                    "-keyout",
                    "ca.key",
                    "-out",
                    "ca.pem",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=hookchain test CA",
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                    "-addext",
                    "keyUsage=critical,keyCertSign,cRLSign",
                ],
            ]
            .concat(),
        );
        openssl(
            &[
                &["req", "-new"][..],
                &p256,
                &[
                    "-keyout",
                    "server.key",
                    "-out",
                    "server.csr",
                    "-subj",
                    "/CN=localhost",
                ],
            ]
            .concat(),
        );
        std::fs::write(
            self.dir.join("server.ext"),
            "basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth\n\
             subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .expect("write the certificate's extensions");
        let serial = format!(
            "0x{:x}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        );
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            &serial,
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ]);
        for file in ["server.crt", "server.key"] {
            let to = data.join(file);
            std::fs::rename(self.dir.join(file), &to)
                .unwrap_or_else(|error| panic!("move {file} to {}: {error}", to.display()));
            if self.as_postgres {
                let (uid, gid) = (id(&["-u", "postgres"]), id(&["-g", "postgres"]));
                std::os::unix::fs::chown(&to, Some(uid), Some(gid))
                    .unwrap_or_else(|error| panic!("chown {} to postgres: {error}", to.display()));
            }
        }
        std::fs::set_permissions(
            data.join("server.key"),
            std::os::unix::fs::PermissionsExt::from_mode(0o600),
        )
        .expect("make the server's key private");
    }

    /// The server's port on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Polls the port until the server accepts connections (`pg_ctl -w` waited already; this
    /// checks the TCP listener the tests use).
    fn wait_until_it_accepts_connections(&self) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_err() {
            assert!(
                Instant::now() < deadline,
                "Postgres does not accept connections on {address}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's log, for failure messages.
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Runs `program` with `args` (as `postgres` if this process is root); panics if it fails.
    fn run(&self, name: &str, program: &Path, args: Vec<OsString>) {
        if let Err(failure) = self.try_run(name, program, args) {
            panic!("{failure}");
        }
    }

    /// Runs `program` with `args` (as `postgres` if this process is root), its output in a file
    /// of the directory (a server started by `pg_ctl` must not hold a pipe of ours open).
    fn try_run(&self, name: &str, program: &Path, args: Vec<OsString>) -> Result<(), String> {
        let output_path = self.dir.join(format!("{}.out", name.replace(' ', "-")));
        let output = std::fs::File::create(&output_path).expect("create an output file");
        let errors = output.try_clone().expect("clone an output file");
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        };
        let status = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(errors)
            .status()
            .unwrap_or_else(|error| panic!("{name} could not be run: {error}"));
        if status.success() {
            Ok(())
        } else {
            let output = std::fs::read_to_string(&output_path).unwrap_or_default();
            Err(format!(
                "{name} failed ({status}):\n{output}\n--- server log\n{}",
                self.log()
            ))
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.port != 0 {
            let mut args: Vec<OsString> = vec!["-D".into(), self.dir.join("data").into_os_string()];
            args.extend(["-m", "immediate", "-w", "stop"].map(OsString::from));
            let _ = self.try_run("pg_ctl stop", &self.pg_ctl, args);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The directory of `initdb` and `pg_ctl`: on `PATH`, or Debian's newest
/// `/usr/lib/postgresql/<version>/bin`.
fn binaries() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    if let Some(dir) = on_path {
        return dir;
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    debian.sort();
    match debian.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "Postgres is not installed: no `initdb` and `pg_ctl` on PATH nor in \
             /usr/lib/postgresql/*/bin. The Postgres tests start a server of their own: install \
             Debian's `postgresql` package (`apt-get install --no-install-recommends postgresql`)."
        ),
    }
}

/// Whether this process runs as root (effective user id 0).
fn is_root() -> bool {
    id(&["-u"]) == 0
}

/// A number printed by `id` with `args`.
fn id(args: &[&str]) -> u32 {
    let output = Command::new("id")
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("`id {}` could not be run: {error}", args.join(" ")));
    assert!(
        output.status.success(),
        "`id {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|error| panic!("`id {}` printed no number: {error}", args.join(" ")))
}

/// Gives `dir` (and what is in it) to the `postgres` user, which runs the server.
fn give_to_postgres(dir: &Path) {
    let (uid, gid) = (id(&["-u", "postgres"]), id(&["-g", "postgres"]));
    for path in [dir.to_owned(), dir.join("socket")] {
        std::os::unix::fs::chown(&path, Some(uid), Some(gid))
            .unwrap_or_else(|error| panic!("chown {} to postgres: {error}", path.display()));
    }
}

/// A port on 127.0.0.1 that nothing listens on (as of now).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("bind a free port on 127.0.0.1")
}
