//! `[[program]]` entries in a rules file: the user's own tools join the program catalogue.
//! A wrapper's command is judged, a data program's operands are quiet, an unknown program's
//! operands are read; a broken entry fails with its file and line; a project file's entries
//! count as loosening and need trust; the rules cache keeps them.

use crate::env::{TestEnv, code, stderr, stdout};
use crate::trust::trust_at;

const TOOLS: &str = r#"
[[program]]
names = ["deployctl"]
role = "wrapper"
about = "our deploy tool: `deployctl exec [--env E] CMD` runs CMD on the deploy host"
subcommands = ["exec"]
short_value = "e"
long_value = ["--env"]
examples = ["deployctl exec --env prod rm -rf ~"]

[[program]]
names = ["notes"]
role = "data"
"#;

fn verdict(t: &TestEnv, command: &str) -> (i32, String) {
    let o = t.run(["check", "-c", command]);
    (code(&o), stdout(&o) + &stderr(&o))
}

#[test]
fn user_entries_extend_the_catalogue() {
    let t = TestEnv::new();
    // Unknown at first: the operands are read, and what they carry asks (never denies).
    assert_eq!(verdict(&t, "deployctl exec --env prod rm -rf ~").0, 1);
    assert_eq!(verdict(&t, "notes add 'rm -rf ~ next'").0, 1);
    t.user_rules(TOOLS);
    for round in ["miss", "hit"] {
        // A wrapper: its command is judged as it is (`rm -rf ~` denies).
        let (c, out) = verdict(&t, "deployctl exec --env prod rm -rf ~");
        assert_eq!(c, 2, "{round}: {out}");
        assert_eq!(verdict(&t, "deployctl exec -e prod cargo build").0, 0, "{round}");
        // Data: dangerous text there is quiet.
        assert_eq!(verdict(&t, "notes add 'rm -rf ~ next'").0, 0, "{round}");
    }
    let o = t.run(["explain", "-c", "deployctl status"]);
    assert!(stdout(&o).contains("our deploy tool"), "{}", stdout(&o));
}

#[test]
fn a_broken_entry_fails_with_file_and_line() {
    let t = TestEnv::new();
    t.user_rules("[[rule]]\nid = \"a\"\naction = \"ask\"\npattern = 'x'\nreason = \"x\"\n\n[[program]]\nnames = [\"t\"]\nrole = \"wrapper\"\nlong = [\"verbose\"]\n");
    let (c, out) = verdict(&t, "true");
    assert_eq!(c, 78, "{out}");
    assert!(out.contains("rules.toml, line 7") && out.contains("\"verbose\"") && out.contains("`-`"), "{out}");
    t.user_rules("[[program]]\nnames = [\"t\"]\nrole = \"analysed\"\n");
    let (c, out) = verdict(&t, "true");
    assert!(c == 78 && out.contains("analysed"), "{out}");
    t.user_rules("[[program]]\nrole = \"data\"\n");
    let (c, out) = verdict(&t, "true");
    assert!(c == 78 && out.contains("names"), "{out}");
}

#[test]
fn a_project_entry_is_loosening_and_needs_trust() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", "[[program]]\nnames = [\"mytool\"]\nrole = \"data\"\n");
    // Untrusted, the entry is ignored: mytool stays unknown and its operand is read.
    let (c, out) = verdict(&t, "mytool 'rm -rf ~'");
    assert_eq!(c, 1, "{out}");
    assert!(out.contains("not trusted"), "{out}");
    let (c, out) = trust_at(&t, &[".cmdguard.toml"], true);
    assert_eq!(c, 0, "{out}");
    assert!(out.contains("[[program]] mytool"), "{out}");
    assert_eq!(verdict(&t, "mytool 'rm -rf ~'").0, 0);
}

/// A wrapper with the forms of `sudo`, `timeout` and `env -S`: `runas [-l] [-s] [--as USER]
/// [-S STRING] PRIORITY [NAME=value…] CMD`.
const RUNAS: &str = r#"
[[program]]
names = ["runas"]
role = "wrapper"
long_value = ["--as"]
informs = ["-l"]
skip = 1
skip_then_command = true
assignments = true
shell_without_command = ["-s"]
script = ["-S"]
script_with_operands = true
"#;

#[test]
fn user_wrappers_use_the_fields_of_the_built_in_ones() {
    let t = TestEnv::new();
    t.user_rules(RUNAS);
    for round in ["miss", "hit"] {
        for command in [
            "runas --as=ops 5 A=1 rm -rf ~",
            "runas -- 5 rm -rf ~",
            "runas -S 'rm -rf' 5 ~",
            "echo 'rm -rf ~' | runas -s",
        ] {
            let (c, out) = verdict(&t, command);
            assert_eq!(c, 2, "{round}: {command}: {out}");
        }
        // `-l` runs nothing; the operand after the priority is the command, options or not.
        assert_eq!(verdict(&t, "runas -l").0, 0, "{round}");
        assert_eq!(verdict(&t, "runas 5 ls -la").0, 0, "{round}");
    }
    t.user_rules("[[program]]\nnames = [\"t\"]\nrole = \"wrapper\"\nshell_without_command = [\"s\"]\n");
    let (c, out) = verdict(&t, "true");
    assert!(c == 78 && out.contains("\"s\"") && out.contains("`-`"), "{out}");
}

/// A tool whose first operand names its subcommand, and a subcommand with its own.
const SHIPIT: &str = r#"
[[program]]
names = ["shipit"]
role = "data"
about = "our release tool: `shipit [-e ENV] COMMAND`"
subcommand_levels = 1
short_value = "e"
long_value = ["--env"]

[[program]]
names = ["shipit db"]
role = "data"
subcommand_levels = 1
"#;

#[test]
fn user_entries_say_where_the_subcommand_is() {
    let t = TestEnv::new();
    // Unknown, its dynamic operand carries no command to read.
    assert_eq!(verdict(&t, "shipit \"$cmd\" prod").0, 0);
    t.user_rules(SHIPIT);
    for round in ["miss", "hit"] {
        let (c, out) = verdict(&t, "shipit -e prod \"$cmd\"");
        assert_eq!(c, 1, "{round}: {out}");
        assert!(out.contains("the subcommand of `shipit` is only known when the command runs: `$cmd`"), "{out}");
        let (c, out) = verdict(&t, "shipit db $(cat op) orders");
        assert_eq!(c, 1, "{round}: {out}");
        assert!(out.contains("the subcommand of `shipit db`"), "{out}");
        // An option's value and a later operand are not the subcommand.
        assert_eq!(verdict(&t, "shipit --env \"$env\" deploy \"$tag\"").0, 0, "{round}");
    }
    t.user_rules("[[program]]\nnames = [\"t\"]\nrole = \"data\"\nsubcommand_levels = 9\n");
    let (c, out) = verdict(&t, "true");
    assert!(c == 78 && out.contains("subcommand_levels"), "{out}");
}

#[test]
fn explain_says_why_a_dynamic_subcommand_asks() {
    let t = TestEnv::new();
    let o = t.run(["explain", "-c", "git $x --hard"]);
    let out = stdout(&o);
    assert!(out.contains("core.dynamic: the subcommand of `git` is only known when the command runs: `$x`"), "{out}");
    assert!(out.contains("verdict: ask"), "{out}");
}
