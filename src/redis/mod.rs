//! Several instances on one Redis (or Valkey), feature `redis` (DESIGN.md
//! §30): [`RedisChangeBus`] carries list changes and resource updates
//! between instances, [`RedisTaskStore`] keeps tasks where every instance
//! reads them and carries `tasks/update` and `tasks/cancel` to the
//! instance that runs the handler.
//!
//! Both are on the redis crate's blocking connections, each on threads of
//! their own (no async runtime), and take `redis://[:password@]host[:port][/db]`
//! or, with the `tls` feature, `rediss://` URLs.

#[cfg(feature = "tasks")]
mod access;
mod bus;
mod endpoint;
#[cfg(feature = "tasks")]
mod keys;
#[cfg(feature = "tasks")]
mod lease;
#[cfg(feature = "tasks")]
mod pool;
#[cfg(feature = "tasks")]
mod record;
#[cfg(feature = "tasks")]
mod relay;
#[cfg(feature = "tasks")]
mod scripts;
#[cfg(feature = "tasks")]
mod store;

pub use bus::RedisChangeBus;
#[cfg(feature = "tasks")]
pub use store::RedisTaskStore;
