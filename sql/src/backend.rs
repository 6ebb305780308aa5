//! Where a run's database lives: a SQLite file in a temporary folder, or a
//! database on a private MariaDB server. Each replay or live run takes
//! queues of its own (fresh queue IDs), so one database serves many runs.

use crate::engine::{Conn, Dialect, EngineName, Target};
use crate::mariadb::Server;
use crate::store;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

pub struct Backend {
    pub engine: EngineName,
    pub target: Target,
    /// The SQLite folder, removed when the backend is dropped.
    folder: Option<PathBuf>,
    _server: Option<Arc<Server>>,
    _postgres: Option<Arc<crate::postgres::Server>>,
    next_queue: AtomicI64,
}

static NEXT_FOLDER: AtomicI64 = AtomicI64::new(0);

impl Backend {
    /// A fresh SQLite database in a temporary folder, with the schema.
    pub fn sqlite() -> Result<Backend, String> {
        let n = NEXT_FOLDER.fetch_add(1, Ordering::SeqCst);
        let folder =
            std::env::temp_dir().join(format!("slotcheck-sqlite-{}-{n}", std::process::id()));
        crate::sweep::sweep_beside(&folder);
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        let target = Target::Sqlite(folder.join("slotcheck.db"));
        let backend = Backend {
            engine: EngineName::Sqlite,
            target,
            folder: Some(folder),
            _server: None,
            _postgres: None,
            next_queue: AtomicI64::new(1),
        };
        backend.create_schema()?;
        Ok(backend)
    }

    /// A fresh database named `name` on `server`, with the schema.
    pub fn mariadb(server: Arc<Server>, name: &str) -> Result<Backend, String> {
        server.create_database(name)?;
        let target = Target::Mariadb {
            socket: server.socket(),
            database: name.to_string(),
        };
        let backend = Backend {
            engine: EngineName::Mariadb,
            target,
            folder: None,
            _server: Some(server),
            _postgres: None,
            next_queue: AtomicI64::new(1),
        };
        backend.create_schema()?;
        Ok(backend)
    }

    /// A fresh schema named `name` on a PostgreSQL cluster, with the
    /// tables.
    pub fn postgres(server: Arc<crate::postgres::Server>, name: &str) -> Result<Backend, String> {
        server.create_schema(name)?;
        let target = Target::Postgres {
            dir: server.socket_dir(),
            schema: name.to_string(),
        };
        let backend = Backend {
            engine: EngineName::Postgres,
            target,
            folder: None,
            _server: None,
            _postgres: Some(server),
            next_queue: AtomicI64::new(1),
        };
        backend.create_schema()?;
        Ok(backend)
    }

    /// A backend on `engine`, starting a private server for MariaDB.
    pub fn start(engine: EngineName) -> Result<Backend, String> {
        Backend::start_until(engine, &|| false).map(|b| b.expect("never stopped"))
    }

    /// As [`Backend::start`], but `None` as soon as `stop()` says so while
    /// a server starts (a deadline, a signal): nothing is left running.
    pub fn start_until(
        engine: EngineName,
        stop: &dyn Fn() -> bool,
    ) -> Result<Option<Backend>, String> {
        match engine {
            EngineName::Sqlite => Backend::sqlite().map(Some),
            EngineName::Mariadb => match Server::start_until(stop)? {
                Some(server) => Backend::mariadb(Arc::new(server), "slotcheck").map(Some),
                None => Ok(None),
            },
            EngineName::Postgres => match crate::postgres::Server::start_until(stop)? {
                Some(server) => Backend::postgres(Arc::new(server), "slotcheck").map(Some),
                None => Ok(None),
            },
        }
    }

    fn create_schema(&self) -> Result<(), String> {
        let mut conn = self.connect(Dialect::of(self.engine))?;
        store::create_schema(&mut conn).map_err(|e| e.to_string())
    }

    pub fn connect(&self, dialect: Dialect) -> Result<Conn, String> {
        Conn::open(&self.target, dialect).map_err(|e| format!("{}: {e}", self.engine.name()))
    }

    /// `n` new queue IDs, each with its row inserted.
    pub fn new_queues(&self, n: i64) -> Result<Vec<i64>, String> {
        let first = self.next_queue.fetch_add(n, Ordering::SeqCst);
        let mut conn = self.connect(Dialect::of(self.engine))?;
        let ids: Vec<i64> = (first..first + n).collect();
        for &q in &ids {
            store::add_queue(&mut conn, q).map_err(|e| e.to_string())?;
        }
        Ok(ids)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Some(folder) = &self.folder {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}
