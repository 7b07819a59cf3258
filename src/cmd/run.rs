//! The wrapper: analyse, decide, then exec the command or refuse with exit 77.

use std::path::PathBuf;

use anyhow::Result;

use crate::cli::Global;
use crate::decide::{Verdict, decide};
use crate::exec::{self, Job};
use crate::exit;

pub fn run(global: &Global, job: Job) -> Result<u8> {
    let policy = super::policy(global)?;
    let analysis = job.analyze();
    let decision = decide(&policy, &analysis);
    match decision.verdict {
        Verdict::Pass | Verdict::Allow => {
            let shell = global
                .shell
                .clone()
                .or_else(|| policy.settings.shell.as_ref().map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("/bin/sh"));
            Ok(exec::exec(&job, &shell))
        }
        Verdict::Ask | Verdict::Deny => {
            eprintln!("{}", crate::report::refusal(&job.text(), &policy, &decision, global.json));
            Ok(exit::NOT_RUN)
        }
    }
}
