//! Nested project files: every `.cmdguard.toml` from the outermost directory above the working
//! directory down to it adds its restrictions; a broken one is a 78 from anywhere below it; each
//! file's loosening needs that file's own trust. Trust binds the path it was given for.

use std::path::Path;

use crate::env::{TestEnv, code, stderr, stdout};
use crate::trust::trust_at;

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
    let odd: [(&str, &dyn Fn()); 5] = [
        ("is empty", &|| std::fs::write(&file, " \n").unwrap()),
        ("cannot read it", &|| std::os::unix::fs::symlink(".cmdguard.toml", &file).unwrap()),
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
    // A file you may not read (root reads every file, so this needs another user).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        std::fs::write(&file, OUTER).unwrap();
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
        let o = t.command(["-c", "true"]).current_dir(t.project.join("sub/deeper")).output().unwrap();
        assert_eq!(code(&o), 78, "{}", stderr(&o));
        assert!(stderr(&o).contains("cannot read it"), "{}", stderr(&o));
    }
}

#[test]
fn each_file_loosens_only_with_its_own_trust() {
    let t = crate::approval::env_with_rules();
    t.write(".cmdguard.toml", "[[allow]]\ncommand = \"touch outer\"\n");
    t.write("sub/.cmdguard.toml", "[[allow]]\ncommand = \"touch inner\"\n");
    let sub = t.project.join("sub");
    let run_in = |command: &str| code(&t.command(["-c", command]).current_dir(&sub).output().unwrap());
    assert_eq!((run_in("touch outer"), run_in("touch inner")), (77, 77));
    // Trusting the inner file trusts only it.
    assert_eq!(trust_at(&t, &["sub/.cmdguard.toml"], true).0, 0);
    assert_eq!((run_in("touch outer"), run_in("touch inner")), (77, 0));
    assert_eq!(trust_at(&t, &[".cmdguard.toml"], true).0, 0);
    assert_eq!((run_in("touch outer"), run_in("touch inner")), (0, 0));
    // An edit to the outer file suspends its loosening only.
    std::fs::write(t.project.join(".cmdguard.toml"), "[[allow]]\ncommand = \"touch outer\"\n# edited\n").unwrap();
    assert_eq!((run_in("touch outer"), run_in("touch inner")), (77, 0));
}

#[test]
fn a_link_to_a_file_trusted_elsewhere_borrows_no_trust() {
    let t = crate::approval::env_with_rules();
    // A project the user trusted, and another whose file is a link to it.
    let trusted = t.write("trusted/.cmdguard.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    assert_eq!(trust_at(&t, &["trusted/.cmdguard.toml"], true).0, 0);
    let trusted_dir = t.project.join("trusted");
    assert_eq!(code(&t.command(["-c", "touch ran"]).current_dir(&trusted_dir).output().unwrap()), 0);
    let other = t.project.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::os::unix::fs::symlink(&trusted, other.join(".cmdguard.toml")).unwrap();
    let (c, out) = check_in(&t, &other, "touch ran");
    assert_eq!(c, 1, "{out}");
    assert!(out.contains("is not trusted"), "{out}");
    // Trusting the link itself, after review, makes it apply there.
    let (c, screen) = trust_at(&t, &["other/.cmdguard.toml"], true);
    assert_eq!(c, 0, "{screen}");
    assert!(screen.contains("symbolic link"), "{screen}");
    assert_eq!(check_in(&t, &other, "touch ran").0, 0);
}

#[test]
fn a_file_replaced_during_review_is_not_trusted() {
    let t = crate::approval::env_with_rules();
    let file = t.write(".cmdguard.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    let mut a = crate::approval::Asking::start(&t, &["trust"]);
    a.pty.expect("type the code ");
    // Same bytes, another file: renamed over the one on the screen.
    let swap = t.write("swap.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    std::fs::rename(&swap, &file).unwrap();
    let f = a.confirm();
    assert_eq!(f.code, 1, "{}", f.stdout);
    assert!(f.stderr.contains("changed or replaced while you were reviewing it"), "{}", f.stderr);
    assert_eq!(code(&t.run(["-c", "touch ran"])), 77);
}

#[test]
fn damaged_trust_records_trust_nothing_and_say_how_to_fix_it() {
    let t = crate::approval::env_with_rules();
    t.write(".cmdguard.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    assert_eq!(trust_at(&t, &[], true).0, 0);
    assert_eq!(code(&t.run(["-c", "touch ran"])), 0);
    let records = t.state_dir().join("trust.json");
    std::fs::write(&records, "{ not json").unwrap();
    let o = t.run(["check", "-c", "touch ran"]);
    assert_eq!(code(&o), 1, "a damaged store must trust nothing");
    let e = stderr(&o);
    assert!(e.contains("trust.json") && e.contains("damaged") && e.contains("cmdguard trust"), "{e}");
    assert_eq!(e.matches("the trust records").count(), 1, "said once: {e}");
    assert_eq!(code(&t.run(["-c", "touch ran"])), 77);
    // `trust` does not reset the records silently either.
    let o = t.run(["trust"]);
    assert_ne!(code(&o), 0);
    assert!(stderr(&o).contains("damaged"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&records).unwrap(), "{ not json");
}
