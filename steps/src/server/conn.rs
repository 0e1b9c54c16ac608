//! One connection model, libpq's: every setting libpq accepts, resolved the way libpq resolves it,
//! kept whole. A connection string (a `postgres://` URL or `key=value` pairs) and psql's flags
//! come first; then the service file (`service`/`PGSERVICE`, in `PGSERVICEFILE` or
//! `~/.pg_service.conf`, then `PGSYSCONFDIR/pg_service.conf`); then the `PG*` variables; then
//! libpq's defaults (the local socket, the OS user, `dbname` = the user, `sslmode=prefer`). That
//! the service file beats `PGPORT` is libpq's order, measured against psql 18 (docs/staging-server.md, "Your staging
//! server"). No password: `.pgpass` (`passfile`/`PGPASSFILE`, else `~/.pgpass`), ignored with a
//! warning when group or others can read it, as libpq does.
//!
//! hotlab's own client (`postgres`, TLS in `tls.rs`) and its child programs (pgbench, psql, which
//! get the same settings as `PG*` variables, and no other `PG*` variable) connect from this one
//! value. The password is never printed: `Debug` leaves it out, and no error quotes the string.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// libpq's keywords and the variable each falls back to (libpq 18's `PQconninfoOptions`).
const KEYWORDS: &[(&str, Option<&str>)] = &[
    ("service", Some("PGSERVICE")),
    ("user", Some("PGUSER")),
    ("password", Some("PGPASSWORD")),
    ("passfile", Some("PGPASSFILE")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("connect_timeout", Some("PGCONNECT_TIMEOUT")),
    ("dbname", Some("PGDATABASE")),
    ("host", Some("PGHOST")),
    ("hostaddr", Some("PGHOSTADDR")),
    ("port", Some("PGPORT")),
    ("client_encoding", Some("PGCLIENTENCODING")),
    ("options", Some("PGOPTIONS")),
    ("application_name", Some("PGAPPNAME")),
    ("fallback_application_name", None),
    ("keepalives", None),
    ("keepalives_idle", None),
    ("keepalives_interval", None),
    ("keepalives_count", None),
    ("tcp_user_timeout", None),
    ("sslmode", Some("PGSSLMODE")),
    ("sslnegotiation", Some("PGSSLNEGOTIATION")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslcertmode", Some("PGSSLCERTMODE")),
    ("sslpassword", None),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcrl", Some("PGSSLCRL")),
    ("sslcrldir", Some("PGSSLCRLDIR")),
    ("sslsni", Some("PGSSLSNI")),
    ("requirepeer", Some("PGREQUIREPEER")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("gssencmode", Some("PGGSSENCMODE")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("gssdelegation", Some("PGGSSDELEGATION")),
    ("replication", None),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("min_protocol_version", Some("PGMINPROTOCOLVERSION")),
    ("max_protocol_version", Some("PGMAXPROTOCOLVERSION")),
];

/// Variables libpq reads that are not a keyword's fallback: a child gets none of them, its
/// settings are already resolved.
const OTHER_VARS: &[&str] = &[
    "PGSERVICEFILE",
    "PGSYSCONFDIR",
    "PGTZ",
    "PGDATESTYLE",
    "PGGEQO",
];

pub(crate) const SSLMODES: &[&str] = &[
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// Where the server is reached, in libpq's terms. Built once per command.
#[derive(Clone)]
pub struct ConnInfo {
    /// Every keyword that has a value, the password aside.
    params: BTreeMap<String, String>,
    password: Option<String>,
    /// The database for administration (CREATE/DROP DATABASE): the one the user named, else
    /// `postgres`; for `advise`, the database it reads.
    pub admin_db: String,
    /// Where the password came from (`connection string`, `PGPASSWORD`, `.pgpass FILE`), for
    /// messages; never the password.
    pub(crate) password_from: Option<String>,
}

impl std::fmt::Debug for ConnInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnInfo")
            .field("params", &self.params)
            .field("password", &self.password.as_ref().map(|_| "(hidden)"))
            .field("admin_db", &self.admin_db)
            .field("password_from", &self.password_from)
            .finish()
    }
}

/// Settings given on top of a connection string: psql's `-h -p -U -d`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Flags {
    pub(crate) host: Option<String>,
    pub(crate) port: Option<u16>,
    pub(crate) user: Option<String>,
    pub(crate) dbname: Option<String>,
}

impl ConnInfo {
    /// hotlab's own server (embedded or compose): loopback TCP, scram, no TLS (the pinned
    /// server has none, and the connection never leaves the machine).
    pub(crate) fn own(host: &str, port: u16, user: &str, password: String, db: &str) -> ConnInfo {
        let params = [
            ("host", host.to_string()),
            ("port", port.to_string()),
            ("user", user.to_string()),
            ("dbname", db.to_string()),
            ("sslmode", "disable".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        ConnInfo {
            params,
            password: Some(password),
            admin_db: db.to_string(),
            password_from: Some("hotlab's password file".into()),
        }
    }

    /// A server hotlab does not own, as libpq would reach it: `conninfo` (named `what` in
    /// errors) and `flags`, then the service file, then `PG*`, then the defaults.
    pub(crate) fn resolve(conninfo: Option<&str>, what: &str, flags: &Flags) -> Result<ConnInfo> {
        let mut given = match conninfo {
            Some(s) => parse(s).with_context(|| format!("{what} cannot be parsed"))?,
            None => BTreeMap::new(),
        };
        let flag_pairs = [
            ("host", flags.host.clone()),
            ("port", flags.port.map(|p| p.to_string())),
            ("user", flags.user.clone()),
            ("dbname", flags.dbname.clone()),
        ];
        for (k, v) in flag_pairs {
            if let Some(v) = v {
                given.insert(k.to_string(), v);
            }
        }
        let mut from_password = given.contains_key("password").then(|| what.to_string());
        // The service file fills what the string left unset.
        let service = given
            .get("service")
            .cloned()
            .or_else(|| crate::env::var("PGSERVICE"));
        if let Some(name) = &service {
            for (k, v) in service_entry(name)? {
                given.entry(k).or_insert(v);
            }
        }
        // Then the variables.
        for (k, var) in KEYWORDS {
            if let (Some(var), false) = (var, given.contains_key(*k)) {
                if let Some(v) = crate::env::var(var) {
                    if *k == "password" {
                        from_password = Some("PGPASSWORD".into());
                    }
                    given.insert(k.to_string(), v);
                }
            }
        }
        given.remove("service");
        let dbname_named = given.contains_key("dbname");
        // Then the defaults.
        let user = match given.get("user") {
            Some(u) => u.clone(),
            None => os_user()?,
        };
        given.insert("user".into(), user.clone());
        given.entry("port".into()).or_insert_with(|| "5432".into());
        given
            .entry("sslmode".into())
            .or_insert_with(|| "prefer".into());
        check_values(&given)?;
        if !given.contains_key("host") && !given.contains_key("hostaddr") {
            let port = given["port"]
                .split(',')
                .next()
                .unwrap_or("5432")
                .to_string();
            given.insert("host".into(), default_socket_dir(&port));
        }
        let dbname = given.get("dbname").cloned().unwrap_or_else(|| user.clone());
        given.insert("dbname".into(), dbname.clone());
        let mut password = given.remove("password");
        if password.is_none() {
            if let Some((p, file)) = pgpass(&given)? {
                password = Some(p);
                from_password = Some(format!(".pgpass {}", file.display()));
            }
        }
        Ok(ConnInfo {
            params: given,
            password,
            admin_db: if dbname_named {
                dbname
            } else {
                "postgres".into()
            },
            password_from: from_password,
        })
    }

    pub(crate) fn get(&self, keyword: &str) -> Option<&str> {
        self.params.get(keyword).map(String::as_str)
    }

    pub(crate) fn user(&self) -> &str {
        self.get("user").unwrap_or("")
    }

    pub(crate) fn sslmode(&self) -> &str {
        self.get("sslmode").unwrap_or("prefer")
    }

    /// Every host as given (`host`, else `hostaddr`).
    fn hosts(&self) -> &str {
        self.get("host").or(self.get("hostaddr")).unwrap_or("")
    }

    /// `host:port` (every host, as given), for messages.
    pub(crate) fn endpoint(&self) -> String {
        format!("{}:{}", self.hosts(), self.get("port").unwrap_or("5432"))
    }

    /// The first host, for meta.json and messages.
    pub fn first_host(&self) -> String {
        self.hosts().split(',').next().unwrap_or("").to_string()
    }

    /// The first port.
    pub fn first_port(&self) -> u16 {
        self.get("port")
            .and_then(|p| p.split(',').next())
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or(5432)
    }

    /// The same server, another database.
    pub(crate) fn with_dbname(&self, db: &str) -> ConnInfo {
        let mut c = self.clone();
        c.params.insert("dbname".into(), db.to_string());
        c
    }

    /// The client's configuration for `dbname`. sslmode and its files are `tls.rs`'s: the
    /// `postgres` crate is given `disable`, `prefer` or `require` and a connector that verifies
    /// what libpq's mode verifies.
    pub fn config(&self, dbname: &str) -> postgres::Config {
        let mut c = postgres::Config::new();
        let hosts: Vec<&str> = self
            .get("host")
            .map(|h| h.split(',').collect())
            .unwrap_or_default();
        for h in &hosts {
            if h.starts_with('/') || h.starts_with('@') {
                c.host_path(h);
            } else {
                c.host(h);
            }
        }
        if let Some(a) = self.get("hostaddr") {
            for a in a.split(',') {
                if let Ok(ip) = a.trim().parse() {
                    c.hostaddr(ip);
                }
            }
            if hosts.is_empty() {
                for a in a.split(',') {
                    c.host(a.trim());
                }
            }
        }
        for p in self.get("port").unwrap_or("5432").split(',') {
            c.port(p.trim().parse().unwrap_or(5432));
        }
        c.user(self.user()).dbname(dbname);
        c.application_name(self.get("application_name").unwrap_or("hotlab"));
        if let Some(o) = self.get("options") {
            c.options(o);
        }
        let timeout = self
            .get("connect_timeout")
            .and_then(|t| t.parse::<u64>().ok())
            .filter(|t| *t > 0)
            .unwrap_or(10);
        c.connect_timeout(std::time::Duration::from_secs(timeout.max(2)));
        if self.get("target_session_attrs") == Some("read-write") {
            c.target_session_attrs(postgres::config::TargetSessionAttrs::ReadWrite);
        }
        if self.get("load_balance_hosts") == Some("random") {
            c.load_balance_hosts(postgres::config::LoadBalanceHosts::Random);
        }
        match self.get("channel_binding") {
            Some("disable") => {
                c.channel_binding(postgres::config::ChannelBinding::Disable);
            }
            Some("require") => {
                c.channel_binding(postgres::config::ChannelBinding::Require);
            }
            _ => {}
        }
        if let Some(p) = &self.password {
            c.password(p);
        }
        c
    }

    /// The environment of a child program (pgbench, psql) on `dbname`: this process's, minus
    /// every variable libpq reads, plus the resolved settings as `PG*` variables.
    pub(crate) fn child_env(&self, dbname: &str) -> Vec<(String, String)> {
        let libpq: Vec<&str> = KEYWORDS
            .iter()
            .filter_map(|(_, v)| *v)
            .chain(OTHER_VARS.iter().copied())
            .collect();
        let mut env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| !libpq.contains(&k.as_str()))
            .collect();
        for (k, var) in KEYWORDS {
            let v = match *k {
                "dbname" => Some(dbname.to_string()),
                "password" => self.password.clone(),
                _ => self.params.get(*k).cloned(),
            };
            if let (Some(var), Some(v)) = (var, v) {
                env.push((var.to_string(), v));
            }
        }
        env
    }
}

/// Parses a connection string as libpq does: a `postgres://`/`postgresql://` URL or
/// `keyword = value` pairs (values quoted with `'…'`, `\` escaping). Errors never quote a value.
pub(crate) fn parse(s: &str) -> Result<BTreeMap<String, String>> {
    let t = s.trim_start();
    let pairs = if t.starts_with("postgresql://") || t.starts_with("postgres://") {
        parse_uri(t)?
    } else {
        parse_pairs(s)?
    };
    let mut out = BTreeMap::new();
    for (k, v) in pairs {
        if !KEYWORDS.iter().any(|(kw, _)| *kw == k) {
            bail!("invalid connection option \"{k}\"");
        }
        out.insert(k, v);
    }
    Ok(out)
}

fn parse_pairs(s: &str) -> Result<Vec<(String, String)>> {
    let mut out = vec![];
    let mut it = s.chars().peekable();
    loop {
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.peek().is_none() {
            return Ok(out);
        }
        let mut key = String::new();
        while let Some(&c) = it.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            key.push(c);
            it.next();
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        if it.next() != Some('=') {
            bail!("missing \"=\" after \"{key}\" in connection info string");
        }
        while it.peek().is_some_and(|c| c.is_whitespace()) {
            it.next();
        }
        let mut val = String::new();
        if it.peek() == Some(&'\'') {
            it.next();
            loop {
                match it.next() {
                    None => bail!("unterminated quoted string in connection info string"),
                    Some('\\') => {
                        if let Some(c) = it.next() {
                            val.push(c);
                        }
                    }
                    Some('\'') => break,
                    Some(c) => val.push(c),
                }
            }
        } else {
            while let Some(&c) = it.peek() {
                if c.is_whitespace() {
                    break;
                }
                it.next();
                if c == '\\' {
                    if let Some(n) = it.next() {
                        val.push(n);
                    }
                } else {
                    val.push(c);
                }
            }
        }
        out.push((key, val));
    }
}

fn percent_decode(s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .context("invalid percent-encoded token in URI")?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).context("percent-encoded URI is not UTF-8")
}

/// `postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]`
fn parse_uri(s: &str) -> Result<Vec<(String, String)>> {
    let rest = s
        .strip_prefix("postgresql://")
        .or_else(|| s.strip_prefix("postgres://"))
        .unwrap_or(s);
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (auth_hosts, db) = match main.split_once('/') {
        Some((a, d)) => (a, Some(d)),
        None => (main, None),
    };
    let (auth, hosts) = match auth_hosts.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, auth_hosts),
    };
    let mut out = vec![];
    if let Some(a) = auth {
        let (u, p) = match a.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (a, None),
        };
        if !u.is_empty() {
            out.push(("user".into(), percent_decode(u)?));
        }
        if let Some(p) = p {
            out.push(("password".into(), percent_decode(p)?));
        }
    }
    if !hosts.is_empty() {
        let (mut hs, mut ps) = (vec![], vec![]);
        for h in hosts.split(',') {
            let (host, port) = if let Some(r) = h.strip_prefix('[') {
                let (ip, after) = r
                    .split_once(']')
                    .context("missing \"]\" in an IPv6 host address in URI")?;
                (ip.to_string(), after.strip_prefix(':').map(str::to_string))
            } else {
                match h.rsplit_once(':') {
                    Some((h, p)) => (h.to_string(), Some(p.to_string())),
                    None => (h.to_string(), None),
                }
            };
            hs.push(percent_decode(&host)?);
            ps.push(port.unwrap_or_default());
        }
        if hs.iter().any(|h| !h.is_empty()) {
            out.push(("host".into(), hs.join(",")));
        }
        if ps.iter().any(|p| !p.is_empty()) {
            out.push(("port".into(), ps.join(",")));
        }
    }
    if let Some(d) = db.filter(|d| !d.is_empty()) {
        out.push(("dbname".into(), percent_decode(d)?));
    }
    for kv in query.unwrap_or("").split('&').filter(|kv| !kv.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .context("missing key/value separator \"=\" in URI query parameter")?;
        let (k, v) = (percent_decode(k)?, percent_decode(v)?);
        // JDBC's `ssl=true`, which libpq accepts too.
        if k == "ssl" && v == "true" {
            out.push(("sslmode".into(), "require".into()));
        } else {
            out.push((k, v));
        }
    }
    Ok(out)
}

/// One-line checks of values hotlab would otherwise pass on: the sslmode, the port.
fn check_values(p: &BTreeMap<String, String>) -> Result<()> {
    let mode = &p["sslmode"];
    if !SSLMODES.contains(&mode.as_str()) {
        bail!(
            "invalid sslmode value: \"{mode}\" (one of {}); fix sslmode or PGSSLMODE",
            SSLMODES.join(", ")
        );
    }
    for port in p["port"].split(',') {
        if port.trim().parse::<u16>().ok().filter(|p| *p > 0).is_none() {
            bail!("invalid port number: \"{port}\"; fix port or PGPORT");
        }
    }
    Ok(())
}

/// libpq's default socket directory: the one holding the port's socket among the usual two
/// (upstream builds use /tmp, Debian's /var/run/postgresql), else /tmp.
fn default_socket_dir(port: &str) -> String {
    for d in ["/tmp", "/var/run/postgresql"] {
        if Path::new(d).join(format!(".s.PGSQL.{port}")).exists() {
            return d.to_string();
        }
    }
    "/tmp".into()
}

/// The effective OS user's name, libpq's default user.
fn os_user() -> Result<String> {
    // SAFETY: getpwuid returns static storage or null; the name is copied out at once.
    unsafe {
        let p = libc::getpwuid(libc::geteuid());
        if p.is_null() || (*p).pw_name.is_null() {
            bail!(
                "no user name for uid {}; set PGUSER or pass -U",
                libc::geteuid()
            );
        }
        Ok(std::ffi::CStr::from_ptr((*p).pw_name)
            .to_string_lossy()
            .into_owned())
    }
}

fn home() -> Option<PathBuf> {
    crate::env::var("HOME").map(PathBuf::from)
}

/// The service's settings: from `PGSERVICEFILE` (else `~/.pg_service.conf`), else from
/// `PGSYSCONFDIR/pg_service.conf`.
fn service_entry(name: &str) -> Result<Vec<(String, String)>> {
    let user_file = crate::env::var("PGSERVICEFILE")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".pg_service.conf")));
    let sys_file =
        crate::env::var("PGSYSCONFDIR").map(|d| PathBuf::from(d).join("pg_service.conf"));
    let mut looked = vec![];
    for f in [user_file, sys_file].into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        looked.push(f.display().to_string());
        if let Some(e) = service_in(&text, name, &f)? {
            return Ok(e);
        }
    }
    bail!(
        "definition of service \"{name}\" not found{}; fix service or PGSERVICE, or PGSERVICEFILE",
        if looked.is_empty() {
            " (no service file: PGSERVICEFILE, ~/.pg_service.conf, PGSYSCONFDIR/pg_service.conf)"
                .to_string()
        } else {
            format!(" in {}", looked.join(", "))
        }
    )
}

fn service_in(text: &str, name: &str, file: &Path) -> Result<Option<Vec<(String, String)>>> {
    let mut in_it = false;
    let mut found = None::<Vec<(String, String)>>;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(sec) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if in_it {
                break;
            }
            in_it = sec == name;
            if in_it {
                found = Some(vec![]);
            }
            continue;
        }
        if !in_it {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            bail!(
                "syntax error in service file \"{}\", line {}",
                file.display(),
                n + 1
            );
        };
        let k = k.trim().to_string();
        if k == "service" {
            bail!(
                "nested \"service\" specifications not supported in service file \"{}\", line {}",
                file.display(),
                n + 1
            );
        }
        if !KEYWORDS.iter().any(|(kw, _)| *kw == k) {
            bail!(
                "invalid connection option \"{k}\" in service file \"{}\", line {}",
                file.display(),
                n + 1
            );
        }
        if let Some(f) = found.as_mut() {
            f.push((k, v.trim().to_string()));
        }
    }
    Ok(found)
}

/// The password `.pgpass` gives for the first host, libpq's way: `passfile`, else `~/.pgpass`;
/// a file group or others can read is ignored with libpq's warning.
fn pgpass(p: &BTreeMap<String, String>) -> Result<Option<(String, PathBuf)>> {
    use std::os::unix::fs::MetadataExt;
    let Some(file) = p
        .get("passfile")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".pgpass")))
    else {
        return Ok(None);
    };
    let Ok(meta) = std::fs::metadata(&file) else {
        return Ok(None);
    };
    if !meta.is_file() {
        eprintln!(
            "WARNING: password file \"{}\" is not a plain file",
            file.display()
        );
        return Ok(None);
    }
    if meta.mode() & 0o077 != 0 {
        eprintln!(
            "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
            file.display()
        );
        return Ok(None);
    }
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("reading the password file {}", file.display()))?;
    let host = p
        .get("host")
        .or(p.get("hostaddr"))
        .map(String::as_str)
        .unwrap_or("");
    let host = host.split(',').next().unwrap_or("");
    let host = if host.is_empty() || host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let port = p["port"].split(',').next().unwrap_or("5432");
    let want = [host, port, p["dbname"].as_str(), p["user"].as_str()];
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = pgpass_fields(line);
        if fields.len() < 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return Ok(Some((fields[4..].join(":"), file)));
        }
    }
    Ok(None)
}

/// A `.pgpass` line's fields: `:` separates, `\` escapes `:` and `\`.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut it = line.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                if let Some(n) = it.next() {
                    out.last_mut().unwrap().push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pairs_and_urls_as_libpq_does() {
        let p = parse("host=db.example port = 6432 dbname='my db' password='it\\'s'").unwrap();
        assert_eq!(p["host"], "db.example");
        assert_eq!(p["port"], "6432");
        assert_eq!(p["dbname"], "my db");
        assert_eq!(p["password"], "it's");
        let u = parse("postgresql://al%40ice:s%3Acret@h1:5433,[::1]:5434/app?sslmode=verify-full&target_session_attrs=read-write").unwrap();
        assert_eq!(u["user"], "al@ice");
        assert_eq!(u["password"], "s:cret");
        assert_eq!(u["host"], "h1,::1");
        assert_eq!(u["port"], "5433,5434");
        assert_eq!(u["dbname"], "app");
        assert_eq!(u["sslmode"], "verify-full");
        assert_eq!(u["target_session_attrs"], "read-write");
        let s = parse("postgres://%2Fvar%2Frun%2Fpostgresql/x").unwrap();
        assert_eq!(s["host"], "/var/run/postgresql");
        for bad in ["host", "host='x", "nosuch=1", "postgres://h/?sslmode"] {
            let e = format!("{:#}", parse(bad).unwrap_err());
            assert!(!e.contains('\n'), "{e}");
        }
        let e = format!("{:#}", parse("password=hunter2 bogus").unwrap_err());
        assert!(e.contains("bogus") && !e.contains("hunter2"), "{e}");
    }

    #[test]
    fn pgpass_fields_and_escapes() {
        assert_eq!(
            pgpass_fields("h\\:x:5432:*:u:p:with:colons"),
            vec!["h:x", "5432", "*", "u", "p:with:colons"]
        );
    }

    #[test]
    fn service_sections() {
        let text = "# c\n[a]\nport=1\n[b]\nhost=x\nport = 2\n";
        let f = Path::new("f");
        assert_eq!(
            service_in(text, "b", f).unwrap().unwrap(),
            vec![("host".into(), "x".into()), ("port".into(), "2".into())]
        );
        assert!(service_in(text, "c", f).unwrap().is_none());
        assert!(service_in("[a]\nnosuch=1\n", "a", f).is_err());
    }
}
