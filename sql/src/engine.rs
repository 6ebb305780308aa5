//! One connection to either engine, behind one small interface: statements
//! with `?` parameters, the rows they return or affect, and transactions.
//! What differs between SQLite and MariaDB (how a transaction starts, the
//! isolation level, an idempotent insert) is in [`Dialect`] and here only.

use std::path::PathBuf;

/// A parameter or a column value: the schema has only integers and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Int(i64),
    Text(String),
    Null,
}

impl Val {
    pub fn int(&self) -> i64 {
        match self {
            Val::Int(n) => *n,
            Val::Text(t) => t
                .parse()
                .unwrap_or_else(|_| panic!("`{t}` is not a number")),
            Val::Null => panic!("a NULL where a number was expected"),
        }
    }

    pub fn text(&self) -> String {
        match self {
            Val::Int(n) => n.to_string(),
            Val::Text(t) => t.clone(),
            Val::Null => String::new(),
        }
    }

    pub fn is_null(&self) -> bool {
        *self == Val::Null
    }
}

impl From<i64> for Val {
    fn from(n: i64) -> Val {
        Val::Int(n)
    }
}

impl From<&str> for Val {
    fn from(t: &str) -> Val {
        Val::Text(t.to_string())
    }
}

impl From<String> for Val {
    fn from(t: String) -> Val {
        Val::Text(t)
    }
}

/// Why a statement failed: a conflict the engine asks us to retry
/// (SQLite busy, an InnoDB deadlock or lock wait timeout), or anything else.
#[derive(Debug)]
pub enum DbError {
    Retry(String),
    Fatal(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Retry(m) => write!(f, "conflict, to retry: {m}"),
            DbError::Fatal(m) => write!(f, "{m}"),
        }
    }
}

pub type DbResult<T> = Result<T, DbError>;

/// The engines slotcheck runs the designs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineName {
    Sqlite,
    Mariadb,
    /// A private PostgreSQL cluster (sql/src/postgres.rs).
    Postgres,
}

impl EngineName {
    pub fn name(self) -> &'static str {
        match self {
            EngineName::Sqlite => "sqlite",
            EngineName::Mariadb => "mariadb",
            EngineName::Postgres => "postgres",
        }
    }

    pub fn parse(text: &str) -> Result<EngineName, String> {
        match text {
            "sqlite" => Ok(EngineName::Sqlite),
            "mariadb" | "mysql" => Ok(EngineName::Mariadb),
            "postgres" | "postgresql" => Ok(EngineName::Postgres),
            other => Err(format!(
                "--on: `{other}` is not an engine (sqlite, mariadb, postgres)"
            )),
        }
    }
}

/// How a connection starts its transactions and reads: the isolation
/// variants of `live --isolation` (item 5 of issue 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dialect {
    pub engine: EngineName,
    /// MariaDB and PostgreSQL: READ COMMITTED instead of the default
    /// REPEATABLE READ.
    pub read_committed: bool,
    /// PostgreSQL: SERIALIZABLE (SSI) instead of REPEATABLE READ.
    pub serializable: bool,
    /// SQLite: `BEGIN IMMEDIATE` (take the write lock at the start) instead
    /// of a plain, deferred `BEGIN`.
    pub begin_immediate: bool,
}

impl Dialect {
    pub fn of(engine: EngineName) -> Dialect {
        Dialect {
            engine,
            read_committed: false,
            serializable: false,
            begin_immediate: true,
        }
    }

    pub fn begin(&self) -> &'static str {
        match (self.engine, self.begin_immediate) {
            (EngineName::Sqlite, true) => "BEGIN IMMEDIATE",
            (EngineName::Sqlite, false) => "BEGIN",
            (EngineName::Mariadb | EngineName::Postgres, _) => "START TRANSACTION",
        }
    }

    /// `INSERT` that does nothing when the key exists (rows affected 0).
    pub fn insert_ignore(&self) -> &'static str {
        match self.engine {
            EngineName::Sqlite => "INSERT OR IGNORE",
            // PostgreSQL's words are `ON CONFLICT DO NOTHING`: translated.
            EngineName::Mariadb | EngineName::Postgres => "INSERT IGNORE",
        }
    }

    /// A locking read's suffix: SQLite has none (its write lock covers the
    /// whole database once taken).
    pub fn for_update(&self) -> &'static str {
        match self.engine {
            EngineName::Sqlite => "",
            EngineName::Mariadb | EngineName::Postgres => " FOR UPDATE",
        }
    }

    pub fn isolation_words(&self) -> &'static str {
        match (self.engine, self.read_committed, self.begin_immediate) {
            (EngineName::Mariadb, false, _) => "REPEATABLE READ",
            (EngineName::Mariadb, true, _) => "READ COMMITTED",
            (EngineName::Sqlite, _, true) => "BEGIN IMMEDIATE",
            (EngineName::Sqlite, _, false) => "BEGIN (deferred)",
            (EngineName::Postgres, true, _) => "READ COMMITTED",
            (EngineName::Postgres, false, _) if self.serializable => "SERIALIZABLE",
            (EngineName::Postgres, false, _) => "REPEATABLE READ",
        }
    }
}

/// Where to connect: a SQLite file, or a MariaDB server's socket.
#[derive(Clone, Debug)]
pub enum Target {
    Sqlite(PathBuf),
    Mariadb {
        socket: PathBuf,
        database: String,
    },
    /// A PostgreSQL cluster's socket folder, and the schema of the run.
    Postgres {
        dir: PathBuf,
        schema: String,
    },
}

/// A queue's turnstile: held from a step's commit (or its read) until the
/// step's log lines are written, so that each queue's log is in the order
/// the database did its steps. Nothing but a commit or a non-locking read
/// runs while it is held, so it cannot deadlock with the engine's locks.
#[derive(Default)]
pub struct Turnstile {
    busy: std::sync::Mutex<bool>,
    free: std::sync::Condvar,
}

impl Turnstile {
    fn acquire(&self) {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy {
            busy = self.free.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy = true;
    }

    fn release(&self) {
        *self.busy.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.free.notify_one();
    }
}

/// One connection, and the turnstile of the queue it now works on (live
/// runs; none in a replay, whose steps are one at a time anyway).
pub struct Conn {
    inner: Inner,
    dialect: Dialect,
    order: Option<std::sync::Arc<Turnstile>>,
    holding: bool,
    /// Called inside a transaction between its reads and its writes: a
    /// steered live run holds the worker there (`steer.rs`).
    pause: Option<Box<dyn FnMut() + Send>>,
}

enum Inner {
    Sqlite(rusqlite::Connection),
    Mariadb(mysql::Conn),
    Postgres(Box<postgres::Client>),
}

fn sqlite_error(e: rusqlite::Error) -> DbError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked) => {
            DbError::Retry(e.to_string())
        }
        _ => DbError::Fatal(e.to_string()),
    }
}

fn mysql_error(e: mysql::Error) -> DbError {
    match &e {
        // 1213 deadlock, 1205 lock wait timeout: InnoDB rolled back the
        // statement (1213: the whole transaction) and asks for a retry.
        mysql::Error::MySqlError(m) if m.code == 1213 || m.code == 1205 => {
            DbError::Retry(e.to_string())
        }
        _ => DbError::Fatal(e.to_string()),
    }
}

fn pg_error(e: postgres::Error) -> DbError {
    use postgres::error::SqlState;
    match e.code() {
        // 40001 serialization failure (REPEATABLE READ, SERIALIZABLE),
        // 40P01 deadlock, 55P03 lock timeout: the transaction is aborted
        // and the server asks for a retry.
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::LOCK_NOT_AVAILABLE =>
        {
            DbError::Retry(e.to_string())
        }
        _ => DbError::Fatal(crate::postgres::message(&e)),
    }
}

/// A parameter for PostgreSQL: a number as BIGINT (every integer column
/// is), text as text, NULL as a NULL of either.
#[derive(Debug)]
enum PgVal {
    Int(i64),
    Text(String),
    Null,
}

impl PgVal {
    fn of(v: &Val) -> PgVal {
        match v {
            Val::Int(n) => PgVal::Int(*n),
            Val::Text(t) => PgVal::Text(t.clone()),
            Val::Null => PgVal::Null,
        }
    }
}

impl postgres::types::ToSql for PgVal {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use postgres::types::Type;
        match self {
            PgVal::Int(n) if *ty == Type::INT4 => (*n as i32).to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::INT2 => (*n as i16).to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::TEXT || *ty == Type::VARCHAR => {
                n.to_string().to_sql(ty, out)
            }
            PgVal::Int(n) => n.to_sql(ty, out),
            PgVal::Text(t) => t.to_sql(ty, out),
            PgVal::Null => Ok(postgres::types::IsNull::Yes),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn from_pg(row: &postgres::Row) -> DbResult<Vec<Val>> {
    use postgres::types::Type;
    (0..row.len())
        .map(|i| {
            let ty = row.columns()[i].type_();
            let value = if *ty == Type::INT8 {
                row.try_get::<_, Option<i64>>(i).map(|v| v.map(Val::Int))
            } else if *ty == Type::INT4 {
                row.try_get::<_, Option<i32>>(i)
                    .map(|v| v.map(|n| Val::Int(n as i64)))
            } else if *ty == Type::INT2 {
                row.try_get::<_, Option<i16>>(i)
                    .map(|v| v.map(|n| Val::Int(n as i64)))
            } else if *ty == Type::BOOL {
                row.try_get::<_, Option<bool>>(i)
                    .map(|v| v.map(|b| Val::Int(b as i64)))
            } else {
                row.try_get::<_, Option<String>>(i)
                    .map(|v| v.map(Val::Text))
            };
            value
                .map(|v| v.unwrap_or(Val::Null))
                .map_err(|e| DbError::Fatal(format!("column {i}: {e}")))
        })
        .collect()
}

fn to_sqlite(v: &Val) -> rusqlite::types::Value {
    match v {
        Val::Int(n) => rusqlite::types::Value::Integer(*n),
        Val::Text(t) => rusqlite::types::Value::Text(t.clone()),
        Val::Null => rusqlite::types::Value::Null,
    }
}

fn to_mysql(v: &Val) -> mysql::Value {
    match v {
        Val::Int(n) => mysql::Value::Int(*n),
        Val::Text(t) => mysql::Value::Bytes(t.as_bytes().to_vec()),
        Val::Null => mysql::Value::NULL,
    }
}

fn from_mysql(v: mysql::Value) -> Val {
    match v {
        mysql::Value::NULL => Val::Null,
        mysql::Value::Int(n) => Val::Int(n),
        mysql::Value::UInt(n) => Val::Int(n as i64),
        mysql::Value::Bytes(b) => Val::Text(String::from_utf8_lossy(&b).into_owned()),
        other => Val::Text(format!("{other:?}")),
    }
}

impl Conn {
    pub fn open(target: &Target, dialect: Dialect) -> DbResult<Conn> {
        match target {
            Target::Sqlite(path) => {
                let c = rusqlite::Connection::open(path).map_err(sqlite_error)?;
                // Concurrent workers wait for the write lock rather than fail
                // at once; a deferred transaction that must upgrade still
                // fails busy, and is retried.
                c.busy_timeout(std::time::Duration::from_secs(10))
                    .map_err(sqlite_error)?;
                c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;")
                    .map_err(sqlite_error)?;
                Ok(Conn::new(Inner::Sqlite(c), dialect))
            }
            Target::Mariadb { socket, database } => {
                let opts = mysql::OptsBuilder::new()
                    .socket(Some(socket.to_string_lossy().into_owned()))
                    .user(Some("root"))
                    .db_name(Some(database.clone()))
                    .prefer_socket(true);
                let mut c = mysql::Conn::new(opts).map_err(mysql_error)?;
                let level = if dialect.read_committed {
                    "READ COMMITTED"
                } else {
                    "REPEATABLE READ"
                };
                use mysql::prelude::Queryable;
                c.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}"))
                    .map_err(mysql_error)?;
                c.query_drop("SET SESSION innodb_lock_wait_timeout = 5")
                    .map_err(mysql_error)?;
                Ok(Conn::new(Inner::Mariadb(c), dialect))
            }
            Target::Postgres { dir, schema } => {
                let mut c = crate::postgres::connect(dir, schema).map_err(DbError::Fatal)?;
                let level = dialect.isolation_words();
                c.batch_execute(&format!(
                    "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level}; SET lock_timeout = '5s'"
                ))
                .map_err(pg_error)?;
                Ok(Conn::new(Inner::Postgres(Box::new(c)), dialect))
            }
        }
    }

    fn new(inner: Inner, dialect: Dialect) -> Conn {
        Conn {
            inner,
            dialect,
            order: None,
            holding: false,
            pause: None,
        }
    }

    /// What [`Conn::mid_transaction`] calls from now on.
    pub fn on_pause(&mut self, hook: Option<Box<dyn FnMut() + Send>>) {
        self.pause = hook;
    }

    /// A point inside a transaction, after its reads and before its writes,
    /// where a steered run may hold the worker.
    pub fn mid_transaction(&mut self) {
        if let Some(hook) = self.pause.as_mut() {
            hook();
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Orders this connection's steps on `turnstile` from now on.
    pub fn order_on(&mut self, turnstile: Option<std::sync::Arc<Turnstile>>) {
        self.release();
        self.order = turnstile;
    }

    /// Takes the queue's turnstile (if not held): before a commit, or a
    /// read whose snapshot is its place in the log.
    pub fn read_point(&mut self) {
        if let (Some(t), false) = (&self.order, self.holding) {
            t.acquire();
            self.holding = true;
        }
    }

    /// Gives the turnstile back, once the step's log lines are written.
    pub fn release(&mut self) {
        if let (Some(t), true) = (&self.order, self.holding) {
            t.release();
            self.holding = false;
        }
    }

    /// Runs a statement; returns the rows it affected.
    pub fn exec(&mut self, sql: &str, params: &[Val]) -> DbResult<u64> {
        match &mut self.inner {
            Inner::Sqlite(c) => {
                let values: Vec<rusqlite::types::Value> = params.iter().map(to_sqlite).collect();
                c.execute(sql, rusqlite::params_from_iter(values))
                    .map(|n| n as u64)
                    .map_err(sqlite_error)
            }
            Inner::Mariadb(c) => {
                use mysql::prelude::Queryable;
                if params.is_empty() {
                    c.query_drop(sql).map_err(mysql_error)?;
                } else {
                    let values: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
                    c.exec_drop(sql, mysql::Params::Positional(values))
                        .map_err(mysql_error)?;
                }
                Ok(c.affected_rows())
            }
            Inner::Postgres(c) => {
                let values: Vec<PgVal> = params.iter().map(PgVal::of).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = values
                    .iter()
                    .map(|v| v as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                c.execute(crate::postgres::translate(sql).as_str(), &refs)
                    .map_err(pg_error)
            }
        }
    }

    /// Runs a query; returns its rows.
    pub fn query(&mut self, sql: &str, params: &[Val]) -> DbResult<Vec<Vec<Val>>> {
        match &mut self.inner {
            Inner::Sqlite(c) => {
                let values: Vec<rusqlite::types::Value> = params.iter().map(to_sqlite).collect();
                let mut statement = c.prepare_cached(sql).map_err(sqlite_error)?;
                let width = statement.column_count();
                let rows = statement
                    .query_map(rusqlite::params_from_iter(values), |row| {
                        (0..width)
                            .map(|i| {
                                Ok(match row.get::<_, rusqlite::types::Value>(i)? {
                                    rusqlite::types::Value::Integer(n) => Val::Int(n),
                                    rusqlite::types::Value::Text(t) => Val::Text(t),
                                    rusqlite::types::Value::Null => Val::Null,
                                    other => Val::Text(format!("{other:?}")),
                                })
                            })
                            .collect::<Result<Vec<Val>, rusqlite::Error>>()
                    })
                    .map_err(sqlite_error)?;
                rows.collect::<Result<Vec<_>, _>>().map_err(sqlite_error)
            }
            Inner::Mariadb(c) => {
                use mysql::prelude::Queryable;
                let rows: Vec<mysql::Row> = if params.is_empty() {
                    c.query(sql).map_err(mysql_error)?
                } else {
                    let values: Vec<mysql::Value> = params.iter().map(to_mysql).collect();
                    c.exec(sql, mysql::Params::Positional(values))
                        .map_err(mysql_error)?
                };
                Ok(rows
                    .into_iter()
                    .map(|row| row.unwrap().into_iter().map(from_mysql).collect())
                    .collect())
            }
            Inner::Postgres(c) => {
                let values: Vec<PgVal> = params.iter().map(PgVal::of).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = values
                    .iter()
                    .map(|v| v as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let rows = c
                    .query(crate::postgres::translate(sql).as_str(), &refs)
                    .map_err(pg_error)?;
                rows.iter().map(from_pg).collect()
            }
        }
    }

    /// The first row of a query, if any.
    pub fn query_one(&mut self, sql: &str, params: &[Val]) -> DbResult<Option<Vec<Val>>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    pub fn begin(&mut self) -> DbResult<()> {
        let begin = self.dialect().begin();
        self.exec(begin, &[]).map(|_| ())
    }

    /// Commits, holding the queue's turnstile from here until the step's
    /// log lines are written.
    pub fn commit(&mut self) -> DbResult<()> {
        self.read_point();
        self.exec("COMMIT", &[]).map(|_| ())
    }

    /// Rolls back, ignoring an error: the transaction may already be gone
    /// (InnoDB rolls back a deadlock's victim itself).
    pub fn rollback(&mut self) {
        let _ = self.exec("ROLLBACK", &[]);
        self.release();
    }

    /// Ends the open transaction: commits after a body that returned `Ok`,
    /// rolls back after an error or a failed commit (and hands it on).
    fn end<T>(&mut self, result: DbResult<T>) -> DbResult<T> {
        let committed = result.and_then(|value| self.commit().map(|()| value));
        if committed.is_err() {
            self.rollback();
        }
        committed
    }

    /// Runs reads in one transaction that takes no write lock (SQLite: a
    /// deferred `BEGIN` whatever `begin_immediate` says, so that a read
    /// holding its queue's turnstile never waits for the write lock).
    pub fn read_transaction<T>(
        &mut self,
        body: impl FnOnce(&mut Conn) -> DbResult<T>,
    ) -> DbResult<T> {
        let begin = match self.dialect.engine {
            EngineName::Sqlite => "BEGIN",
            EngineName::Mariadb | EngineName::Postgres => "START TRANSACTION",
        };
        self.exec(begin, &[])?;
        let result = body(self);
        self.end(result)
    }

    /// Runs `body` in one transaction: commits when it returns `Ok`, rolls
    /// back on an error (and hands the error on).
    pub fn transaction<T>(&mut self, body: impl FnOnce(&mut Conn) -> DbResult<T>) -> DbResult<T> {
        self.begin()?;
        let result = body(self);
        self.end(result)
    }
}
