//! This host's network interfaces, as the control plane and the network
//! conduits choose an address other hosts can reach.

use std::net::Ipv4Addr;

/// The first IPv4 address of an interface that is up and not loopback.
pub fn first_ipv4() -> Option<Ipv4Addr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that is freed
    // below with freeifaddrs; nothing is kept past that, and every node
    // and address is read only while the list is alive.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return None;
        }
        let mut found = None;
        let mut cur = list;
        while !cur.is_null() {
            let ifa = &*cur;
            cur = ifa.ifa_next;
            let up = ifa.ifa_flags & libc::IFF_UP as libc::c_uint != 0;
            let loopback = ifa.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0;
            if ifa.ifa_addr.is_null() || !up || loopback {
                continue;
            }
            if i32::from((*ifa.ifa_addr).sa_family) != libc::AF_INET {
                continue;
            }
            let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            if !ip.is_loopback() {
                found = Some(ip);
                break;
            }
        }
        libc::freeifaddrs(list);
        found
    }
}
