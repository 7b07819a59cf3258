//! Approval from hook mode, for a call whose verdict is `ask`. A host that can ask (Claude Code)
//! keeps its own confirmation unless `[hook.HOST] approval` says otherwise. For the others the
//! call either waits in its session's queue for `cmdguard approve` / `watch` from any terminal
//! (`approval = "wait"`, or `no_tty = "wait"`), or is blocked with an approval code the user
//! passes to `cmdguard approve CODE`, after which the agent's retry of the same command, in the
//! same host session and directory, passes. Nothing here runs unless the verdict is `ask`.

use std::path::Path;
use std::time::Duration;

use super::{Answer, blocked, bounded, supervise};
use crate::approval::audit::{self, DecidedBy};
use crate::approval::codes::{self, Code};
use crate::approval::notify::{self, Waiting};
use crate::approval::queue::{self, Resolver};
use crate::cli::{Host, NoTty};
use crate::decide::Decision;
use crate::report::{self, NotRun};
use crate::rules::Policy;
use crate::rules::hooks::{self, HookApproval};
use crate::state;
use crate::term::escape;

/// One call that asks, with what every path below needs.
pub(super) struct Asked<'a> {
    pub host: Host,
    /// The host has an answer that asks the user.
    pub can_ask: bool,
    pub policy: &'a Policy,
    pub command: &'a str,
    pub session_key: Option<&'a str>,
    pub cwd: &'a Path,
    pub decision: &'a Decision,
    pub analysis: &'a crate::shell::Analysis,
    /// What the command would destroy, measured when first needed (`blast`).
    pub stake: std::cell::OnceCell<Option<String>>,
    /// `--no-tty` or the `no_tty` setting.
    pub no_tty: NoTty,
}

/// The host's name as `cmdguard hook` takes it (`claude-code`, `codex`, …).
fn host_name(host: Host) -> String {
    clap::ValueEnum::to_possible_value(&host).map_or_else(String::new, |v| v.get_name().to_string())
}

/// How this host gets approval under the settings in force.
fn approval(a: &Asked<'_>) -> HookApproval {
    let chosen = a.policy.settings.hook(&host_name(a.host)).approval;
    match chosen {
        Some(HookApproval::Native) if !a.can_ask => HookApproval::Code,
        Some(x) => x,
        None if a.can_ask => HookApproval::Native,
        None if a.no_tty == NoTty::Wait => HookApproval::Wait,
        None => HookApproval::Code,
    }
}

/// The answer for a call that asks; `None` leaves it to the host's own `ask`.
pub(super) fn on_ask(a: &Asked<'_>) -> Option<Answer> {
    let how = approval(a);
    if how == HookApproval::Native {
        return None;
    }
    let hash = a.session_key.map(state::key_hash);
    let cwd = a.cwd.display().to_string();
    // A code the user approved for exactly this call lets it through, whatever the mode.
    match codes::take(hash.as_deref(), &cwd, a.command, a.policy.settings.session_ttl) {
        Ok(Some(reach)) => {
            let mut r = record(a, DecidedBy::ApprovalCode, true);
            r.choice = Some(codes::reach_name(reach).to_string());
            r.recovery = keep(a);
            audit::record(&r);
            return Some(Answer::NoOpinion);
        }
        Ok(None) => {}
        Err(e) => return Some(blocked(&escape(&format!("its approval codes cannot be read: {e:#}")))),
    }
    Some(match how {
        HookApproval::Wait => wait(a, hash),
        _ => code_block(a, hash, None),
    })
}

impl Asked<'_> {
    fn stake(&self) -> Option<&str> {
        self.stake.get_or_init(|| crate::blast::stake(self.policy, self.analysis, self.decision, self.cwd)).as_deref()
    }
}

/// A recovery point for a call a human approved, kept before the host runs it.
fn keep(a: &Asked<'_>) -> Option<String> {
    crate::approval::recovery::before_run(&crate::approval::recovery::Approved {
        policy: a.policy,
        analysis: a.analysis,
        decision: a.decision,
        cwd: a.cwd,
        project: &crate::config::project_root(a.cwd),
        session: a.session_key.map(state::key_hash),
        command: a.command,
        // The supervised analysis has `supervise::LIMIT` in all; keeping takes at most half.
        limit: Some(super::supervise::LIMIT / 2),
    })
}

fn rules(a: &Asked<'_>) -> Vec<String> {
    a.decision.rule_ids(a.policy).into_iter().map(String::from).collect()
}

fn record(a: &Asked<'_>, by: DecidedBy, ran: bool) -> audit::Record {
    audit::Record {
        session: a.session_key.map(state::key_hash),
        project: crate::config::project_root(a.cwd).display().to_string(),
        cwd: a.cwd.display().to_string(),
        ran,
        via: Some(format!("hook {}", host_name(a.host))),
        stake: a.stake.get().cloned().flatten(),
        ..audit::Record::new(by, a.command.to_string(), a.decision.verdict.name(), rules(a))
    }
}

/// The refusal text, its last line (do not retry) replaced by `ending`.
fn refusal(a: &Asked<'_>, not_run: &NotRun<'_>, ending: &str) -> String {
    let text = report::refusal(a.command, a.policy, a.decision, false, not_run, a.stake());
    let body = text.strip_suffix(report::INSTRUCTION).unwrap_or(&text);
    bounded(format!("{body}{ending}"))
}

/// Blocks the call with an approval code; `waited` says how long it waited in the queue first.
fn code_block(a: &Asked<'_>, hash: Option<String>, waited: Option<u64>) -> Answer {
    let name = host_name(a.host);
    let template = Code {
        code: String::new(),
        session: hash.clone(),
        cwd: a.cwd.display().to_string(),
        project: crate::config::project_root(a.cwd).display().to_string(),
        command: a.command.to_string(),
        rules: rules(a),
        host: name.clone(),
        created: 0,
        expires: 0,
        approved: None,
    };
    let code = match codes::issue(template, a.policy.settings.code_ttl) {
        Ok(c) => c,
        Err(e) => return blocked(&escape(&format!("no approval code could be saved: {e:#}"))),
    };
    if waited.is_none() {
        audit::record(&record(a, DecidedBy::NoTerminal, false));
    }
    let s = &a.policy.settings;
    notify::waiting(
        s.bell,
        s.notify_command.as_deref(),
        &Waiting {
            kind: "code",
            command: a.command,
            cwd: &code.cwd,
            session: hash.as_deref(),
            rules: &code.rules,
            id: None,
            code: Some(&code.code),
            host: Some(&name),
        },
    );
    let detail = match waited {
        Some(secs) => format!("nobody approved it from another terminal within {}", state::human_duration(secs)),
        None => format!("{name}'s hook has no way to ask the user"),
    };
    let not_run = NotRun { by: DecidedBy::NoTerminal, detail: Some(&detail), reason: None, hint: None };
    let c = &code.code;
    let ending = format!(
        "The user can approve it. Tell the user what you want to run and why, and ask them to run this in a terminal of their own:\n    cmdguard approve {c}\n\
         (`cmdguard approve {c} --scope session` allows this exact command in this session from now on.) \
         The code expires in {}. When the user says it is approved, run exactly the same command again, unchanged, from the same directory: cmdguard will then let it through. \
         Do not run `cmdguard approve` yourself, and do not run a variation of the command to get around this.",
        // In whole minutes, rounded up: a second that passes while the code is made must not
        // turn the 10 minutes just granted into 9.
        state::human_duration(match code.expires.saturating_sub(state::now()) {
            left @ 0..60 => left,
            left => left.div_ceil(60) * 60,
        })
    );
    Answer::Block(refusal(a, &not_run, &ending))
}

/// Parks the call in its session's queue and waits for a human, below the host's hook timeout.
fn wait(a: &Asked<'_>, hash: Option<String>) -> Answer {
    let name = host_name(a.host);
    let s = &a.policy.settings;
    let secs = s.hook(&name).wait.unwrap_or_else(|| hooks::default_wait(&name).min(s.timeout));
    let trap = match crate::signals::Trap::install() {
        Ok(t) => t,
        Err(e) => return blocked(&escape(&format!("it cannot wait for approval: {e:#}"))),
    };
    let pid = std::process::id();
    let request = queue::Request {
        id: queue::new_id(),
        session: hash.clone(),
        project: crate::config::project_root(a.cwd).display().to_string(),
        cwd: a.cwd.display().to_string(),
        command: a.command.to_string(),
        rules: rules(a),
        need: crate::cmd::run::need(a.policy, a.decision, a.command),
        // "always" needs the analysis's places; a hook's request offers once and session.
        always: Vec::new(),
        pid,
        pid_start: queue::process_start(pid),
        created_ms: state::now_ms(),
        timeout: secs,
        stake: a.stake().map(String::from),
    };
    let dir = match queue::submit(&request) {
        Ok(d) => d,
        Err(e) => return blocked(&escape(&format!("the request could not be queued: {e:#}"))),
    };
    // The supervising parent waits for the analysis only briefly: tell it a human is awaited.
    supervise::extend(Duration::from_secs(secs + 2));
    notify::waiting(
        s.bell,
        s.notify_command.as_deref(),
        &Waiting {
            kind: "queue",
            command: a.command,
            cwd: &request.cwd,
            session: hash.as_deref(),
            rules: &request.rules,
            id: Some(&request.id),
            code: None,
            host: Some(&name),
        },
    );
    let waited = queue::wait(&dir, &request, &trap);
    queue::finish(&dir, &request.id);
    let d = match waited {
        Ok(queue::Waited::Decided(d)) => d,
        Ok(queue::Waited::Signal(sig, _)) => {
            let why = crate::signals::describe(sig);
            audit::record(&record(a, DecidedBy::Signal, false));
            let not_run = NotRun { by: DecidedBy::Signal, detail: Some(&why), reason: None, hint: None };
            return Answer::Block(refusal(a, &not_run, report::INSTRUCTION));
        }
        Err(e) => return blocked(&escape(&format!("waiting for approval failed: {e:#}"))),
    };
    let mut r = record(a, DecidedBy::Queue, false);
    r.reason = d.reason.clone();
    match d.by {
        Resolver::Human if d.approved => {
            r.ran = true;
            r.choice = Some(d.scope.map_or("once", queue::Scope::name).to_string());
            r.via = Some(d.via.clone());
            r.recovery = keep(a);
            audit::record(&r);
            Answer::NoOpinion
        }
        Resolver::Human => {
            r.via = Some(d.via.clone());
            audit::record(&r);
            let detail = format!("cmdguard {}", d.via);
            let not_run =
                NotRun { by: DecidedBy::Queue, detail: Some(&detail), reason: d.reason.as_deref(), hint: None };
            Answer::Block(refusal(a, &not_run, report::INSTRUCTION))
        }
        Resolver::Timeout => {
            r.decided_by = DecidedBy::Timeout;
            audit::record(&r);
            code_block(a, hash, Some(secs))
        }
        Resolver::Withdrawn => {
            r.decided_by = DecidedBy::Signal;
            audit::record(&r);
            let not_run =
                NotRun { by: DecidedBy::Signal, detail: Some("the request was withdrawn"), reason: None, hint: None };
            Answer::Block(refusal(a, &not_run, report::INSTRUCTION))
        }
    }
}
