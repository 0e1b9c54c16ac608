//! The embedded PostgreSQL 18's lifecycle: binaries from `provision.rs`, the cluster initialised
//! once, started and stopped with `pg_ctl`. As root, the server runs as an unprivileged system user. It listens on 127.0.0.1
//! only, with scram-sha-256 over TCP and a private Unix socket directory.
//!
//! Layout of the cluster directory (`$HOTLAB_HOME/cluster` or `$HOTLAB_CLUSTER`):
//! `data/` (PGDATA, owned by the server user, 0700), `sock/` (socket, 0700), `log/server.log`,
//! `password` (0600, the invoking user's), `server.json` (port, user, binaries), `lock`.

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::fs::{chown, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::provision::{binaries, major_of, wheel_bin_dir};
use super::ConnInfo;
use crate::ctx::{is_root, Ctx};
use crate::env;

/// The file that marks a cluster directory as hotlab's: only under it does hotlab delete.
pub(crate) const CLUSTER_MARKER: &str = ".hotlab-cluster";
/// The superuser has its password (initdb `--pwfile`, or a SCRAM verifier for an older cluster).
const PASSWORD_SET: &str = "password.set";
/// pg_stat_statements holds no statement with a password (cleared once for older clusters).
const STATEMENTS_CLEAN: &str = "statements.clean";
/// The database superuser hotlab creates.
pub(crate) const SUPERUSER: &str = "hotlab";
/// The OS user that runs the server when hotlab itself runs as root.
const DEFAULT_SERVER_USER: &str = "hotlab";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) port: u16,
    pub(crate) server_user: String,
    pub(crate) bin_dir: PathBuf,
}

/// The OS user the server runs as: None means "this process's user".
#[derive(Debug, Clone)]
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
}

#[derive(Debug, Clone)]
pub struct Embedded {
    pub(crate) bin_dir: PathBuf,
    pub(crate) cluster_dir: PathBuf,
    run_as: Option<RunAs>,
}

impl Embedded {
    /// Provisions the binaries and initialises the cluster when needed.
    pub(crate) fn open(ctx: &Ctx) -> Result<Embedded> {
        Embedded::open_at(ctx.cluster_dir.clone(), binaries(&ctx.home)?)
    }

    /// A cluster of hotlab's in `cluster_dir` run by the binaries in `bin_dir` (the staging
    /// server's), initialised when needed.
    pub(crate) fn open_at(cluster_dir: PathBuf, bin_dir: PathBuf) -> Result<Embedded> {
        let e = Embedded {
            bin_dir,
            cluster_dir,
            run_as: run_as()?,
        };
        e.claim_cluster_dir()?;
        let _lock = e.lock()?;
        e.init_if_needed()?;
        Ok(e)
    }

    /// The cluster as it is, without provisioning anything (for `server status`/`stop`).
    pub(crate) fn open_existing(ctx: &Ctx) -> Result<Embedded> {
        let bin_dir = match env::var(env::PG_BIN) {
            Some(b) => PathBuf::from(b),
            None => wheel_bin_dir(&ctx.home),
        };
        Ok(Embedded {
            bin_dir,
            cluster_dir: ctx.cluster_dir.clone(),
            run_as: None,
        })
    }

    pub(crate) fn data_dir(&self) -> PathBuf {
        self.cluster_dir.join("data")
    }
    pub(crate) fn socket_dir(&self) -> PathBuf {
        self.cluster_dir.join("sock")
    }
    fn log_path(&self) -> PathBuf {
        self.cluster_dir.join("log/server.log")
    }
    fn state_path(&self) -> PathBuf {
        self.cluster_dir.join("server.json")
    }
    fn password_path(&self) -> PathBuf {
        self.cluster_dir.join("password")
    }

    pub(crate) fn state(&self) -> Result<State> {
        let p = self.state_path();
        let text = fs::read_to_string(&p).with_context(|| {
            format!(
                "reading {}; run `cargo xtask server start` first",
                p.display()
            )
        })?;
        Ok(serde_json::from_str(&text)?)
    }

    fn write_state(&self, st: &State) -> Result<()> {
        crate::io::write_json_atomic(&self.state_path(), st)
    }

    /// Holds an exclusive lock on the cluster directory while it is initialised or started.
    /// Makes sure the cluster directory is hotlab's before anything under it is created or
    /// deleted (`claim_dir`).
    fn claim_cluster_dir(&self) -> Result<()> {
        claim_dir(&self.cluster_dir)
    }

    fn lock(&self) -> Result<fs::File> {
        fs::create_dir_all(&self.cluster_dir)
            .with_context(|| format!("creating {}", self.cluster_dir.display()))?;
        let f = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.cluster_dir.join("lock"))?;
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor; flock blocks until the lock is ours.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            bail!("cannot lock {}", self.cluster_dir.display());
        }
        Ok(f)
    }

    /// A directory owned by the server user with the given mode.
    fn server_dir(&self, p: &Path, mode: u32) -> Result<()> {
        fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
        if let Some(r) = &self.run_as {
            chown(p, Some(r.uid), Some(r.gid))
                .with_context(|| format!("giving {} to {}", p.display(), r.name))?;
        }
        fs::set_permissions(p, fs::Permissions::from_mode(mode))?;
        Ok(())
    }

    /// Writes `name` into the data directory, owned by the server user, with `mode`.
    pub(crate) fn write_data_file(&self, name: &str, bytes: &[u8], mode: u32) -> Result<()> {
        let p = self.data_dir().join(name);
        fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))?;
        if let Some(r) = &self.run_as {
            chown(&p, Some(r.uid), Some(r.gid))
                .with_context(|| format!("giving {} to {}", p.display(), r.name))?;
        }
        fs::set_permissions(&p, fs::Permissions::from_mode(mode))?;
        Ok(())
    }

    /// The superuser's connection over the private socket (local trust; the socket directory
    /// is 0700, the server user's).
    pub(crate) fn socket_config(&self) -> Result<postgres::Config> {
        let st = self.state()?;
        let mut c = postgres::Config::new();
        c.host_path(self.socket_dir())
            .port(st.port)
            .user(SUPERUSER)
            .dbname("postgres");
        Ok(c)
    }

    /// A server program (initdb, pg_ctl, psql) as the server user. `std::process` on purpose:
    /// changing uid/gid before exec needs `CommandExt`, which neither xshell nor duct offer.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin_dir.join(program));
        c.current_dir("/");
        if let Some(r) = &self.run_as {
            c.uid(r.uid).gid(r.gid);
        }
        c
    }

    fn init_if_needed(&self) -> Result<()> {
        let data = self.data_dir();
        if data.join("PG_VERSION").exists() {
            let have = fs::read_to_string(data.join("PG_VERSION"))?
                .trim()
                .to_string();
            let bin_major = major_of(&self.bin_dir)?;
            if have != bin_major.to_string() {
                bail!(
                    "the cluster in {} is PostgreSQL {have} but the binaries are {bin_major}; \
                     set {} to a new directory or unset {}",
                    data.display(),
                    env::CLUSTER,
                    env::PG_BIN
                );
            }
            return Ok(());
        }
        // The cluster directory itself must be reachable by the server user.
        fs::set_permissions(&self.cluster_dir, fs::Permissions::from_mode(0o755))?;
        if data.exists() {
            // A half-made data directory from an interrupted initdb, in a cluster directory
            // that carries our marker (`claim_cluster_dir` ran first): start again.
            if !self.cluster_dir.join(CLUSTER_MARKER).exists() {
                bail!(
                    "{} has no PG_VERSION and its cluster directory is not marked as hotlab's; hotlab will not delete it",
                    data.display()
                );
            }
            fs::remove_dir_all(&data)?;
        }
        self.server_dir(&data, 0o700)?;
        self.server_dir(&self.socket_dir(), 0o700)?;
        self.server_dir(&self.cluster_dir.join("log"), 0o700)?;
        eprintln!("hotlab: initdb {}", data.display());
        // The password: generated, stored 0600 for this user, and given to initdb in a file the
        // server user can read for the moment initdb runs: it never travels in SQL.
        let pw = random_password()?;
        write_private(&self.password_path(), &pw)?;
        let pw_dir = self.cluster_dir.join("initdb-pw");
        let out = (|| -> Result<std::process::Output> {
            self.server_dir(&pw_dir, 0o700)?;
            let pw_file = pw_dir.join("pw");
            write_private(&pw_file, &pw)?;
            if let Some(r) = &self.run_as {
                chown(&pw_file, Some(r.uid), Some(r.gid))
                    .with_context(|| format!("giving {} to {}", pw_file.display(), r.name))?;
            }
            self.command("initdb")
                .args(["-D"])
                .arg(&data)
                .args([
                    "-U",
                    SUPERUSER,
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                ])
                .arg(format!("--pwfile={}", pw_file.display()))
                .output()
                .context("running initdb")
        })();
        // The file goes on every path, an error's too.
        let _ = fs::remove_dir_all(&pw_dir);
        let out = out?;
        check_output("initdb", &out)?;
        let conf = format!(
            "\n# hotlab\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             unix_socket_permissions = 0700\npassword_encryption = 'scram-sha-256'\n\
             shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n\
             track_io_timing = on\ntrack_wal_io_timing = on\n",
            self.socket_dir().display()
        );
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))?;
        f.write_all(conf.as_bytes())?;
        // initdb set the password, and no statement ever held it.
        fs::write(self.cluster_dir.join(PASSWORD_SET), "")?;
        fs::write(self.cluster_dir.join(STATEMENTS_CLEAN), "")?;
        let st = State {
            port: 0,
            server_user: self
                .run_as
                .as_ref()
                .map(|r| r.name.clone())
                .unwrap_or_else(current_user),
            bin_dir: self.bin_dir.clone(),
        };
        self.write_state(&st)?;
        Ok(())
    }

    /// PID of the running postmaster, if any.
    pub(crate) fn pid(&self) -> Option<u32> {
        let text = fs::read_to_string(self.data_dir().join("postmaster.pid")).ok()?;
        let pid: u32 = text.lines().next()?.trim().parse().ok()?;
        Path::new(&format!("/proc/{pid}")).exists().then_some(pid)
    }

    pub(crate) fn ensure_started(&self) -> Result<()> {
        let _lock = self.lock()?;
        if self.pid().is_some() {
            return Ok(());
        }
        self.start_locked()
    }

    pub(crate) fn start(&self) -> Result<()> {
        let _lock = self.lock()?;
        self.start_locked()
    }

    fn start_locked(&self) -> Result<()> {
        let mut st = self.state()?;
        let port = choose_port(st.port)?;
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir())
            .arg("-l")
            .arg(self.log_path())
            .args(["-w", "-t", "120", "-o"])
            .arg(format!("-p {port}"))
            .arg("start")
            .output()
            .context("running pg_ctl start")?;
        if !out.status.success() {
            let tail = fs::read_to_string(self.log_path())
                .unwrap_or_default()
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ");
            bail!(
                "the embedded server did not start ({}); server log: {tail}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        st.port = port;
        st.bin_dir = self.bin_dir.clone();
        self.write_state(&st)?;
        self.set_password_if_needed()?;
        Ok(())
    }

    /// A cluster made by an older hotlab: gives the superuser its password as a SCRAM verifier
    /// computed here (as psql's `\password` does), with statement tracking off for that one
    /// statement; then, once, clears the statement statistics an older hotlab left holding
    /// `ALTER ROLE … PASSWORD '<password>'` (pg_stat_statements and its query-text file).
    fn set_password_if_needed(&self) -> Result<()> {
        let (set, clean) = (
            self.cluster_dir.join(PASSWORD_SET),
            self.cluster_dir.join(STATEMENTS_CLEAN),
        );
        if set.exists() && clean.exists() {
            return Ok(());
        }
        let mut c = self
            .socket_config()?
            .connect(postgres::NoTls)
            .context("connecting over the private socket to set the password")?;
        if !set.exists() {
            let pw = fs::read_to_string(self.password_path())?;
            let verifier = postgres_protocol::password::scram_sha_256(pw.trim().as_bytes());
            c.batch_execute(&format!(
                "SET pg_stat_statements.track = 'none'; SET log_statement = 'none'; \
                 ALTER ROLE {SUPERUSER} PASSWORD '{}'",
                verifier.replace('\'', "''")
            ))?;
            fs::write(&set, "")?;
        }
        c.batch_execute(
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()",
        )
        .context("clearing pg_stat_statements once (an older hotlab left the password in it)")?;
        eprintln!("hotlab: pg_stat_statements cleared once: an older hotlab set the server password by a statement it recorded");
        fs::write(&clean, "")?;
        Ok(())
    }

    pub(crate) fn stop(&self) -> Result<()> {
        if self.pid().is_none() {
            eprintln!("hotlab: the embedded server is not running");
            return Ok(());
        }
        // `open_existing` does not resolve the server user: do it now, pg_ctl must run as it.
        let me = match &self.run_as {
            Some(_) => self.clone(),
            None => Embedded {
                run_as: run_as()?,
                ..self.clone()
            },
        };
        let mut c = me.command("pg_ctl");
        let out = c
            .arg("-D")
            .arg(self.data_dir())
            .args(["-m", "fast", "-w", "-t", "120", "stop"])
            .output()
            .context("running pg_ctl stop")?;
        check_output("pg_ctl stop", &out)
    }

    pub(crate) fn conn_info(&self) -> Result<ConnInfo> {
        let st = self.state()?;
        let pw = fs::read_to_string(self.password_path()).with_context(|| {
            format!(
                "reading the server password {}",
                self.password_path().display()
            )
        })?;
        Ok(ConnInfo::own(
            "127.0.0.1",
            st.port,
            SUPERUSER,
            pw.trim().to_string(),
            "postgres",
        ))
    }

    /// The OS user that owns the postmaster process.
    pub fn process_owner_uid(&self) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        let pid = self.pid()?;
        fs::metadata(format!("/proc/{pid}")).ok().map(|m| m.uid())
    }
}

/// The port to start on: `HOTLAB_PORT` if set (an error when taken), else the remembered
/// one if still free, else a fresh free port.
fn choose_port(remembered: u16) -> Result<u16> {
    if let Some(p) = env::var(env::PORT) {
        let port: u16 = p
            .parse()
            .with_context(|| format!("{} = {p:?} is not a port number", env::PORT))?;
        if TcpListener::bind(("127.0.0.1", port)).is_err() {
            bail!(
                "port {port} on 127.0.0.1 is already taken by another program; \
                 set {} to a free port or unset it",
                env::PORT
            );
        }
        return Ok(port);
    }
    if remembered != 0 && TcpListener::bind(("127.0.0.1", remembered)).is_ok() {
        return Ok(remembered);
    }
    let l = TcpListener::bind(("127.0.0.1", 0)).context("finding a free port")?;
    Ok(l.local_addr()?.port())
}

pub(super) fn check_output(what: &str, out: &Output) -> Result<()> {
    if !out.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', " | ")
        );
    }
    Ok(())
}

fn current_user() -> String {
    env::var("USER").unwrap_or_else(|| "unknown".into())
}

/// Who runs the server: nobody special unless we are root.
fn run_as() -> Result<Option<RunAs>> {
    if !is_root() {
        return Ok(None);
    }
    let name = env::var(env::SERVER_USER).unwrap_or_else(|| DEFAULT_SERVER_USER.into());
    if lookup_user(&name).is_none() {
        eprintln!("hotlab: creating system user {name} to run PostgreSQL (it refuses root)");
        let sh = crate::proc::shell()?;
        let made = xshell::cmd!(
            sh,
            "useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin {name}"
        )
        .quiet()
        .run();
        if made.is_err() {
            bail!(
                "could not create the system user {name}; create it or set {}",
                env::SERVER_USER
            );
        }
    }
    let (uid, gid) = lookup_user(&name)
        .with_context(|| format!("system user {name} not found after creating it"))?;
    if uid == 0 {
        bail!(
            "{} names root; PostgreSQL refuses to run as root",
            env::SERVER_USER
        );
    }
    Ok(Some(RunAs { name, uid, gid }))
}

fn lookup_user(name: &str) -> Option<(u32, u32)> {
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer into static storage or null; we copy the ids out at once.
    unsafe {
        let p = libc::getpwnam(c.as_ptr());
        if p.is_null() {
            None
        } else {
            Some(((*p).pw_uid, (*p).pw_gid))
        }
    }
}

pub(crate) fn random_password() -> Result<String> {
    let mut buf = [0u8; 24];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut buf))
        .context("reading /dev/urandom")?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Makes sure a cluster directory is hotlab's before anything under it is created or deleted:
/// it carries `CLUSTER_MARKER`, or it is new or empty (then it gets the marker), or it is a
/// cluster an older hotlab made (server.json beside an initialised data/: marked now). Anything
/// else is someone's directory and is refused, untouched. (The server's workload lease lives in
/// the cluster directory too, so it claims the directory the same way first.)
pub(crate) fn claim_dir(d: &Path) -> Result<()> {
    let marker = d.join(CLUSTER_MARKER);
    if marker.exists() {
        return Ok(());
    }
    let empty = !d.exists()
        || fs::read_dir(d)
            .with_context(|| format!("reading {}", d.display()))?
            .next()
            .is_none();
    let older_hotlab = d.join("server.json").is_file() && d.join("data/PG_VERSION").is_file();
    if !empty && !older_hotlab {
        bail!(
            "{} is not empty and is not a hotlab cluster (no {CLUSTER_MARKER}); hotlab will not create or delete anything in it: point {} at a new or empty directory",
            d.display(),
            env::CLUSTER
        );
    }
    fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    fs::write(
        &marker,
        "This directory holds a PostgreSQL cluster created by hotlab; hotlab may delete its data/.\n",
    )
    .with_context(|| format!("writing {}", marker.display()))?;
    Ok(())
}

pub(crate) fn write_private(p: &Path, text: &str) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(p)
        .with_context(|| format!("writing {}", p.display()))?;
    f.write_all(text.as_bytes())?;
    Ok(())
}
