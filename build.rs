//! Which of the tests that need a real program can run here, said where
//! cargo shows it: the browser tests (tests/browser.rs) need Chromium, the
//! real-database tests (with the `real` feature) a MariaDB server, the live link tests a nats-server. Without
//! one, its tests are marked ignored (`cfg(chromium_missing)`,
//! `cfg(no_mariadb)`), so the test runner shows them as ignored rather than
//! passed, and cargo prints one warning saying so. With `CI` set they are
//! not ignored: there a missing program fails them (`.ci/run` installs
//! both).

/// Where tests/browser.rs runs it; `SLOTCHECK_CHROMIUM` names another place
/// to look (a path that is not there shows what a machine without it sees).
const CHROMIUM: &str = "/usr/bin/chromium";

fn main() {
    println!("cargo:rustc-check-cfg=cfg(chromium_missing)");
    println!("cargo:rustc-check-cfg=cfg(no_mariadb)");
    println!("cargo:rustc-check-cfg=cfg(no_nats_server)");
    println!("cargo:rustc-check-cfg=cfg(no_go_mysql)");
    println!("cargo:rustc-check-cfg=cfg(no_go_nats)");
    println!("cargo:rustc-check-cfg=cfg(no_postgres)");
    println!("cargo:rerun-if-changed=/usr/sbin/nats-server");
    println!("cargo:rerun-if-env-changed=SLOTCHECK_CHROMIUM");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=/usr/sbin/mariadbd");
    let ci = std::env::var_os("CI").is_some();
    let chromium = std::env::var("SLOTCHECK_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_string());
    println!("cargo:rerun-if-changed={chromium}");
    if !std::path::Path::new(&chromium).exists() && !ci {
        println!("cargo:rustc-cfg=chromium_missing");
        println!(
            "cargo:warning=no Chromium at {chromium}: the browser tests (tests/browser.rs) are ignored; apt-get install chromium to run them"
        );
    }
    // Only the `real` feature's tests use a database.
    if std::env::var_os("CARGO_FEATURE_REAL").is_none() {
        return;
    }
    let mariadb = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if !mariadb && !ci {
        println!("cargo:rustc-cfg=no_mariadb");
        println!("cargo:warning=MariaDB is not installed (apt-get install mariadb-server): the MariaDB tests of slotcheck are ignored");
    }
    // The live link runs validated (tests/live_link_validate.rs).
    let nats = std::env::var_os("SLOTCHECK_NATS_SERVER").is_some()
        || std::path::Path::new("/usr/sbin/nats-server").exists()
        || std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| dir.join("nats-server").is_file())
        });
    if !nats && !ci {
        println!("cargo:rustc-cfg=no_nats_server");
        println!("cargo:warning=nats-server is not installed (apt-get install nats-server): the live link tests of slotcheck are ignored");
    }
    // PostgreSQL, the third engine (tests/real_database.rs, tests/postgres.rs).
    println!("cargo:rerun-if-changed=/usr/lib/postgresql");
    let postgres = std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|dirs| {
        dirs.filter_map(|d| d.ok())
            .any(|d| d.path().join("bin/postgres").exists())
    });
    if !postgres && !ci {
        println!("cargo:rustc-cfg=no_postgres");
        println!("cargo:warning=PostgreSQL is not installed (apt-get install postgresql): the PostgreSQL tests of slotcheck are ignored");
    }
    // The Go logging package and sample worker (tests/go_worker.rs): Go
    // and Debian's go-sql-driver/mysql.
    println!("cargo:rerun-if-changed=/usr/bin/go");
    let go = std::path::Path::new("/usr/bin/go").exists()
        || std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("go").is_file()));
    let driver =
        std::path::Path::new("/usr/share/gocode/src/github.com/go-sql-driver/mysql").is_dir();
    // The Go builder (live --model link --builder go): Go and nats.go.
    let nats_go = std::path::Path::new("/usr/share/gocode/src/github.com/nats-io/nats.go").is_dir();
    if !(ci || go && nats_go) {
        println!("cargo:rustc-cfg=no_go_nats");
        println!("cargo:warning=Go or nats.go is not installed (apt-get install golang-go golang-github-nats-io-go-nats-dev): the Go builder's live tests of slotcheck are ignored");
    }
    let ready = go && driver;
    if !ready && !ci {
        println!("cargo:rustc-cfg=no_go_mysql");
        println!("cargo:warning=Go or go-sql-driver/mysql is not installed (apt-get install golang-go golang-github-go-sql-driver-mysql-dev): the Go worker tests of slotcheck are ignored");
    }
}
