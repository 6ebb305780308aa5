//! What the tests share: the scenario files' stories and bounds, and one
//! private MariaDB server per test binary.

#![allow(dead_code)]

use slotcheck_models::stovepipe::{design_named, Bounds, Stovepipe};
use slotcheck_sql::mariadb::{self, Server};
use slotcheck_sql::Backend;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub fn scenario_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// A scripted story of a scenario file: its design, bounds and steps.
pub struct Story {
    pub file: String,
    pub design: String,
    pub violates: String,
    pub bounds: Bounds,
    /// The scenario's model options (`split-read`...).
    pub options: Vec<String>,
    pub steps: Vec<String>,
}

fn bounds_of(table: &toml::Table) -> Bounds {
    let b = table["bounds"].as_table().expect("[bounds]");
    let get = |k: &str, d: u8| b.get(k).and_then(|v| v.as_integer()).map_or(d, |v| v as u8);
    Bounds {
        requests: get("requests", 2),
        max_concurrent: get("max_concurrent", 1),
        crashes: get("crashes", 0),
        stalls: get("stalls", 0),
        max_deliveries: get("max_deliveries", 2),
    }
}

/// Every stovepipe scenario file, parsed.
pub fn stovepipe_scenarios() -> Vec<(String, toml::Table)> {
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(scenario_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    for path in paths {
        let table: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        if table.get("model").and_then(|m| m.as_str()) == Some("stovepipe") {
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                table,
            ));
        }
    }
    out
}

pub fn stories() -> Vec<Story> {
    let mut out = Vec::new();
    for (file, table) in stovepipe_scenarios() {
        let bounds = bounds_of(&table);
        for story in table
            .get("story")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            out.push(Story {
                file: file.clone(),
                design: story["design"].as_str().unwrap().to_string(),
                violates: story
                    .get("violates")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
                bounds,
                options: table
                    .get("options")
                    .and_then(|o| o.as_array())
                    .into_iter()
                    .flatten()
                    .map(|o| o.as_str().unwrap().to_string())
                    .collect(),
                steps: story["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s.as_str().unwrap().to_string())
                    .collect(),
            });
        }
    }
    out
}

pub fn model(design: &str, bounds: Bounds) -> Stovepipe {
    Stovepipe::new(design_named(design).expect("a design"), bounds)
}

/// The test binary's private MariaDB server, started once and shared by
/// its tests (stopped by its watchdog when the binary ends). A MariaDB
/// test that gets here without the server fails: the build script marks
/// those tests ignored, and says so, where MariaDB is missing and `CI` is
/// not set.
pub fn mariadb() -> Arc<Server> {
    static SERVER: OnceLock<Result<Arc<Server>, String>> = OnceLock::new();
    let server = SERVER.get_or_init(|| match mariadb::missing() {
        Some(why) => Err(why),
        None => Server::start().map(Arc::new),
    });
    match server {
        Ok(s) => s.clone(),
        Err(why) => panic!("{why}"),
    }
}

/// A fresh database for one test on the shared server.
pub fn mariadb_backend(name: &str) -> Backend {
    Backend::mariadb(mariadb(), name).expect("a database")
}
