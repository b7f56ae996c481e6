//! Calls of C handlers with the argument list their registration names
//! (generated: one arm per argument count, 0 to 16).

use std::ffi::c_void;

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
