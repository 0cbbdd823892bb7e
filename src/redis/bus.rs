//! The change bus (placeholder).
/// Placeholder.
#[derive(Debug)]
pub struct RedisChangeBus;
