//! fsview's session store: what an agent has seen of each file, whether it
//! is still what is on disk, and whether the agent may now change it.
//!
//! The pieces, each in its own module: where the session file lives
//! ([`location`]), the SQLite file itself ([`store`]), a file's fingerprint
//! and freshness ([`fingerprint`]), reading a file as an agent's Read tool
//! shows it ([`show`]), the edit gate ([`gate`]) and the report of files that
//! changed since they were seen ([`changes`]), what the conversation still
//! holds of what it was shown ([`held`]) and how far each agent's own
//! transcript was read ([`transcripts`]), what reminders told the
//! agent of those changes ([`remind`]), the session's event log
//! ([`events`]), what `fsview-session` does to whole sessions
//! ([`inspect`]), the export document that moves a session to another
//! clone or machine ([`export`]), the view sets of a conversation's agents
//! ([`agents`]) and what the agent's own shell commands wrote ([`own`]).

pub mod agents;
pub mod changes;
pub mod encoding;
pub mod error;
pub mod events;
pub mod export;
pub mod fingerprint;
pub mod gate;
pub mod held;
pub mod inspect;
pub mod location;
pub mod memo;
pub mod merge;
pub mod own;
pub mod paths;
#[doc(hidden)]
pub mod pause;
pub mod remind;
mod scan;
pub mod show;
pub mod store;
pub mod transcripts;
mod vfs;
pub mod view;
pub mod writers;

pub use error::{Error, Result};
pub use store::Store;
pub use view::{Kind, Source};
