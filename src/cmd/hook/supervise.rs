//! Hook mode fails closed. A hook that prints nothing — because it panicked, aborted, ran out of
//! memory or was killed — is read by every host as "no opinion", and the call runs. So the
//! analysis runs in a forked child, and the parent, which holds the host's blocking answers
//! already rendered, waits for it: unless the child exits 0 within `LIMIT` having written one
//! well-formed answer, the parent writes a blocking answer itself.
//!
//! After the fork the parent allocates nothing: it polls, reads into a buffer sized before the
//! fork, waits and writes bytes it already has, so the memory that killed the child cannot kill
//! the parent. A child about to wait for a human (hook-mode approval through the queue) first
//! says so (`extend`), and the parent then waits that much longer, no more than `MAX_WAIT`. The child's address space is capped (`MEMORY_CAP`), so an analysis that blows
//! up dies on its own allocation failure instead of pushing the machine into swap.

use std::time::{Duration, Instant};

/// How long the analysis may take. Every host's hook timeout we document is longer (30 s in the
/// install snippets of docs/integrations.md and in Cline, more by default; Windsurf documents
/// none), so the block below always reaches the host before the host gives up on the hook and
/// runs the call.
pub const LIMIT: Duration = Duration::from_secs(10);
/// The child's address space. A call is at most 4 MiB and its analysis is bounded; the worst
/// payloads measured need under 100 MiB.
const MEMORY_CAP: u64 = 512 << 20;
/// Longest answer accepted from the child: reasons are cut to about 6 KB before JSON escaping.
const MAX_ANSWER: usize = 64 << 10;
/// Ends every answer the child writes, so a child that dies halfway is told from one that
/// said "no opinion" (an empty answer). JSON text never holds a NUL byte.
const END: &[u8] = b"\0cmdguard answer end\0";
/// Written by the child before anything else when it waits for a human, followed by the wait in
/// seconds as four digits and a NUL (`extend`).
const WAIT: &[u8] = b"\0cmdguard wait ";
const WAIT_LEN: usize = WAIT.len() + 5;
/// The longest wait the parent grants, on top of `LIMIT`.
pub const MAX_WAIT: Duration = Duration::from_secs(600);

/// In the child: the analysis is done and the child now waits up to `wait` for a human, so the
/// parent must wait that much longer before it gives up on the child.
pub fn extend(wait: Duration) {
    let secs = wait.min(MAX_WAIT).as_secs();
    let mut mark = WAIT.to_vec();
    mark.extend_from_slice(format!("{secs:04}\0").as_bytes());
    write_all(1, &mark);
}

/// Why the parent answers instead of the analysis.
#[derive(Debug, Clone, Copy)]
pub enum Failure {
    /// The child could not be started (no pipe, no fork).
    NotStarted,
    /// The child ended by a signal (an abort, running out of memory) or a non-zero status.
    Crashed,
    /// The child took longer than `LIMIT`; it was killed.
    TimedOut,
    /// The child exited 0 but wrote no well-formed answer.
    NoAnswer,
}

const FAILURES: [Failure; 4] = [Failure::NotStarted, Failure::Crashed, Failure::TimedOut, Failure::NoAnswer];

/// The host's blocking answer for one failure, rendered before the fork.
pub struct Fallback {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: u8,
}

/// Runs `analysis` in a child and relays its answer to stdout; if it fails in any way, writes
/// `fallback`'s answer for that failure. Returns the exit status for the host.
/// `deliver` writes the child's well-formed answer (after the child has exited) and gives the
/// exit status.
pub fn run(
    fallback: impl Fn(Failure) -> Fallback,
    analysis: impl FnOnce() -> Vec<u8>,
    deliver: impl FnOnce(&[u8]) -> u8,
) -> u8 {
    let fallbacks = FAILURES.map(&fallback);
    let give_up = |f: Failure| answer(&fallbacks[f as usize]);
    let mut buf = vec![0u8; MAX_ANSWER + END.len()];
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return give_up(Failure::NotStarted);
    }
    let [read_end, write_end] = fds;
    // SAFETY: getpid has no preconditions; a host that ignores SIGCHLD passes that on through
    // exec, and the child would then be reaped unseen (waitpid fails): take the default back.
    let parent = unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::getpid()
    };
    // SAFETY: cmdguard is single-threaded here, so the child may go on running Rust code.
    match unsafe { libc::fork() } {
        -1 => give_up(Failure::NotStarted),
        0 => child(parent, read_end, write_end, analysis),
        pid => {
            // SAFETY: closing our copy of the write end lets the read see end-of-file when the
            // child is done; the call's input belongs to the child alone.
            unsafe {
                libc::close(write_end);
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
                if null >= 0 {
                    libc::dup2(null, 0);
                    libc::close(null);
                }
            }
            let deadline = Instant::now() + LIMIT;
            let outcome = relay(pid, read_end, &mut buf, deadline);
            match outcome {
                Ok(n) => deliver(&buf[..n]),
                Err(f) => give_up(f),
            }
        }
    }
}

/// The child: its stdout becomes the pipe (so a stray print spoils the answer instead of
/// reaching the host), its memory is capped, and it dies with the parent.
fn child(parent: libc::pid_t, read_end: libc::c_int, write_end: libc::c_int, analysis: impl FnOnce() -> Vec<u8>) -> ! {
    // SAFETY: plain descriptor and process-attribute calls on descriptors this process owns.
    unsafe {
        libc::close(read_end);
        if libc::dup2(write_end, 1) != 1 {
            libc::_exit(1);
        }
        libc::close(write_end);
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1); // the parent is already gone: nobody would read the answer
        }
        cap_memory();
    }
    std::panic::set_hook(Box::new(|info| {
        eprintln!("cmdguard: internal error in the hook's analysis: {info}");
        std::process::abort();
    }));
    crash_on_request();
    let mut answer = analysis();
    answer.extend_from_slice(END);
    use std::io::Write as _;
    // Anything printed before (it should be nothing) goes first, so it cannot hide.
    let _ = std::io::stdout().flush();
    let code = if write_all(1, &answer) { 0 } else { 1 };
    // SAFETY: _exit ends the process without running the parent's exit handlers twice.
    unsafe { libc::_exit(code) }
}

/// The failures the tests provoke in the analysis, named by `CMDGUARD_TEST_CRASH`. It is read
/// in release builds too, so the tests exercise the binary users run (`panic = "abort"`); it can
/// only make an answer stricter, since every mode ends in the supervisor's block — except
/// `oom` when the memory cap is missing, which then goes on to the usual answer.
fn crash_on_request() {
    let Some(mode) = std::env::var_os("CMDGUARD_TEST_CRASH") else { return };
    match mode.to_str() {
        Some("panic") => panic!("CMDGUARD_TEST_CRASH=panic"),
        Some("abort") => std::process::abort(),
        Some("oom") => {
            // Address space only, never touched: 64 GiB in 64 MiB steps, far past the cap.
            for _ in 0..1024 {
                std::mem::forget(std::hint::black_box(Vec::<u8>::with_capacity(64 << 20)));
            }
        }
        Some("hang") => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        // Exits 0 having written nothing, or half an answer, or a stray line before the answer.
        // SAFETY: ends the process at once.
        Some("silent") => unsafe { libc::_exit(0) },
        Some("torn") => {
            write_all(1, b"{\"hookSpecificOutput\":{");
            // SAFETY: ends the process at once, as a crash halfway through the write would.
            unsafe { libc::_exit(0) }
        }
        Some("stray") => println!("a stray line"),
        _ => {}
    }
}

/// Lowers the soft address-space limit to `MEMORY_CAP` (never raises it).
unsafe fn cap_memory() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid rlimit to fill and then pass back.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_AS, &mut lim) == 0 && lim.rlim_cur > MEMORY_CAP {
            lim.rlim_cur = MEMORY_CAP.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_AS, &lim);
        }
    }
}

/// Reads the child's answer and waits for it to exit, all by `deadline`. `Ok(n)`: the first
/// `n` bytes of `buf` are the answer to write.
fn relay(pid: libc::pid_t, fd: libc::c_int, buf: &mut [u8], mut deadline: Instant) -> Result<usize, Failure> {
    let mut len = 0;
    let mut extended = false;
    let read = loop {
        let Some(left) = remaining(deadline) else { break Err(Failure::TimedOut) };
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, left) };
        if ready <= 0 {
            continue; // timed out (the deadline check above ends it) or interrupted
        }
        if len == buf.len() {
            break Err(Failure::NoAnswer); // longer than any answer cmdguard writes
        }
        // SAFETY: the range `len..` of `buf` is valid for writing.
        let n = unsafe { libc::read(fd, buf[len..].as_mut_ptr().cast(), buf.len() - len) };
        match n {
            0 => break Ok(()),
            n if n > 0 => {
                len += n as usize;
                if !extended && len >= WAIT_LEN && buf.starts_with(WAIT) {
                    extended = true;
                    deadline = Instant::now() + LIMIT + wait_of(&buf[WAIT.len()..WAIT_LEN]);
                    buf.copy_within(WAIT_LEN..len, 0);
                    len -= WAIT_LEN;
                }
            }
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => break Err(Failure::NoAnswer),
        }
    };
    // SAFETY: the read end is ours and no longer needed.
    unsafe { libc::close(fd) };
    let status = reap(pid, deadline);
    read?;
    match status {
        None => Err(Failure::TimedOut),
        Some(s) if libc::WIFEXITED(s) && libc::WEXITSTATUS(s) == 0 => well_formed(&buf[..len]).ok_or(Failure::NoAnswer),
        Some(_) => Err(Failure::Crashed),
    }
}

/// The wait in an `extend` mark (four digits and a NUL), at most `MAX_WAIT`; zero if malformed.
fn wait_of(digits: &[u8]) -> Duration {
    let mut secs = 0u64;
    for &d in &digits[..4] {
        if !d.is_ascii_digit() {
            return Duration::ZERO;
        }
        secs = secs * 10 + u64::from(d - b'0');
    }
    Duration::from_secs(secs).min(MAX_WAIT)
}

/// Milliseconds left until `deadline` (at least 1), or `None` once it has passed.
fn remaining(deadline: Instant) -> Option<libc::c_int> {
    let left = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
    Some(libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX).max(1))
}

/// The child's exit status, waiting until `deadline`; past it the child is killed and `None`.
/// The wait sleeps on a pidfd, which wakes the moment the child exits (Linux 5.3 and later;
/// elsewhere it checks every millisecond).
fn reap(pid: libc::pid_t, deadline: Instant) -> Option<libc::c_int> {
    // SAFETY: pidfd_open on our own child; a failure (an older kernel) only returns -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
    let mut status = 0;
    let reaped = loop {
        // SAFETY: waiting on our own child.
        let got = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if got == pid {
            break Some(status);
        }
        if got == -1 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break Some(-1); // cannot happen for our own child; not a success either
        }
        let Some(left) = remaining(deadline) else {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                while libc::waitpid(pid, &mut status, 0) == -1
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {}
            }
            break None;
        };
        if pidfd >= 0 {
            let mut pfd = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, left) };
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    if pidfd >= 0 {
        // SAFETY: our own descriptor.
        unsafe { libc::close(pidfd) };
    }
    reaped
}

/// The answer in `bytes` if it is one cmdguard writes: `END` after nothing (no opinion) or one
/// JSON object on one line.
fn well_formed(bytes: &[u8]) -> Option<usize> {
    let body = bytes.strip_suffix(END)?;
    let one_object = body.first() == Some(&b'{')
        && body.ends_with(b"}\n")
        && memchr::memchr(b'\n', body) == Some(body.len() - 1)
        && !body.contains(&0);
    (body.is_empty() || one_object).then_some(body.len())
}

/// Writes a fallback answer; returns its exit status.
fn answer(f: &Fallback) -> u8 {
    write_all(2, &f.stderr);
    write_all(1, &f.stdout);
    f.code
}

/// Writes all of `bytes` to `fd` (1 or 2), as the answers are written.
pub fn write_out(fd: libc::c_int, bytes: &[u8]) {
    write_all(fd, bytes);
}

/// Writes all of `bytes` to `fd`, retrying short writes; whether it all went.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reading.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{END, MAX_WAIT, wait_of, well_formed};

    #[test]
    fn only_whole_answers_are_relayed() {
        let with_end = |b: &[u8]| [b, END].concat();
        assert_eq!(well_formed(&with_end(b"")), Some(0));
        assert_eq!(well_formed(&with_end(b"{}\n")), Some(3));
        assert_eq!(well_formed(&with_end(b"{\"decision\":\"deny\"}\n")), Some(20));
        let unframed: [&[u8]; 2] = [b"", b"{}\n"];
        let framed: [&[u8]; 6] = [b"{\"decision\":", b"{}", b"{}\n{}\n", b"oops{}\n", b"\n", b"{\0}\n"];
        for bad in unframed.into_iter().map(<[u8]>::to_vec).chain(framed.into_iter().map(with_end)) {
            assert_eq!(well_formed(&bad), None, "{:?}", String::from_utf8_lossy(&bad));
        }
    }

    #[test]
    fn a_wait_mark_is_bounded() {
        assert_eq!(wait_of(b"0025\0").as_secs(), 25);
        assert_eq!(wait_of(b"9999\0"), MAX_WAIT);
        assert_eq!(wait_of(b"00x5\0").as_secs(), 0);
    }
}
