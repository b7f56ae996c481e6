//! Calls of C handlers with the argument list their registration names:
//! [`short`] and [`medlong`] pick, once at registration, a caller for the
//! registered argument count (one function per count, 0 to 16, from the
//! `arity!` table below); [`call_short`] and [`call_medlong`] take the
//! count per call (GASNet-1 handlers, whose messages carry it).

use std::ffi::c_void;

use gex::am::AmMsg;
use gex::AmCategory;

type T = *mut c_void;
type A = i32;
type F = unsafe extern "C" fn();

/// Calls the Short handler `f` with token `t` and the arguments `a`.
///
/// # Safety
/// `f` is a C function taking a token and `a.len()` `gex_AM_Arg_t`
/// arguments (its registration's promise, checked on every message by the
/// AM layer: `a.len()` equals the registered `gex_nargs`).
pub(crate) unsafe fn call_short(f: F, t: T, a: &[A]) {
    // SAFETY: caller's contract: the handler's real type has this list.
    unsafe {
        match a.len() {
            0 => std::mem::transmute::<F, unsafe extern "C" fn(T)>(f)(t),
            1 => std::mem::transmute::<F, unsafe extern "C" fn(T, A)>(f)(t, a[0]),
            2 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A)>(f)(t, a[0], a[1]),
            3 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A)>(f)(t, a[0], a[1], a[2]),
            4 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3],
            ),
            5 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3], a[4],
            ),
            6 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5],
            ),
            7 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6],
            ),
            8 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
            ),
            9 => std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A)>(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
            ),
            10 => {
                std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A)>(f)(
                    t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                )
            }
            11 => {
                std::mem::transmute::<F, unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A)>(
                    f,
                )(
                    t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                )
            }
            12 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11],
            ),
            13 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
            ),
            14 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
                a[13],
            ),
            15 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
                a[13], a[14],
            ),
            16 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
                a[13], a[14], a[15],
            ),
            _ => unreachable!("more than 16 AM arguments"),
        }
    }
}

/// Calls the Medium or Long handler `f` with token `t`, the payload and the
/// arguments `a`.
///
/// # Safety
/// As [`call_short`], with the payload address and length after the token.
pub(crate) unsafe fn call_medlong(f: F, t: T, buf: T, nbytes: usize, a: &[A]) {
    // SAFETY: caller's contract: the handler's real type has this list.
    unsafe {
        match a.len() {
            0 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize)>(f)(t, buf, nbytes),
            1 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A)>(f)(
                t, buf, nbytes, a[0],
            ),
            2 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A)>(f)(
                t, buf, nbytes, a[0], a[1],
            ),
            3 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A)>(f)(
                t, buf, nbytes, a[0], a[1], a[2],
            ),
            4 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A, A)>(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3],
            ),
            5 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A, A, A)>(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4],
            ),
            6 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A)>(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5],
            ),
            7 => std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A)>(
                f,
            )(t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6]),
            8 => {
                std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A)>(
                    f,
                )(
                    t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                )
            }
            9 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
            ),
            10 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
            ),
            11 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
            ),
            12 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11],
            ),
            13 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], a[12],
            ),
            14 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], a[12], a[13],
            ),
            15 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], a[12], a[13], a[14],
            ),
            16 => std::mem::transmute::<
                F,
                unsafe extern "C" fn(T, T, usize, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A),
            >(f)(
                t, buf, nbytes, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                a[11], a[12], a[13], a[14], a[15],
            ),
            _ => unreachable!("more than 16 AM arguments"),
        }
    }
}

/// A C handler's call for one registration: the handler, the token, the
/// message.
///
/// # Safety
/// The handler's real type takes the token, then for a Medium or Long the
/// payload address and length, then exactly the caller's count of
/// arguments; the message has that count (the AM layer checks every
/// message against the registered count before the handler runs).
pub(crate) type Caller = unsafe fn(F, T, &AmMsg<'_>);

/// The caller of a registration the AM layer rejects (a category or count
/// no message can have): never runs; fatal if it did.
pub(crate) unsafe fn never(_f: F, _t: T, _msg: &AmMsg<'_>) {
    gex::fatal("a C handler ran for a registration the AM layer rejects")
}

/// The payload address and length a Medium or Long handler gets: a Long
/// without payload gets its destination address.
#[inline(always)]
fn payload(msg: &AmMsg<'_>) -> (T, usize) {
    let p = msg.payload();
    if p.is_empty() && msg.category() == AmCategory::Long {
        (msg.dest_addr() as T, 0)
    } else {
        (p.as_ptr() as T, p.len())
    }
}

/// `A` for each index (a type per argument in the `arity!` table).
macro_rules! a {
    ($i:tt) => {
        A
    };
}

/// One module per argument count with its Short and Medium/Long callers,
/// and the selections by count.
macro_rules! arity {
    ($($m:ident $n:literal [$($i:tt)*]),* $(,)?) => {
        $(
            mod $m {
                use super::*;

                // The table's index list is 0 to count - 1, in order: the
                // prototype and the call below are both made from it.
                #[allow(unused_comparisons)] // `k < 0` for the empty list
                const _: () = {
                    let idx: [usize; $n] = [$($i),*];
                    let mut k = 0;
                    while k < $n {
                        assert!(idx[k] == k);
                        k += 1;
                    }
                };

                /// The arguments of a message with this many of them.
                ///
                /// # Safety
                /// The message has exactly this many arguments.
                #[inline(always)]
                unsafe fn args<'m>(msg: &'m AmMsg<'_>) -> &'m [A; $n] {
                    let a = msg.args();
                    debug_assert_eq!(a.len(), $n);
                    // SAFETY: caller's contract: `a` holds `$n` arguments.
                    unsafe { &*(a.as_ptr() as *const [A; $n]) }
                }

                /// The Short caller.
                ///
                /// # Safety
                /// As [`Caller`](super::Caller).
                pub(crate) unsafe fn short(f: F, t: T, msg: &AmMsg<'_>) {
                    // SAFETY: caller's contract: the message's count and
                    // the handler's type are this arity's.
                    unsafe {
                        let _a = args(msg);
                        std::mem::transmute::<F, unsafe extern "C" fn(T $(, a!($i))*)>(f)(
                            t $(, _a[$i])*
                        )
                    }
                }

                /// The Medium/Long caller.
                ///
                /// # Safety
                /// As [`Caller`](super::Caller).
                pub(crate) unsafe fn medlong(f: F, t: T, msg: &AmMsg<'_>) {
                    let (buf, nbytes) = payload(msg);
                    // SAFETY: as for `short`.
                    unsafe {
                        let _a = args(msg);
                        std::mem::transmute::<F, unsafe extern "C" fn(T, T, usize $(, a!($i))*)>(
                            f,
                        )(t, buf, nbytes $(, _a[$i])*)
                    }
                }
            }
        )*

        /// The Short caller for `nargs` arguments (None above 16).
        pub(crate) fn short(nargs: u32) -> Option<Caller> {
            match nargs {
                $($n => Some($m::short),)*
                _ => None,
            }
        }

        /// The Medium/Long caller for `nargs` arguments (None above 16).
        pub(crate) fn medlong(nargs: u32) -> Option<Caller> {
            match nargs {
                $($n => Some($m::medlong),)*
                _ => None,
            }
        }
    };
}

arity!(
    n0 0 [],
    n1 1 [0],
    n2 2 [0 1],
    n3 3 [0 1 2],
    n4 4 [0 1 2 3],
    n5 5 [0 1 2 3 4],
    n6 6 [0 1 2 3 4 5],
    n7 7 [0 1 2 3 4 5 6],
    n8 8 [0 1 2 3 4 5 6 7],
    n9 9 [0 1 2 3 4 5 6 7 8],
    n10 10 [0 1 2 3 4 5 6 7 8 9],
    n11 11 [0 1 2 3 4 5 6 7 8 9 10],
    n12 12 [0 1 2 3 4 5 6 7 8 9 10 11],
    n13 13 [0 1 2 3 4 5 6 7 8 9 10 11 12],
    n14 14 [0 1 2 3 4 5 6 7 8 9 10 11 12 13],
    n15 15 [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14],
    n16 16 [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15],
);
