//! Says, where cargo shows it, when nats-server is not installed: the
//! real-server tests are then marked ignored (cfg `no_nats_server`), unless
//! `CI` is set, where they run and fail.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(no_nats_server)");
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
