//! Forwarding the ranks' stdout/stderr, one whole line at a time.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;

use crate::job::Event;

/// Longest line forwarded in one piece; a longer one is cut into pieces of
/// this size, each forwarded as a line of its own (so one rank printing a
/// huge blob without newlines cannot make the launcher buffer all of it).
const MAX_LINE: u64 = 64 * 1024;

/// Where lines go. Every write is one whole line under a lock, so lines
/// from different ranks (and the launcher's own messages) never interleave.
#[derive(Clone)]
pub(crate) enum Sink {
    /// The launcher's own stdout.
    Stdout,
    /// The launcher's own stderr.
    Stderr,
    /// A buffer that [`crate::run`] returns (`Output::Capture`).
    Buffer(Arc<Mutex<String>>),
}

impl Sink {
    /// Writes `line`, which must end with `\n`. Errors (a closed stdout) are
    /// ignored: the launcher keeps draining the pipes so ranks never block.
    pub(crate) fn write_line(&self, line: &[u8]) {
        match self {
            Sink::Stdout => {
                let mut out = io::stdout().lock();
                let _ = out.write_all(line).and_then(|()| out.flush());
            }
            Sink::Stderr => {
                let mut err = io::stderr().lock();
                let _ = err.write_all(line).and_then(|()| err.flush());
            }
            Sink::Buffer(buf) => {
                let text = String::from_utf8_lossy(line);
                buf.lock()
                    .unwrap_or_else(|poison| poison.into_inner())
                    .push_str(&text);
            }
        }
    }

    /// Writes a launcher message (`gex-run: ...`), adding the newline.
    pub(crate) fn message(&self, msg: &str) {
        self.write_line(format!("gex-run: {msg}\n").as_bytes());
    }
}

/// Copies `pipe` to `sink` line by line until end of file, then reports
/// [`Event::OutputDone`]. With `label`, each line is prefixed `[rank] `.
///
/// Runs on a thread of its own; `progress` counts forwarded lines so the
/// coordinator can tell a slow drain from a stuck one.
pub(crate) fn forward(
    pipe: impl Read,
    rank: u32,
    label: bool,
    sink: Sink,
    progress: Arc<AtomicU64>,
    events: Sender<Event>,
) {
    let prefix = if label {
        format!("[{rank}] ").into_bytes()
    } else {
        Vec::new()
    };
    let mut reader = BufReader::with_capacity(MAX_LINE as usize, pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        line.extend_from_slice(&prefix);
        match reader.by_ref().take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                // A last line without a newline (or a cut long line) still
                // gets one: the next line may come from another rank.
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                sink.write_line(&line);
                progress.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // A read error on a pipe means it is unusable: treat as the end.
            Err(_) => break,
        }
    }
    let _ = events.send(Event::OutputDone { rank });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_forward(input: &[u8], label: bool) -> String {
        let buf = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = crossbeam_channel::unbounded();
        forward(
            input,
            7,
            label,
            Sink::Buffer(buf.clone()),
            Arc::new(AtomicU64::new(0)),
            tx,
        );
        assert!(matches!(rx.try_recv(), Ok(Event::OutputDone { rank: 7 })));
        let s = buf.lock().unwrap().clone();
        s
    }

    #[test]
    fn labels_every_line_and_terminates_the_last() {
        assert_eq!(
            run_forward(b"a\nb\n\nc", true),
            "[7] a\n[7] b\n[7] \n[7] c\n"
        );
        assert_eq!(run_forward(b"a\nb", false), "a\nb\n");
        assert_eq!(run_forward(b"", true), "");
    }

    #[test]
    fn cuts_very_long_lines() {
        let long = vec![b'x'; MAX_LINE as usize + 10];
        let out = run_forward(&long, false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len() + lines[1].len(), long.len());
    }
}
