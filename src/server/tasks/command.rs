//! Commands for a task's own instance (DESIGN.md §21): `tasks/update` and
//! `tasks/cancel` that arrived at an instance where the task's handler
//! does not run. The instance that received one hands it to its
//! [`TaskStore`](super::TaskStore) ([`TaskStore::forward`](super::TaskStore::forward)),
//! which carries it to the instance named in the task's record
//! ([`TaskRecord::instance`](super::TaskRecord::instance)); that instance
//! applies it with [`ServerHandle::apply_task_command`], as if the client's
//! request had reached it.

use serde_json::{json, Value};

use super::exchange::show_outstanding;
use crate::error::Error;
use crate::jsonrpc::JsonObject;
use crate::server::handle::ServerHandle;

/// What a client asked of a task that runs on another instance.
///
/// Its wire form ([`to_json`](Self::to_json)) is one JSON object:
/// `{"cancel": "<taskId>"}` or `{"update": "<taskId>", "inputResponses":
/// {..}}`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskCommand {
    /// `tasks/update` (2026-07-28, SEP-2663 "Task Update Requests"): the
    /// answers to the task's input requests, by key (each already checked
    /// to be an object).
    Update {
        /// The task.
        task_id: String,
        /// `params.inputResponses` as the client sent it.
        input_responses: JsonObject,
    },
    /// `tasks/cancel` (basic/utilities/tasks; SEP-2663): stop the handler.
    Cancel {
        /// The task.
        task_id: String,
    },
}

impl TaskCommand {
    /// The task the command is for.
    pub fn task_id(&self) -> &str {
        match self {
            TaskCommand::Update { task_id, .. } | TaskCommand::Cancel { task_id } => task_id,
        }
    }

    /// The command as one line of JSON, for a bus.
    pub fn to_json(&self) -> String {
        match self {
            TaskCommand::Update {
                task_id,
                input_responses,
            } => json!({ "update": task_id, "inputResponses": input_responses }).to_string(),
            TaskCommand::Cancel { task_id } => json!({ "cancel": task_id }).to_string(),
        }
    }

    /// The command of [`to_json`](Self::to_json)'s form.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for
    /// anything else (a bus is input like any other).
    pub fn from_json(text: &str) -> Result<TaskCommand, Error> {
        let invalid = || Error::invalid_params("not a task command");
        let value: Value = serde_json::from_slice(text.as_bytes()).map_err(|_| invalid())?;
        if let Some(task_id) = value.get("cancel").and_then(Value::as_str) {
            return Ok(TaskCommand::Cancel {
                task_id: task_id.to_string(),
            });
        }
        let task_id = value
            .get("update")
            .and_then(Value::as_str)
            .ok_or_else(invalid)?;
        match value.get("inputResponses") {
            Some(Value::Object(answers)) if answers.values().all(Value::is_object) => {
                Ok(TaskCommand::Update {
                    task_id: task_id.to_string(),
                    input_responses: answers.clone(),
                })
            }
            _ => Err(invalid()),
        }
    }
}

impl ServerHandle {
    /// Whether a handler of task `id` runs on this instance (a store's
    /// lease thread stops renewing the lease of one that ended).
    #[cfg(feature = "redis")]
    pub(crate) fn runs_task(&self, id: &str) -> bool {
        self.inner.tasks.run(id).is_some()
    }

    /// Applies a command another instance forwarded for a task whose
    /// handler runs here: the answers go to the waiting handler, or the
    /// task is cancelled (`cancelled` in the store first, then the
    /// handler's flag: TASK-9), exactly as when the client's request
    /// reaches this instance. Answers for keys that are not outstanding
    /// are ignored (SEP-2663).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) when
    /// no handler of that task runs here (it ended meanwhile, or the
    /// command came to the wrong instance): the sender then reads the
    /// store again.
    pub fn apply_task_command(&self, command: &TaskCommand) -> Result<(), Error> {
        let tasks = &self.inner.tasks;
        let run = tasks.run(command.task_id()).ok_or_else(|| {
            Error::invalid_params(format!(
                "task {} does not run on this instance",
                command.task_id()
            ))
        })?;
        match command {
            TaskCommand::Cancel { .. } => tasks.cancel(&run, "cancelled by the client"),
            TaskCommand::Update {
                input_responses, ..
            } => {
                {
                    // The record follows the exchange under its lock
                    // (`exchange::ask_inputs`).
                    let mut exchange = run.exchange.lock();
                    if !exchange.answer(input_responses) {
                        return Ok(());
                    }
                    show_outstanding(&*tasks.store, &run.id, &exchange);
                }
                run.wake();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_and_junk_is_refused() {
        let mut answers = JsonObject::new();
        answers.insert("ask".into(), json!({"action": "accept"}));
        let commands = [
            TaskCommand::Cancel {
                task_id: "t1".into(),
            },
            TaskCommand::Update {
                task_id: "t2".into(),
                input_responses: answers,
            },
        ];
        for command in commands.iter() {
            assert_eq!(
                &TaskCommand::from_json(&command.to_json()).unwrap(),
                command
            );
        }
        for junk in [
            "",
            "{}",
            r#"{"update":"t"}"#,
            r#"{"update":"t","inputResponses":{"k":1}}"#,
            r#"{"cancel":1}"#,
        ]
        .iter()
        {
            assert!(TaskCommand::from_json(junk).is_err(), "{}", junk);
        }
    }
}
