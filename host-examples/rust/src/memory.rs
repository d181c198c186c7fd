//! The component's `memory.store` resource, wrapped for Rust, and the
//! canonical JSON of its records.

use crate::bindings::exports::failmem::core::memory as wm;
use crate::canonical::{Canonical, ToCanonical};
use crate::engine::{Failmem, GuestError, Session, wt};
use anyhow::{Context, Result};
use wasmtime::component::ResourceAny;

pub use wm::{Attempt, AttemptStatus, BriefOptions, Learning, PruneReport, Related, Task};

/// One project memory held by the component.
pub struct MemoryStore {
    failmem: Failmem,
    handle: Option<ResourceAny>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new(failmem: &Failmem) -> Result<Self> {
        let result =
            failmem.with(|store, e| e.failmem_core_memory().store().call_constructor(store));
        let handle = wt(result).context("calling store.constructor")?;
        Ok(MemoryStore {
            failmem: failmem.clone(),
            handle: Some(handle),
        })
    }

    /// A store from `export-json` output; the inner error is the guest's.
    pub fn import_json(failmem: &Failmem, json: &str) -> Result<Result<Self, GuestError>> {
        let result = failmem.with(|store, e| {
            e.failmem_core_memory()
                .store()
                .call_import_json(store, json)
        });
        Ok(match wt(result).context("calling store.import-json")? {
            Ok(handle) => Ok(MemoryStore {
                failmem: failmem.clone(),
                handle: Some(handle),
            }),
            Err(e) => Err(GuestError(e)),
        })
    }

    fn call<R>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut wasmtime::Store<()>, wm::GuestStore<'_>, ResourceAny) -> wasmtime::Result<R>,
    ) -> Result<R> {
        let handle = self.handle.context("the store was closed")?;
        let result = self
            .failmem
            .with(|store, e| f(store, e.failmem_core_memory().store(), handle));
        wt(result).with_context(|| format!("calling store.{what}"))
    }

    /// The store as versioned JSON.
    pub fn export_json(&self, sanitized: bool, project_root: Option<&str>) -> Result<String> {
        self.call("export-json", |s, f, h| {
            f.call_export_json(s, h, sanitized, project_root)
        })
    }

    /// Adds an attempt; returns its id.
    pub fn add_attempt(&self, attempt: &Attempt) -> Result<Result<String, GuestError>> {
        Ok(self
            .call("add-attempt", |s, f, h| f.call_add_attempt(s, h, attempt))?
            .map_err(GuestError))
    }

    /// Adds a manual learning.
    pub fn learn(
        &self,
        lesson: &str,
        category: Option<crate::wit::Category>,
        now: u64,
    ) -> Result<Result<Learning, GuestError>> {
        Ok(self
            .call("learn", |s, f, h| f.call_learn(s, h, lesson, category, now))?
            .map_err(GuestError))
    }

    /// Every attempt, oldest first.
    pub fn attempts(&self) -> Result<Vec<Attempt>> {
        self.call("attempts", |s, f, h| f.call_attempts(s, h))
    }

    /// Every learning in effect at `now`.
    pub fn learnings(&self, now: u64) -> Result<Vec<Learning>> {
        self.call("learnings", |s, f, h| f.call_learnings(s, h, now, None))
    }

    /// The retry brief for `task`.
    pub fn brief(
        &self,
        task: &Task,
        now: u64,
        options: &BriefOptions,
    ) -> Result<Result<String, GuestError>> {
        Ok(self
            .call("brief", |s, f, h| f.call_brief(s, h, task, now, options))?
            .map_err(GuestError))
    }

    /// Applies the default retention at `now`.
    pub fn prune(&self, now: u64) -> Result<PruneReport> {
        self.call("prune", |s, f, h| f.call_prune(s, h, now, None, None))
    }

    /// Merges `other` into this store.
    pub fn merge(&self, other: &MemoryStore) -> Result<()> {
        let theirs = other.handle.context("the other store was closed")?;
        self.call("merge", |s, f, h| f.call_merge(s, h, theirs))
    }

    /// Removes attempts by task and/or age; returns how many entries went.
    pub fn clear(
        &self,
        task_id: Option<&str>,
        older_than_ms: Option<u64>,
        now: u64,
    ) -> Result<u32> {
        self.call("clear", |s, f, h| {
            f.call_clear(s, h, task_id, older_than_ms, now)
        })
    }
}

impl Drop for MemoryStore {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            self.failmem.with(|store, _| {
                let _ = handle.resource_drop(store);
            });
        }
    }
}

/// `session.to-attempt`, for closing a task in a replay.
pub fn session_attempt(
    session: &Session,
    task_id: &str,
    summary: &str,
    status: AttemptStatus,
    reason: Option<&str>,
    now: u64,
) -> Result<Attempt> {
    session.call("to-attempt", |s, f, h| {
        f.call_to_attempt(s, h, task_id, summary, status, reason, now)
    })
}

fn int(v: u64) -> Canonical {
    Canonical::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

impl ToCanonical for AttemptStatus {
    fn to_canonical(&self) -> Canonical {
        Canonical::Str(match self {
            AttemptStatus::Failed => "failed".into(),
            AttemptStatus::Succeeded => "succeeded".into(),
        })
    }
}

impl ToCanonical for Attempt {
    fn to_canonical(&self) -> Canonical {
        Canonical::object([
            ("task-id", self.task_id.to_canonical()),
            ("summary", self.summary.to_canonical()),
            ("approaches", self.approaches.to_canonical()),
            ("failure-reason", self.failure_reason.to_canonical()),
            ("error-output", self.error_output.to_canonical()),
            ("files-touched", self.files_touched.to_canonical()),
            ("status", self.status.to_canonical()),
            ("at", int(self.at)),
            ("categories", self.categories.to_canonical()),
            ("fingerprints", self.fingerprints.to_canonical()),
            ("lesson", self.lesson.to_canonical()),
        ])
    }
}

impl ToCanonical for Learning {
    fn to_canonical(&self) -> Canonical {
        Canonical::object([
            ("key", self.key.to_canonical()),
            ("category", self.category.to_canonical()),
            ("pattern", self.pattern.to_canonical()),
            ("lesson", self.lesson.to_canonical()),
            ("confidence", Canonical::Int(i64::from(self.confidence))),
            ("evidence", self.evidence.to_canonical()),
            ("contradictions", self.contradictions.to_canonical()),
            ("first-seen", int(self.first_seen)),
            ("last-seen", int(self.last_seen)),
            ("manual", self.manual.to_canonical()),
        ])
    }
}
