//! Communication schedules: pure functions of (rank, size), computed alike
//! on every member, so no rank ever has to be told its partners.
//!
//! - Dissemination (Hensgen, Finkel and Manber; Mellor-Crummey and Scott
//!   section 3.3): in round `k` member `r` signals `r + 2^k` and waits for
//!   `r - 2^k` (mod `n`); after `ceil(log2 n)` rounds every member has
//!   heard, directly or not, from every other one.
//! - Binomial tree over virtual ranks `0..n` rooted at 0: the parent of `v`
//!   is `v` with its lowest set bit cleared, and the subtree of `v` is the
//!   contiguous range `[v, v + lowbit(v))` (all of `0..n` for the root). A
//!   reduction that combines each child's result after its own, children in
//!   increasing order, therefore combines in rank order: what a
//!   non-commutative operator needs.
//!
//! Layer: base. Uses nothing of gex-coll.

/// Number of dissemination rounds among `n` members: `ceil(log2 n)`.
pub fn dissemination_rounds(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// The member `me` signals in round `k`.
pub fn dissemination_to(me: u32, k: u32, n: u32) -> u32 {
    ((u64::from(me) + (1u64 << k)) % u64::from(n)) as u32
}

/// The member `me` waits for in round `k`.
pub fn dissemination_from(me: u32, k: u32, n: u32) -> u32 {
    let n64 = u64::from(n);
    ((u64::from(me) + n64 - (1u64 << k) % n64) % n64) as u32
}

/// Parent of virtual rank `v` in the binomial tree rooted at 0.
pub fn binomial_parent(v: u32) -> Option<u32> {
    (v != 0).then(|| v & (v - 1))
}

/// Children of virtual rank `v` among `n`, in increasing order (the order
/// their subtrees follow `v`'s own range).
pub fn binomial_children(v: u32, n: u32) -> Vec<u32> {
    let limit: u64 = if v == 0 {
        u64::MAX
    } else {
        1u64 << v.trailing_zeros()
    };
    let mut out = Vec::new();
    let mut step = 1u64;
    while step < limit && u64::from(v) + step < u64::from(n) {
        out.push((u64::from(v) + step) as u32);
        step <<= 1;
    }
    out
}

/// The virtual rank of `rank` in a tree rooted at `root` among `n`.
pub fn to_virtual(rank: u32, root: u32, n: u32) -> u32 {
    ((u64::from(rank) + u64::from(n) - u64::from(root)) % u64::from(n)) as u32
}

/// The real rank of virtual rank `v` in a tree rooted at `root` among `n`.
pub fn from_virtual(v: u32, root: u32, n: u32) -> u32 {
    ((u64::from(v) + u64::from(root)) % u64::from(n)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds() {
        assert_eq!(dissemination_rounds(1), 0);
        assert_eq!(dissemination_rounds(2), 1);
        assert_eq!(dissemination_rounds(3), 2);
        assert_eq!(dissemination_rounds(4), 2);
        assert_eq!(dissemination_rounds(5), 3);
        assert_eq!(dissemination_rounds(8), 3);
        assert_eq!(dissemination_rounds(9), 4);
    }

    /// After all rounds, every member has (transitively) heard from all.
    #[test]
    fn dissemination_covers_everyone() {
        for n in 1..40u32 {
            let rounds = dissemination_rounds(n);
            // heard[r] = set of members r has heard from (itself included).
            let mut heard: Vec<Vec<bool>> =
                (0..n).map(|r| (0..n).map(|j| j == r).collect()).collect();
            for k in 0..rounds {
                let before = heard.clone();
                for r in 0..n {
                    let from = dissemination_from(r, k, n);
                    assert_eq!(dissemination_to(from, k, n), r);
                    for j in 0..n as usize {
                        heard[r as usize][j] |= before[from as usize][j];
                    }
                }
            }
            for (r, h) in heard.iter().enumerate() {
                assert!(h.iter().all(|&b| b), "n {n}: member {r} missed someone");
            }
        }
    }

    #[test]
    fn binomial_tree_is_a_spanning_tree_with_contiguous_subtrees() {
        for n in 1..70u32 {
            let mut seen = vec![0u32; n as usize];
            for v in 0..n {
                for c in binomial_children(v, n) {
                    assert_eq!(binomial_parent(c), Some(v), "n {n} v {v} c {c}");
                    seen[c as usize] += 1;
                }
                if v != 0 {
                    let p = binomial_parent(v).unwrap();
                    assert!(binomial_children(p, n).contains(&v));
                }
            }
            assert_eq!(seen[0], 0);
            assert!(seen[1..].iter().all(|&s| s == 1));
            // Subtree of v is [v, v + lowbit(v)) clipped to n.
            fn subtree(v: u32, n: u32) -> Vec<u32> {
                let mut out = vec![v];
                for c in binomial_children(v, n) {
                    out.extend(subtree(c, n));
                }
                out
            }
            for v in 0..n {
                let mut s = subtree(v, n);
                s.sort_unstable();
                let end = if v == 0 {
                    n
                } else {
                    (v + (1 << v.trailing_zeros())).min(n)
                };
                assert_eq!(s, (v..end).collect::<Vec<_>>(), "n {n} v {v}");
            }
        }
    }

    #[test]
    fn virtual_ranks_round_trip() {
        for n in 1..10 {
            for root in 0..n {
                for r in 0..n {
                    assert_eq!(from_virtual(to_virtual(r, root, n), root, n), r);
                }
                assert_eq!(to_virtual(root, root, n), 0);
            }
        }
    }
}
