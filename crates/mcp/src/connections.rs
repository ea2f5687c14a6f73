//! The server's connections to the session file, all opened at start.
//!
//! The command-line tools open the session file once per process. A server
//! runs calls side by side, each needing a connection, and must not open
//! more while others are in use: opening checks the file's header through a
//! plain file descriptor, and closing any descriptor of a file drops every
//! POSIX lock the process holds on it, SQLite's included (SQLite's "How To
//! Corrupt An SQLite Database File", 2.2). Another connection's transaction
//! would then run unlocked beside other processes': seen here as "disk I/O
//! error" with eight servers on one file. So a fixed set is opened before
//! any is used, and calls lease them: the first as the tools open it, the
//! others from it ([`Store::another`]), without that check.

use std::path::Path;
use std::sync::{Condvar, Mutex};

use fsview::common::SessionArgs;
use fsview::mcp::TOOL;
use fsview_store::{Error, Store};

/// How many calls of one server use the session file at once.
pub const SIZE: usize = 4;

pub struct Connections {
    free: Mutex<Vec<Store>>,
    returned: Condvar,
}

impl Connections {
    /// Open `n` connections (at least one), none yet in use.
    pub fn open(session: &SessionArgs, dir: &Path, n: usize) -> Result<Connections, Error> {
        let first = session.open(dir, TOOL)?;
        let mut stores = (1..n)
            .map(|_| first.another())
            .collect::<Result<Vec<_>, _>>()?;
        stores.push(first);
        Ok(Connections {
            free: Mutex::new(stores),
            returned: Condvar::new(),
        })
    }

    /// A connection, waiting for one to be returned when all are in use.
    pub fn lease(&self) -> Lease<'_> {
        let mut free = self.free.lock().expect("connections lock");
        loop {
            if let Some(store) = free.pop() {
                return Lease {
                    from: self,
                    store: Some(store),
                };
            }
            free = self.returned.wait(free).expect("connections lock");
        }
    }
}

/// A connection in use, returned when dropped.
pub struct Lease<'a> {
    from: &'a Connections,
    store: Option<Store>,
}

impl std::ops::Deref for Lease<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        self.store.as_ref().expect("a lease holds its store")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.store.take() {
            self.from.free.lock().expect("connections lock").push(s);
            self.from.returned.notify_one();
        }
    }
}
