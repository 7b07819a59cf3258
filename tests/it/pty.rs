//! A real pseudo-terminal for prompt tests: the child gets the pty as its controlling terminal
//! (so `/dev/tty` is the pty) while its stdin, stdout and stderr stay whatever the test chose —
//! the way an agent runs cmdguard with pipes while the user sits at the terminal.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Pty {
    master: File,
    slave: File,
    seen: Vec<u8>,
}

impl Pty {
    pub fn new(cols: u16) -> Pty {
        let (mut master, mut slave) = (-1, -1);
        let ws = libc::winsize { ws_row: 40, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: out-parameters are valid; name and termios may be null.
        let rc = unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &ws) };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        for fd in [master, slave] {
            // SAFETY: fd is open; the child must not inherit either end past exec.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
        // SAFETY: master is open and nothing else reads it.
        unsafe { libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK) };
        // SAFETY: both fds are open and owned from here on.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        Pty { master, slave, seen: Vec::new() }
    }

    /// Makes the pty the controlling terminal of the process `cmd` starts.
    pub fn attach(&self, cmd: &mut Command) {
        let slave = self.slave.as_raw_fd();
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::setsid(); // may already be a session leader (TestEnv does the same)
                if libc::ioctl(slave, libc::TIOCSCTTY, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The new session's only process group is the terminal's foreground group.
                libc::tcsetpgrp(slave, libc::getpgrp());
                Ok(())
            });
        }
    }

    /// The terminal as a standard stream of the child (as when a person runs a command).
    pub fn stdio(&self) -> std::process::Stdio {
        self.slave.try_clone().expect("dup the terminal").into()
    }

    /// Types `text` at the terminal.
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
    }

    fn pump(&mut self) {
        let mut buf = [0u8; 4096];
        loop {
            match self.master.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(_) => return,
            }
        }
    }

    /// Everything the terminal has shown so far.
    pub fn screen(&mut self) -> String {
        self.pump();
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Waits until the terminal has shown `needle` (up to 15 s).
    pub fn expect(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            assert!(Instant::now() < deadline, "terminal never showed {needle:?}; it showed:\n{screen}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Pushes `text` into the terminal's input from another process, with `ioctl(TIOCSTI)` on the
    /// terminal opened by name: keys that look exactly like typed ones, from someone who cannot
    /// see the screen. `Err` when the kernel refuses (`dev.tty.legacy_tiocsti = 0` for a process
    /// without CAP_SYS_ADMIN).
    pub fn inject(&self, text: &str) -> std::io::Result<()> {
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: the buffer is valid for its length; slave is an open terminal.
        let rc = unsafe { libc::ttyname_r(self.slave.as_raw_fd(), name.as_mut_ptr(), name.len()) };
        assert_eq!(rc, 0, "ttyname_r");
        let bytes = text.as_bytes().to_vec();
        let mut injector = Command::new("/bin/true");
        // SAFETY: between fork and exec only open, ioctl and close run, on buffers made before.
        unsafe {
            injector.pre_exec(move || {
                let fd = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                for b in &bytes {
                    if libc::ioctl(fd, libc::TIOCSTI, b as *const u8) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                libc::close(fd);
                Ok(())
            });
        }
        let status = injector.status()?;
        assert!(status.success(), "the injector failed: {status:?}");
        Ok(())
    }

    /// The terminal's modes, to check that cmdguard put them back.
    pub fn modes(&self) -> (u32, u32, u32, Vec<u8>) {
        // SAFETY: a zeroed termios is a valid out-parameter.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: slave is an open terminal.
        assert_eq!(unsafe { libc::tcgetattr(self.slave.as_raw_fd(), &mut t) }, 0);
        (t.c_iflag, t.c_oflag, t.c_lflag, t.c_cc.to_vec())
    }
}
