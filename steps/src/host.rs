//! Facts about the machine and the checkout, recorded in every meta.json: CPU, cores, memory,
//! kernel; hotlab's version and git revision. Reads /proc and git; writes nothing.

use std::fs;

use serde::{Deserialize, Serialize};

use crate::ctx::project_root;

/// What the host is (meta.json's `host`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HostInfo {
    pub(crate) hostname: Option<String>,
    pub(crate) cpu: Option<String>,
    pub(crate) cores: usize,
    pub(crate) memory_bytes: Option<u64>,
    pub(crate) kernel: Option<String>,
}

/// hotlab's version and git revision (meta.json's `hotlab`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HotlabInfo {
    pub(crate) version: String,
    pub(crate) git: Option<String>,
}

/// What the host is: CPU, cores, memory, kernel.
pub(crate) fn host_info() -> HostInfo {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mem_kb: Option<u64> = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .ok();
    let hostname = fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok();
    HostInfo {
        hostname,
        cpu,
        cores,
        memory_bytes: mem_kb.map(|k| k * 1024),
        kernel,
    }
}

/// hotlab's version and git revision.
pub(crate) fn hotlab_info() -> HotlabInfo {
    let rev = crate::proc::shell().ok().and_then(|sh| {
        sh.change_dir(project_root());
        xshell::cmd!(sh, "git rev-parse --short=12 HEAD")
            .quiet()
            .ignore_stderr()
            .read()
            .ok()
    });
    HotlabInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        git: rev,
    }
}
