//! docs/cmdguard.1 is generated from the clap definition by `cargo xtask man` (xtask/src/main.rs);
//! this test renders it the same way and fails when the committed page is stale.

use clap::CommandFactory;

#[test]
fn man_page_is_current() {
    let mut want = Vec::new();
    clap_mangen::Man::new(cmdguard::cli::Cli::command()).render(&mut want).unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cmdguard.1");
    let have = std::fs::read(&path).unwrap_or_default();
    assert!(have == want, "docs/cmdguard.1 is out of date with the command line: run `cargo xtask man`");
}
