//! A TLS-only PostgreSQL 18 that hotlab does not treat as its own: the server docs/staging-server.md, "Your
//! staging server" recipe runs against, and the tests' foreign server. Built from the
//! TLS-capable binaries (`provision::tls_binaries`) in `$HOTLAB_STAGING_DIR` (default
//! `$HOTLAB_HOME/staging`), as an unprivileged OS user, listening on 127.0.0.1 only.
//!
//! What it sets up once: a CA and a server certificate for `localhost` (openssl, 30 days) and a
//! client certificate for the role `hotlab_cert`; `ssl = on`; `pg_hba.conf` with `hostssl` rules
//! only (scram-sha-256, or `cert` for `hotlab_cert`) and the superuser on the private socket; the
//! role `hotlab_runner` (not a superuser) with what `data/sql/grants.sql` grants; a service file
//! and a `.pgpass` (0600) for it. `server staging env` prints the variables that point libpq (and
//! hotlab) at it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::embedded::{claim_dir, Embedded, SUPERUSER};
use super::provision::tls_binaries;
use crate::ctx::Ctx;
use crate::env;

/// The role a sweep runs as: CREATEDB, pg_monitor, pg_checkpoint; not a superuser.
pub(crate) const RUNNER: &str = "hotlab_runner";
/// A role that logs in with a client certificate only.
pub(crate) const CERT_USER: &str = "hotlab_cert";
pub(crate) const SERVICE: &str = "hotlab-staging";
const CONFIGURED: &str = "staging.configured";
/// What a superuser runs once for a role that is not one (docs/staging-server.md).
pub(crate) const GRANTS_SQL: &str = include_str!("../../../data/sql/grants.sql");

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub(crate) action: Action,
}

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Action {
    /// Create (first time) and start the TLS-only staging server
    Start,
    /// Stop it
    Stop,
    /// Print the shell variables that point libpq and hotlab at it (`eval "$(…)"`)
    Env,
}

pub(crate) fn dir(ctx: &Ctx) -> PathBuf {
    env::var(env::STAGING_DIR)
        .map(PathBuf::from)
        .unwrap_or_else(|| ctx.home.join("staging"))
}

pub(crate) fn run(ctx: &Ctx, args: &Args) -> Result<()> {
    match args.action {
        Action::Start => {
            let e = start(ctx)?;
            eprintln!(
                "hotlab: staging server (TLS only) on localhost:{}; `eval \"$(cargo xtask server staging env)\"` points libpq and hotlab at it",
                e.state()?.port
            );
            Ok(())
        }
        Action::Stop => {
            let d = dir(ctx);
            if !d.join(CONFIGURED).exists() {
                bail!("no staging server in {}; nothing to stop", d.display());
            }
            Embedded::open_at(d, tls_binaries(&ctx.home)?)?.stop()
        }
        Action::Env => {
            let d = dir(ctx);
            if !d.join(CONFIGURED).exists() {
                bail!(
                    "no staging server in {}; run `cargo xtask server staging start` first",
                    d.display()
                );
            }
            for (k, v) in env_vars(ctx)? {
                println!("export {k}='{v}'");
            }
            Ok(())
        }
    }
}

/// The variables of `server staging env`.
pub(crate) fn env_vars(ctx: &Ctx) -> Result<Vec<(String, String)>> {
    let d = dir(ctx);
    Ok(vec![
        (crate::env::BACKEND.into(), "external".into()),
        (
            "PGSERVICEFILE".into(),
            d.join("pg_service.conf").display().to_string(),
        ),
        ("PGSERVICE".into(), SERVICE.into()),
        ("PGPASSFILE".into(), d.join("pgpass").display().to_string()),
        (
            env::PG_BIN.into(),
            tls_binaries(&ctx.home)?.display().to_string(),
        ),
    ])
}

/// Creates the staging server once, and starts it.
pub(crate) fn start(ctx: &Ctx) -> Result<Embedded> {
    let d = dir(ctx);
    claim_dir(&d)?;
    let e = Embedded::open_at(d.clone(), tls_binaries(&ctx.home)?)?;
    if !d.join(CONFIGURED).exists() {
        let tls = d.join("tls");
        certificates(&tls)?;
        for (f, mode) in [
            ("server.crt", 0o644),
            ("server.key", 0o600),
            ("ca.crt", 0o644),
        ] {
            e.write_data_file(f, &fs::read(tls.join(f))?, mode)?;
        }
        let conf = fs::read_to_string(e.data_dir().join("postgresql.conf"))?;
        e.write_data_file(
            "postgresql.conf",
            format!(
                "{conf}\n# hotlab staging: TLS only\nssl = on\nssl_cert_file = 'server.crt'\n\
                 ssl_key_file = 'server.key'\nssl_ca_file = 'ca.crt'\n"
            )
            .as_bytes(),
            0o600,
        )?;
        e.write_data_file(
            "pg_hba.conf",
            format!(
                "# hotlab staging: the superuser on the private socket, everyone else over TLS\n\
                 local   all all                 trust\n\
                 hostssl all {CERT_USER} 127.0.0.1/32 cert\n\
                 hostssl all all 127.0.0.1/32    scram-sha-256\n"
            )
            .as_bytes(),
            0o600,
        )?;
    }
    e.ensure_started()?;
    if !d.join(CONFIGURED).exists() {
        roles(&e, &d)?;
        fs::write(d.join(CONFIGURED), "")?;
    }
    client_files(&e, &d)?;
    Ok(e)
}

fn openssl(args: &[&str], cwd: &Path) -> Result<()> {
    let sh = crate::proc::shell()?;
    sh.change_dir(cwd);
    xshell::cmd!(sh, "openssl {args...}")
        .quiet()
        .ignore_stderr()
        .run()
        .with_context(|| format!("openssl {} failed (is openssl installed?)", args[0]))
}

/// A CA, a server certificate for `localhost` and a client certificate for `hotlab_cert`, all
/// ECDSA P-256, valid 30 days, in `tls`.
pub(crate) fn certificates(tls: &Path) -> Result<()> {
    fs::create_dir_all(tls)?;
    make_ca(tls, "ca", "hotlab staging CA")?;
    for (name, cn, ext) in [
        (
            "server",
            "localhost",
            "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
        ),
        ("client", CERT_USER, "extendedKeyUsage=clientAuth\n"),
    ] {
        let extfile = format!("{name}.ext");
        fs::write(
            tls.join(&extfile),
            format!("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n{ext}"),
        )?;
        let (key, csr, crt) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.crt"),
        );
        new_key(tls, &key, &csr, cn, &[])?;
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "30",
                "-out",
                &crt,
                "-extfile",
                &extfile,
            ],
            tls,
        )?;
    }
    Ok(())
}

/// A self-signed CA `name`.crt/.key in `dir`.
pub fn make_ca(dir: &Path, name: &str, cn: &str) -> Result<()> {
    fs::create_dir_all(dir)?;
    new_key(
        dir,
        &format!("{name}.key"),
        &format!("{name}.crt"),
        cn,
        &[
            "-x509",
            "-days",
            "30",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    )
}

/// `openssl req`: a new P-256 key (0600) and, for `cn`, a signing request or (with `-x509` in
/// `extra`) a self-signed certificate.
fn new_key(dir: &Path, key: &str, out: &str, cn: &str, extra: &[&str]) -> Result<()> {
    let subj = format!("/CN={cn}");
    let mut args = vec![
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        out,
        "-subj",
        &subj,
    ];
    args.extend_from_slice(extra);
    openssl(&args, dir)?;
    fs::set_permissions(dir.join(key), fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// The runner role (a password in `.pgpass` and the service file) and the certificate role,
/// then `data/sql/grants.sql` as the superuser, through the TLS-capable psql.
fn roles(e: &Embedded, d: &Path) -> Result<()> {
    let pw = super::embedded::random_password()?;
    let verifier = postgres_protocol::password::scram_sha_256(pw.as_bytes());
    let mut c = e
        .socket_config()?
        .connect(postgres::NoTls)
        .context("connecting to the staging server over its socket")?;
    c.batch_execute(&format!(
        "SET pg_stat_statements.track = 'none'; SET log_statement = 'none'; \
         DROP ROLE IF EXISTS {RUNNER}; CREATE ROLE {RUNNER} LOGIN PASSWORD '{}'; \
         DROP ROLE IF EXISTS {CERT_USER}; CREATE ROLE {CERT_USER} LOGIN; GRANT pg_monitor TO {CERT_USER}",
        verifier.replace('\'', "''")
    ))?;
    let port = e.state()?.port;
    let sh = crate::proc::shell()?;
    let psql = e.bin_dir.join("psql");
    let sock = e.socket_dir();
    let (port_s, role) = (port.to_string(), format!("role={RUNNER}"));
    xshell::cmd!(
        sh,
        "{psql} -X -q -h {sock} -p {port_s} -U {SUPERUSER} -d postgres -v {role} -f -"
    )
    .stdin(GRANTS_SQL)
    .quiet()
    .run()
    .context("running data/sql/grants.sql on the staging server")?;
    super::embedded::write_private(&d.join("runner.password"), &pw)?;
    Ok(())
}

/// The service file and `.pgpass` for the runner, at the port the server has now.
fn client_files(e: &Embedded, d: &Path) -> Result<()> {
    let port = e.state()?.port;
    let pw = fs::read_to_string(d.join("runner.password"))?;
    let tls = d.join("tls");
    fs::write(
        d.join("pg_service.conf"),
        format!(
            "# hotlab's staging server (TLS only)\n[{SERVICE}]\nhost=localhost\nport={port}\n\
             user={RUNNER}\ndbname=postgres\nsslmode=verify-full\nsslrootcert={}\n",
            tls.join("ca.crt").display()
        ),
    )?;
    super::embedded::write_private(
        &d.join("pgpass"),
        &format!("localhost:{port}:*:{RUNNER}:{}\n", pw.trim()),
    )?;
    Ok(())
}
