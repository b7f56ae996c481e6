//! Walks of this host's network interfaces.

use std::net::Ipv4Addr;

use nix::net::if_::InterfaceFlags;

/// The first IPv4 address of an interface that is up and not a loopback
/// interface (and not itself a loopback address), in the order the kernel
/// lists them: the address a rank publishes when its job spans hosts, and
/// the one the launcher advertises for a control plane bound to 0.0.0.0.
pub fn first_ipv4() -> Option<Ipv4Addr> {
    ipv4_addrs().into_iter().find(|ip| !ip.is_loopback())
}

/// The IPv4 addresses of the interfaces that are up and not loopback.
fn ipv4_addrs() -> Vec<Ipv4Addr> {
    let Ok(list) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    list.filter(|i| {
        i.flags.contains(InterfaceFlags::IFF_UP) && !i.flags.contains(InterfaceFlags::IFF_LOOPBACK)
    })
    .filter_map(|i| Some(i.address?.as_sockaddr_in()?.ip()))
    .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_ipv4_is_a_bindable_address_of_this_host() {
        // A machine without a network interface has none to find.
        if let Some(ip) = super::first_ipv4() {
            assert!(!ip.is_loopback() && !ip.is_unspecified());
            std::net::UdpSocket::bind((ip, 0)).expect("an address of this host");
        }
    }
}
