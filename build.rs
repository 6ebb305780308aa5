//! Whether the browser tests (tests/browser.rs) can run here: without
//! Chromium they are marked ignored (`cfg(chromium_missing)`), so that the
//! test runner shows them as ignored rather than passed, and cargo prints
//! one warning saying so. With `CI` set they are not ignored: there a
//! missing browser fails them (`.ci/run` installs it).

/// Where tests/browser.rs runs it; `SLOTCHECK_CHROMIUM` names another place
/// to look (a path that is not there shows what a machine without it sees).
const CHROMIUM: &str = "/usr/bin/chromium";

fn main() {
    let chromium = std::env::var("SLOTCHECK_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_string());
    println!("cargo:rustc-check-cfg=cfg(chromium_missing)");
    println!("cargo:rerun-if-changed={chromium}");
    println!("cargo:rerun-if-env-changed=SLOTCHECK_CHROMIUM");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-changed=build.rs");
    if std::path::Path::new(&chromium).exists() || std::env::var_os("CI").is_some() {
        return;
    }
    println!("cargo:rustc-cfg=chromium_missing");
    println!(
        "cargo:warning=no Chromium at {chromium}: the browser tests (tests/browser.rs) are ignored; apt-get install chromium to run them"
    );
}
