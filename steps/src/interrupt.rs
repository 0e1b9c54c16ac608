//! Interruption: SIGINT/SIGTERM set one flag; long steps poll it, stop, keep what they sampled,
//! and mark the run interrupted. Child processes started through `crate::proc` are killed on it.
//! A leaf: imports nothing from the crate.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT/SIGTERM: long steps stop, write what they have, and mark the run interrupted.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the Ctrl-C handler (once per process).
pub fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
