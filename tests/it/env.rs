//! `TestEnv`: a temporary HOME, XDG config dir and project directory; runs the real binary.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct TestEnv {
    _root: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let root = tempfile::tempdir().expect("temp dir");
        let home = root.path().join("home");
        let project = root.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        TestEnv { home, project, _root: root }
    }

    /// Writes `text` to `rel` under the project directory.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.project.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn user_rules(&self, text: &str) {
        let dir = self.home.join(".config/cmdguard");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rules.toml"), text).unwrap();
    }

    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.program(env!("CARGO_BIN_EXE_cmdguard"), args)
    }

    /// Any program, in this environment (HOME, config and state dirs, working directory).
    pub fn program<I, S>(&self, program: &str, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(program);
        // No controlling terminal unless a test attaches one: cmdguard must never prompt
        // whoever runs the test suite.
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        cmd.args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            // Plain text for the tests that read the screen; colour tests take this away.
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command(args).output().expect("run cmdguard")
    }

    /// Runs with `input` on stdin.
    pub fn run_with_input(&self, args: &[&str], input: &str) -> Output {
        use std::io::Write;
        let mut child =
            self.command(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // Written from a thread while the output is read: a large input (the corpus) would
        // otherwise fill both pipes and block the test and cmdguard on each other.
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_string();
        let writer = std::thread::spawn(move || match stdin.write_all(input.as_bytes()) {
            // A command that exits without reading its input closes the pipe first: not an error.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written.unwrap(),
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        output
    }

    /// The state directory cmdguard uses under this environment.
    pub fn state_dir(&self) -> PathBuf {
        self.home.join(".local/state/cmdguard")
    }

    /// The audit log's records.
    pub fn audit(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.state_dir().join("audit.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad audit line {l:?}: {e}"))).collect()
    }

    pub fn exists(&self, rel: &str) -> bool {
        Path::new(&self.project.join(rel)).exists()
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or_else(|| panic!("killed by a signal: {:?}", o.status))
}
