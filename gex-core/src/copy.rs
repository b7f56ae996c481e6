//! One small copy for the layers' direct routes (RMA, VIS): the size of
//! most transfers there is a few bytes, where a `memmove` call costs more
//! than the copy.

/// Copies `len` bytes: up to 16 bytes as at most two overlapping
/// unaligned loads and stores (8 to 16 bytes takes one predictable branch
/// and no call), longer ranges through `memmove`.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes (they may overlap).
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: per the contract every access below lies within the first
    // `len` bytes of `src` or `dst`; each arm reads everything before it
    // writes, so overlapping ranges copy as `memmove` does.
    unsafe {
        if len.wrapping_sub(8) <= 8 {
            let head = (src as *const u64).read_unaligned();
            let tail = (src.add(len - 8) as *const u64).read_unaligned();
            (dst as *mut u64).write_unaligned(head);
            (dst.add(len - 8) as *mut u64).write_unaligned(tail);
        } else if len > 16 {
            std::ptr::copy(src, dst, len);
        } else if len >= 4 {
            let head = (src as *const u32).read_unaligned();
            let tail = (src.add(len - 4) as *const u32).read_unaligned();
            (dst as *mut u32).write_unaligned(head);
            (dst.add(len - 4) as *mut u32).write_unaligned(tail);
        } else if len > 0 {
            let (first, mid, last) = (src.read(), src.add(len / 2).read(), src.add(len - 1).read());
            dst.write(first);
            dst.add(len / 2).write(mid);
            dst.add(len - 1).write(last);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::copy_bytes;

    /// Every length up to 40, at every small source and destination
    /// position in one buffer (so overlapping both ways), against `memmove`
    /// semantics.
    #[test]
    fn copy_bytes_matches_memmove() {
        for len in 0..=40usize {
            for from in 0..8usize {
                for to in 0..8usize {
                    let mut buf: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
                    let mut want = buf.clone();
                    want.copy_within(from..from + len, to);
                    let p = buf.as_mut_ptr();
                    // SAFETY: both ranges lie within the 64-byte buffer.
                    unsafe { copy_bytes(p.add(from), p.add(to), len) };
                    assert_eq!(buf, want, "len {len}, from {from}, to {to}");
                }
            }
            // Disjoint buffers too.
            let src: Vec<u8> = (0..len as u8).map(|i| i ^ 0xa5).collect();
            let mut dst = vec![0u8; len + 2];
            // SAFETY: `src` has `len` bytes, `dst` has `len + 2`.
            unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(1), len) };
            assert_eq!(&dst[1..=len], &src[..]);
            assert_eq!((dst[0], dst[len + 1]), (0, 0), "len {len}: wrote outside");
        }
    }
}
