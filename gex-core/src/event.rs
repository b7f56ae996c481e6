//! Events (`gex_Event_t`) and local-completion options (`lc_opt`).
//!
//! This is the foundation's part of the event model: root events that a
//! conduit completes, and the `lc_opt` choices of AM injection. The RMA
//! layer builds leaf events, NBI categories and futures on it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gex_types::Result;

use crate::context;
use crate::runtime::Runtime;

/// Completion state shared between an event and the operation behind it.
#[derive(Debug, Default)]
pub struct Completion {
    done: AtomicBool,
}

impl Completion {
    /// Marks the operation complete (release: data it wrote is visible to
    /// whoever observes completion).
    pub fn complete(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// Whether the operation completed.
    pub fn is_complete(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

/// A handle on an operation's completion (`gex_Event_t`).
///
/// [`Event::INVALID`] stands for an operation already complete at
/// initiation (`GEX_EVENT_INVALID`).
#[derive(Debug, Default)]
#[must_use = "an event must be tested or waited on"]
pub struct Event {
    state: Option<Arc<Completion>>,
}

impl Event {
    /// The event of an operation complete at initiation.
    pub const INVALID: Event = Event { state: None };

    /// An event tracking `c`.
    pub fn pending(c: Arc<Completion>) -> Event {
        Event { state: Some(c) }
    }

    /// Whether this is `GEX_EVENT_INVALID`.
    pub fn is_invalid(&self) -> bool {
        self.state.is_none()
    }

    /// Whether the operation completed (`gex_Event_Test` == 0); never polls.
    pub fn test(&self) -> bool {
        self.state.as_ref().is_none_or(|c| c.is_complete())
    }

    /// Polls until the operation completes (`gex_Event_Wait`). Illegal in
    /// handler context or under an HSL.
    pub fn wait(self) -> Result<()> {
        context::check_may_communicate("gex_Event_Wait")?;
        if let Some(c) = &self.state {
            if !c.is_complete() {
                let rt = Runtime::require("gex_Event_Wait")?;
                rt.spin_until(|| c.is_complete());
            }
        }
        Ok(())
    }
}

/// Local-completion option of an injection (`lc_opt`).
#[derive(Debug)]
pub enum Lc<'a> {
    /// Return only once the source buffer may be reused (`GEX_EVENT_NOW`).
    Now,
    /// Local completion is tracked by the NBI AM/LC category
    /// (`GEX_EVENT_GROUP`).
    Group,
    /// Local completion may be deferred to the root event (`GEX_EVENT_DEFER`);
    /// not allowed for AMs.
    Defer,
    /// Local completion is signalled through this event.
    Event(&'a mut Event),
}
