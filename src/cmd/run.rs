//! The wrapper: analyse, decide, then exec the command or refuse with exit 77. An `ask` verdict
//! passes if the session's grants cover it, else asks the user on the terminal; every decision
//! that something made is written to the audit log before cmdguard execs or exits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::approval::always;
use crate::approval::audit::{self, DecidedBy};
use crate::approval::notify;
use crate::approval::prompt::{self, Answer, RuleLine};
use crate::approval::queue;
use crate::approval::session::{self, Need};
use crate::approval::trial;
use crate::cli::{Global, NoTty};
use crate::decide::{Decision, Verdict, decide, unit_text};
use crate::exec::{self, Job};
use crate::report::{self, NotRun};
use crate::rules::{Action, Policy};
use crate::shell::Analysis;
use crate::signals::Trap;
use crate::{exit, state};

/// One invocation's facts, for the audit log and the prompt.
pub struct Invocation<'a> {
    pub global: &'a Global,
    pub job: &'a Job,
    /// The shell that runs `-c STRING`, checked once before deciding.
    pub shell: PathBuf,
    pub command: String,
    pub cwd: PathBuf,
    pub project: PathBuf,
    /// What the command would destroy (`blast`), measured once it is refused or asked about.
    pub stake: std::cell::OnceCell<Option<String>>,
    pub analysis: &'a Analysis,
}

impl Invocation<'_> {
    /// Replaces cmdguard with the command; returns only if that failed (126/127).
    fn exec(&self) -> u8 {
        exec::exec(self.job, &self.shell)
    }

    /// Measures what the command would destroy, once (`blast::stake`).
    fn measure(&self, policy: &Policy, analysis: &Analysis, decision: &Decision) -> Option<&str> {
        self.stake.get_or_init(|| crate::blast::stake(policy, analysis, decision, &self.cwd)).as_deref()
    }

    /// Keeps a recovery point of what the approved command destroys, just before it runs.
    fn keep(&self, policy: &Policy, decision: &Decision) -> Option<String> {
        crate::approval::recovery::before_run(&crate::approval::recovery::Approved {
            policy,
            analysis: self.analysis,
            decision,
            cwd: &self.cwd,
            project: &self.project,
            session: self.global.session_key.as_deref().map(state::key_hash),
            command: &self.command,
            limit: None,
        })
    }

    /// The audit record of a command about to run, with its recovery point.
    fn ran_record(&self, policy: &Policy, decision: &Decision, by: DecidedBy) -> audit::Record {
        let recovery = self.keep(policy, decision);
        audit::Record { recovery, ..self.record(policy, decision, by, true) }
    }

    fn record(&self, policy: &Policy, decision: &Decision, by: DecidedBy, ran: bool) -> audit::Record {
        // An allow entry's record names the rules it let through; any other, the deciding ones.
        let ids = if by == DecidedBy::AllowEntry { decision.allowed_ids(policy) } else { decision.rule_ids(policy) };
        let rules = ids.into_iter().map(String::from).collect();
        audit::Record {
            stake: self.stake.get().cloned().flatten(),
            session: self.global.session_key.as_deref().map(state::key_hash),
            project: self.project.display().to_string(),
            cwd: self.cwd.display().to_string(),
            ran,
            ..audit::Record::new(by, self.command.clone(), decision.verdict.name(), rules)
        }
    }
}

pub fn run(global: &Global, job: Job) -> Result<u8> {
    let cwd = super::cwd()?;
    let policy = crate::config::load(&cwd, &global.rules)?;
    let shell = super::shell(global, &policy)?;
    let analysis = job.analyze(&shell);
    let decision = decide(&policy, &analysis);
    let audit_mode = global.is_audit(&policy);
    if audit_mode {
        trial::count_seen();
    }
    if decision.verdict == Verdict::Pass {
        return Ok(exec::exec(&job, &shell));
    }
    let project = crate::config::project_root(&cwd);
    let inv = Invocation {
        global,
        job: &job,
        shell,
        command: job.text(),
        project,
        cwd,
        analysis: &analysis,
        stake: Default::default(),
    };
    if audit_mode && matches!(decision.verdict, Verdict::Ask | Verdict::Deny) {
        return Ok(would(&inv, &policy, &analysis, &decision));
    }
    if decision.verdict == Verdict::Deny {
        inv.measure(&policy, &analysis, &decision);
    }
    match decision.verdict {
        Verdict::Pass => unreachable!("handled above"),
        Verdict::Allow => {
            audit::record(&inv.record(&policy, &decision, DecidedBy::AllowEntry, true));
            Ok(inv.exec())
        }
        Verdict::Deny => {
            audit::record(&inv.record(&policy, &decision, DecidedBy::Rule, false));
            refuse(&inv, &policy, &decision, &NotRun::by(DecidedBy::Rule))
        }
        Verdict::Ask => ask(&inv, &policy, &analysis, &decision),
    }
}

/// Trial mode: a would-be ask or deny is recorded and the command runs. A session grant that
/// covers an ask is an ordinary pass, as it would be when enforcing.
fn would(inv: &Invocation<'_>, policy: &Policy, analysis: &Analysis, decision: &Decision) -> u8 {
    if decision.verdict == Verdict::Ask
        && let Some(key) = inv.global.session_key.as_deref()
        && session::covers(key, &inv.project, &need(policy, decision, &inv.command), policy.settings.session_ttl)
            .unwrap_or(false)
    {
        audit::record(&inv.ran_record(policy, decision, DecidedBy::SessionGrant));
        return inv.exec();
    }
    trial::record_would(
        inv.ran_record(policy, decision, DecidedBy::Audit),
        trial::allow_for(policy, analysis, decision),
    );
    inv.exec()
}

fn refuse(inv: &Invocation<'_>, policy: &Policy, decision: &Decision, not_run: &NotRun<'_>) -> Result<u8> {
    let stake = inv.stake.get().and_then(Option::as_deref);
    eprintln!("{}", report::refusal(&inv.command, policy, decision, inv.global.json, not_run, stake));
    Ok(exit::NOT_RUN)
}

/// What a session grant must cover for this decision to pass.
pub fn need(policy: &Policy, decision: &Decision, command: &str) -> Need {
    Need {
        rules: decision.hit_ids(policy).into_iter().map(String::from).collect(),
        command: (!decision.concerns.is_empty()).then(|| command.to_string()),
    }
}

/// What an "always" answer writes as allow entries: each unit that asks, with the place it runs
/// at (`None` when cmdguard cannot tell the place of one: then no entry can be written for it).
pub fn always_entries(policy: &Policy, analysis: &Analysis, decision: &Decision) -> Option<Vec<always::Entry>> {
    let places = crate::decide::place::segment_places(analysis);
    let mut out: Vec<always::Entry> = Vec::new();
    for h in decision.hits.iter().filter(|h| h.allowed_by.is_none() && policy.rules[h.rule].action == Action::Ask) {
        let place = crate::decide::place::unit_place(analysis, &places, h.unit)?;
        let entry = always::Entry { command: unit_text(analysis, h.unit).to_string(), place };
        if !out.contains(&entry) {
            out.push(entry);
        }
    }
    Some(out)
}

/// The command a human can type to run this in their own terminal.
pub fn approve_hint(inv: &Invocation<'_>) -> String {
    use std::os::unix::ffi::OsStrExt;
    let key = inv.global.session_key.as_deref().map(|k| format!("--session-key {} ", crate::shell::quote(k)));
    let key = key.unwrap_or_default();
    match inv.job {
        Job::Script(s) => format!("cmdguard {key}-c {}", crate::shell::quote_bytes(s.as_bytes())),
        Job::Shell { .. } => format!("cmdguard {key}-c {}", crate::shell::quote(&inv.command)),
        Job::Argv(argv) => {
            let words: Vec<String> = argv.iter().map(|a| crate::shell::quote_bytes(a.as_bytes())).collect();
            format!("cmdguard {key}-- {}", words.join(" "))
        }
    }
}

fn ask(inv: &Invocation<'_>, policy: &Policy, analysis: &Analysis, decision: &Decision) -> Result<u8> {
    let need = need(policy, decision, &inv.command);
    let ttl = policy.settings.session_ttl;
    if let Some(key) = inv.global.session_key.as_deref() {
        match session::covers(key, &inv.project, &need, ttl) {
            Ok(true) => {
                audit::record(&inv.ran_record(policy, decision, DecidedBy::SessionGrant));
                return Ok(inv.exec());
            }
            Ok(false) => {}
            Err(e) => eprintln!("cmdguard: warning: cannot read this session's grants, asking instead: {e:#}"),
        }
    }
    let stake = inv.measure(policy, analysis, decision);
    let placed = always_entries(policy, analysis, decision);
    let entries = placed.clone().unwrap_or_default();
    let no_always = if !decision.concerns.is_empty() {
        Some("cmdguard could not read all of this command, and an allow entry covers only what it can read")
    } else if placed.is_none() {
        Some("cmdguard cannot tell where part of this command runs, and an allow entry covers one place")
    } else if entries.is_empty() {
        Some("nothing here can be covered by an allow entry")
    } else {
        None
    };
    let explain = || super::explain::trace(policy, inv.job, analysis, decision);
    let rules = need
        .rules
        .iter()
        .filter_map(|id| policy.rules.iter().find(|r| r.id == *id))
        .map(|r| RuleLine {
            id: r.id.to_string(),
            reason: r.reason.to_string(),
            tip: r.tip.as_ref().map(|t| t.to_string()),
        })
        .collect();
    let cwd = inv.cwd.display().to_string();
    let request = prompt::Request {
        command: &inv.command,
        matched: crate::report::matched_spans(&inv.command, policy, decision),
        cwd: &cwd,
        session_key: inv.global.session_key.as_deref(),
        rules,
        concerns: decision.concerns.iter().map(|c| (c.id.to_string(), c.detail.clone())).collect(),
        notices: &policy.notices,
        no_always,
        always_at: entries.iter().find(|e| !e.place.is_empty()).map(|e| e.place.as_str()),
        timeout: Duration::from_secs(policy.settings.timeout),
        stake,
        explain: &explain,
    };
    if prompt::check_terminal().is_ok() {
        let ids: Vec<String> = decision.rule_ids(policy).into_iter().map(String::from).collect();
        let hash = inv.global.session_key.as_deref().map(state::key_hash);
        let waiting = notify::Waiting {
            kind: "prompt",
            command: &inv.command,
            cwd: &cwd,
            session: hash.as_deref(),
            rules: &ids,
            id: None,
            code: None,
            host: None,
        };
        notify::waiting(policy.settings.bell, policy.settings.notify_command.as_deref(), &waiting);
    }
    let answer = match prompt::ask(&request) {
        Ok(a) => a,
        Err(prompt::NoTerminal(why)) => {
            let no_tty = inv.global.no_tty.unwrap_or(policy.settings.no_tty);
            if no_tty == NoTty::Wait {
                return wait_in_queue(inv, policy, decision, need, entries);
            }
            audit::record(&inv.record(policy, decision, DecidedBy::NoTerminal, false));
            let hint = format!(
                "{} (in their terminal; or run cmdguard with --no-tty wait, or the setting no_tty = \"wait\", so the command waits for `cmdguard approve` from any terminal)",
                approve_hint(inv)
            );
            let not_run = NotRun { by: DecidedBy::NoTerminal, detail: Some(&why), reason: None, hint: Some(&hint) };
            return refuse(inv, policy, decision, &not_run);
        }
    };
    let mut record = inv.record(policy, decision, DecidedBy::Prompt, false);
    record.choice = match &answer {
        Answer::Once => Some("once"),
        Answer::Session => Some("session"),
        Answer::Always => Some("always"),
        Answer::Deny { reason: Some(_) } => Some("deny-with-reason"),
        Answer::Deny { reason: None } => Some("deny"),
        Answer::Timeout | Answer::Interrupted(_) => None,
    }
    .map(String::from);
    match answer {
        Answer::Once => {}
        Answer::Session => {
            let key = inv.global.session_key.as_deref().expect("`s` is offered only with a session key");
            if let Err(e) = session::grant(key, &inv.project, &need, ttl) {
                prompt::tell(&format!("cmdguard: could not save the session grant ({e:#}); running it this once"));
            }
        }
        Answer::Always => persist_always(inv, &entries),
        Answer::Deny { reason } => {
            record.reason = reason.clone();
            audit::record(&record);
            let not_run = NotRun { by: DecidedBy::Prompt, detail: None, reason: reason.as_deref(), hint: None };
            return refuse(inv, policy, decision, &not_run);
        }
        Answer::Timeout => {
            record.decided_by = DecidedBy::Timeout;
            audit::record(&record);
            return refuse(inv, policy, decision, &NotRun::by(DecidedBy::Timeout));
        }
        Answer::Interrupted(why) => {
            record.decided_by = DecidedBy::Signal;
            audit::record(&record);
            let not_run = NotRun { by: DecidedBy::Signal, detail: Some(&why), reason: None, hint: None };
            return refuse(inv, policy, decision, &not_run);
        }
    }
    record.ran = true;
    record.recovery = inv.keep(policy, decision);
    audit::record(&record);
    Ok(inv.exec())
}

/// No terminal and `no_tty = "wait"`: park the request in this session's queue and wait for a
/// human to decide from another terminal, for the timeout, or for a signal.
fn wait_in_queue(
    inv: &Invocation<'_>,
    policy: &Policy,
    decision: &Decision,
    need: Need,
    entries: Vec<always::Entry>,
) -> Result<u8> {
    let trap = Trap::install()?;
    let pid = std::process::id();
    let request = queue::Request {
        id: queue::new_id(),
        session: inv.global.session_key.as_deref().map(state::key_hash),
        project: inv.project.display().to_string(),
        cwd: inv.cwd.display().to_string(),
        command: inv.command.clone(),
        rules: decision.rule_ids(policy).into_iter().map(String::from).collect(),
        need,
        // The queue keeps commands only: an entry from `approve --scope always` applies at top
        // level, so it is offered only for what runs there.
        always: if decision.concerns.is_empty() && entries.iter().all(|e| e.place.is_empty()) {
            entries.into_iter().map(|e| e.command).collect()
        } else {
            Vec::new()
        },
        pid,
        pid_start: queue::process_start(pid),
        created_ms: state::now_ms(),
        timeout: policy.settings.timeout,
        stake: inv.stake.get().cloned().flatten(),
    };
    let dir = queue::submit(&request)?;
    let waiting = notify::Waiting {
        kind: "queue",
        command: &request.command,
        cwd: &request.cwd,
        session: request.session.as_deref(),
        rules: &request.rules,
        id: Some(&request.id),
        code: None,
        host: None,
    };
    notify::waiting(policy.settings.bell, policy.settings.notify_command.as_deref(), &waiting);
    eprintln!(
        "cmdguard: waiting up to {} for a human to approve request {}: in a terminal, run `cmdguard approve {}` (or `cmdguard deny {}`, `cmdguard pending`, `cmdguard watch`)",
        state::human_duration(request.timeout),
        request.id,
        request.id,
        request.id
    );
    let waited = queue::wait(&dir, &request, &trap);
    queue::finish(&dir, &request.id);
    let mut record = inv.record(policy, decision, DecidedBy::Queue, false);
    let (d, signal) = match waited? {
        queue::Waited::Decided(d) => (d, None),
        queue::Waited::Signal(sig, d) => (d, Some(sig)),
    };
    record.reason = d.reason.clone();
    record.via = (d.by == queue::Resolver::Human).then(|| d.via.clone());
    record.choice = Some(match (d.approved, d.scope) {
        (true, Some(scope)) => scope.name().to_string(),
        (true, None) => "once".to_string(),
        (false, _) if d.reason.is_some() => "deny-with-reason".to_string(),
        (false, _) => "deny".to_string(),
    });
    if let Some(sig) = signal {
        // Stopped while waiting: never run, even if an approval landed at the same moment.
        record.decided_by = DecidedBy::Signal;
        record.choice = None;
        audit::record(&record);
        let why = crate::signals::describe(sig);
        return refuse(
            inv,
            policy,
            decision,
            &NotRun { by: DecidedBy::Signal, detail: Some(&why), reason: None, hint: None },
        );
    }
    match d.by {
        queue::Resolver::Human if d.approved => {
            record.ran = true;
            record.recovery = inv.keep(policy, decision);
            audit::record(&record);
            Ok(inv.exec())
        }
        queue::Resolver::Human => {
            audit::record(&record);
            let detail = format!("cmdguard {}", d.via);
            let not_run =
                NotRun { by: DecidedBy::Queue, detail: Some(&detail), reason: d.reason.as_deref(), hint: None };
            refuse(inv, policy, decision, &not_run)
        }
        queue::Resolver::Timeout => {
            record.decided_by = DecidedBy::Timeout;
            record.choice = None;
            audit::record(&record);
            refuse(inv, policy, decision, &NotRun::by(DecidedBy::Timeout))
        }
        queue::Resolver::Withdrawn => {
            record.decided_by = DecidedBy::Signal;
            record.choice = None;
            audit::record(&record);
            let not_run =
                NotRun { by: DecidedBy::Signal, detail: Some("the request was withdrawn"), reason: None, hint: None };
            refuse(inv, policy, decision, &not_run)
        }
    }
}

fn persist_always(inv: &Invocation<'_>, entries: &[always::Entry]) {
    let note = format!(
        "Added by cmdguard on {}: \"always\" at the approval prompt{}.",
        state::rfc3339(state::now()),
        inv.global
            .session_key
            .as_deref()
            .map(|k| format!(" (session {})", &state::key_hash(k)[..12]))
            .unwrap_or_default()
    );
    // An entry in a file the command deletes would vanish with it, and the next run would ask
    // again: such an entry goes to the user's own rules instead.
    let project_file = always::project_file(&inv.cwd);
    let target = match crate::config::user_config_dir() {
        Some(dir) if super::deletes::would_delete(inv.analysis, &inv.cwd, &project_file) => {
            prompt::tell(&format!(
                "cmdguard: warning: this command would delete {} (not tracked by git), so the allow entry goes to your own rules",
                shown(&project_file)
            ));
            let _ = std::fs::create_dir_all(&dir);
            dir.join("rules.toml")
        }
        _ => project_file,
    };
    match always::add_entries_in(&target, entries, &note) {
        Ok(added) if added.trusted => prompt::tell(&format!(
            "cmdguard: {} allow {} written to {}{}",
            added.new_entries,
            if added.new_entries == 1 { "entry" } else { "entries" },
            shown(&added.file),
            match entries.iter().find(|e| !e.place.is_empty()) {
                Some(e) => format!(", for commands run at the same place ({})", crate::term::escape(&e.place)),
                None => String::new(),
            }
        )),
        Ok(added) => prompt::tell(&format!(
            "cmdguard: allow entry written to {}, but that file holds loosening you have not trusted, so it takes effect only after `cmdguard trust {}`",
            shown(&added.file),
            shown(&added.file)
        )),
        Err(e) => prompt::tell(&format!("cmdguard: could not write the allow entry ({e:#}); running it this once")),
    }
}

fn shown(p: &Path) -> String {
    crate::term::escape(&p.display().to_string())
}
