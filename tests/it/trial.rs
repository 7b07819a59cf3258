//! Trial mode (`mode = "audit"`, `--audit`): nothing is blocked or asked, every would-be ask or
//! deny runs and is recorded; `log --would` and `report` read the real audit log back.

use crate::env::{TestEnv, code, stderr, stdout};

/// A harmless ask rule and a harmless deny rule: what they guard only creates a file, so the
/// test can see whether the command ran.
const RULES: &str = r#"
[[rule]]
id = "test.touch"
action = "ask"
pattern = '^touch '
reason = "creates files"

[[rule]]
id = "test.mkdir"
action = "deny"
pattern = '^mkdir '
reason = "never makes folders"
"#;

fn trial_env() -> TestEnv {
    let t = TestEnv::new();
    t.user_rules(&format!("[settings]\nmode = \"audit\"\n{RULES}"));
    t
}

#[test]
fn the_audit_setting_runs_would_be_asks_and_denies_and_records_them() {
    let t = trial_env();
    let o = t.run(["--session-key", "s1", "-c", "touch asked"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.exists("asked"), "the would-be ask ran");
    let o = t.run(["-c", "mkdir denied"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.exists("denied"), "the would-be deny ran");
    assert_eq!(code(&t.run(["-c", "true"])), 0);
    let audit = t.audit();
    assert_eq!(audit.len(), 2, "a passing command is not recorded: {audit:?}");
    assert_eq!(audit[0]["would"], true);
    assert_eq!(audit[0]["verdict"], "ask");
    assert_eq!(audit[0]["decided_by"], "audit");
    assert_eq!(audit[0]["ran"], true);
    assert_eq!(audit[0]["rules"], serde_json::json!(["test.touch"]));
    assert_eq!(audit[0]["allow"], serde_json::json!(["touch asked"]));
    assert!(audit[0]["session"].is_string());
    assert_eq!(audit[1]["verdict"], "deny");
    assert_eq!(audit[1]["rules"], serde_json::json!(["test.mkdir"]));
    assert!(audit[1].get("allow").is_none(), "no allow entry can let a deny through");
    // Every command judged in trial mode was counted, the passing one too.
    let day = std::fs::read_dir(t.state_dir().join("trial")).unwrap().next().unwrap().unwrap();
    assert!(day.file_name().to_string_lossy().starts_with("seen-"));
    assert_eq!(day.metadata().unwrap().len(), 3);
}

#[test]
fn the_audit_flag_is_for_one_call_only() {
    let t = TestEnv::new();
    t.user_rules(RULES);
    let o = t.run(["-c", "mkdir a"]);
    assert_eq!(code(&o), 77, "enforced without the flag");
    assert!(!t.exists("a"));
    let o = t.run(["--audit", "-c", "mkdir a"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.exists("a"));
    let o = t.run(["--audit", "--", "touch", "b"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(t.exists("b"));
    let audit = t.audit();
    assert_eq!(audit.iter().filter(|r| r["would"] == true).count(), 2, "{audit:?}");
    assert_eq!(audit[0]["decided_by"], "rule");
    // Nothing is counted outside trial mode: the state has no per-day counts for the enforced call.
    let days = std::fs::read_dir(t.state_dir().join("trial")).unwrap().count();
    assert_eq!(days, 1);
}

#[test]
fn without_trial_mode_no_count_is_kept() {
    let t = TestEnv::new();
    t.user_rules(RULES);
    assert_eq!(code(&t.run(["-c", "true"])), 0);
    assert!(!t.state_dir().join("trial").exists(), "a passing command writes nothing");
}

#[test]
fn a_bad_mode_is_a_broken_configuration() {
    let t = TestEnv::new();
    t.user_rules("[settings]\nmode = \"audti\"\n");
    let o = t.run(["-c", "true"]);
    assert_eq!(code(&o), 78);
    assert!(stderr(&o).contains("\"enforce\" or \"audit\""), "{}", stderr(&o));
}

#[test]
fn a_project_file_cannot_switch_enforcing_off() {
    let t = TestEnv::new();
    t.user_rules(RULES);
    t.write(".cmdguard.toml", "[settings]\nmode = \"audit\"\n");
    let o = t.run(["-c", "mkdir x"]);
    assert_eq!(code(&o), 78, "{}", stderr(&o));
    assert!(stderr(&o).contains("only in your own rules.toml"), "{}", stderr(&o));
    assert!(!t.exists("x"));
}

#[test]
fn check_reports_the_verdict_and_says_audit() {
    let t = trial_env();
    let o = t.run(["check", "-c", "mkdir x"]);
    assert_eq!(code(&o), 2, "check still reports deny");
    assert!(stdout(&o).contains("deny: mkdir x"), "{}", stdout(&o));
    assert!(stdout(&o).contains("audit: trial mode"), "{}", stdout(&o));
    let o = t.run(["--json", "check", "-c", "touch x"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((v["verdict"].as_str(), v["audit"].as_bool()), (Some("ask"), Some(true)));
    assert!(!t.exists("x") && t.audit().is_empty(), "check never runs or records");
}

#[test]
fn log_would_lists_only_would_be_decisions() {
    let t = TestEnv::new();
    t.user_rules(RULES);
    assert_eq!(code(&t.run(["-c", "mkdir enforced"])), 77);
    assert_eq!(code(&t.run(["--audit", "-c", "mkdir tried"])), 0);
    let o = t.run(["log", "--would"]);
    let out = stdout(&o);
    assert!(out.contains("mkdir tried") && out.contains("would deny [test.mkdir]"), "{out}");
    assert!(!out.contains("mkdir enforced"), "{out}");
    let o = t.run(["--json", "log", "--would"]);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
}

#[test]
fn a_hook_in_trial_mode_lets_the_call_through_and_records_it() {
    let t = trial_env();
    let call = |cmd: &str| {
        serde_json::json!({"session_id": "abc", "cwd": t.project, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": cmd}})
        .to_string()
    };
    for host in ["claude-code", "codex"] {
        let o = t.run_with_input(&["hook", host], &call("mkdir x"));
        assert_eq!((code(&o), stdout(&o).as_str()), (0, ""), "{host}: no objection; {}", stderr(&o));
    }
    let copilot = serde_json::json!({"sessionId": "abc", "cwd": t.project, "toolName": "bash",
        "toolArgs": serde_json::json!({"command": "mkdir z"}).to_string()});
    let o = t.run_with_input(&["hook", "copilot"], &copilot.to_string());
    assert_eq!((code(&o), stdout(&o).as_str()), (0, ""), "copilot: no objection; {}", stderr(&o));
    let gemini = call("touch y").replace("PreToolUse", "BeforeTool").replace("\"Bash\"", "\"run_shell_command\"");
    let o = t.run_with_input(&["hook", "gemini"], &gemini);
    assert_eq!(stdout(&o).trim(), "{}", "{}", stderr(&o));
    let audit = t.audit();
    assert_eq!(audit.len(), 4, "{audit:?}");
    assert!(audit.iter().all(|r| r["would"] == true && r["decided_by"] == "audit"));
    // The same call enforced is blocked.
    t.user_rules(RULES);
    let o = t.run_with_input(&["hook", "codex"], &call("mkdir x"));
    assert!(stdout(&o).contains("\"deny\""), "{}", stdout(&o));
}

#[test]
fn report_summarizes_a_trial_and_its_allow_entries_silence_the_routine_asks() {
    let t = trial_env();
    for _ in 0..3 {
        assert_eq!(code(&t.run(["-c", "touch often"])), 0);
    }
    assert_eq!(code(&t.run(["-c", "touch once"])), 0);
    assert_eq!(code(&t.run(["-c", "mkdir d1"])), 0);
    assert_eq!(code(&t.run(["-c", "echo quiet"])), 0);
    let o = t.run(["report", "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["seen"], 6);
    assert_eq!((r["would_ask"].as_u64(), r["would_deny"].as_u64()), (Some(4), Some(1)));
    assert_eq!(r["top_rules"][0], serde_json::json!({"name": "test.touch", "count": 4}));
    assert_eq!(r["top_commands"][0]["name"], "touch often");
    assert_eq!(r["top_commands"][0]["count"], 3);
    let suggested = r["suggested_allow"].as_array().unwrap();
    assert_eq!(suggested.len(), 1, "only the ask that came back: {suggested:?}");
    assert_eq!(suggested[0]["name"], "touch often");

    let human = stdout(&t.run(["report"]));
    assert!(human.contains("commands seen in trial mode: 6"), "{human}");
    assert!(human.contains("would have been denied:      1"), "{human}");
    let toml_at = human.find("[[allow]]").expect(&human);
    let end = human[toml_at..].find("\n\n").map_or(human.len(), |e| toml_at + e);
    let pasted = &human[toml_at..end];
    assert!(pasted.contains("command = \"touch often\""), "{pasted}");

    // Enforce, with the pasted entries in the user's rules: the routine ask passes, the rest asks.
    t.user_rules(&format!("{RULES}\n{pasted}\n"));
    let o = t.run(["-c", "touch often"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(code(&t.run(["-c", "touch once"])), 77);
}

#[test]
fn report_since_leaves_out_older_records() {
    let t = TestEnv::new();
    let old = r#"{"time":"2020-01-01T00:00:00Z","session":null,"project":"/p","cwd":"/p","command":"touch old","verdict":"ask","ran":true,"decided_by":"audit","rules":["test.touch"],"pid":1,"would":true,"allow":["touch old"]}"#;
    let enforced = r#"{"time":"2099-01-01T00:00:00Z","session":null,"project":"/p","cwd":"/p","command":"touch kept","verdict":"ask","ran":false,"decided_by":"prompt","rules":["test.touch"],"pid":1}"#;
    std::fs::create_dir_all(t.state_dir()).unwrap();
    std::fs::write(t.state_dir().join("audit.jsonl"), format!("{old}\n{old}\n{enforced}\n")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&stdout(&t.run(["report", "--json"]))).unwrap();
    assert_eq!(all["would_ask"], 2, "only would-be records count: {all}");
    assert_eq!(all["suggested_allow"][0]["name"], "touch old");
    let week: serde_json::Value = serde_json::from_str(&stdout(&t.run(["report", "--json", "--since", "7d"]))).unwrap();
    assert_eq!((week["would_ask"].as_u64(), week["seen"].as_u64()), (Some(0), Some(0)), "{week}");
    assert!(week["since"].is_string());
    let o = t.run(["report", "--since", "last week"]);
    assert_eq!(code(&o), 64, "{}", stderr(&o));
}
