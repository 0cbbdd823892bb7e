//! The builder's settings of the two extensions, tasks and skills (each
//! behind its cargo feature, both on by default).

#[cfg(feature = "skills")]
use std::sync::Arc;

use super::ServerBuilder;
#[cfg(feature = "tasks")]
use crate::server::tasks::{TaskLimits, TaskStore};

impl ServerBuilder {
    /// Starts the id of every task this server mints with `prefix` (e.g.
    /// `a1.`), as [`HttpServerBuilder::session_id_prefix`](crate::HttpServerBuilder::session_id_prefix)
    /// does for sessions: behind a load balancer, the instance that runs a
    /// task can be read from the `Mcp-Name: <taskId>` header clients send
    /// on `tasks/*` (SEP-2663). The rest of the id stays a random UUID.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParams`](crate::ErrorKind::InvalidParams) for a
    /// prefix over 64 characters or with any but `A-Z a-z 0-9 . _ -`.
    #[cfg(feature = "tasks")]
    pub fn task_id_prefix(
        mut self,
        prefix: impl Into<String>,
    ) -> Result<Self, crate::error::Error> {
        let prefix = prefix.into();
        let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
        if prefix.len() > 64 || !prefix.bytes().all(allowed) {
            return Err(crate::error::Error::invalid_params(format!(
                "a task id prefix is at most 64 of A-Z a-z 0-9 . _ -, not {:?}",
                prefix
            )));
        }
        self.task_id_prefix = prefix;
        Ok(self)
    }

    /// Sets the bounds of tasks (see [`TaskLimits`] for the defaults) and
    /// declares tasks even while no tool has task support.
    ///
    /// Spec: basic/utilities/tasks (2025-11-25); SEP-2663.
    #[cfg(feature = "tasks")]
    pub fn task_limits(mut self, limits: TaskLimits) -> Self {
        self.task_limits = Some(limits);
        self
    }

    /// Keeps tasks in `store` instead of this process's memory (a
    /// [`MemoryTaskStore`](crate::MemoryTaskStore) bounded by the
    /// [`TaskLimits`]): a store shared by several instances lets any of
    /// them answer `tasks/get`. Declares tasks.
    #[cfg(feature = "tasks")]
    pub fn task_store(mut self, store: impl TaskStore + 'static) -> Self {
        self.task_store = Some(Box::new(store));
        self
    }

    /// Serves the skills under `root` (SEP-2640, the
    /// `io.modelcontextprotocol/skills` extension of 2026-07-28): every
    /// directory below `root` that holds a `SKILL.md` is a skill at
    /// `skill://<its path below root>/SKILL.md`, its files (every regular
    /// file beneath it; symbolic links are not followed) resources under
    /// the same prefix. The files are read now and served from memory;
    /// [`ServerHandle::add_skills_dir`](crate::ServerHandle::add_skills_dir)
    /// reloads. Declares the extension (with `directoryRead`) and
    /// `resources`, and adds `skills/list`, `skills/get` and
    /// `resources/directory/read`; each `SKILL.md` is also listed by
    /// `resources/list`. `skills/get` takes the `SKILL.md` URI
    /// (`{"uri": "skill://code-review/SKILL.md"}`), and
    /// `resources/directory/read` a folder's (`skill://code-review`).
    ///
    /// A relative `root` is taken from the process's working directory,
    /// which for a stdio server is wherever its host starts it: give an
    /// absolute path (e.g. beside `std::env::current_exe()`).
    ///
    /// # Errors
    ///
    /// When `root` cannot be read (the error names it), or a skill breaks
    /// SEP-2640's rules: no frontmatter `name` and `description`, a name
    /// that is not its directory's or breaks the Agent Skills naming rules,
    /// more than 512 files or 16 MiB (the error names the skill).
    #[cfg(feature = "skills")]
    pub fn skills_dir(
        mut self,
        root: impl AsRef<std::path::Path>,
    ) -> Result<Self, crate::error::Error> {
        self.skills.add_dir(root.as_ref())?;
        if !self
            .skills
            .offered
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            let files = crate::server::skills::SkillFiles(Arc::clone(&self.skills));
            self.registry.providers.push(Arc::new(files));
        }
        Ok(self)
    }

    /// Calls of tool `name` (which also needs task support,
    /// [`Tool::with_task_support`](crate::Tool::with_task_support)) become
    /// tasks only when its handler calls
    /// [`RequestContext::start_task`](crate::RequestContext::start_task),
    /// not before it runs: for a tool that first asks the client in the
    /// request itself (2026-07-28 `input_required`, SEP-2663 "Task
    /// Creation") or answers at once when it can.
    #[cfg(feature = "tasks")]
    pub fn tasks_start_in_handler(mut self, name: impl Into<String>) -> Self {
        self.registry.late_tasks.insert(name.into());
        self
    }
}
