//! What /proc says about a local server's processes: one process's name, parent and CPU ticks,
//! and the children of a process. Used to read the server's CPU (`snapshot`) and to move it into
//! a memory cgroup (`memlimit`). Reads only /proc.

/// One process, from /proc/<pid>/stat.
pub(crate) struct Stat {
    pub(crate) comm: String,
    pub(crate) ppid: i32,
    /// utime + stime + cutime + cstime, in clock ticks.
    pub(crate) cpu_ticks: u64,
}

pub(crate) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm is in parentheses and may hold spaces: split after the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let f: Vec<&str> = text.get(close + 2..)?.split(' ').collect();
    // Fields after comm: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
    let num = |i: usize| f.get(i)?.parse::<u64>().ok();
    Some(Stat {
        comm: text[open + 1..close].to_string(),
        ppid: f.get(1)?.parse().ok()?,
        cpu_ticks: num(11)? + num(12)? + num(13)? + num(14)?,
    })
}

/// The live children of `parent`, with their stat.
pub(crate) fn children(parent: i32) -> Vec<(i32, Stat)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .filter(|(_, s)| s.ppid == parent)
        .collect()
}

/// Clock ticks per second.
pub(crate) fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64).max(1.0)
}
