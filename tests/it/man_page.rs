//! docs/cmdguard.1 is generated from the clap definition by `cargo xtask man` (xtask/src/main.rs);
//! this test renders it the same way and fails when the committed page is stale.

use clap::CommandFactory;

#[test]
fn man_page_is_current() {
    let mut want = Vec::new();
    clap_mangen::Man::new(cmdguard::cli::Cli::command()).render(&mut want).unwrap();
    // As xtask's `man` does: one page, so commands are named as typed, not as pages.
    let mut want = String::from_utf8_lossy(&want).into_owned();
    for sub in cmdguard::cli::Cli::command().get_subcommands().map(|s| s.get_name().to_string()).chain(["help".into()])
    {
        want = want.replace(&format!("cmdguard\\-{}(1)", sub.replace('-', "\\-")), &format!("cmdguard {sub}"));
    }
    let want = want
        .replacen(
            ".SH SUBCOMMANDS\n",
            ".SH SUBCOMMANDS\nEach command's options: \\fBcmdguard COMMAND \\-\\-help\\fR.\n",
            1,
        )
        .into_bytes();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cmdguard.1");
    let have = std::fs::read(&path).unwrap_or_default();
    assert!(have == want, "docs/cmdguard.1 is out of date with the command line: run `cargo xtask man`");
}

#[test]
fn man_page_names_only_pages_that_exist() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let page = std::fs::read_to_string(path.join("cmdguard.1")).unwrap();
    // Every `name(N)` reference is a page in docs/ (only cmdguard.1 ships).
    for (at, _) in page.match_indices("(1)") {
        let start = page[..at].rfind(|c: char| c.is_whitespace()).map_or(0, |i| i + 1);
        let name = page[start..at].replace("\\-", "-");
        assert!(path.join(format!("{name}.1")).exists(), "the man page names {name}(1), which does not exist");
    }
    assert!(page.contains("cmdguard report"), "the commands are named as typed");
}
