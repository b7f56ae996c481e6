//! Handler-safe locks (`gex_HSL_t`).
//!
//! An HSL is the only lock an AM handler may take. Holding one puts the
//! thread in restricted context: no communication, polling or waiting until
//! it is released (checked by [`crate::context`]). Locks must be released in
//! reverse order and never held across a handler's return.

use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};

use crate::context;

/// A handler-safe lock protecting a `T` (`gex_HSL_t` with its data).
///
/// `Hsl<()>` is the spec's data-less lock: `gex_HSL_Lock` is
/// [`Hsl::lock`], `gex_HSL_Unlock` is dropping the guard, `gex_HSL_Trylock`
/// is [`Hsl::try_lock`]; `Init`/`Destroy` are construction and drop.
#[derive(Debug, Default)]
pub struct Hsl<T: ?Sized = ()> {
    inner: Mutex<T>,
}

/// Proof that an HSL is held; releases it on drop.
#[must_use = "the HSL is released when the guard is dropped"]
pub struct HslGuard<'a, T: ?Sized> {
    guard: MutexGuard<'a, T>,
    addr: usize,
}

impl<T> Hsl<T> {
    /// A new, unlocked HSL (`GEX_HSL_INITIALIZER` / `gex_HSL_Init`).
    pub const fn new(value: T) -> Self {
        Hsl {
            inner: Mutex::new(value),
        }
    }

    /// Consumes the lock, returning the data (`gex_HSL_Destroy`).
    pub fn into_inner(self) -> T {
        self.inner.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T: ?Sized> Hsl<T> {
    fn addr(&self) -> usize {
        self as *const Self as *const u8 as usize
    }

    /// Acquires the lock, blocking until it is free (`gex_HSL_Lock`).
    /// Locking an HSL this thread already holds deadlocks, as in GASNet.
    pub fn lock(&self) -> HslGuard<'_, T> {
        let guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        context::hsl_acquired(self.addr());
        HslGuard {
            guard,
            addr: self.addr(),
        }
    }

    /// Acquires the lock if it is free (`gex_HSL_Trylock`).
    pub fn try_lock(&self) -> Option<HslGuard<'_, T>> {
        let guard = match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        context::hsl_acquired(self.addr());
        Some(HslGuard {
            guard,
            addr: self.addr(),
        })
    }
}

impl<T: ?Sized> Deref for HslGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: ?Sized> DerefMut for HslGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T: ?Sized> Drop for HslGuard<'_, T> {
    fn drop(&mut self) {
        context::hsl_released(self.addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{check_may_communicate, hsls_held};

    #[test]
    fn holding_an_hsl_restricts_the_thread() {
        let a = Hsl::new(5u32);
        let b: Hsl = Hsl::new(());
        {
            let mut g = a.lock();
            *g += 1;
            assert_eq!(hsls_held(), 1);
            assert!(b.try_lock().is_some());
            let e = check_may_communicate("gex_Coll_BarrierNB").unwrap_err();
            assert!(e.message().contains("handler-safe lock"), "{e}");
        }
        assert_eq!(hsls_held(), 0);
        assert!(check_may_communicate("x").is_ok());
        assert_eq!(*a.lock(), 6);
    }

    #[test]
    fn trylock_fails_when_held_elsewhere() {
        let a = std::sync::Arc::new(Hsl::new(()));
        let g = a.lock();
        let a2 = a.clone();
        let got = std::thread::spawn(move || a2.try_lock().is_some())
            .join()
            .unwrap();
        assert!(!got);
        drop(g);
        assert!(a.try_lock().is_some());
    }
}
