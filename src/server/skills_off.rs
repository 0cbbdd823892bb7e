//! Skills left out: the crate built without its `skills` feature. The same
//! crate-internal names as `skills/`, inert: the extension is never
//! declared, so its rows stay closed (`-32601`).

use serde_json::Value;

use super::caller::Caller;
use super::reply::Answer;
use crate::jsonrpc::ErrorObject;
use crate::server::session::Session;

pub(crate) fn closed(_: &Session, _: &Caller, _: Option<Value>) -> Answer {
    Err(ErrorObject::method_not_found("skills/*"))
}

pub(crate) use closed as get;
pub(crate) use closed as list;
pub(crate) use closed as read_directory;
