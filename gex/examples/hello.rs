//! The README's first program: `gex-run -n 4 target/release/examples/hello`.

use gex::am::{register_handlers, AmRequest, HandlerEntry};
use gex::Flags;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn main() {
    // Collective over the job: every rank calls it.
    let (_client, ep, tm) = gex::init("HELLO").unwrap();

    let replies = Arc::new(AtomicU64::new(0));
    let r = replies.clone();
    let mut handlers = [
        // A request handler gets a token that can reply once.
        HandlerEntry::request(200, Flags::AM_SHORT, 1, |token, msg| {
            let x = msg.arg(0);
            token.reply_short(201, Flags::empty(), &[x + 1]).unwrap();
        }),
        // A reply handler gets a token with no way to communicate.
        HandlerEntry::reply(201, Flags::AM_SHORT, 1, move |_token, msg| {
            assert_eq!(msg.arg(0), 42);
            r.fetch_add(1, Ordering::Relaxed);
        }),
    ];
    register_handlers(&ep, &mut handlers).unwrap();
    gex::barrier(&tm).unwrap(); // everyone registered before anyone sends

    let peer = (tm.rank() + 1) % tm.size();
    tm.request_short(peer, 200, Flags::empty(), &[41]).unwrap();
    gex::block_until(|| replies.load(Ordering::Relaxed) == 1).unwrap();
    println!("rank {} got its reply", tm.rank());
    gex::barrier(&tm).unwrap(); // serve peers' requests until all are done
}
