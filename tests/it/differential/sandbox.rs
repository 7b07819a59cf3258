//! The oracle's sandbox: real bash and dash run `-c TEXT` where the only programs they can start
//! are stubs that record their argv. One compiled stub is hard-linked under every program name;
//! the shells run as a throwaway uid in their own user, mount, network and IPC namespaces, with
//! the stub directory bind-mounted over /bin, /usr/bin and the other program directories and a
//! fresh tmpfs over /tmp, so an absolute `/bin/rm` is a stub too and nothing real is touched.
//! `Sandbox::new` proves that before any case runs (`verify`).

use std::ffi::CString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The shells used as oracles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Dash,
}

impl Shell {
    pub const ALL: [Shell; 2] = [Shell::Bash, Shell::Dash];

    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Dash => "dash",
        }
    }
}

/// Programs that exist in the sandbox, all of them stubs. `bash`, `sh` and `dash` record and
/// then run the real shell (so nested scripts run too); `env` records and then starts the
/// program it names, as the real one would.
pub const PROGRAMS: &[&str] = &[
    "rm", "git", "touch", "ls", "cat", "mkdir", "cp", "mv", "chmod", "chown", "ln", "find", "grep", "sed", "head",
    "tail", "wc", "date", "sort", "tee", "dd", "tar", "curl", "make", "npm", "docker", "kubectl", "python3", "id",
    "xargs", "env", "nice", "timeout", "nohup", "sudo", "ssh", "kill", "sleep", "bash", "sh", "dash",
];

/// Shells copied out of /usr/bin before it is covered, and the names they run under.
const REAL_SHELLS: &[(&str, &str)] = &[("bash", "bash"), ("dash", "dash"), ("sh", "dash")];

/// Directories the stubs cover; the ones that are links (merged /usr) are covered through their
/// target.
const PROGRAM_DIRS: &[&str] = &["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"];

/// Per-case limit: no generated command loops, so a case that takes this long is reported.
const CASE_TIMEOUT: Duration = Duration::from_secs(3);

const STUB_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
/* Appends "argc\0program\0argv1\0..." to the log in one write, where program is the path the
   stub was started by (not argv[0], which `exec -a` sets at will); then for a shell it runs the
   real one and for env the program env names; every other program only records. */
int main(int argc, char **argv) {
    const char *program = (const char *)getauxval(AT_EXECFN);
    if (!program) program = argv[0];
    size_t len = 32 + strlen(program);
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *buf = malloc(len);
    if (!buf) return 125;
    size_t at = (size_t)snprintf(buf, len, "%d", argc) + 1;
    for (int i = 0; i < argc; i++) {
        const char *word = i == 0 ? program : argv[i];
        size_t l = strlen(word) + 1;
        memcpy(buf + at, word, l);
        at += l;
    }
    int fd = open(LOG_PATH, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 || write(fd, buf, at) != (ssize_t)at) return 125;
    close(fd);
    const char *base = strrchr(program, '/');
    base = base ? base + 1 : program;
    char real[4096];
    snprintf(real, sizeof real, "%s/%s", REAL_DIR, base);
    if (access(real, X_OK) == 0) {
        execv(real, argv);
        return 126;
    }
    if (strcmp(base, "env") == 0) {
        int i = 1;
        for (; i < argc; i++) {
            if (strcmp(argv[i], "--") == 0) { i++; break; }
            if (strcmp(argv[i], "-u") == 0 && i + 1 < argc) { i++; continue; }
            if (argv[i][0] == '-' || strchr(argv[i], '=')) continue;
            break;
        }
        if (i < argc) { execvp(argv[i], argv + i); return 127; }
    }
    return 0;
}
"#;

/// What one shell run left: the argv of every program started, in the order recorded, with the
/// path it was started by in place of `argv[0]`.
#[derive(Debug)]
pub struct Run {
    pub started: Vec<Vec<String>>,
    pub timed_out: bool,
}

pub struct Sandbox {
    root: PathBuf,
    stubs: PathBuf,
    real: PathBuf,
    log: PathBuf,
    home: PathBuf,
    /// The uid and gid the shells run as: unused by anything else on the machine.
    id: u32,
    binds: Vec<CString>,
}

impl Sandbox {
    /// Whether the harness can run here: it needs root to run the shells as a throwaway uid.
    /// Without root it fails under CI (which runs as root) and is skipped, with a note, for a
    /// developer running the suite as themselves.
    pub fn available() -> bool {
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } == 0 {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "the differential harness runs its shells as a throwaway uid and needs root to do so"
        );
        eprintln!("note: the differential harness needs root (it runs the shells as a throwaway uid); skipped");
        false
    }

    /// Builds and verifies the sandbox; panics (loudly) if it cannot be made safe.
    pub fn new() -> Sandbox {
        // SAFETY: getuid has no preconditions.
        let is_root = unsafe { libc::getuid() } == 0;
        assert!(is_root, "the differential harness runs its shells as a throwaway uid and needs root to do so");
        // Not under the target directory: the shells see fresh tmpfs over /tmp, /var/tmp and
        // /dev/shm (a checkout under /tmp would vanish for them), and run as a uid that must
        // reach the sandbox (a checkout under a private home would be out of its reach).
        // /run is root's, traversable, and not masked.
        let base = PathBuf::from("/run/cmdguard-differential");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Two sandboxes of one test process (bounded and long run) get their own directory and uid.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = base.join(format!("differential-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (stubs, real, home) = (root.join("stubs"), root.join("real"), root.join("home"));
        for d in [&root, &stubs, &real, &home] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let id = 200_000 + (std::process::id() * 4 + n) % 100_000;
        let log = root.join("log");
        for (name, from) in REAL_SHELLS {
            let src = ["/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(from)).find(|p| p.is_file());
            let src = src.unwrap_or_else(|| panic!("{from} is not installed: the differential harness needs it"));
            std::fs::copy(&src, real.join(name)).unwrap();
        }
        let stub = root.join("stub");
        let source = STUB_C
            .replace("LOG_PATH", &format!("{:?}", log.to_str().unwrap()))
            .replace("REAL_DIR", &format!("{:?}", real.to_str().unwrap()));
        std::fs::write(root.join("stub.c"), source).unwrap();
        let cc = Command::new("cc").arg("-O1").arg("-o").arg(&stub).arg(root.join("stub.c")).output();
        let cc = cc.expect("cc is needed to build the differential harness's stub program");
        assert!(cc.status.success(), "building the stub failed: {}", String::from_utf8_lossy(&cc.stderr));
        for name in PROGRAMS {
            std::fs::hard_link(&stub, stubs.join(name)).unwrap();
        }
        std::os::unix::fs::chown(&home, Some(id), Some(id)).unwrap();
        let mut binds: Vec<CString> = Vec::new();
        for dir in PROGRAM_DIRS {
            if let Ok(target) = std::fs::canonicalize(dir) {
                let c = CString::new(target.to_str().unwrap()).unwrap();
                if target.is_dir() && !binds.contains(&c) {
                    binds.push(c);
                }
            }
        }
        let sandbox = Sandbox { root, stubs, real, log, home, id, binds };
        sandbox.verify();
        sandbox
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Runs `shell -c text` in a fresh working directory and returns what it started.
    pub fn run(&self, shell: Shell, text: &str) -> Run {
        self.run_capturing(shell, text).0
    }

    fn run_capturing(&self, shell: Shell, text: &str) -> (Run, String) {
        std::fs::write(&self.log, b"").unwrap();
        std::fs::set_permissions(&self.log, std::fs::Permissions::from_mode(0o666)).unwrap();
        // A fresh working directory and HOME for every case: a case that appends to ~/.bashrc
        // must not run in the next case's `source ~/.bashrc`.
        let cwd = self.root.join("cwd");
        for dir in [&cwd, &self.home] {
            let _ = std::fs::remove_dir_all(dir);
            std::fs::create_dir(dir).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::chown(dir, Some(self.id), Some(self.id)).unwrap();
        }
        let mut cmd = Command::new(self.real.join(shell.name()));
        cmd.arg0(shell.name()).arg("-c").arg(text);
        cmd.env_clear().env("PATH", &self.stubs).env("HOME", &self.home).current_dir(&cwd);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).process_group(0);
        assert_eq!(cmd.get_envs().count(), 2, "the shells get PATH (the stubs only) and HOME, nothing else");
        let plan = Plan::new(self);
        // SAFETY: `enter` only makes system calls on data prepared before the fork.
        unsafe { cmd.pre_exec(move || plan.enter()) };
        let mut child = cmd.spawn().expect("cannot start the sandboxed shell");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        // Background programs hold stdout open: reading it to the end waits for them too.
        std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out);
            let _ = tx.send(out);
        });
        let out = rx.recv_timeout(CASE_TIMEOUT);
        let timed_out = out.is_err();
        // SAFETY: kill on the process group the child leads; every process in it is the case's.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        let started = parse_log(&std::fs::read(&self.log).unwrap());
        let out = String::from_utf8_lossy(&out.unwrap_or_default()).into_owned();
        (Run { started, timed_out }, out)
    }

    /// Refuses to go on unless absolute paths and PATH reach stubs only, under both shells.
    fn verify(&self) {
        let probe = "rm a; /bin/rm b; /usr/bin/rm c; env X=1 rm d; for f in /bin/* /usr/bin/* /sbin/* /usr/sbin/*; \
                     do printf '%s\\n' \"$f\"; done";
        for shell in Shell::ALL {
            let (run, out) = self.run_capturing(shell, probe);
            let in_path = self.stubs.join("rm").to_str().unwrap().to_string();
            let want: Vec<Vec<String>> = [[&*in_path, "a"], ["/bin/rm", "b"], ["/usr/bin/rm", "c"], [&*in_path, "d"]]
                .iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect();
            let rms: Vec<Vec<String>> = run.started.iter().filter(|a| a[0].ends_with("rm")).cloned().collect();
            assert_eq!(rms, want, "{}: absolute program paths do not reach the stubs", shell.name());
            for line in out.lines() {
                let name = line.rsplit('/').next().unwrap();
                assert!(
                    PROGRAMS.contains(&name) || name == "*",
                    "{}: {line} is reachable in the sandbox and is not a stub",
                    shell.name()
                );
            }
            assert!(out.lines().count() >= PROGRAMS.len(), "{}: the program directories were not listed", shell.name());
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Everything the child needs between fork and exec, prepared in the parent.
struct Plan {
    id: u32,
    stubs: CString,
    binds: Vec<CString>,
    uid_map: Vec<u8>,
}

impl Plan {
    fn new(s: &Sandbox) -> Plan {
        Plan {
            id: s.id,
            stubs: CString::new(s.stubs.to_str().unwrap()).unwrap(),
            binds: s.binds.clone(),
            uid_map: format!("0 {} 1", s.id).into_bytes(),
        }
    }

    /// In the child: drop to the throwaway uid, enter new namespaces, cover the program
    /// directories with the stubs and /tmp with a tmpfs, and cap processes and time.
    fn enter(&self) -> std::io::Result<()> {
        let null = std::ptr::null::<libc::c_char>();
        // SAFETY: plain system calls with pointers to NUL-terminated strings owned by `self`.
        unsafe {
            ok(libc::setgroups(0, std::ptr::null()))?;
            ok(libc::setgid(self.id))?;
            ok(libc::setuid(self.id))?;
            // Changing uid made the process undumpable, which leaves /proc/self/uid_map root's.
            ok(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
            ok(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWIPC))?;
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &self.uid_map)?;
            write_proc(c"/proc/self/gid_map", &self.uid_map)?;
            ok(libc::mount(null, c"/".as_ptr(), null, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
            for target in &self.binds {
                ok(libc::mount(self.stubs.as_ptr(), target.as_ptr(), null, libc::MS_BIND, std::ptr::null()))?;
            }
            for tmp in [c"/tmp", c"/var/tmp", c"/dev/shm"] {
                if libc::access(tmp.as_ptr(), libc::F_OK) == 0 {
                    let opts = c"mode=1777,size=8m";
                    let flags = libc::MS_NOSUID | libc::MS_NODEV;
                    ok(libc::mount(c"tmpfs".as_ptr(), tmp.as_ptr(), c"tmpfs".as_ptr(), flags, opts.as_ptr().cast()))?;
                }
            }
            for (res, max) in [(libc::RLIMIT_NPROC, 64), (libc::RLIMIT_CPU, 10), (libc::RLIMIT_FSIZE, 1 << 22)] {
                ok(libc::setrlimit(res, &libc::rlimit { rlim_cur: max, rlim_max: max }))?;
            }
        }
        Ok(())
    }
}

fn ok(rc: libc::c_int) -> std::io::Result<()> {
    if rc == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// # Safety
/// `path` is a NUL-terminated path.
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: per the function's contract; `data` is a live buffer of its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n != data.len() as isize { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }
}

/// Records of `argc\0argv0\0…`, back to back.
fn parse_log(bytes: &[u8]) -> Vec<Vec<String>> {
    let mut parts = bytes.split(|b| *b == 0).map(|p| String::from_utf8_lossy(p).into_owned());
    let mut out = Vec::new();
    while let Some(count) = parts.next() {
        let Ok(n) = count.parse::<usize>() else { break };
        out.push(parts.by_ref().take(n).collect());
    }
    out
}
