//! Every `runner ... --help` text is a snapshot in runner/tests/cmd/help.md, checked by trycmd:
//! a change to a flag or to its words shows in the diff, and
//! `TRYCMD=overwrite cargo test -p runner --test cli_help` takes it.

#[test]
fn every_help_text_is_its_snapshot() {
    let runner = std::path::PathBuf::from(env!("CARGO_BIN_EXE_runner"));
    trycmd::TestCases::new()
        .register_bin("runner", trycmd::schema::Bin::Path(runner))
        .case("tests/cmd/help.md");
}
