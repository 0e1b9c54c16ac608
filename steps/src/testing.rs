//! Helpers shared by the integration tests of `steps` and `xtask`: a private data directory
//! holding the repository's studies, the test cluster (`$HOTLAB_HOME/test-cluster`, apart from
//! the user's own), and a lock so that measurements in one test binary run one at a time.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::ctx::BackendKind;
use crate::ctx::{default_home, project_root, Ctx};

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the measurement lock for the life of the guard.
/// Asserts that a command succeeded, showing its stderr when it did not; returns the stderr.
pub fn succeeds(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn test_cluster() -> PathBuf {
    default_home().join("test-cluster")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        } else if p.is_dir() {
            // A pgbench-script study's files sit in a directory beside it.
            copy_dir(&p, &to.join(p.file_name().unwrap()));
        }
    }
}

/// The PID of the postmaster of the cluster in `cluster_dir` (from its postmaster.pid).
pub fn postmaster_pid(cluster_dir: &Path) -> i32 {
    std::fs::read_to_string(cluster_dir.join("data/postmaster.pid"))
        .expect("a running cluster has a postmaster.pid")
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .expect("postmaster.pid starts with the PID")
}

/// Removes the data directories of test processes that are gone (`hotlab-test-<name>-<pid>`
/// in the temporary directory), once per process, so that `server gc` can drop the databases
/// their runs kept.
fn remove_stale_data_dirs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(rest) = name.strip_prefix("hotlab-test-") else {
                continue;
            };
            let Some(pid) = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}

/// A fresh data directory (studies and reference copied from the repository, runs empty).
pub(crate) fn data_dir(name: &str) -> PathBuf {
    remove_stale_data_dirs();
    let d = std::env::temp_dir().join(format!("hotlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let repo = project_root().join("data");
    copy_dir(&repo.join("studies"), &d.join("studies"));
    copy_dir(&repo.join("reference"), &d.join("reference"));
    std::fs::create_dir_all(d.join("runs")).unwrap();
    d
}

/// A context on the test cluster and a fresh data directory.
pub fn ctx(name: &str) -> Ctx {
    Ctx {
        data_dir: data_dir(name),
        home: default_home(),
        cluster_dir: test_cluster(),
        backend: BackendKind::Embedded,
        wait: true,
        // A test arm stopped half-way (built, never run) does not keep the server from the next
        // test: the lease lapses as soon as no step runs. Tests of the lease set their own.
        lease_idle_s: 0,
    }
}

/// The environment that gives a child `cargo xtask` the same context.
pub fn env_of(ctx: &Ctx) -> Vec<(String, String)> {
    vec![
        (
            crate::env::DATA_DIR.into(),
            ctx.data_dir.display().to_string(),
        ),
        (crate::env::HOME.into(), ctx.home.display().to_string()),
        (
            crate::env::CLUSTER.into(),
            ctx.cluster_dir.display().to_string(),
        ),
        (crate::env::BACKEND.into(), "embedded".into()),
        (
            crate::env::LEASE_IDLE_S.into(),
            ctx.lease_idle_s.to_string(),
        ),
        // Tests of one binary run side by side: their arms queue for the server (one workload
        // per server) instead of failing. The tests of the refusal set HOTLAB_WAIT=0.
        (crate::env::WAIT.into(), "1".into()),
    ]
}

/// One arm's whole cold cycle: the justfile's own `arm` recipe (reset-cold, build,
/// apply-fillfactor, reset-cold, a `pre` snapshot, run, vacuum-timing), run by `just` with the
/// xtask binary this `cargo test` built (`HOTLAB_XTASK`), so the tests exercise the recipe users
/// run rather than a copy of it.
/// `keep_db` keeps the arm's database afterwards (vacuum-timing drops it otherwise).
pub fn arm_cycle(ctx: &Ctx, dir: &Path, keep_db: bool) -> anyhow::Result<()> {
    let xtask = xtask_binary()?;
    let sh = crate::proc::shell()?;
    sh.change_dir(project_root());
    if xshell::cmd!(sh, "just --version").quiet().read().is_err() {
        anyhow::bail!(
            "the tests run `just arm`, and just is not on PATH; install it: cargo install just"
        );
    }
    xshell::cmd!(sh, "just arm {dir}")
        .envs(env_of(ctx))
        .env(crate::env::XTASK, &xtask)
        .env(crate::env::KEEP_DB, if keep_db { "1" } else { "0" })
        .quiet()
        .run()
        .map_err(|e| anyhow::anyhow!("just arm {}: {e}", dir.display()))
}

/// The justfile's `together` recipe (the arms side by side on one server) with this build's
/// xtask binary: `just together STUDY SIZE --arms ARMS`.
pub fn together(ctx: &Ctx, study: &str, size: &str, arms: &str) -> anyhow::Result<()> {
    let xtask = xtask_binary()?;
    let sh = crate::proc::shell()?;
    sh.change_dir(project_root());
    xshell::cmd!(sh, "just together {study} {size} --arms {arms}")
        .envs(env_of(ctx))
        .env(crate::env::XTASK, &xtask)
        .quiet()
        .ignore_stdout()
        .run()
        .map_err(|e| anyhow::anyhow!("just together {study} {size}: {e}"))
}

/// The xtask binary of this build profile (`target/<profile>/xtask`, beside the test binary's
/// `deps/`), refused when missing or older than the test binary.
pub fn xtask_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .ok_or_else(|| anyhow::anyhow!("no target directory above {}", exe.display()))?;
    let bin = profile_dir.join("xtask");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (modified(&bin), modified(&exe)) {
        (None, _) => anyhow::bail!(
            "{} is missing; run the workspace's tests (`cargo test`) or `cargo build -p xtask` first",
            bin.display()
        ),
        (Some(b), Some(e)) if b + std::time::Duration::from_secs(600) < e => anyhow::bail!(
            "{} is older than this test binary; run `cargo build -p xtask` (or the whole `cargo test`)",
            bin.display()
        ),
        _ => Ok(bin),
    }
}
