//! Integration tests: the real binary, driven through `TestEnv` (a private HOME, config and
//! working directory per test). One test binary for the whole suite keeps builds lean.

mod approval;
mod blast;
mod cache;
mod check;
mod completions;
mod context;
mod corpus;
mod differential;
mod doctor;
mod env;
mod expansion;
mod grants;
mod hook;
mod hook_approval;
mod hook_failure;
mod hook_hosts;
mod hook_install;
mod init;
mod inject;
mod layering;
mod man_page;
mod newcomer;
mod packs_doc;
mod programs;
mod prompt_look;
mod properties;
mod pty;
mod queue;
mod recipes;
mod records;
mod rules_cmd;
mod run;
mod shell;
mod trial;
mod trust;
