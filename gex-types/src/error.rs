//! The GASNet error codes as a Rust error type that carries a message.

use std::fmt;

/// The GASNet error classes (`GASNET_ERR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A generic failure of the communication system or a lack of resources
    /// (`GASNET_ERR_RESOURCE`).
    Resource,
    /// An illegal argument, flag combination or calling context
    /// (`GASNET_ERR_BAD_ARG`).
    BadArg,
    /// The library was not initialised (`GASNET_ERR_NOT_INIT`).
    NotInit,
    /// Named barrier values did not match (`GASNET_ERR_BARRIER_MISMATCH`).
    BarrierMismatch,
    /// A non-blocking attempt found the operation not ready
    /// (`GASNET_ERR_NOT_READY`).
    NotReady,
}

impl ErrorKind {
    /// The numeric code the C reference uses for this class.
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::Resource => 10001,
            ErrorKind::BadArg => 10002,
            ErrorKind::NotInit => 10003,
            ErrorKind::BarrierMismatch => 10004,
            ErrorKind::NotReady => 10005,
        }
    }

    /// The C name of the code, e.g. `GASNET_ERR_BAD_ARG`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Resource => "GASNET_ERR_RESOURCE",
            ErrorKind::BadArg => "GASNET_ERR_BAD_ARG",
            ErrorKind::NotInit => "GASNET_ERR_NOT_INIT",
            ErrorKind::BarrierMismatch => "GASNET_ERR_BARRIER_MISMATCH",
            ErrorKind::NotReady => "GASNET_ERR_NOT_READY",
        }
    }
}

/// An error from a gex call: a GASNet error class and a message saying what
/// was wrong (the rank, the range, the flag...).
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    msg: String,
}

impl Error {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Self {
        Error {
            kind,
            msg: msg.into(),
        }
    }

    /// A `GASNET_ERR_BAD_ARG` error.
    pub fn bad_arg(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::BadArg, msg)
    }

    /// A `GASNET_ERR_RESOURCE` error.
    pub fn resource(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::Resource, msg)
    }

    /// A `GASNET_ERR_NOT_INIT` error.
    pub fn not_init(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::NotInit, msg)
    }

    /// A `GASNET_ERR_NOT_READY` error.
    pub fn not_ready(msg: impl Into<String>) -> Self {
        Error::new(ErrorKind::NotReady, msg)
    }

    /// The error class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.msg
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.msg)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}

/// The result type of gex calls.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_class_and_message() {
        let e = Error::bad_arg("rank 7 out of range 0..4");
        assert_eq!(e.kind(), ErrorKind::BadArg);
        assert_eq!(
            e.to_string(),
            "GASNET_ERR_BAD_ARG: rank 7 out of range 0..4"
        );
        assert_eq!(e.kind().code(), 10002);
    }

    #[test]
    fn codes_are_distinct() {
        let kinds = [
            ErrorKind::Resource,
            ErrorKind::BadArg,
            ErrorKind::NotInit,
            ErrorKind::BarrierMismatch,
            ErrorKind::NotReady,
        ];
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i + 1..] {
                assert_ne!(a.code(), b.code());
            }
        }
    }
}
