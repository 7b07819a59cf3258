//! Termination signals (SIGTERM, SIGHUP, SIGINT, SIGQUIT) turned into an event a poll loop can
//! wait on: while a `Trap` lives, each signal writes its number to a self-pipe instead of ending
//! the process, so cmdguard can restore the terminal, withdraw a queued request, record the
//! decision and exit 77. Dropping the trap restores the previous handlers.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

// Write end of the self-pipe that the handler uses.
static PIPE: AtomicI32 = AtomicI32::new(-1);
const SIGNALS: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; the buffer is one valid byte.
        unsafe {
            libc::write(fd, (&raw const b).cast(), 1);
        }
    }
}

pub struct Trap {
    pipe: [libc::c_int; 2],
    old: Vec<(libc::c_int, libc::sigaction)>,
}

/// What a wait saw.
pub enum Woke {
    /// The other descriptor is readable (or hung up).
    Ready,
    Signal(i32),
    Timeout,
}

impl Trap {
    pub fn install() -> std::io::Result<Trap> {
        let mut pipe = [-1; 2];
        // SAFETY: pipe points at two ints.
        if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        PIPE.store(pipe[1], Ordering::SeqCst);
        let mut old = Vec::new();
        for sig in SIGNALS {
            // SAFETY: sigaction structs are plain data; the handler only writes to a pipe.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                let mut prev: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut prev) == 0 {
                    old.push((sig, prev));
                }
            }
        }
        Ok(Trap { pipe, old })
    }

    /// Waits up to `timeout` for a signal, or for `fd` (if given) to become readable.
    pub fn wait(&self, fd: Option<i32>, timeout: Duration) -> Woke {
        let mut fds = [
            libc::pollfd { fd: self.pipe[0], events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: fd.unwrap_or(-1), events: libc::POLLIN, revents: 0 },
        ];
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: fds is a valid array of two pollfds (a negative fd is ignored by poll).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if n < 0 || fds[0].revents & libc::POLLIN != 0 {
            let mut b = 0u8;
            // SAFETY: reading one byte into a valid buffer; the pipe is non-blocking.
            let got = unsafe { libc::read(self.pipe[0], (&raw mut b).cast(), 1) };
            // poll interrupted by a signal whose byte is not there yet: report on the next round.
            return if got == 1 { Woke::Signal(i32::from(b)) } else { Woke::Timeout };
        }
        if n > 0 && fds[1].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            return Woke::Ready;
        }
        Woke::Timeout
    }
}

impl Drop for Trap {
    fn drop(&mut self) {
        for (sig, old) in &self.old {
            // SAFETY: restoring the action saved at install.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
        PIPE.store(-1, Ordering::SeqCst);
        // SAFETY: closing the two pipe ends this struct owns.
        unsafe {
            libc::close(self.pipe[0]);
            libc::close(self.pipe[1]);
        }
    }
}

/// A signal's name, for the agent and the audit log.
pub fn describe(sig: i32) -> String {
    match sig {
        libc::SIGTERM => "stopped by SIGTERM".into(),
        libc::SIGHUP => "the terminal hung up (SIGHUP)".into(),
        libc::SIGINT => "interrupted (SIGINT)".into(),
        libc::SIGQUIT => "stopped by SIGQUIT".into(),
        n => format!("stopped by signal {n}"),
    }
}
