//! With the `real` feature: says, where cargo shows it, when MariaDB is not
//! installed: its tests are then marked ignored (cfg `no_mariadb`), unless `CI` is set, where they
//! run and fail.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(no_mariadb)");
    println!("cargo:rerun-if-env-changed=CI");
    println!("cargo:rerun-if-changed=/usr/sbin/mariadbd");
    // Only the `real` feature's tests use a database.
    if std::env::var_os("CARGO_FEATURE_REAL").is_none() {
        return;
    }
    let installed = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if !installed {
        println!("cargo:warning=MariaDB is not installed (apt-get install mariadb-server): the MariaDB tests of slotcheck are ignored");
        if std::env::var_os("CI").is_none() {
            println!("cargo:rustc-cfg=no_mariadb");
        }
    }
}
