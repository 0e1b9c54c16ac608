//! Confines a server on this machine to a memory size, its page cache included, with a cgroup
//! (v1 `memory` controller or v2 `memory.max`), so that reads past shared buffers are real reads
//! as on a machine with that much RAM. The postmaster and every child it has are moved into a
//! new cgroup `hotlab-<postmaster pid>` beside their own, and moved back and the cgroup removed
//! when the confinement ends (also on an error or Ctrl-C, through `Drop`); a cgroup of ours left
//! by a killed hotlab (its name, and no process in it) is removed the next time. Nothing else is
//! created, changed or removed. Where the platform does not allow it (not root, no memory
//! controller, v2 without it delegated), `confine` says why and changes nothing.

use std::fs;
use std::path::{Path, PathBuf};

/// An applied limit; released on drop.
pub(crate) struct Confinement {
    dir: PathBuf,
    home_procs: PathBuf,
    pub(crate) version: u8,
}

/// The memory controller's mount and the version, if this kernel has one.
fn controller() -> Option<(PathBuf, u8)> {
    let v1 = Path::new("/sys/fs/cgroup/memory");
    if v1.join("memory.limit_in_bytes").exists() {
        return Some((v1.to_path_buf(), 1));
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let ctl = fs::read_to_string(v2.join("cgroup.controllers")).ok()?;
    ctl.split_whitespace()
        .any(|c| c == "memory")
        .then(|| (v2.to_path_buf(), 2))
}

/// The cgroup (relative path) of `pid` under the memory controller of `version`.
fn cgroup_of(pid: i32, version: u8) -> Option<String> {
    let text = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        let ours = match version {
            1 => ctl.split(',').any(|c| c == "memory"),
            _ => ctl.is_empty(),
        };
        ours.then(|| path.trim_start_matches('/').to_string())
    })
}

/// The postmaster and its children.
fn server_pids(postmaster: i32) -> Vec<i32> {
    std::iter::once(postmaster)
        .chain(
            super::procfs::children(postmaster)
                .into_iter()
                .map(|(pid, _)| pid),
        )
        .collect()
}

fn move_pids(procs: &Path, pids: &[i32]) -> Result<(), String> {
    for pid in pids {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if let Err(e) = fs::write(procs, pid.to_string()) {
            // A process that exited in between cannot be moved; anything else is an error.
            if Path::new(&format!("/proc/{pid}")).exists() {
                return Err(format!("moving pid {pid} into {}: {e}", procs.display()));
            }
        }
    }
    Ok(())
}

/// Removes cgroups of ours (named `hotlab-<pid>`) beside `home` that hold no process: left by a
/// hotlab that was killed before it could release them.
fn remove_stale(home: &Path) {
    for e in fs::read_dir(home).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("hotlab-") || !e.path().is_dir() {
            continue;
        }
        let empty = fs::read_to_string(e.path().join("cgroup.procs"))
            .map(|t| t.trim().is_empty())
            .unwrap_or(false);
        if empty {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// Moves the server whose postmaster is `postmaster` into a new cgroup limited to `bytes`.
/// `Err` says why it was not applied; nothing was changed then.
pub(crate) fn confine(postmaster: i32, bytes: u64) -> Result<Confinement, String> {
    if !crate::ctx::is_root() {
        return Err("hotlab does not run as root, and a memory cgroup needs root".into());
    }
    let Some((mount, version)) = controller() else {
        return Err("this kernel has no cgroup memory controller mounted".into());
    };
    let mut rel = cgroup_of(postmaster, version)
        .ok_or_else(|| format!("the server (pid {postmaster}) has no memory cgroup"))?;
    // A `hotlab-*` cgroup the server is still in was left by a run that was killed (one
    // workload per server: no other run confines it now). Move the server back out and remove
    // it, so the new cgroup is made beside it, never inside.
    loop {
        let (parent, last) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
        if !last.starts_with("hotlab-") {
            break;
        }
        let (stale, parent) = (mount.join(&rel), parent.to_string());
        move_pids(
            &mount.join(&parent).join("cgroup.procs"),
            &server_pids(postmaster),
        )?;
        for _ in 0..50 {
            let procs = fs::read_to_string(stale.join("cgroup.procs")).unwrap_or_default();
            let left: Vec<i32> = procs
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            let _ = move_pids(&mount.join(&parent).join("cgroup.procs"), &left);
            if fs::remove_dir(&stale).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!(
            "hotlab: the server was left in {} by a killed run; moved out and removed",
            stale.display()
        );
        rel = parent;
    }
    let home = mount.join(&rel);
    if version == 2 {
        let delegated = fs::read_to_string(home.join("cgroup.subtree_control")).unwrap_or_default();
        if !delegated.split_whitespace().any(|c| c == "memory") {
            return Err(format!(
                "the memory controller is not delegated to {} (cgroup v2)",
                home.display()
            ));
        }
    }
    remove_stale(&home);
    let dir = home.join(format!("hotlab-{postmaster}"));
    fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let c = Confinement {
        dir: dir.clone(),
        home_procs: home.join("cgroup.procs"),
        version,
    };
    let limit = match version {
        1 => "memory.limit_in_bytes",
        _ => "memory.max",
    };
    fs::write(dir.join(limit), bytes.to_string())
        .map_err(|e| format!("setting {}: {e}", dir.join(limit).display()))?;
    move_pids(&dir.join("cgroup.procs"), &server_pids(postmaster))?;
    Ok(c)
}

impl Confinement {
    /// The cgroup's own view: bytes charged now and at most (page cache included).
    pub(crate) fn usage(&self) -> (Option<u64>, Option<u64>) {
        let read = |f: &str| {
            fs::read_to_string(self.dir.join(f))
                .ok()
                .and_then(|t| t.trim().parse().ok())
        };
        match self.version {
            1 => (
                read("memory.usage_in_bytes"),
                read("memory.max_usage_in_bytes"),
            ),
            _ => (read("memory.current"), read("memory.peak")),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        // Every process back where it came from, then the empty cgroup removed; again if the
        // postmaster forked a child in between.
        for _ in 0..50 {
            let pids: Vec<i32> = fs::read_to_string(self.dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .collect();
            if let Err(e) = move_pids(&self.home_procs, &pids) {
                eprintln!(
                    "hotlab: warning: {e}; the cgroup {} is left",
                    self.dir.display()
                );
                return;
            }
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!(
            "hotlab: warning: could not remove the cgroup {}; the next confinement removes it",
            self.dir.display()
        );
    }
}
