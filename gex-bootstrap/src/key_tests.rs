//! Reading the job key from the launcher's pipe or standard input.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};

use super::*;

fn pipe() -> (OwnedFd, std::fs::File) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both were just created and are owned by nobody else.
    unsafe {
        (
            OwnedFd::from_raw_fd(fds[0]),
            std::fs::File::from(OwnedFd::from_raw_fd(fds[1])),
        )
    }
}

#[test]
fn reads_one_line_and_nothing_after_it() {
    let (r, mut w) = pipe();
    w.write_all(b"0123abcd\nthe rest of the input").unwrap();
    drop(w);
    // A second descriptor of the same pipe stands for what the rank keeps
    // (its standard input): the key line is gone, the rest is not.
    let keep = r.try_clone().unwrap();
    let key = read_key_line(r.into_raw_fd(), Duration::from_secs(5)).unwrap();
    assert_eq!(key, "0123abcd");
    let mut rest = String::new();
    std::fs::File::from(keep).read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "the rest of the input");
}

#[test]
fn closes_the_pipe_and_accepts_a_last_line_without_newline() {
    let (r, mut w) = pipe();
    w.write_all(b"k3y").unwrap();
    drop(w);
    let fd = r.into_raw_fd();
    assert_eq!(read_key_line(fd, Duration::from_secs(5)).unwrap(), "k3y");
    // SAFETY: F_GETFD only inspects the descriptor table.
    assert_eq!(unsafe { libc::fcntl(fd, libc::F_GETFD) }, -1, "still open");
}

#[test]
fn rejects_empty_junk_slow_and_non_pipes() {
    for bad in [&b"\n"[..], b"has space\n", b"\x01\x02\n"] {
        let (r, mut w) = pipe();
        w.write_all(bad).unwrap();
        drop(w);
        let e = read_key_line(r.into_raw_fd(), Duration::from_secs(5)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{bad:?}");
    }
    let (r, mut w) = pipe();
    w.write_all(&[b'a'; MAX_KEY_LINE + 10]).unwrap();
    drop(w);
    assert!(read_key_line(r.into_raw_fd(), Duration::from_secs(5)).is_err());
    // Nothing arrives: a bounded wait, then an error saying so.
    let (r, w) = pipe();
    let e = read_key_line(r.into_raw_fd(), Duration::from_millis(50)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    drop(w);
    // A regular file is not the launcher's pipe, and stays open.
    let f = std::fs::File::open("/proc/self/cmdline").unwrap();
    let e = read_key_line(f.as_raw_fd(), Duration::from_secs(5)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(f.metadata().is_ok());
}
