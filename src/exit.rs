//! Exit codes, decided here once (DESIGN.md, "What the agent is told").

/// The command was not run: denied, refused, or cmdguard could not decide safely.
pub const NOT_RUN: u8 = 77;
/// The configuration is broken; the command was not run.
pub const CONFIG: u8 = 78;
/// The command line of cmdguard itself is wrong.
pub const USAGE: u8 = 64;
/// The program exists but cannot be executed.
pub const CANNOT_EXECUTE: u8 = 126;
/// The program was not found.
pub const NOT_FOUND: u8 = 127;

/// A management command (trust, approve, deny, watch) that was declined, cancelled or could not confirm.
pub const DECLINED: u8 = 1;
/// `cmdguard hook` could not even read its own command line: exit 2 is the answer that blocks
/// the tool call in most hosts (Claude Code, Codex, Gemini CLI), where 64 would let it run.
pub const HOOK_BLOCK: u8 = 2;
