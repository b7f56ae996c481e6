//! The GASNet error codes as a Rust error type that carries a message.

use std::fmt;

/// The GASNet error classes (`GASNET_ERR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The library was not initialised (`GASNET_ERR_NOT_INIT`).
    NotInit,
    /// A generic failure of the communication system or a lack of resources
    /// (`GASNET_ERR_RESOURCE`).
    Resource,
    /// An illegal argument, flag combination or calling context
    /// (`GASNET_ERR_BAD_ARG`).
    BadArg,
    /// A non-blocking attempt found the operation not ready
    /// (`GASNET_ERR_NOT_READY`).
    NotReady,
    /// Named barrier values did not match (`GASNET_ERR_BARRIER_MISMATCH`).
    BarrierMismatch,
}

impl ErrorKind {
    /// Every class, in the order of their codes.
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::NotInit,
        ErrorKind::Resource,
        ErrorKind::BadArg,
        ErrorKind::NotReady,
        ErrorKind::BarrierMismatch,
    ];

    /// The numeric code the reference implementation gives this class
    /// (`_GASNET_ERR_BASE` 10000 plus 1 to 5, in the order of
    /// [`ErrorKind::ALL`]).
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::NotInit => 10001,
            ErrorKind::Resource => 10002,
            ErrorKind::BadArg => 10003,
            ErrorKind::NotReady => 10004,
            ErrorKind::BarrierMismatch => 10005,
        }
    }

    /// The class of a numeric code, if it is one of them.
    pub fn from_code(code: i32) -> Option<ErrorKind> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The C name of the code, e.g. `GASNET_ERR_BAD_ARG`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::NotInit => "GASNET_ERR_NOT_INIT",
            ErrorKind::Resource => "GASNET_ERR_RESOURCE",
            ErrorKind::BadArg => "GASNET_ERR_BAD_ARG",
            ErrorKind::NotReady => "GASNET_ERR_NOT_READY",
            ErrorKind::BarrierMismatch => "GASNET_ERR_BARRIER_MISMATCH",
        }
    }

    /// What the class means, in a sentence (`gasnet_ErrorDesc`).
    pub fn description(self) -> &'static str {
        match self {
            ErrorKind::NotInit => "the library was not initialised when the call was made",
            ErrorKind::Resource => "a failure of the communication system or a lack of resources",
            ErrorKind::BadArg => "an invalid argument, flag or calling context",
            ErrorKind::NotReady => "the operation is not complete yet (a non-blocking attempt)",
            ErrorKind::BarrierMismatch => {
                "the barrier's ids did not match, or a rank signalled a mismatch"
            }
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
        assert_eq!(e.kind().code(), 10003);
    }

    #[test]
    fn codes_are_the_references() {
        let codes: Vec<i32> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes, [10001, 10002, 10003, 10004, 10005]);
        assert_eq!(ErrorKind::NotInit.code(), 10001);
        assert_eq!(ErrorKind::Resource.code(), 10002);
        assert_eq!(ErrorKind::BadArg.code(), 10003);
        assert_eq!(ErrorKind::NotReady.code(), 10004);
        assert_eq!(ErrorKind::BarrierMismatch.code(), 10005);
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(k.code()), Some(k));
            assert!(k.name().starts_with("GASNET_ERR_"));
            assert!(!k.description().is_empty());
        }
        assert_eq!(ErrorKind::from_code(0), None);
        assert_eq!(ErrorKind::from_code(10006), None);
    }
}
