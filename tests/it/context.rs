//! An allow entry covers the place it was written for: a top-level entry does not cover the same
//! text under `ssh`, `kubectl exec`, `sudo`, `env`, or `git -C` elsewhere, unless its `context`
//! says so; "always" records the place it was answered at.

use crate::approval::{Asking, env_with_rules};
use crate::env::{TestEnv, code, stderr, stdout};

/// `check -c COMMAND`: the verdict word.
fn verdict(t: &TestEnv, command: &str) -> String {
    stdout(&t.run(["check", "-c", command])).split(':').next().unwrap_or_default().trim().to_string()
}

#[test]
fn a_top_level_entry_covers_only_top_level() {
    let t = TestEnv::new();
    // An entry without `context`, as every file written before it existed has.
    t.user_rules("[[allow]]\ncommand = \"git push --force origin main\"\n");
    assert_eq!(verdict(&t, "git push --force origin main"), "allow");
    assert_eq!(verdict(&t, "nice timeout 5 git push --force origin main"), "allow");
    for elsewhere in [
        "ssh prod git push --force origin main",
        "ssh prod 'git push --force origin main'",
        "kubectl exec pod -- git push --force origin main",
        "sudo git push --force origin main",
        "sudo bash -c 'git push --force origin main'",
        "env GIT_DIR=/elsewhere git push --force origin main",
        "git -C /elsewhere push --force origin main",
        "git --work-tree=/elsewhere push --force origin main",
    ] {
        assert_eq!(verdict(&t, elsewhere), "ask", "{elsewhere}");
    }
}

#[test]
fn an_entry_names_its_place_or_any() {
    let t = TestEnv::new();
    t.user_rules(
        "[[allow]]\ncommand = \"git push --force origin main\"\ncontext = \"git -C /srv/site\"\n\n\
         [[allow]]\ncommand = \"git push --force origin gh-pages\"\ncontext = \"any\"\n",
    );
    assert_eq!(verdict(&t, "git -C /srv/site push --force origin main"), "allow");
    assert_eq!(verdict(&t, "git -C /elsewhere push --force origin main"), "ask");
    assert_eq!(verdict(&t, "git push --force origin main"), "ask");
    for anywhere in ["git push --force origin gh-pages", "ssh prod git push --force origin gh-pages"] {
        assert_eq!(verdict(&t, anywhere), "allow", "{anywhere}");
    }
    // `explain` shows the place to write.
    let out = stdout(&t.run(["explain", "-c", "ssh prod sudo -u root git push --force origin x"]));
    assert!(out.contains("place:    ssh prod › sudo -u root"), "{out}");
    // A context that names nothing is a broken file, with its line.
    t.user_rules("[[allow]]\ncommand = \"x\"\ncontext = \" \"\n");
    let o = t.run(["check", "-c", "true"]);
    assert_eq!(code(&o), 78);
    assert!(stderr(&o).contains("line 3") && stderr(&o).contains("context"), "{}", stderr(&o));
}

#[test]
fn always_records_the_place_it_was_answered_at() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "env X=1 touch ran"]);
    let screen = a.wait_prompt();
    assert!(screen.contains("covers this command only where it runs: env X=1"), "{screen}");
    let f = a.answer_always();
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(f.screen.contains("at the same place (env X=1)"), "{}", f.screen);
    let text = std::fs::read_to_string(t.project.join(".cmdguard.toml")).unwrap();
    assert!(text.contains("command = \"touch ran\"\ncontext = \"env X=1\"\n"), "{text}");
    assert_eq!(code(&t.run(["-c", "env X=1 touch ran"])), 0);
    // The same text at top level, or under another environment, still asks.
    assert_eq!(code(&t.run(["-c", "touch ran"])), 77);
    assert_eq!(code(&t.run(["-c", "env X=2 touch ran"])), 77);
    // Trust review shows the place.
    std::fs::write(t.project.join(".cmdguard.toml"), text + "# edited\n").unwrap();
    let (c, screen) = crate::trust::trust_at(&t, &[], false);
    assert_eq!(c, 1);
    assert!(screen.contains("allow command = \"touch ran\" (context = \"env X=1\")"), "{screen}");
}
