//! The files made from the ABI crate's tables (`sdk/c/wasmdp.h`, `sdk/zig/wasmdp.zig`,
//! `sdk/assemblyscript/wasmdp.ts`, docs/ABI.md's import and layout tables) must be what the tables make now: a stale one fails here. `WASMDP_BLESS=1 cargo test -p
//! wasmdp-abi --test generated` writes them.

mod render;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bless() -> bool {
    std::env::var_os("WASMDP_BLESS").is_some_and(|v| v == "1")
}

/// Compares (or, blessing, writes) the whole of `path`.
fn check_file(path: &Path, want: &str) {
    let have = std::fs::read_to_string(path).unwrap_or_default();
    if have == want {
        return;
    }
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, want).unwrap();
        return;
    }
    panic!(
        "{} is stale (the ABI's tables changed): run `WASMDP_BLESS=1 cargo test -p wasmdp-abi --test generated`",
        path.display()
    );
}

/// Compares (or writes) the text between `<!-- BEGIN GENERATED: name -->` and its END line.
fn check_section(path: &Path, name: &str, want: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    let (begin, end) = (format!("<!-- BEGIN GENERATED: {name} -->\n"), format!("<!-- END GENERATED: {name} -->"));
    let start = text.find(&begin).unwrap_or_else(|| panic!("{}: no `{begin}` line", path.display())) + begin.len();
    let stop = start + text[start..].find(&end).unwrap_or_else(|| panic!("{}: no `{end}` line", path.display()));
    let mut updated = text.clone();
    updated.replace_range(start..stop, want);
    check_file(path, &updated);
}

#[test]
fn the_c_header_is_what_the_tables_make() {
    check_file(&root().join("sdk/c/wasmdp.h"), &render::c::header());
}

#[test]
fn the_zig_module_is_what_the_tables_make() {
    check_file(&root().join("sdk/zig/wasmdp.zig"), &render::zig::module());
}

#[test]
fn the_assemblyscript_module_is_what_the_tables_make() {
    check_file(&root().join("sdk/assemblyscript/wasmdp.ts"), &render::assemblyscript::module());
}

#[test]
fn the_abi_docs_tables_are_what_the_tables_make() {
    let doc = root().join("docs/ABI.md");
    check_section(&doc, "exports", &render::markdown::exports());
    check_section(&doc, "imports", &render::markdown::imports());
    check_section(&doc, "layouts", &render::markdown::layouts());
}
