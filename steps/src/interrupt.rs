//! Interruption: SIGINT/SIGTERM set one flag; long steps poll it, stop, keep what they sampled,
//! and mark the run interrupted. Child processes started through `crate::proc` are killed on it,
//! and a step blocked in a query is woken by `run_handlers` (each connection registers its
//! cancel). Nothing here exits the process: the error unwinds through every `Drop`, and only the
//! binary maps it to exit code 130. A leaf: imports nothing from the crate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

type Handler = Box<dyn Fn() + Send>;

/// What to do when a step is interrupted while blocked (cancel a connection's running query).
static HANDLERS: Mutex<Vec<Handler>> = Mutex::new(Vec::new());

/// Registers `f` to run when a blocked step is interrupted (`run_handlers`).
pub(crate) fn on_interrupt(f: impl Fn() + Send + 'static) {
    HANDLERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Box::new(f));
}

/// Runs every registered handler once, and forgets them.
pub(crate) fn run_handlers() {
    let handlers = std::mem::take(&mut *HANDLERS.lock().unwrap_or_else(|p| p.into_inner()));
    for h in handlers {
        h();
    }
}

/// Set by SIGINT/SIGTERM: long steps stop, write what they have, and mark the run interrupted.
pub(crate) static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the Ctrl-C handler (once per process).
pub(crate) fn catch_interrupts() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
