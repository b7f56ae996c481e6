//! A team's grouping by neighbourhood (`Hier`): which members share
//! which neighbourhood, the local team of this member's group and the
//! representatives' team of one operation, with their ids. The
//! hierarchical mechanism (`crate::hier`) runs its collectives over this
//! shape; the registry sets it up with the team. Uses the engine (ids),
//! the shared area (the neighbourhoods) and the registry.

use std::sync::Arc;

use gex_types::Rank;

use super::TeamInfo;
use crate::area;
use crate::engine::{hash_id, Key};

/// A team's grouping by neighbourhood (see the module documentation).
pub(crate) struct Hier {
    /// The group of each member, by team rank.
    pub(crate) group: Box<[u32]>,
    /// Each group's members (team ranks, ascending).
    pub(crate) groups: Box<[Box<[u32]>]>,
    /// Each member's index in its group, by team rank.
    pub(crate) local_rank: Box<[u32]>,
    /// This member's group.
    pub(crate) mine: u32,
    /// Jobranks of this member's group (in team-rank order).
    pub(crate) local_jobranks: Arc<[Rank]>,
    /// This member's index in its group.
    pub(crate) me_local: u32,
    /// This member's neighbourhood (its lowest jobrank).
    pub(crate) nbrhd: Rank,
    /// The local team, when the group has other members.
    pub(crate) local: Option<Arc<TeamInfo>>,
    /// Every group is a contiguous range of team ranks (`crate::hier::reduces`).
    pub(crate) contiguous: bool,
}

impl Hier {
    /// The grouping of `t`'s members, if `t` gets a hierarchy: the areas
    /// are in use, the members span two or more neighbourhoods, and one
    /// holds two or more of them. The same answer on every member.
    pub(crate) fn plan(t: &TeamInfo) -> Option<Hier> {
        let nb = area::nbrhds()?;
        let n = t.members.len();
        if n < 3 {
            return None;
        }
        let mut ids: Vec<Rank> = Vec::new();
        let mut group = Vec::with_capacity(n);
        let mut local_rank = Vec::with_capacity(n);
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (r, &j) in t.members.iter().enumerate() {
            let id = *nb.get(j as usize)?;
            let g = match ids.iter().position(|&x| x == id) {
                Some(g) => g,
                None => {
                    ids.push(id);
                    groups.push(Vec::new());
                    ids.len() - 1
                }
            };
            group.push(g as u32);
            local_rank.push(groups[g].len() as u32);
            groups[g].push(r as u32);
        }
        if groups.len() < 2 || groups.iter().all(|g| g.len() < 2) {
            return None;
        }
        let mine = group[t.me as usize];
        let local_jobranks = groups[mine as usize]
            .iter()
            .map(|&r| t.members[r as usize])
            .collect();
        Some(Hier {
            contiguous: group.windows(2).all(|w| w[0] <= w[1]),
            group: group.into(),
            groups: groups.into_iter().map(Vec::into_boxed_slice).collect(),
            me_local: local_rank[t.me as usize],
            local_rank: local_rank.into(),
            mine,
            local_jobranks,
            nbrhd: ids[mine as usize],
            local: None,
        })
    }

    /// The members of this member's local team (jobranks) and its rank
    /// there, if the group has others.
    pub(crate) fn local_members(&self) -> Option<(Arc<[Rank]>, u32)> {
        (self.local_jobranks.len() > 1).then(|| (self.local_jobranks.clone(), self.me_local))
    }

    /// The id of this member's local team, for a team of id `team_id`:
    /// the tag (3) in the second word, where a representatives' team has
    /// 4 and a split or created team the parent's sequence number with
    /// two more words after it, so that no two of them can be hashed from
    /// the same words (with the tag last, the local team of neighbourhood
    /// 4 had the id of the representatives of operation 3).
    pub(crate) fn local_id(&self, team_id: u64) -> u64 {
        local_team_id(team_id, self.nbrhd)
    }

    /// With the local team built for it.
    pub(crate) fn with_local(mut self, local: Option<Arc<TeamInfo>>) -> Hier {
        self.local = local;
        self
    }

    /// The local team, if the group has other members.
    pub(crate) fn local(&self) -> Option<&Arc<TeamInfo>> {
        self.local.as_ref()
    }

    /// The representative (team rank) of group `g`: `root` in its own
    /// group, else the group's lowest member.
    pub(crate) fn rep(&self, g: u32, root: Option<Rank>) -> u32 {
        match root {
            Some(r) if self.group[r as usize] == g => r,
            _ => self.groups[g as usize][0],
        }
    }

    /// The team of the representatives of operation `key` over `t`, if
    /// this member is one.
    pub(crate) fn reps(&self, t: &TeamInfo, key: Key, root: Option<Rank>) -> Option<Arc<TeamInfo>> {
        if self.rep(self.mine, root) != t.me {
            return None;
        }
        let members: Arc<[Rank]> = (0..self.groups.len() as u32)
            .map(|g| t.members[self.rep(g, root) as usize])
            .collect();
        let id = reps_team_id(t.id, key.1);
        Some(Arc::new(TeamInfo::internal(id, members, self.mine)))
    }
}

/// The second word hashed into a local team's id ([`Hier::local_id`]).
const LOCAL_TAG: u64 = 3;
/// The second word hashed into a representatives' team's id.
const REPS_TAG: u64 = 4;

/// The id of the local team of neighbourhood `nbrhd` in team `team_id`.
fn local_team_id(team_id: u64, nbrhd: Rank) -> u64 {
    hash_id(&[team_id, LOCAL_TAG, u64::from(nbrhd)])
}

/// The id of the representatives' team of operation `seq` of team
/// `team_id`.
fn reps_team_id(team_id: u64, seq: u32) -> u64 {
    hash_id(&[team_id, REPS_TAG, u64::from(seq)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No local team's id is a representatives' team's (of the same team
    /// or another): with the tag last, neighbourhood 4's local team had
    /// the id of operation 3's representatives, whose messages then met
    /// the local team's own.
    #[test]
    fn local_and_representatives_ids_differ() {
        let mut seen = std::collections::HashSet::new();
        for team in [0u64, 1, 3, 4, 0x9E37_79B9_7F4A_7C15] {
            for x in 0..256u32 {
                assert!(seen.insert(local_team_id(team, x)), "local {team} {x}");
                assert!(seen.insert(reps_team_id(team, x)), "reps {team} {x}");
            }
        }
    }
}
