//! Forwarding the ranks' stdout/stderr, one whole line at a time.
//!
//! A task per pipe reads lines (on the job's runtime); one writer thread
//! writes them, so that a launcher whose own output is slow to drain holds
//! up only the ranks' output (through a bounded queue), never the control
//! plane.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::mpsc;

/// Longest line forwarded in one piece; a longer one is cut into pieces of
/// this size, each forwarded as a line of its own (so one rank printing a
/// huge blob without newlines cannot make the launcher buffer all of it).
const MAX_LINE: u64 = 64 * 1024;

/// Lines queued for the writer thread before readers wait.
const QUEUE: usize = 1024;

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

/// The queue to the writer thread: (to stderr?, the line).
pub(crate) type Lines = mpsc::Sender<(bool, Vec<u8>)>;

/// Starts the writer thread for `out` and `err`; it ends when every
/// sender of the returned queue is dropped.
pub(crate) fn writer(out: Sink, err: Sink) -> io::Result<(Lines, JoinHandle<()>)> {
    let (tx, mut rx) = mpsc::channel::<(bool, Vec<u8>)>(QUEUE);
    let t = std::thread::Builder::new()
        .name("gex-run-output".into())
        .spawn(move || {
            while let Some((is_err, line)) = rx.blocking_recv() {
                if is_err { &err } else { &out }.write_line(&line);
            }
        })?;
    Ok((tx, t))
}

/// Copies `pipe` to the writer line by line until end of file. With a
/// `prefix` (`[rank] `), each line starts with it. `progress` counts
/// forwarded lines so the launcher can tell a slow drain from a stuck one.
pub(crate) async fn forward(
    pipe: impl AsyncRead + Unpin,
    prefix: Option<String>,
    is_err: bool,
    lines: Lines,
    progress: Arc<AtomicU64>,
) {
    let prefix = prefix.unwrap_or_default().into_bytes();
    let mut reader = BufReader::with_capacity(MAX_LINE as usize, pipe);
    loop {
        let mut line = prefix.clone();
        match (&mut reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break,
            Ok(_) => {
                // A last line without a newline (or a cut long line) still
                // gets one: the next line may come from another rank.
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                if lines.send((is_err, line)).await.is_err() {
                    break;
                }
                progress.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // A read error on a pipe means it is unusable: treat as the end.
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_forward(input: &[u8], label: bool) -> String {
        let buf = Arc::new(Mutex::new(String::new()));
        let (lines, writer) = writer(Sink::Buffer(buf.clone()), Sink::Stderr).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let progress = Arc::new(AtomicU64::new(0));
        rt.block_on(forward(
            input,
            label.then(|| "[7] ".to_string()),
            false,
            lines,
            progress.clone(),
        ));
        writer.join().unwrap();
        let s = buf.lock().unwrap().clone();
        assert_eq!(progress.load(Ordering::Relaxed) as usize, s.lines().count());
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
