//! The task store (placeholder).
/// Placeholder.
#[derive(Debug)]
pub struct RedisTaskStore;
