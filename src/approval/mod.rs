//! The approval side of the pipeline: everything that happens once the rules say a command
//! needs a human. The prompt on `/dev/tty`, session grants, "always" entries written into the
//! project's rules file, trust records for rules files that loosen, the queue for commands with
//! no terminal, approval codes for hooks whose host cannot ask, telling the human that someone
//! waits, recovery points that let an approval be undone, and the audit log that records each
//! decision.
pub mod always;
pub mod audit;
pub mod codes;
pub mod notify;
pub mod prompt;
pub mod queue;
pub mod recovery;
pub mod session;
pub mod trial;
pub mod trust;
pub mod trusted_copy;
