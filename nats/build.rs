//! Says, where cargo shows it, when nats-server is not installed: the
//! real-server tests are then marked ignored (cfg `no_nats_server`), unless
//! `CI` is set, where they run and fail. The same for the Go builder's
//! tests when Go or Debian's nats.go is missing (cfg `no_go`).

fn main() {
    println!("cargo:rustc-check-cfg=cfg(no_nats_server)");
    println!("cargo:rustc-check-cfg=cfg(no_go)");
    println!("cargo:rerun-if-env-changed=SLOTCHECK_GO");
    println!("cargo:rerun-if-changed=/usr/share/gocode/src/github.com/nats-io/nats.go");
    let go = std::env::var_os("SLOTCHECK_GO").is_some()
        || std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("go").is_file()))
        || std::path::Path::new("/usr/lib/go/bin/go").exists();
    let nats_go = std::path::Path::new("/usr/share/gocode/src/github.com/nats-io/nats.go").is_dir();
    if !(go && nats_go) {
        println!("cargo:warning=Go or Debian's nats.go is not installed (apt-get install golang-go golang-github-nats-io-go-nats-dev): the Go builder's tests of slotcheck-nats are ignored");
        if std::env::var_os("CI").is_none() {
            println!("cargo:rustc-cfg=no_go");
        }
    }
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-env-changed=SLOTCHECK_NATS_SERVER");
    println!("cargo:rerun-if-changed=/usr/sbin/nats-server");
    let installed = std::env::var_os("SLOTCHECK_NATS_SERVER").is_some()
        || std::path::Path::new("/usr/sbin/nats-server").exists()
        || std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| dir.join("nats-server").is_file())
        });
    if !installed {
        println!("cargo:warning=nats-server is not installed (apt-get install nats-server): the real-server tests of slotcheck-nats are ignored");
        if std::env::var_os("CI").is_none() {
            println!("cargo:rustc-cfg=no_nats_server");
        }
    }
}
