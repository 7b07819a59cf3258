//! The two files `cmdguard hook install` writes whole: OpenCode's plugin, which hands each bash
//! call to `cmdguard hook opencode` and throws to stop it, and Cline's `PreToolUse` script.
//! Both fail closed: no answer from cmdguard is a refusal.

use std::path::Path;

/// The OpenCode plugin (JavaScript, loaded by OpenCode from its plugins directory).
pub fn opencode(program: &Path) -> String {
    let program = serde_json::to_string(&program.to_string_lossy()).unwrap_or_default();
    OPENCODE.replace("\"{{PROGRAM}}\"", &program)
}

const OPENCODE: &str = r#"// cmdguard's guard for OpenCode, written by `cmdguard hook install opencode`.
// Before each bash call, `cmdguard hook opencode` judges the command; a refusal, or any failure
// to get cmdguard's answer, throws, which stops the call. Remove with `cmdguard hook uninstall opencode`.
import { spawnSync } from "node:child_process";

const CMDGUARD = "{{PROGRAM}}";

export const CmdguardGuard = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (input.tool !== "bash") return;
    const call = { tool: input.tool, sessionID: input.sessionID, callID: input.callID, args: output.args, cwd: directory };
    const r = spawnSync(CMDGUARD, ["hook", "opencode"], { input: JSON.stringify(call), encoding: "utf8", timeout: 30000 });
    if (r.error || r.status !== 0) {
      const why = r.error ? r.error.message : `exit status ${r.status}`;
      throw new Error(`cmdguard: NOT RUN: cmdguard could not check this command (${why}). ${r.stderr || ""}`.trim());
    }
    const out = (r.stdout || "").trim();
    if (out === "") return;
    let answer = {};
    try {
      answer = JSON.parse(out);
    } catch {
      throw new Error("cmdguard: NOT RUN: cmdguard's answer could not be read, so the command was blocked.");
    }
    throw new Error(typeof answer.reason === "string" ? answer.reason : "cmdguard: NOT RUN");
  },
});
"#;

/// Cline's hook script; `program` is cmdguard's path, already quoted for sh. When it cannot be
/// run, the script prints the cancel itself.
pub fn cline(program: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # cmdguard's PreToolUse hook for Cline, written by `cmdguard hook install cline`.\n\
         # Remove with `cmdguard hook uninstall cline`.\n\
         if [ -x {program} ]; then exec {program} hook cline; fi\n\
         echo '{{\"cancel\":true,\"errorMessage\":\"cmdguard: NOT RUN: cmdguard could not be started, so this tool call was blocked\"}}'\n"
    )
}
