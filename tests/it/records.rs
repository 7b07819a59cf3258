//! No lost or torn records: the audit log on a full disk and after a torn line, and files in
//! the approval queue that cmdguard did not write whole.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::env::{TestEnv, code, stderr, stdout};

/// Runs a command a deny rule stops: one audit record each. Returns the exit code and the
/// warnings on stderr (the refusal itself is the rest).
fn denied(t: &TestEnv) -> (i32, String) {
    let o = t.run(["-c", "rm -rf ~"]);
    let err = stderr(&o);
    assert!(err.contains("cmdguard: NOT RUN: rm -rf ~"), "{err}");
    let warnings = err.lines().filter(|l| l.starts_with("cmdguard: warning")).map(|l| format!("{l}\n")).collect();
    (code(&o), warnings)
}

#[test]
fn a_record_after_a_torn_line_starts_on_a_fresh_line() {
    let t = TestEnv::new();
    assert_eq!(denied(&t).0, 77);
    let log = t.state_dir().join("audit.jsonl");
    // What a writer killed halfway (or an older cmdguard on a full disk) leaves behind.
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"time\":\"2026-12-");
    std::fs::write(&log, &text).unwrap();
    assert_eq!(denied(&t), (77, String::new()));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[1], "{\"time\":\"2026-12-", "the torn line spoils only itself");
    let last: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(last["decided_by"], "rule");
    let o = t.run(["log"]);
    assert_eq!(code(&o), 0);
    assert_eq!(stdout(&o).matches("rm -rf ~").count(), 2, "{}", stdout(&o));
    assert!(stderr(&o).contains("1 line of"), "{}", stderr(&o));
}

/// A 64 KiB tmpfs mounted at `dir`, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let mounted =
            Command::new("mount").args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"]).arg(dir).output();
        match mounted {
            Ok(o) if o.status.success() => Some(SmallDisk(dir.to_path_buf())),
            other => {
                eprintln!(
                    "\n*** SKIPPED a_full_disk_loses_no_record_and_says_so: cannot mount a small tmpfs \
                     (needs root or CAP_SYS_ADMIN): {other:?}\n"
                );
                None
            }
        }
    }

    /// Fills the disk: afterwards no new block can be had.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("fill")).unwrap();
        while f.write_all(&[0u8; 512]).is_ok() {}
    }

    fn free(&self) {
        std::fs::remove_file(self.0.join("fill")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_loses_no_record_and_says_so() {
    let t = TestEnv::new();
    let Some(disk) = SmallDisk::mount(&t.home.join(".local/state")) else { return };
    assert_eq!(denied(&t), (77, String::new()));
    disk.fill();
    // The log's last block has room for a few records; the one that does not fit is cut short
    // by the full disk.
    let mut written = 1;
    let warning = loop {
        let (status, err) = denied(&t);
        assert_eq!(status, 77, "the decision stands: {err}");
        if !err.is_empty() {
            break err;
        }
        written += 1;
        assert!(written < 100, "the disk never filled up");
    };
    assert_eq!(warning.lines().count(), 1, "one line: {warning}");
    assert!(warning.contains("not in the audit log") && warning.contains("No space left"), "{warning}");
    assert!(warning.contains("free space"), "says what to do: {warning}");
    assert_eq!(t.audit().len(), written, "no torn record was left behind");
    disk.free();
    assert_eq!(denied(&t), (77, String::new()));
    assert_eq!(t.audit().len(), written + 1);
}

#[test]
fn garbage_in_the_queue_is_removed_and_audited() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["pending"])), 0);
    let root = t.state_dir().join("queue");
    let dir = root.join("no-session");
    std::fs::create_dir_all(&dir).unwrap();
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let garbage = [
        (dir.join("0123456789ab.request.json"), "{\"id\":\"0123"), // torn
        (dir.join("ba9876543210.request.json"), "{}"),             // not a request
        (dir.join("notes.txt"), "hello"),
        (dir.join(".0a0a0a0a0a0a.request.json.4242.beef.tmp"), "{\"id\""), // a dead writer's
        (root.join("stray"), ""),
    ];
    for (path, text) in &garbage {
        std::fs::write(path, text).unwrap();
    }
    let old = std::fs::File::options().write(true).open(&garbage[3].0).unwrap();
    old.set_modified(hour_ago).unwrap();
    // A live writer's temporary file is left alone: it is about to be renamed into place.
    let fresh = dir.join(".0b0b0b0b0b0b.request.json.4243.cafe.tmp");
    std::fs::write(&fresh, "{").unwrap();

    let o = t.run(["pending"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("no commands are waiting"), "{}", stdout(&o));
    for (path, _) in &garbage {
        assert!(!path.exists(), "{} was left", path.display());
    }
    assert!(fresh.exists());
    let audit = t.audit();
    let cleanups: Vec<&str> =
        audit.iter().filter(|r| r["decided_by"] == "cleanup").map(|r| r["reason"].as_str().unwrap()).collect();
    assert_eq!(cleanups.len(), garbage.len(), "{cleanups:?}");
    for (path, _) in &garbage {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(cleanups.iter().any(|r| r.contains(name) && r.starts_with("removed ")), "{name}: {cleanups:?}");
    }
    assert!(audit.iter().all(|r| r["ran"] == false));
    // Nothing is left to clean the second time.
    assert_eq!(code(&t.run(["pending"])), 0);
    assert_eq!(t.audit().len(), audit.len());
}
