//! Nested project files: every `.cmdguard.toml` from the outermost directory above the working
//! directory down to it adds its restrictions; a broken one is a 78 from anywhere below it; each
//! file's loosening needs that file's own trust.

use std::path::Path;

use crate::env::{TestEnv, code, stderr, stdout};

const OUTER: &str =
    "[[rule]]\nid = \"deploy.prod\"\naction = \"ask\"\npattern = '^make deploy'\nreason = \"deploys\"\n";
const INNER: &str =
    "[[rule]]\nid = \"db.reset\"\naction = \"ask\"\npattern = '^make reset'\nreason = \"drops the database\"\n";

/// `cmdguard check -c COMMAND` in `dir`: (exit code, stdout + stderr).
fn check_in(t: &TestEnv, dir: &Path, command: &str) -> (i32, String) {
    let o = t.command(["check", "-c", command]).current_dir(dir).output().unwrap();
    (code(&o), stdout(&o) + &stderr(&o))
}

#[test]
fn every_project_file_up_the_tree_adds_its_restrictions() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", OUTER);
    t.write("sub/.cmdguard.toml", INNER);
    std::fs::create_dir_all(t.project.join("sub/deeper")).unwrap();
    for dir in ["sub", "sub/deeper"] {
        let dir = t.project.join(dir);
        assert_eq!(check_in(&t, &dir, "make deploy").0, 1, "the outer file's rule vanished under {dir:?}");
        assert_eq!(check_in(&t, &dir, "make reset").0, 1);
    }
    // The inner file applies only below it.
    assert_eq!(check_in(&t, &t.project, "make reset").0, 0);
    // Layer order: outer first, then inner.
    let o = t.command(["rules", "path"]).current_dir(t.project.join("sub")).output().unwrap();
    let out = stdout(&o);
    let (outer, inner) = (out.find("project/.cmdguard.toml"), out.find("sub/.cmdguard.toml"));
    assert!(outer.is_some() && inner.is_some() && outer < inner, "{out}");
}

#[test]
fn a_broken_project_file_stops_cmdguard_in_every_directory_below_it() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", OUTER);
    std::fs::create_dir_all(t.project.join("sub/deeper")).unwrap();
    let file = t.project.join("sub/.cmdguard.toml");
    let fifo = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
    let odd: [(&str, &dyn Fn()); 4] = [
        ("is empty", &|| std::fs::write(&file, " \n").unwrap()),
        ("not a regular file", &|| std::fs::create_dir(&file).unwrap()),
        // SAFETY: a valid C string path.
        ("not a regular file", &|| assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0)),
        ("does not exist", &|| std::os::unix::fs::symlink("/nowhere/rules.toml", &file).unwrap()),
    ];
    for (why, make) in odd {
        make();
        for dir in ["sub", "sub/deeper"] {
            let o = t.command(["-c", "true"]).current_dir(t.project.join(dir)).output().unwrap();
            assert_eq!(code(&o), 78, "{why} in {dir}: {}", stderr(&o));
            let e = stderr(&o);
            assert!(e.contains("sub/.cmdguard.toml") && e.contains(why), "{e}");
        }
        // Above it, it is not in the way.
        assert_eq!(code(&t.run(["-c", "true"])), 0);
        let _ = std::fs::remove_dir(&file).or_else(|_| std::fs::remove_file(&file));
    }
}
