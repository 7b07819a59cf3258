//! "Always" and trust: allow entries written into the project's file keep the user's comments,
//! take effect at once, and stop applying when anyone edits the file until the user trusts it
//! again. Loosening from a project file or `--rules` never applies untrusted.

use std::process::Stdio;

use crate::approval::{Asking, env_with_rules};
use crate::env::{TestEnv, code, stderr, stdout};

const PROJECT: &str = "# my project's rules\n\n[[rule]]   # deploys are ours\nid = \"deploy.prod\"\naction = \"ask\"\npattern = '^make deploy'\nreason = \"deploys to production\"\n";

/// Runs `cmdguard trust ARGS` at a real terminal; types the code back when `confirm`, else a
/// wrong one.
pub fn trust_at(t: &TestEnv, args: &[&str], confirm: bool) -> (i32, String) {
    let mut a = Asking::start(t, &[&["trust"], args].concat());
    let screen = a.pty.expect("Trust exactly this content?");
    let f = if confirm {
        a.confirm()
    } else {
        {
            a.type_wrong_code();
            a.finish()
        }
    };
    (f.code, screen + &f.stdout + &f.stderr)
}

fn trust(t: &TestEnv, key: &str) -> (i32, String) {
    trust_at(t, &[], key == "y")
}

fn headless(t: &TestEnv, command: &str) -> i32 {
    code(&t.run(["-c", command]))
}

#[test]
fn always_writes_an_entry_that_keeps_comments_and_applies_at_once() {
    let t = env_with_rules();
    t.write(".cmdguard.toml", PROJECT);
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    let f = a.answer_always();
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(f.screen.contains("1 allow entry written to"), "{}", f.screen);
    let text = std::fs::read_to_string(t.project.join(".cmdguard.toml")).unwrap();
    assert!(text.starts_with(PROJECT), "the user's text changed:\n{text}");
    assert!(text.contains("# Added by cmdguard on "), "{text}");
    assert!(text.contains("[[allow]]\ncommand = \"touch ran\"\n"), "{text}");
    // The next call passes without asking (no terminal here), through the allow entry.
    assert_eq!(headless(&t, "touch ran"), 0);
    let last = t.audit().last().unwrap().clone();
    assert_eq!(last["decided_by"], "allow-entry");
    assert_eq!(last["rules"][0], "test.touch", "the record names the rule the entry let through");
    // Exactly that command: another one still asks.
    assert_eq!(headless(&t, "touch other"), 77);

    // A hand edit suspends the loosening, and check says so in one line.
    std::fs::write(t.project.join(".cmdguard.toml"), text.clone() + "# edited by hand\n").unwrap();
    assert_eq!(headless(&t, "touch ran"), 77);
    let o = t.run(["check", "-c", "touch ran"]);
    assert_eq!(code(&o), 1);
    let notes: Vec<_> =
        stderr(&o).lines().filter(|l| l.contains("changed since you trusted it")).map(String::from).collect();
    assert_eq!(notes.len(), 1, "{}", stderr(&o));
    assert!(notes[0].contains("cmdguard trust"), "{}", notes[0]);

    // The user reviews and trusts it again: the entry applies again.
    let (c, screen) = trust(&t, "y");
    assert_eq!(c, 0, "{screen}");
    assert!(screen.contains("line 11: allow command = \"touch ran\""), "{screen}");
    assert_eq!(headless(&t, "touch ran"), 0);
}

#[test]
fn always_creates_the_file_at_the_git_root() {
    let t = env_with_rules();
    std::fs::create_dir_all(t.project.join(".git")).unwrap();
    std::fs::create_dir_all(t.project.join("src/deep")).unwrap();
    let mut pty = crate::pty::Pty::new(100);
    let mut cmd = t.command(["-c", "touch ran"]);
    cmd.current_dir(t.project.join("src/deep")).stdout(Stdio::piped()).stderr(Stdio::piped());
    pty.attach(&mut cmd);
    let child = cmd.spawn().unwrap();
    pty.expect("left, then deny");
    pty.send("a");
    let screen = pty.expect("type the code ");
    let at = screen.rfind("type the code ").unwrap() + "type the code ".len();
    pty.send(&screen[at..at + 4]);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(0));
    let text = std::fs::read_to_string(t.project.join(".cmdguard.toml")).expect("file at the git root");
    assert!(text.contains("command = \"touch ran\""), "{text}");
    let o = t.command(["-c", "touch ran"]).current_dir(t.project.join("src/deep")).output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn an_untrusted_project_file_cannot_loosen() {
    let t = env_with_rules();
    // What an agent might write to get its way.
    t.write(".cmdguard.toml", "disable = [\"git\"]\n[settings]\ntimeout = 99999\n[[allow]]\npattern = '.*'\n");
    assert_eq!(headless(&t, "touch ran"), 77);
    let o = t.run(["check", "-c", "git reset --hard"]);
    assert!(stdout(&o).starts_with("ask:"), "{}", stdout(&o));
    assert!(stderr(&o).contains("is not trusted"), "{}", stderr(&o));
    // Restrictions apply whether trusted or not.
    t.write(".cmdguard.toml", PROJECT);
    assert!(stdout(&t.run(["check", "-c", "make deploy"])).starts_with("ask:"));
    assert!(stderr(&t.run(["check", "-c", "make deploy"])).is_empty(), "a file that loosens nothing needs no trust");

    // Declining keeps it untrusted; without a terminal trust refuses.
    t.write(".cmdguard.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    let (c, screen) = trust(&t, "n");
    assert_eq!(c, 1, "{screen}");
    assert_eq!(headless(&t, "touch ran"), 77);
    let o = t.run(["trust"]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("needs you at a terminal"), "{}", stderr(&o));
    assert_eq!(headless(&t, "touch ran"), 77);
    // Trusted, then untrusted.
    assert_eq!(trust(&t, "y").0, 0);
    assert_eq!(headless(&t, "touch ran"), 0);
    assert!(stdout(&t.run(["untrust"])).contains("no longer trusted"));
    assert_eq!(headless(&t, "touch ran"), 77);
}

#[test]
fn rules_files_from_the_command_line_need_trust_to_loosen() {
    let t = env_with_rules();
    let extra = t.write("extra.toml", "[[allow]]\npattern = '^touch '\n");
    let extra = extra.to_str().unwrap();
    assert_eq!(code(&t.run(["--rules", extra, "-c", "touch ran"])), 77);
    assert_eq!(trust_at(&t, &[extra], true).0, 0);
    assert_eq!(code(&t.run(["--rules", extra, "-c", "touch ran"])), 0);
}

#[test]
fn always_into_an_untrusted_file_does_not_trust_what_others_wrote() {
    let t = env_with_rules();
    t.write(".cmdguard.toml", "[[allow]]\npattern = '^echo x \\| tee'\n");
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    let f = a.answer_always();
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(f.screen.contains("takes effect only after `cmdguard trust"), "{}", f.screen);
    assert!(std::fs::read_to_string(t.project.join(".cmdguard.toml")).unwrap().contains("command = \"touch ran\""));
    assert_eq!(headless(&t, "touch ran"), 77);
    assert_eq!(headless(&t, "echo x | tee out"), 77);
}

#[test]
fn always_is_not_offered_for_what_cannot_be_read() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "eval \"$CMD\""]);
    let screen = a.wait_prompt();
    assert!(screen.contains("not offered") && !screen.contains("[a] always"), "{screen}");
    a.key("a");
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(a.child.try_wait().unwrap().is_none(), "`a` answered although not offered");
    assert_eq!(a.answer("d").code, 77);
}

#[test]
fn always_never_writes_through_a_link() {
    let t = TestEnv::new();
    t.user_rules("# my own rules\n");
    // An agent links the project file to the user's own rules, trusted by where they live.
    let user_rules = t.home.join(".config/cmdguard/rules.toml");
    std::os::unix::fs::symlink(&user_rules, t.project.join(".cmdguard.toml")).unwrap();
    let mut a = Asking::start(&t, &["-c", "git push --force origin no-such-branch 2>/dev/null; true"]);
    a.wait_prompt();
    let f = a.answer_always();
    assert!(f.screen.contains("symbolic link"), "{}", f.screen);
    assert_eq!(std::fs::read_to_string(&user_rules).unwrap(), "# my own rules\n", "the user's rules were changed");
}

#[test]
fn trust_shows_what_changed_since_the_file_was_last_trusted() {
    let t = env_with_rules();
    t.write(".cmdguard.toml", "# ours\n[[allow]]\ncommand = \"touch ran\"\n\n[[rule]]\nid = \"p.deploy\"\naction = \"ask\"\npattern = '^make deploy'\nreason = \"deploys\"\n");
    assert_eq!(trust(&t, "y").0, 0);
    // An edit that keeps the loosening it had but changes a restriction and adds an allow.
    t.write(".cmdguard.toml", "# ours\n[[allow]]\ncommand = \"touch ran\"\n\n[[allow]]\ncommand = \"tee log\"\n\n[[rule]]\nid = \"p.deploy\"\naction = \"ask\"\npattern = '^make ship'\nreason = \"deploys\"\n");
    let (c, screen) = trust(&t, "y");
    assert_eq!(c, 0, "{screen}");
    assert!(screen.contains("it changed since you trusted it:"), "{screen}");
    for line in ["+ command = \"tee log\"", "- pattern = '^make deploy'", "+ pattern = '^make ship'"] {
        assert!(screen.contains(line), "{line} missing from:\n{screen}");
    }
    assert!(!screen.contains("- # ours"), "unchanged lines are not shown as changed:\n{screen}");
    // The kept copy follows the trust: after untrust it is gone.
    let kept = t.state_dir().join("trusted");
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 1, "one copy for the one trusted content");
    assert!(stdout(&t.run(["untrust"])).contains("no longer trusted"));
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 0);
}
