//! Helpers shared by the integration tests of `steps` and `xtask`: a private data directory
//! holding the repository's studies, the test cluster (`$HOTLAB_HOME/test-cluster`, apart from
//! the user's own), and a lock so that measurements in one test binary run one at a time.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::ctx::{default_home, project_root, Ctx};
use crate::server::BackendKind;

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the measurement lock for the life of the guard.
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
        }
    }
}

/// A fresh data directory (studies and reference copied from the repository, runs empty).
pub fn data_dir(name: &str) -> PathBuf {
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
    }
}

/// The environment that gives a child `cargo xtask` the same context.
pub fn env_of(ctx: &Ctx) -> Vec<(String, String)> {
    vec![
        ("HOTLAB_DATA_DIR".into(), ctx.data_dir.display().to_string()),
        ("HOTLAB_HOME".into(), ctx.home.display().to_string()),
        (
            "HOTLAB_CLUSTER".into(),
            ctx.cluster_dir.display().to_string(),
        ),
        ("HOTLAB_BACKEND".into(), "embedded".into()),
    ]
}

/// One arm's whole cold cycle, as `just arm` runs it: reset-cold, build, apply-fillfactor,
/// reset-cold, a `pre` snapshot, run, vacuum-timing.
pub fn arm_cycle(ctx: &Ctx, dir: &Path) -> anyhow::Result<()> {
    use crate::{apply_fillfactor, build, reset_cold, run, snapshot, vacuum_timing};
    let run = dir.to_path_buf();
    reset_cold::run(
        ctx,
        &reset_cold::Args {
            run: Some(run.clone()),
        },
    )?;
    build::run(
        ctx,
        &build::Args {
            run: run.clone(),
            no_template: false,
        },
    )?;
    apply_fillfactor::run(ctx, &apply_fillfactor::Args { run: run.clone() })?;
    reset_cold::run(
        ctx,
        &reset_cold::Args {
            run: Some(run.clone()),
        },
    )?;
    snapshot::run(
        ctx,
        &snapshot::Args {
            run: run.clone(),
            phase: "pre".into(),
        },
    )?;
    run::run(
        ctx,
        &run::Args {
            run: run.clone(),
            ..Default::default()
        },
    )?;
    vacuum_timing::run(ctx, &vacuum_timing::Args { run })
}
