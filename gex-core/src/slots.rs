//! A table of operations in flight, indexed by slot with a generation: what
//! a layer's messages name instead of a pointer (gex-rma's reference path,
//! gex-ratomic's Active Message route). A message naming a slot is checked
//! against the table; a slot reused for another operation has the next
//! generation, so a stale or forged name finds nothing.

use std::sync::{Mutex, MutexGuard};

struct Entry<T> {
    generation: u32,
    value: Option<T>,
}

struct Table<T> {
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
}

/// Operations in flight by (slot, generation); free slots are reused with
/// the next generation.
pub struct Slots<T> {
    table: Mutex<Table<T>>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Slots<T> {
    /// An empty table (usable in a `static`).
    pub const fn new() -> Slots<T> {
        Slots {
            table: Mutex::new(Table {
                entries: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table<T>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Puts `value` in a free slot; returns (slot, generation).
    pub fn insert(&self, value: T) -> (u32, u32) {
        let mut t = self.lock();
        if let Some(i) = t.free.pop() {
            let e = &mut t.entries[i as usize];
            e.generation = e.generation.wrapping_add(1);
            e.value = Some(value);
            return (i, e.generation);
        }
        t.entries.push(Entry {
            generation: 0,
            value: Some(value),
        });
        (t.entries.len() as u32 - 1, 0)
    }

    /// A copy of the value in (slot, generation), if that generation is in
    /// the table.
    pub fn get(&self, slot: u32, generation: u32) -> Option<T>
    where
        T: Clone,
    {
        let t = self.lock();
        let e = t.entries.get(slot as usize)?;
        (e.generation == generation).then(|| e.value.clone())?
    }

    /// Takes the value in (slot, generation) out of the table, freeing the
    /// slot, if that generation is in it.
    pub fn take(&self, slot: u32, generation: u32) -> Option<T> {
        let mut t = self.lock();
        let e = t.entries.get_mut(slot as usize)?;
        if e.generation != generation {
            return None;
        }
        let v = e.value.take()?;
        t.free.push(slot);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_slot_is_gone_and_a_stale_generation_finds_nothing() {
        let s = Slots::new();
        let (i, g) = s.insert(3u32);
        assert_eq!(s.get(i, g), Some(3));
        assert_eq!(s.get(i, g.wrapping_add(1)), None);
        assert_eq!(s.take(i, g.wrapping_add(1)), None);
        assert_eq!(s.take(i, g), Some(3));
        assert_eq!(s.take(i, g), None, "taken twice");
        assert_eq!(s.get(i, g), None);
        let (i2, g2) = s.insert(4);
        assert_eq!(i2, i, "the slot is reused");
        assert_ne!(g2, g, "with the next generation");
        assert_eq!(s.take(i, g), None);
        assert_eq!(s.take(i2, g2), Some(4));
        assert_eq!(s.take(u32::MAX, 0), None);
    }
}
