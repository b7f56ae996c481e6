//! The team constructors and destructor (`gex_TM_Split`,
//! `gex_TM_Create`, `gex_TM_Destroy`) and the scratch-size queries: a new
//! team's id, members and records are agreed collectively over its parent
//! (Active Message all-gathers), then it is registered
//! ([`crate::team`]) and given its shared-memory channel and hierarchy.
//!
//! Layer: public forms. Uses the registry, the shared area's channels,
//! the AM mechanism (all-gathers), the team barrier and the small-data
//! mechanism (a claimed channel's regions are reset).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gex_core::internals::*;
use gex_core::{context, Ep, Tm};
use gex_types::{EpLocation, Error, Flags, Memvec, Rank, Result};

use crate::am::allgather_v;
use crate::area::{self, claim, free_channels, release, ShmTeam};
use crate::barrier::barrier_blocking;
use crate::engine::{self, Key};
use crate::team::{register, team_of, Hier, TeamInfo};

/// Gives a new team spanning several neighbourhoods its hierarchy
/// (`crate::hier`), collectively over it: each neighbourhood's part gets
/// a team of its own, with a channel if one is free on all its members
/// (`free_of(jobrank)`: the channels a member reported free).
fn setup_hier(t: &TeamInfo, free_of: impl Fn(Rank) -> u64) {
    let Some(h) = Hier::plan(t) else { return };
    let local = h.local_members().map(|(members, me)| {
        let common = members.iter().fold(!0u64, |f, &j| f & free_of(j));
        let lt = TeamInfo::internal(h.local_id(t.id), members, me);
        setup_shm(&lt, common);
        Arc::new(lt)
    });
    t.set_hier(h.with_local(local));
}

/// Whether a team over `members` (jobranks) may use a shared-memory
/// channel: the same answer on every member (the areas are agreed over the
/// job, and neighbourhoods partition it).
fn shm_eligible(members: &[Rank]) -> bool {
    members.len() > 1
        && area::area().is_some_and(|a| members.iter().all(|&j| a.local_index(j).is_some()))
}

/// Gives a new team its shared-memory channel, collectively over it:
/// `common` is the set of channels every member reported free (the same on
/// every member). Claims the lowest, exchanges (claimed, counter) over the
/// team, and keeps the channel only if every member claimed it.
fn setup_shm(t: &TeamInfo, common: u64) {
    let cand = common & !1;
    if !shm_eligible(&t.members) || cand == 0 {
        return;
    }
    let ch = cand.trailing_zeros() as usize;
    let area = area::area().expect("eligible");
    let claimed = claim(ch);
    let local = area
        .local_index(t.members[t.me as usize])
        .expect("this process shares its neighbourhood");
    // Only this process writes its counter, so a relaxed load reads the
    // latest value.
    let mine = area.counter(ch, local).load(Ordering::Relaxed);
    if claimed {
        // Before the exchange: no member looks at it until after.
        crate::shm::small::reset(ch, local);
    }
    let mut rec = vec![claimed as u8];
    rec.extend(mine.to_le_bytes());
    let (all, _) = allgather_v(t, "gex-coll shared-memory barrier set-up", rec);
    let everyone = all.iter().all(|r| r.first() == Some(&1));
    if !everyone {
        if claimed {
            release(ch);
        }
        return;
    }
    let base = all
        .iter()
        .map(|r| {
            u64::from_le_bytes(
                r.get(1..9)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or_else(|| gex_core::fatal("gex-coll: malformed set-up record")),
            )
        })
        .collect();
    t.set_shm(ShmTeam::new(&t.members, t.me as usize, ch, base));
}

/// The recommended scratch size for a team of `n` members: two cache-line
/// pairs per member, in whole pages (what a shared-memory algorithm over
/// the scratch needs; the current algorithms keep their state in process
/// memory and leave the scratch untouched).
pub fn recommended_scratch_size(n: u32) -> usize {
    if n == 0 {
        return 0;
    }
    (256 * n as usize).div_ceil(4096) * 4096
}

/// The least scratch size accepted (`GEX_FLAG_TM_SCRATCH_SIZE_MIN`).
const MIN_SCRATCH: usize = 1;

fn warn_min_deprecated() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        eprintln!(
            "gex: GEX_FLAG_TM_SCRATCH_SIZE_MIN is deprecated since spec v0.11; use GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED"
        )
    });
}

/// Checks that `[addr, +len)` (an offset with `SCRATCH_SEG_OFFSET`) lies in
/// the bound segment of `ep`; returns the offset.
fn check_scratch(
    call: &str,
    ep: &Ep,
    addr: usize,
    len: usize,
    flags: Flags,
) -> std::result::Result<usize, String> {
    let Some(seg) = ep.segment() else {
        return Err(format!(
            "{call}: client scratch needs a bound segment, and this endpoint has none (attach one, or pass GEX_FLAG_TM_NO_SCRATCH)"
        ));
    };
    if len == 0 {
        return Err(format!("{call}: the scratch size must be non-zero"));
    }
    seg.offset_of(addr, len, flags.contains(Flags::SCRATCH_SEG_OFFSET))
        .map_err(|e| format!("{call}: {}", e.named("scratch")))
}

const SPLIT_REC: usize = 1 + 1 + 1 + 4 + 4 + 8 + 8;

struct SplitRec {
    joins: bool,
    no_scratch: bool,
    err: bool,
    color: i32,
    key: i32,
    scratch_size: u64,
    /// Shared-memory barrier channels free on the sender.
    free: u64,
}

impl SplitRec {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(SPLIT_REC);
        v.extend([self.joins as u8, self.no_scratch as u8, self.err as u8]);
        v.extend(self.color.to_le_bytes());
        v.extend(self.key.to_le_bytes());
        v.extend(self.scratch_size.to_le_bytes());
        v.extend(self.free.to_le_bytes());
        v
    }

    fn decode(b: &[u8]) -> SplitRec {
        if b.len() != SPLIT_REC {
            gex_core::fatal("gex-coll: malformed split record");
        }
        SplitRec {
            joins: b[0] != 0,
            no_scratch: b[1] != 0,
            err: b[2] != 0,
            color: i32::from_le_bytes(b[3..7].try_into().expect("4 bytes")),
            key: i32::from_le_bytes(b[7..11].try_into().expect("4 bytes")),
            scratch_size: u64::from_le_bytes(b[11..19].try_into().expect("8 bytes")),
            free: u64::from_le_bytes(b[19..27].try_into().expect("8 bytes")),
        }
    }
}

/// The members (parent ranks, in new-rank order) of the team of colour
/// `color`: joining callers of that colour, by (key, parent rank).
fn split_members(recs: &[SplitRec], color: i32) -> Vec<u32> {
    let mut m: Vec<u32> = (0..recs.len() as u32)
        .filter(|&p| recs[p as usize].joins && recs[p as usize].color == color)
        .collect();
    m.sort_by_key(|&p| (recs[p as usize].key, p));
    m
}

struct SplitOutcome {
    recs: Vec<SplitRec>,
    key: Key,
}

fn split_exchange(kind: &'static str, parent: &TeamInfo, mine: SplitRec) -> SplitOutcome {
    let (all, k) = allgather_v(parent, kind, mine.encode());
    SplitOutcome {
        recs: all.iter().map(|b| SplitRec::decode(b)).collect(),
        key: k,
    }
}

/// Checks what must be single-valued over the new team of `members`.
fn check_split_team(call: &str, recs: &[SplitRec], members: &[u32]) -> Result<()> {
    let first = &recs[members[0] as usize];
    for &p in members {
        let r = &recs[p as usize];
        if r.err {
            return Err(Error::bad_arg(format!(
                "{call}: parent rank {p}, a member of the new team, passed invalid arguments"
            )));
        }
        if r.no_scratch != first.no_scratch {
            return Err(Error::bad_arg(format!(
                "{call}: GEX_FLAG_TM_NO_SCRATCH must be single-valued over the new team (parent ranks {} and {p} differ)",
                members[0]
            )));
        }
        if !r.no_scratch && r.scratch_size != first.scratch_size {
            return Err(Error::bad_arg(format!(
                "{call}: scratch_size must be single-valued over the new team (parent rank {} passed {}, parent rank {p} passed {})",
                members[0], first.scratch_size, r.scratch_size
            )));
        }
    }
    Ok(())
}

/// Splits `parent` into disjoint teams (`gex_TM_Split`). Collective over
/// `parent`.
///
/// - `color`: `Some(c)` (c >= 0) joins the team of every caller passing
///   the same colour; `None` is the spec's NULL `new_tm_p`: the caller takes
///   part in the call but joins no team, and gets `Ok(None)`.
/// - Ranks in each new team follow `key`, ties broken by parent rank.
/// - `scratch`: client scratch in the bound segment of the parent's
///   endpoint (an address, or an offset with `SCRATCH_SEG_OFFSET`), granted
///   to the library until [`tm_destroy`] hands it back; ignored with
///   `TM_NO_SCRATCH`, required (non-empty) otherwise.
/// - `flags`: `TM_NO_SCRATCH` (single-valued over each new team),
///   `SCRATCH_SEG_OFFSET`. The scratch-size query flags belong to
///   [`tm_split_scratch_size`].
///
/// The scratch size and `TM_NO_SCRATCH` must be single-valued over each
/// new team; if they are not, or any member passed invalid arguments,
/// every member of that team gets the error. The new team may be used at
/// once: messages for a team a member has not finished creating are kept.
pub fn tm_split(
    parent: &Tm,
    color: Option<i32>,
    key: i32,
    scratch: Option<Memvec>,
    flags: Flags,
) -> Result<Option<Tm>> {
    const CALL: &str = "gex_TM_Split";
    context::check_may_communicate(CALL)?;
    let p = team_of(parent, CALL)?;
    if flags.intersects(Flags::TM_SCRATCH_SIZE_RECOMMENDED | Flags::TM_SCRATCH_SIZE_MIN) {
        return Err(Error::bad_arg(format!(
            "{CALL}: the GEX_FLAG_TM_SCRATCH_SIZE_* queries are made with gex_coll::tm_split_scratch_size"
        )));
    }
    let bad = flags - (Flags::TM_NO_SCRATCH | Flags::SCRATCH_SEG_OFFSET);
    if !bad.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags {bad:?} are not valid here"
        )));
    }
    let no_scratch = flags.contains(Flags::TM_NO_SCRATCH);
    let mut local: std::result::Result<Option<usize>, String> = Ok(None);
    if let Some(c) = color.filter(|&c| c < 0) {
        local = Err(format!("{CALL}: color {c} is negative"));
    } else if color.is_some() && !no_scratch {
        local = match scratch {
            None => Err(format!(
                "{CALL}: no scratch given: pass a scratch region in the bound segment or GEX_FLAG_TM_NO_SCRATCH"
            )),
            Some(m) => check_scratch(CALL, parent.ep(), m.addr, m.len, flags).map(Some),
        };
    }
    let scratch_len = if no_scratch {
        0
    } else {
        scratch.map_or(0, |m| m.len)
    };
    let out = split_exchange(
        "gex_TM_Split",
        &p,
        SplitRec {
            joins: color.is_some(),
            no_scratch,
            err: local.is_err(),
            color: color.unwrap_or(-1),
            key,
            scratch_size: scratch_len as u64,
            free: free_channels(),
        },
    );
    let scratch_off = match local {
        Err(e) => return Err(Error::bad_arg(e)),
        Ok(o) => o,
    };
    let Some(color) = color else { return Ok(None) };
    let members = split_members(&out.recs, color);
    check_split_team(CALL, &out.recs, &members)?;
    let jobranks: Vec<Rank> = members.iter().map(|&q| p.members[q as usize]).collect();
    let id = engine::hash_id(&[p.id, u64::from(out.key.1), 1, color as u64]);
    let common = members
        .iter()
        .fold(!0u64, |f, &q| f & out.recs[q as usize].free);
    let tm = parent.new_subteam(jobranks.clone(), flags)?;
    let t = register(
        &tm,
        id,
        jobranks.into(),
        scratch_off.map(|o| (o, scratch_len)),
    )?;
    setup_shm(&t, common);
    setup_hier(&t, |j| {
        let q = p.members.iter().position(|&m| m == j).expect("a member");
        out.recs[q].free
    });
    Ok(Some(tm))
}

/// The collective scratch-size query of `gex_TM_Split`: `flags` must hold
/// `TM_SCRATCH_SIZE_RECOMMENDED` (or the deprecated `TM_SCRATCH_SIZE_MIN`,
/// which prints a warning), single-valued over `parent`. Collective over
/// `parent`; returns 0 to callers passing `color == None`, and the same
/// size to every member of a prospective team. No team is created.
pub fn tm_split_scratch_size(
    parent: &Tm,
    color: Option<i32>,
    key: i32,
    flags: Flags,
) -> Result<usize> {
    const CALL: &str = "gex_TM_Split (scratch size query)";
    context::check_may_communicate(CALL)?;
    let p = team_of(parent, CALL)?;
    let min = query_kind(
        CALL,
        flags,
        Flags::TM_NO_SCRATCH | Flags::SCRATCH_SEG_OFFSET,
    )?;
    let local_err = color.is_some_and(|c| c < 0);
    let out = split_exchange(
        "gex_TM_Split query",
        &p,
        SplitRec {
            joins: color.is_some(),
            no_scratch: true,
            err: local_err,
            color: color.unwrap_or(-1),
            key,
            scratch_size: 0,
            free: 0,
        },
    );
    if local_err {
        return Err(Error::bad_arg(format!(
            "{CALL}: color {color:?} is negative"
        )));
    }
    let Some(color) = color else { return Ok(0) };
    let n = split_members(&out.recs, color).len() as u32;
    Ok(if min {
        MIN_SCRATCH
    } else {
        recommended_scratch_size(n)
    })
}

/// Whether a query asks for the minimum (else the recommended size).
fn query_kind(call: &str, flags: Flags, allowed: Flags) -> Result<bool> {
    let q = flags & (Flags::TM_SCRATCH_SIZE_RECOMMENDED | Flags::TM_SCRATCH_SIZE_MIN);
    if q == Flags::TM_SCRATCH_SIZE_RECOMMENDED {
        // fine
    } else if q == Flags::TM_SCRATCH_SIZE_MIN {
        warn_min_deprecated();
    } else {
        return Err(Error::bad_arg(format!(
            "{call}: exactly one of GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED and GEX_FLAG_TM_SCRATCH_SIZE_MIN is required"
        )));
    }
    let bad = flags - q - allowed;
    if !bad.is_empty() {
        return Err(Error::bad_arg(format!(
            "{call}: flags {bad:?} are not valid here"
        )));
    }
    Ok(q == Flags::TM_SCRATCH_SIZE_MIN)
}

const SCRATCH_KINDS: [Flags; 4] = [
    Flags::TM_GLOBAL_SCRATCH,
    Flags::TM_LOCAL_SCRATCH,
    Flags::TM_SYMMETRIC_SCRATCH,
    Flags::TM_NO_SCRATCH,
];

/// The jobranks `args` name, checked: distinct, endpoint index 0, inside
/// the parent (by parent rank, or by jobrank with `RANK_IS_JOBRANK`).
fn create_members(
    call: &str,
    p: &TeamInfo,
    args: &[EpLocation],
    flags: Flags,
) -> std::result::Result<Vec<Rank>, String> {
    let mut out = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        if a.ep_index != 0 {
            return Err(format!(
                "{call}: args[{i}] names endpoint index {}: only primordial endpoints (index 0) can join teams",
                a.ep_index
            ));
        }
        let j = if flags.contains(Flags::RANK_IS_JOBRANK) {
            if !p.members.contains(&a.rank) {
                return Err(format!(
                    "{call}: args[{i}] names jobrank {}, which has no member in the parent team",
                    a.rank
                ));
            }
            a.rank
        } else {
            *p.members.get(a.rank as usize).ok_or_else(|| {
                format!(
                    "{call}: args[{i}] names parent rank {} of a parent of {} (pass GEX_FLAG_RANK_IS_JOBRANK for jobranks)",
                    a.rank,
                    p.size()
                )
            })?
        };
        if out.contains(&j) {
            return Err(format!("{call}: args[{i}] names jobrank {j} a second time"));
        }
        out.push(j);
    }
    Ok(out)
}

struct CreateRec {
    err: bool,
    flags: u64,
    scratch_size: u64,
    /// Shared-memory barrier channels free on the sender.
    free: u64,
    members: Vec<Rank>,
}

impl CreateRec {
    fn encode(&self) -> Vec<u8> {
        let mut v = vec![self.err as u8];
        v.extend(self.flags.to_le_bytes());
        v.extend(self.scratch_size.to_le_bytes());
        v.extend(self.free.to_le_bytes());
        for m in &self.members {
            v.extend(m.to_le_bytes());
        }
        v
    }

    fn decode(b: &[u8]) -> CreateRec {
        if b.len() < 25 || !(b.len() - 25).is_multiple_of(4) {
            gex_core::fatal("gex-coll: malformed team-create record");
        }
        CreateRec {
            err: b[0] != 0,
            flags: u64::from_le_bytes(b[1..9].try_into().expect("8 bytes")),
            scratch_size: u64::from_le_bytes(b[9..17].try_into().expect("8 bytes")),
            free: u64::from_le_bytes(b[17..25].try_into().expect("8 bytes")),
            members: b[25..]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        }
    }
}

/// The flags that must be single-valued over an output team.
const CREATE_SINGLE: Flags = Flags::RANK_IS_JOBRANK
    .union(Flags::SCRATCH_SEG_OFFSET)
    .union(Flags::TM_GLOBAL_SCRATCH)
    .union(Flags::TM_LOCAL_SCRATCH)
    .union(Flags::TM_SYMMETRIC_SCRATCH)
    .union(Flags::TM_NO_SCRATCH);

/// Checks the gathered records: every member of this caller's output team
/// passed the same members, flags and scratch size, and every other
/// non-empty list is identical or disjoint.
fn check_create(call: &str, p: &TeamInfo, recs: &[CreateRec], me: usize) -> Result<()> {
    let mine = &recs[me];
    let parent_rank_of = |j: Rank| p.members.iter().position(|&m| m == j);
    for &j in &mine.members {
        let q = parent_rank_of(j).expect("checked at creation");
        let r = &recs[q];
        if r.err {
            return Err(Error::bad_arg(format!(
                "{call}: jobrank {j}, a member of the new team, passed invalid arguments"
            )));
        }
        if r.members != mine.members {
            return Err(Error::bad_arg(format!(
                "{call}: args[] must be single-valued over the output team, but jobrank {j} passed a different list"
            )));
        }
        if r.flags != mine.flags || r.scratch_size != mine.scratch_size {
            return Err(Error::bad_arg(format!(
                "{call}: the scratch flag, scratch size, RANK_IS_JOBRANK and SCRATCH_SEG_OFFSET must be single-valued over the output team; jobrank {j} differs"
            )));
        }
    }
    for (q, r) in recs.iter().enumerate() {
        if r.members.is_empty() || r.members == mine.members {
            continue;
        }
        if let Some(j) = r.members.iter().find(|j| mine.members.contains(j)) {
            return Err(Error::bad_arg(format!(
                "{call}: parent rank {q} builds a different team that overlaps this one in jobrank {j}: lists must be identical or disjoint"
            )));
        }
    }
    Ok(())
}

/// Creates zero or one team per caller from explicit member lists
/// (`gex_TM_Create`). Collective over `parent`.
///
/// - `args`: every member of the caller's new team, in rank order, by
///   parent rank or (with `RANK_IS_JOBRANK`) jobrank; endpoint index 0
///   only. Empty: the caller creates no team. The content, the scratch
///   flag, `scratch_size`, `RANK_IS_JOBRANK` and `SCRATCH_SEG_OFFSET` must
///   be single-valued over the output team; lists of different callers
///   must be identical or disjoint. The caller need not be in its list.
/// - Scratch (exactly one flag): `TM_SYMMETRIC_SCRATCH`, one address (or
///   offset) used by every member; `TM_LOCAL_SCRATCH`, one per local
///   member (one or none); `TM_GLOBAL_SCRATCH`, one per member;
///   `TM_NO_SCRATCH`, none (`scratch_size`, `scratch_addrs` ignored).
///   Each member checks its own region against its bound segment.
///   Collectives over a team without scratch are allowed (the spec's
///   prohibition is relaxed: no algorithm here needs scratch).
///
/// Returns the new team if this process is one of its members (the spec's
/// `new_tms[]`: one entry per local member). With `TM_LOCAL_SCRATCH` the
/// call ends with a barrier over each new team.
pub fn tm_create(
    parent: &Tm,
    args: &[EpLocation],
    scratch_size: usize,
    scratch_addrs: &[usize],
    flags: Flags,
) -> Result<Vec<Tm>> {
    const CALL: &str = "gex_TM_Create";
    context::check_may_communicate(CALL)?;
    let p = team_of(parent, CALL)?;
    if flags.intersects(Flags::TM_SCRATCH_SIZE_RECOMMENDED | Flags::TM_SCRATCH_SIZE_MIN) {
        return Err(Error::bad_arg(format!(
            "{CALL}: the GEX_FLAG_TM_SCRATCH_SIZE_* queries are made with gex_coll::tm_create_scratch_size"
        )));
    }
    let bad = flags - CREATE_SINGLE;
    if !bad.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags {bad:?} are not valid here"
        )));
    }
    let kinds: Vec<Flags> = SCRATCH_KINDS
        .into_iter()
        .filter(|k| flags.contains(*k))
        .collect();
    if kinds.len() != 1 {
        return Err(Error::bad_arg(format!(
            "{CALL}: exactly one of GEX_FLAG_TM_{{GLOBAL,LOCAL,SYMMETRIC,NO}}_SCRATCH is required, got {flags:?}"
        )));
    }
    let kind = kinds[0];
    let me_job = parent.ep().runtime().jobrank();
    let mut local: std::result::Result<Vec<Rank>, String> = create_members(CALL, &p, args, flags);
    let mut scratch_off = None;
    if let Ok(members) = &local {
        let pos = members.iter().position(|&j| j == me_job);
        let local_n = usize::from(pos.is_some());
        let mine_addr = match kind {
            _ if kind == Flags::TM_NO_SCRATCH || members.is_empty() => Ok(None),
            k if k == Flags::TM_SYMMETRIC_SCRATCH => match scratch_addrs {
                [a] => Ok(pos.map(|_| *a)),
                _ => Err(format!(
                    "{CALL}: GEX_FLAG_TM_SYMMETRIC_SCRATCH takes exactly one scratch address, got {}",
                    scratch_addrs.len()
                )),
            },
            k if k == Flags::TM_LOCAL_SCRATCH => {
                if scratch_addrs.len() == local_n {
                    Ok(scratch_addrs.first().copied())
                } else {
                    Err(format!(
                        "{CALL}: GEX_FLAG_TM_LOCAL_SCRATCH takes one address per local member ({local_n}), got {}",
                        scratch_addrs.len()
                    ))
                }
            }
            _ => {
                if scratch_addrs.len() == members.len() {
                    Ok(pos.map(|i| scratch_addrs[i]))
                } else {
                    Err(format!(
                        "{CALL}: GEX_FLAG_TM_GLOBAL_SCRATCH takes one address per member ({}), got {}",
                        members.len(),
                        scratch_addrs.len()
                    ))
                }
            }
        };
        match mine_addr {
            Ok(Some(a)) => match check_scratch(CALL, parent.ep(), a, scratch_size, flags) {
                Ok(o) => scratch_off = Some((o, scratch_size)),
                Err(e) => local = Err(e),
            },
            Ok(None) => {}
            Err(e) => local = Err(e),
        }
    }
    let rec = CreateRec {
        err: local.is_err(),
        flags: (flags & CREATE_SINGLE).bits(),
        scratch_size: if kind == Flags::TM_NO_SCRATCH {
            0
        } else {
            scratch_size as u64
        },
        free: free_channels(),
        members: local.clone().unwrap_or_default(),
    };
    let (all, key) = allgather_v(&p, "gex_TM_Create", rec.encode());
    let recs: Vec<CreateRec> = all.iter().map(|b| CreateRec::decode(b)).collect();
    let members = local.map_err(Error::bad_arg)?;
    if members.is_empty() {
        return Ok(Vec::new());
    }
    check_create(CALL, &p, &recs, p.me as usize)?;
    if !members.contains(&me_job) {
        return Ok(Vec::new());
    }
    let id = engine::hash_id(&[p.id, u64::from(key.1), 2, u64::from(members[0])]);
    let parent_rank = |j: &Rank| p.members.iter().position(|m| m == j).expect("checked");
    let common = members
        .iter()
        .fold(!0u64, |f, j| f & recs[parent_rank(j)].free);
    let tm = parent.new_subteam(members.clone(), flags)?;
    let t = register(&tm, id, members.into(), scratch_off)?;
    setup_shm(&t, common);
    setup_hier(&t, |j| recs[parent_rank(&j)].free);
    if kind == Flags::TM_LOCAL_SCRATCH {
        barrier_blocking(&t);
    }
    Ok(vec![tm])
}

/// The collective scratch-size query of `gex_TM_Create`: `flags` holds
/// `TM_SCRATCH_SIZE_RECOMMENDED` (or the deprecated `_MIN`) and may hold
/// `RANK_IS_JOBRANK`; returns the size for the team this caller's `args`
/// would create (0 for an empty list), which [`tm_create`] accepts as its
/// `scratch_size` for that list. The list is checked as [`tm_create`]
/// checks it. Collective over `parent`.
pub fn tm_create_scratch_size(parent: &Tm, args: &[EpLocation], flags: Flags) -> Result<usize> {
    const CALL: &str = "gex_TM_Create (scratch size query)";
    context::check_may_communicate(CALL)?;
    let p = team_of(parent, CALL)?;
    let min = query_kind(CALL, flags, CREATE_SINGLE)?;
    let local = create_members(CALL, &p, args, flags);
    let n = local.as_ref().map_or(0, Vec::len);
    create_scratch_query(&p, local.map(|m| (n, m)), min)
}

/// [`tm_create_scratch_size`] from the number of members alone: the size
/// depends only on how many members the team would have (`numargs`; 0:
/// the caller creates no team, and the answer is 0), so a caller need not
/// build the list to ask (C callers pass a NULL `args` with the count, as
/// the reference's tests do). The answer equals that of
/// [`tm_create_scratch_size`] for any valid list of `numargs` members.
/// Collective over `parent`, with either form on each caller.
pub fn tm_create_scratch_size_for(parent: &Tm, numargs: usize, flags: Flags) -> Result<usize> {
    const CALL: &str = "gex_TM_Create (scratch size query)";
    context::check_may_communicate(CALL)?;
    let p = team_of(parent, CALL)?;
    let min = query_kind(CALL, flags, CREATE_SINGLE)?;
    let local = if numargs > p.size() as usize {
        Err(format!(
            "{CALL}: {numargs} members asked for, but the parent team has {}",
            p.size()
        ))
    } else {
        Ok((numargs, Vec::new()))
    };
    create_scratch_query(&p, local, min)
}

/// The collective part of both scratch queries: every caller contributes
/// (so that the query stays collective over the parent), and the answer
/// for `n` members is 0 for none, else the minimum or recommended size.
fn create_scratch_query(
    p: &TeamInfo,
    local: std::result::Result<(usize, Vec<Rank>), String>,
    min: bool,
) -> Result<usize> {
    let rec = CreateRec {
        err: local.is_err(),
        flags: 0,
        scratch_size: 0,
        free: 0,
        members: local.as_ref().map(|(_, m)| m.clone()).unwrap_or_default(),
    };
    let _ = allgather_v(p, "gex_TM_Create query", rec.encode());
    let (n, _) = local.map_err(Error::bad_arg)?;
    Ok(match n {
        0 => 0,
        _ if min => MIN_SCRATCH,
        n => recommended_scratch_size(n as u32),
    })
}

/// Destroys a team (`gex_TM_Destroy`). Collective over `tm`.
///
/// Every collective over the team must be complete on this rank (its
/// events synced). Unless `GLOBALLY_QUIESCED` says the team is quiesced on
/// every member already, the call starts with a barrier over the team, so
/// that when it returns no member is still using this rank's scratch.
/// Returns the client-provided scratch, if any (`scratch_p`): its address,
/// or with `SCRATCH_SEG_OFFSET` its offset in the bound segment.
/// Destroying the primordial team is an error; using `tm` (or a clone)
/// afterwards gets an error.
pub fn tm_destroy(tm: Tm, flags: Flags) -> Result<Option<Memvec>> {
    const CALL: &str = "gex_TM_Destroy";
    context::check_may_communicate(CALL)?;
    if tm.is_primordial() {
        return Err(Error::bad_arg(format!(
            "{CALL}: the primordial team cannot be destroyed"
        )));
    }
    let bad = flags - (Flags::GLOBALLY_QUIESCED | Flags::SCRATCH_SEG_OFFSET);
    if !bad.is_empty() {
        return Err(Error::bad_arg(format!(
            "{CALL}: flags {bad:?} are not valid here"
        )));
    }
    let t = team_of(&tm, CALL)?;
    if !flags.contains(Flags::GLOBALLY_QUIESCED) {
        barrier_blocking(&t);
    }
    t.mark_destroyed();
    if let Some(s) = t.shm_team() {
        release(s.channel);
    }
    if let Some(ch) = t
        .hier()
        .and_then(|h| h.local())
        .and_then(|l| l.shm_channel())
    {
        release(ch);
    }
    Ok(t.scratch().map(|(off, len)| {
        if flags.contains(Flags::SCRATCH_SEG_OFFSET) {
            Memvec::new(off, len)
        } else {
            let base = tm.ep().segment().map_or(0, |s| s.addr());
            Memvec::new(base + off, len)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(joins: bool, color: i32, key: i32) -> SplitRec {
        SplitRec {
            joins,
            no_scratch: true,
            err: false,
            color,
            key,
            scratch_size: 0,
            free: 0,
        }
    }

    #[test]
    fn split_orders_by_key_then_parent_rank() {
        let recs = vec![
            rec(true, 0, 5),
            rec(true, 1, 0),
            rec(true, 0, 5),
            rec(false, 0, 0),
            rec(true, 0, -1),
        ];
        assert_eq!(split_members(&recs, 0), vec![4, 0, 2]);
        assert_eq!(split_members(&recs, 1), vec![1]);
        assert!(split_members(&recs, 7).is_empty());
        let r = SplitRec::decode(&recs[4].encode());
        assert_eq!((r.joins, r.color, r.key), (true, 0, -1));
    }

    #[test]
    fn create_records_round_trip() {
        let r = CreateRec {
            err: true,
            flags: 77,
            scratch_size: 4096,
            free: 6,
            members: vec![3, 1, 2],
        };
        let d = CreateRec::decode(&r.encode());
        assert!(d.err);
        assert_eq!(
            (d.flags, d.scratch_size, d.members),
            (77, 4096, vec![3, 1, 2])
        );
    }

    #[test]
    fn recommended_sizes() {
        assert_eq!(recommended_scratch_size(0), 0);
        assert_eq!(recommended_scratch_size(1), 4096);
        assert_eq!(recommended_scratch_size(16), 4096);
        assert_eq!(recommended_scratch_size(17), 8192);
    }
}
