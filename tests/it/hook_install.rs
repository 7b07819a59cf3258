//! `cmdguard hook install HOST` and `uninstall` on real files under a temporary HOME and
//! project: other keys and their order kept, a second install changing nothing, the backup,
//! uninstall giving back the file it started from, a malformed file refused untouched, and
//! `doctor` seeing the result. The files of cmdguard's own (OpenCode's plugin, Cline's script)
//! are run for real: the script by sh, the plugin by node where node is installed.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::env::{TestEnv, code, stderr, stdout};

/// Each JSON host's user settings file under HOME and the event its entry goes under.
const JSON_HOSTS: &[(&str, &str, &str)] = &[
    ("claude-code", ".claude/settings.json", "PreToolUse"),
    ("codex", ".codex/hooks.json", "PreToolUse"),
    ("copilot", ".copilot/hooks/cmdguard.json", "preToolUse"),
    ("gemini", ".gemini/settings.json", "BeforeTool"),
    ("cursor", ".cursor/hooks.json", "beforeShellExecution"),
    ("windsurf", ".codeium/windsurf/hooks.json", "pre_run_command"),
];

/// A settings file as a person keeps it: other settings, another hook on the same event,
/// keys in no sorted order.
const EXISTING: &str = r#"{
  "zeta": "first",
  "model": {
    "name": "big",
    "effort": 3
  },
  "hooks": {
    "EVENT": [
      {
        "command": "prettier --check"
      }
    ],
    "Stop": []
  },
  "alpha": [
    1,
    2.5,
    null
  ]
}
"#;

fn exe() -> String {
    PathBuf::from(env!("CARGO_BIN_EXE_cmdguard")).canonicalize().unwrap().display().to_string()
}

fn doctor_line(t: &TestEnv, host: &str) -> String {
    let o = t.run(["doctor"]);
    let report = stdout(&o);
    report.lines().find(|l| l[6..].starts_with(&format!("{host}:"))).unwrap_or_else(|| panic!("{report}")).to_string()
}

#[test]
fn install_edits_the_settings_in_place_and_uninstall_gives_them_back() {
    for (host, rel, event) in JSON_HOSTS {
        let t = TestEnv::new();
        let path = t.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let original = EXISTING.replace("EVENT", event);
        std::fs::write(&path, &original).unwrap();
        let backup = path.with_file_name(format!("{}.cmdguard-backup", path.file_name().unwrap().to_str().unwrap()));

        let o = t.run(["hook", "install", host]);
        assert_eq!(code(&o), 0, "{host}: {}", stderr(&o));
        let said = stdout(&o);
        assert!(said.starts_with(&format!("cmdguard: installed the {host} hook in {}\n", path.display())), "{said}");
        assert!(
            said.contains(&format!("  added to hooks.{event}: ")) && said.contains(&format!("{} hook {host}", exe()))
        );
        assert!(said.contains(&format!("the previous file is kept as {}", backup.display())), "{said}");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), original, "{host}: the backup is the old file");
        let installed = std::fs::read_to_string(&path).unwrap();
        // Everything that was there is still there, in its order, before cmdguard's entry.
        let keys = |text: &str| {
            text.lines().filter_map(|l| l.trim().split_once("\":").map(|(k, _)| k.to_string())).collect::<Vec<_>>()
        };
        let before = keys(&original);
        let after = keys(&installed);
        assert_eq!(&after[..before.len() - 2], &before[..before.len() - 2], "{host}:\n{installed}");
        assert!(installed.contains("\"prettier --check\""), "{installed}");
        let hooks = serde_json::from_str::<serde_json::Value>(&installed).unwrap()["hooks"][event].clone();
        assert_eq!(hooks.as_array().unwrap().len(), 2, "{host}: {hooks}");
        assert!(
            doctor_line(&t, host).starts_with(&format!("ok    {host}: hooked in ~/{rel}")),
            "{}",
            doctor_line(&t, host)
        );

        let o = t.run(["hook", "install", host]);
        assert_eq!(code(&o), 0);
        assert_eq!(
            stdout(&o),
            format!("cmdguard: the {host} hook is already installed in {}; nothing changed\n", path.display())
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), installed, "{host}: a second install changes nothing");

        let o = t.run(["hook", "uninstall", host]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stdout(&o).starts_with(&format!(
                "cmdguard: removed the {host} hook from {}\n  removed from hooks.{event}: ",
                path.display()
            )),
            "{}",
            stdout(&o)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original, "{host}: uninstall restores the file");
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), installed);
        let o = t.run(["hook", "uninstall", host]);
        assert_eq!(
            stdout(&o),
            format!("cmdguard: {} has no cmdguard hook for {host}; nothing changed\n", path.display())
        );
    }
}

#[test]
fn a_fresh_install_prints_what_it_wrote() {
    let t = TestEnv::new();
    let o = t.run(["hook", "install", "claude-code", "--project"]);
    let path = t.project.join(".claude/settings.json");
    let want = format!(
        "cmdguard: installed the claude-code hook in {}\n  added to hooks.PreToolUse: {{\"matcher\":\"Bash\",\"hooks\":[{{\"type\":\"command\",\"command\":\"{} hook claude-code\",\"timeout\":600}}]}}\n",
        path.display(),
        exe()
    );
    assert_eq!((code(&o), stdout(&o)), (0, want));
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.starts_with("{\n  \"hooks\": {\n    \"PreToolUse\": [\n"), "{file}");
    assert!(!path.with_file_name("settings.json.cmdguard-backup").exists(), "no old file, no backup");
    // The installed hook works: the entry's command, run as the host runs it.
    let command =
        serde_json::from_str::<serde_json::Value>(&file).unwrap()["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_string();
    let call = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"}}"#;
    let o = crate::hook_failure::feed(t.program("sh", ["-c", &command]), call);
    assert!(stdout(&o).contains("\"permissionDecision\":\"deny\""), "{}", stdout(&o));
}

#[test]
fn a_malformed_settings_file_is_refused_untouched() {
    let t = TestEnv::new();
    let path = t.home.join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let broken = "{\n  \"theme\": \"dark\",\n  hooks: {}\n}\n";
    std::fs::write(&path, broken).unwrap();
    for args in [["hook", "install", "gemini"], ["hook", "uninstall", "gemini"]] {
        let o = t.run(args);
        assert_eq!(code(&o), 78, "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{}:3:3: is not valid JSON", path.display())), "{}", stderr(&o));
        assert!(stderr(&o).contains("nothing was changed"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
        assert!(!path.with_file_name("settings.json.cmdguard-backup").exists());
    }
    // Valid JSON of the wrong shape is refused the same way.
    std::fs::write(&path, "{\"hooks\": [1]}").unwrap();
    let o = t.run(["hook", "install", "gemini"]);
    assert_eq!(code(&o), 78);
    assert!(stderr(&o).contains("\"hooks\" is not an object"), "{}", stderr(&o));
}

#[test]
fn clines_script_runs_cmdguard_and_blocks_without_it() {
    let t = TestEnv::new();
    let o = t.run(["hook", "install", "cline", "--project"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let script = t.project.join(".clinerules/hooks/PreToolUse");
    assert!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o111 != 0, "Cline runs only executables");
    assert!(doctor_line(&t, "cline").starts_with("ok    cline: hooked in"), "{}", doctor_line(&t, "cline"));
    let call = |command: &str| {
        let root = t.project.display();
        format!(
            r#"{{"hookName":"PreToolUse","taskId":"1","workspaceRoots":["{root}"],"preToolUse":{{"toolName":"execute_command","parameters":{{"command":"{command}"}}}}}}"#
        )
    };
    let run = |input: &str| stdout(&crate::hook_failure::feed(t.program(script.to_str().unwrap(), [""; 0]), input));
    assert_eq!(run(&call("ls")), "{\"cancel\":false}\n");
    assert!(run(&call("rm -rf ~")).starts_with("{\"cancel\":true,\"errorMessage\":\"cmdguard: NOT RUN: rm -rf ~"));
    // cmdguard moved away: the script still blocks.
    let text = std::fs::read_to_string(&script).unwrap().replace(&exe(), "/nowhere/cmdguard");
    std::fs::write(&script, text).unwrap();
    assert!(run(&call("ls")).starts_with("{\"cancel\":true"), "{}", run(&call("ls")));
    assert!(doctor_line(&t, "cline").contains("/nowhere/cmdguard, which does not exist"));
    // A script cmdguard did not write is neither replaced nor removed.
    std::fs::write(&script, "#!/bin/sh\necho '{\"cancel\":false}'\n").unwrap();
    for verb in ["install", "uninstall"] {
        let o = t.run(["hook", verb, "cline", "--project"]);
        assert_eq!(code(&o), 78, "{verb}");
        assert!(stderr(&o).contains("not written by cmdguard"), "{}", stderr(&o));
    }
    std::fs::remove_file(&script).unwrap();
    assert_eq!(code(&t.run(["hook", "install", "cline", "--project"])), 0);
    assert_eq!(code(&t.run(["hook", "uninstall", "cline", "--project"])), 0);
    assert!(!script.exists());
}

#[test]
fn opencodes_plugin_throws_on_what_cmdguard_refuses() {
    let t = TestEnv::new();
    let o = t.run(["hook", "install", "opencode", "--project"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let plugin = t.project.join(".opencode/plugins/cmdguard.js");
    assert!(doctor_line(&t, "opencode").starts_with("ok    opencode: hooked in"), "{}", doctor_line(&t, "opencode"));
    let o = t.run(["hook", "install", "opencode", "--project"]);
    assert!(stdout(&o).contains("already installed"), "{}", stdout(&o));
    if std::process::Command::new("node").arg("--version").output().is_err() {
        eprintln!("node is not installed: the plugin itself is not run");
        return;
    }
    // OpenCode loads the plugin as an ES module; node needs the .mjs name to do the same.
    let module = t.project.join("plugin.mjs");
    std::fs::copy(&plugin, &module).unwrap();
    let script = r#"
        const { CmdguardGuard } = await import(process.argv[1]);
        const hooks = await CmdguardGuard({ directory: process.argv[2] });
        const run = async (tool, args) => {
          try { await hooks["tool.execute.before"]({ tool, sessionID: "ses_1", callID: "c1" }, { args }); return "ran"; }
          catch (e) { return "stopped: " + e.message.split("\n")[0]; }
        };
        console.log(JSON.stringify([await run("bash", { command: "ls" }), await run("bash", { command: "git reset --hard" }),
          await run("read", { filePath: "x" })]));
    "#;
    let project = t.project.to_str().unwrap();
    let o =
        t.program("node", ["--input-type=module", "-e", script, module.to_str().unwrap(), project]).output().unwrap();
    assert_eq!(stdout(&o), "[\"ran\",\"stopped: cmdguard: NOT RUN: git reset --hard\",\"ran\"]\n", "{}", stderr(&o));
    // Without a cmdguard to ask, every bash call is stopped.
    let text = std::fs::read_to_string(&plugin).unwrap().replace(&exe(), "/nowhere/cmdguard");
    std::fs::write(&module, text).unwrap();
    let o =
        t.program("node", ["--input-type=module", "-e", script, module.to_str().unwrap(), project]).output().unwrap();
    assert!(
        stdout(&o).starts_with("[\"stopped: cmdguard: NOT RUN: cmdguard could not check"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert_eq!(code(&t.run(["hook", "uninstall", "opencode", "--project"])), 0);
    assert!(!plugin.exists());
}

#[test]
fn codex_hooks_kept_in_config_toml_are_edited_there() {
    let t = TestEnv::new();
    let path = t.home.join(".codex/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let original = "# my Codex\nmodel = \"o4\" # the big one\n\n[[hooks.PostToolUse]]\nmatcher = \"*\"\n\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"notify-send done\"\n\n[features]\ncodex_hooks = true\n";
    std::fs::write(&path, original).unwrap();
    let o = t.run(["hook", "install", "codex"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(&format!(
            "cmdguard: installed the codex hook in {}\n  added to [[hooks.PreToolUse]]: matcher = \"Bash\"",
            path.display()
        )),
        "{}",
        stdout(&o)
    );
    assert!(!t.home.join(".codex/hooks.json").exists(), "the hooks stay where the user keeps them");
    let installed = std::fs::read_to_string(&path).unwrap();
    // cmdguard's tables join the other hooks; everything else is as it was, comments included.
    let ours = format!(
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{} hook codex\"\ntimeout = 30\n\n",
        exe()
    );
    assert!(installed.contains(&ours), "{installed}");
    assert_eq!(installed.replace(&ours, ""), original, "comments, tables and order kept");
    assert!(
        doctor_line(&t, "codex").starts_with("ok    codex: hooked in ~/.codex/config.toml"),
        "{}",
        doctor_line(&t, "codex")
    );
    assert!(stdout(&t.run(["hook", "install", "codex"])).contains("already installed"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), installed);
    assert_eq!(code(&t.run(["hook", "uninstall", "codex"])), 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);

    // A config.toml that does not parse is no place to keep hooks: it is left alone, and the
    // hook goes to hooks.json, which Codex reads as well.
    let broken = "[[hooks.PreToolUse]]\nmatcher = \"Bash\n";
    std::fs::write(&path, broken).unwrap();
    let o = t.run(["hook", "install", "codex"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    assert!(stdout(&o).contains(&format!("in {}", t.home.join(".codex/hooks.json").display())), "{}", stdout(&o));
}

#[test]
fn an_older_entry_is_replaced_and_a_shared_group_kept() {
    // An entry from the hand-written snippet (cmdguard on PATH) shares its group with another
    // hook; the settings file is a link into a dotfiles directory.
    let t = TestEnv::new();
    let real = t.home.join("dotfiles/claude.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::create_dir_all(t.home.join(".claude")).unwrap();
    let old = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-log"}, {"type": "command", "command": "cmdguard hook claude-code"}]}]}}"#;
    std::fs::write(&real, old).unwrap();
    std::os::unix::fs::symlink(&real, t.home.join(".claude/settings.json")).unwrap();
    let o = t.run(["hook", "install", "claude-code"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.contains("  removed from hooks.PreToolUse: {\"type\":\"command\",\"command\":\"cmdguard hook claude-code\"}\n  added to hooks.PreToolUse: "), "{said}");
    assert!(std::fs::symlink_metadata(t.home.join(".claude/settings.json")).unwrap().file_type().is_symlink());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{v}");
    assert_eq!(groups[0]["hooks"], serde_json::json!([{"type": "command", "command": "audit-log"}]));
    assert_eq!(groups[1]["hooks"][0]["command"], format!("{} hook claude-code", exe()));
    // The hand-written entry had no timeout; the one installed sets Claude Code's 600 s.
    assert_eq!(groups[1]["hooks"][0]["timeout"], 600);
    let o = t.run(["hook", "uninstall", "claude-code"]);
    assert_eq!(code(&o), 0);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit-log"}]}]}})
    );
    // A mistyped host is a usage error for a person, not the exit 2 a host reads as a block.
    assert_eq!(code(&t.run(["hook", "install", "claud"])), 64);
}
