//! `cmdguard doctor`: a healthy installation passes every check; each kind of breakage (cmdguard
//! not on PATH, a broken rules file, a state directory others can read, an untrusted project
//! file, hooks missing or misinstalled, a hook that answers wrongly) is reported with its fix.

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::approval::Asking;
use crate::env::{TestEnv, code, stdout};

const CLAUDE_HOOKED: &str = r#"{"permissions": {"allow": ["Bash(cargo test:*)"]}, "hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "cmdguard hook claude-code"}]}
]}}"#;

const PROJECT: &str = "[[rule]]\nid = \"deploy.prod\"\naction = \"ask\"\npattern = '^make deploy'\nreason = \"deploys\"\n\n[[allow]]\ncommand = \"git push --force origin gh-pages\"\n";

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_cmdguard"))
}

/// A PATH that finds the binary under test first.
fn good_path() -> OsString {
    std::env::join_paths([exe().parent().unwrap(), Path::new("/usr/bin"), Path::new("/bin")]).unwrap()
}

/// `cmdguard doctor ARGS` with this PATH, and no host directory overrides from the test runner.
fn doctor_command(t: &TestEnv, path: &OsString, args: &[&str]) -> Command {
    let mut cmd = t.command(["doctor"].iter().chain(args));
    cmd.env("PATH", path).env_remove("CODEX_HOME").env_remove("COPILOT_HOME");
    cmd
}

fn doctor(t: &TestEnv, path: &OsString) -> (i32, String) {
    let o = doctor_command(t, path, &[]).output().unwrap();
    (code(&o), stdout(&o))
}

/// The report's line for check `name`, with its hint line if any.
fn line(report: &str, name: &str) -> String {
    let lines: Vec<&str> = report.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.get(6..).is_some_and(|rest| rest.starts_with(&format!("{name}: "))))
        .unwrap_or_else(|| panic!("no {name} line in:\n{report}"));
    match lines.get(at + 1) {
        Some(next) if next.starts_with("      ") => format!("{}\n{}", lines[at], next),
        _ => lines[at].to_string(),
    }
}

/// A healthy setup: Claude Code hooked, a project file with an allow entry that the user
/// trusted at the terminal.
fn healthy() -> TestEnv {
    let t = TestEnv::new();
    std::fs::create_dir_all(t.home.join(".claude")).unwrap();
    std::fs::write(t.home.join(".claude/settings.json"), CLAUDE_HOOKED).unwrap();
    t.write(".cmdguard.toml", PROJECT);
    let mut a = Asking::start(&t, &["trust"]);
    a.pty.expect("Trust exactly this content?");
    assert_eq!(a.confirm().code, 0);
    t
}

#[test]
fn a_healthy_setup_passes() {
    let t = healthy();
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 0, "{report}");
    let file = t.project.join(".cmdguard.toml");
    let state = t.state_dir();
    for want in [
        format!("ok    binary: `cmdguard` on PATH is {}, this binary", exe().display()),
        format!("ok    state: {} is 700 and its ", state.display()),
        "ok    rules: loaded: built-in ".to_string(),
        ", project 1; 1 allow entry in force".to_string(),
        format!("ok    trust: {} is trusted as it is", file.display()),
        "ok    claude-code: hooked in ~/.claude/settings.json".to_string(),
        "info  codex: not found (looked for ~/.codex/hooks.json".to_string(),
        "info  copilot: not found".to_string(),
        "info  gemini: not found".to_string(),
        "info  cursor: not found (looked for ~/.cursor/hooks.json".to_string(),
        "info  windsurf: not found".to_string(),
        "info  opencode: not found".to_string(),
        "info  cline: not found (looked for ~/Documents/Cline/Hooks/PreToolUse".to_string(),
        "ok    probe: `cmdguard hook claude-code` gave no opinion on `ls` and denied `rm -rf ~`".to_string(),
        "nothing failed; 1 warning".to_string(),
    ] {
        assert!(report.contains(&want), "{want:?} missing:\n{report}");
    }
    // The test runs with no terminal: asks would be refused, which is a warning, not a failure.
    let tty = line(&report, "terminal");
    assert!(tty.starts_with("warn  terminal: no terminal to ask on") && tty.contains("refused (exit 77)"), "{tty}");
    assert!(tty.contains("fix: ") && tty.contains("no_tty = \"wait\""), "{tty}");

    let o = doctor_command(&t, &good_path(), &["--json"]).output().unwrap();
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["ok"], true);
    let names: Vec<&str> = v["checks"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "binary",
            "state",
            "rules",
            "trust",
            "terminal",
            "claude-code",
            "codex",
            "copilot",
            "gemini",
            "cursor",
            "windsurf",
            "opencode",
            "cline",
            "probe"
        ]
    );
    assert!(v["checks"].as_array().unwrap().iter().all(|c| c["status"] != "fail"), "{v}");
}

#[test]
fn at_a_terminal_the_terminal_check_passes() {
    let t = healthy();
    let pty = crate::pty::Pty::new(200);
    let mut cmd = doctor_command(&t, &good_path(), &[]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    pty.attach(&mut cmd);
    let o = cmd.spawn().unwrap().wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(line(&stdout(&o), "terminal"), "ok    terminal: /dev/tty can be opened: asks are prompted there");
    assert!(stdout(&o).ends_with("nothing to fix\n"), "{}", stdout(&o));
}

#[test]
fn cmdguard_missing_from_path_fails_and_another_one_warns() {
    let t = healthy();
    let dir = tempfile::tempdir().unwrap();
    let only = OsString::from(dir.path());
    let (c, report) = doctor(&t, &only);
    assert_eq!(c, 1, "{report}");
    let binary = line(&report, "binary");
    assert!(binary.starts_with("fail  binary: no `cmdguard` on PATH"), "{binary}");
    assert!(binary.contains(&format!("fix: put the directory of {} on PATH", exe().display())), "{binary}");
    // The probe runs this binary, not the PATH's: it still works.
    assert!(line(&report, "probe").starts_with("ok "), "{report}");

    // A link to this binary is this binary.
    std::os::unix::fs::symlink(exe(), dir.path().join("cmdguard")).unwrap();
    let (c, report) = doctor(&t, &only);
    assert_eq!(c, 0, "{report}");
    assert!(line(&report, "binary").starts_with("ok    binary: `cmdguard` on PATH is"), "{report}");

    // Another program of that name is not.
    std::fs::remove_file(dir.path().join("cmdguard")).unwrap();
    let other = dir.path().join("cmdguard");
    std::fs::write(&other, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (c, report) = doctor(&t, &only);
    assert_eq!(c, 0, "{report}");
    let binary = line(&report, "binary");
    assert!(
        binary.starts_with(&format!("warn  binary: `cmdguard` on PATH is {}, not this binary", other.display())),
        "{binary}"
    );
}

#[test]
fn a_rules_file_with_a_syntax_error_fails_naming_file_and_line() {
    let t = healthy();
    t.user_rules("[[rule]]\nid = \"mine.x\"\naction = \"ask\npattern = '^x'\n");
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 1, "{report}");
    let rules = line(&report, "rules");
    let file = t.home.join(".config/cmdguard/rules.toml");
    assert!(rules.starts_with(&format!("fail  rules: rules file {}, line 3", file.display())), "{rules}");
    assert!(rules.contains("fix: ") && rules.contains("exit 78"), "{rules}");
    // Hooks block every call while the configuration is broken: the probe says so too.
    let probe = line(&report, "probe");
    assert!(probe.starts_with("fail  probe:") && probe.contains("`ls` got deny"), "{probe}");
}

#[test]
fn a_state_directory_others_can_read_fails() {
    let t = TestEnv::new();
    let state = t.state_dir();
    std::fs::create_dir_all(state.parent().unwrap()).unwrap();
    std::fs::DirBuilder::new().mode(0o755).create(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 1, "{report}");
    let check = line(&report, "state");
    assert!(check.starts_with(&format!("fail  state: {} is 755, not 700", state.display())), "{check}");
    assert!(check.ends_with(&format!("fix: chmod 700 {}", state.display())), "{check}");

    // A private directory holding a file others can read fails too, naming the file.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(state.join("audit.jsonl"), "").unwrap();
    std::fs::set_permissions(state.join("audit.jsonl"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 1, "{report}");
    let check = line(&report, "state");
    assert!(check.starts_with("fail  state: in ") && check.contains("audit.jsonl is 644"), "{check}");
    assert!(check.contains("fix: chmod -R go-rwx"), "{check}");
}

#[test]
fn an_untrusted_project_file_that_loosens_warns() {
    let t = TestEnv::new();
    let file = t.write(".cmdguard.toml", PROJECT);
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 0, "a warning is not a failure:\n{report}");
    let trust = line(&report, "trust");
    let shown = file.display();
    assert_eq!(
        trust,
        format!(
            "warn  trust: {shown} is not trusted: its 1 loosening entry (allow, disable, longer timeouts) is ignored\n      fix: review it, then trust it: cmdguard trust {shown}"
        )
    );
    assert!(line(&report, "rules").contains("; 0 allow entries in force"), "{report}");

    // Trusted, then edited: changed.
    let t = healthy();
    let file = t.project.join(".cmdguard.toml");
    std::fs::write(&file, format!("{PROJECT}# edited\n")).unwrap();
    let (_, report) = doctor(&t, &good_path());
    assert!(
        line(&report, "trust").starts_with(&format!("warn  trust: {} changed since you trusted it", file.display()))
    );

    // No project file at all is only worth knowing.
    let t = TestEnv::new();
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 0, "{report}");
    assert!(line(&report, "trust").starts_with("info  trust: no .cmdguard.toml"), "{report}");
}

#[test]
fn agent_hook_settings_are_found_and_judged() {
    let t = healthy();
    let write = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // Gemini installed, cmdguard not hooked in.
    write(t.home.join(".gemini/settings.json"), r#"{"theme": "Dracula"}"#);
    // Codex hooked through inline tables in config.toml.
    write(
        t.home.join(".codex/config.toml"),
        "model = \"o4\"\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"cmdguard hook codex\"\n",
    );
    // Copilot hooked in the repository.
    t.write(
        ".github/hooks/cmdguard.json",
        r#"{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "cmdguard hook copilot", "timeoutSec": 30}]}}"#,
    );
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 0, "{report}");
    let gemini = line(&report, "gemini");
    assert!(gemini.starts_with("warn  gemini: present but not hooked: no hook in ~/.gemini/settings.json"), "{gemini}");
    assert!(
        gemini.contains("fix: add to ~/.gemini/settings.json")
            && gemini.contains("\"command\":\"cmdguard hook gemini\"")
    );
    assert!(line(&report, "codex").starts_with("ok    codex: hooked in ~/.codex/config.toml"), "{report}");
    let copilot = line(&report, "copilot");
    assert_eq!(
        copilot,
        format!("ok    copilot: hooked in {}", t.project.join(".github/hooks/cmdguard.json").display())
    );

    // A project's Claude Code settings whose hook cannot work: the wrong matcher, and a
    // program that does not exist, shown escaped.
    t.write(
        ".claude/settings.local.json",
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "cmdguard hook claude-code"}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/opt/\u001b[2J/cmdguard hook claude-code"}]}
        ]}}"#,
    );
    std::fs::remove_file(t.home.join(".claude/settings.json")).unwrap();
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 0, "{report}");
    let claude = line(&report, "claude-code");
    assert!(claude.starts_with("warn  claude-code: "), "{claude}");
    assert!(
        claude.contains("the matcher \"Edit|Write\" of `cmdguard hook claude-code` does not cover the Bash tool"),
        "{claude}"
    );
    assert!(claude.contains("the hook runs /opt/\\x1b[2J/cmdguard, which does not exist"), "{claude}");
    assert!(!report.contains('\x1b'), "unescaped text from a settings file reached the report");
    assert!(claude.contains("fix: add to ") && claude.contains("cmdguard hook claude-code"), "{claude}");

    // A settings file that is not JSON is named.
    t.write(".claude/settings.local.json", "{\"hooks\": ");
    let (_, report) = doctor(&t, &good_path());
    assert!(line(&report, "claude-code").contains("settings.local.json is not valid JSON"), "{report}");
}

#[test]
fn a_hook_that_answers_wrongly_fails_the_probe() {
    let t = healthy();
    t.user_rules(
        "disable = [\"filesystem.rm-root-or-home\"]\n\n[[rule]]\nid = \"mine.ls\"\naction = \"ask\"\npattern = '^ls'\nreason = \"lists files\"\n",
    );
    let (c, report) = doctor(&t, &good_path());
    assert_eq!(c, 1, "{report}");
    let probe = line(&report, "probe");
    assert!(probe.starts_with("fail  probe: `cmdguard hook claude-code` answered wrongly"), "{probe}");
    assert!(probe.contains("`ls` got ask (cmdguard: this command needs your approval: ls"), "{probe}");
    assert!(probe.contains("`rm -rf ~` got ask"), "{probe}");
    assert!(probe.contains("fix: see what the rules decide here"), "{probe}");
}
