//! [`Error`]: the negative return codes of the host functions ([`wasmdp_abi::err`]).

use core::fmt;

use wasmdp_abi::err;

/// Why a host call failed: one variant per [`wasmdp_abi::err`] code, plus [`Error::Other`] for a code
/// this SDK does not know (a newer host, or a plugin's own failure code).
///
/// Every wrapper in this crate returns `Result<_, Error>`; none panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// A packet index outside the burst ([`err::BAD_INDEX`]).
    BadIndex,
    /// An offset/length outside the packet ([`err::BAD_RANGE`]).
    BadRange,
    /// A pointer/length outside the plugin's memory ([`err::BAD_MEMORY`]).
    BadMemory,
    /// An engine id that does not exist ([`err::BAD_ENGINE`]).
    BadEngine,
    /// A port id that does not exist ([`err::BAD_PORT`]).
    BadPort,
    /// A flag outside `flags::ALLOWED` ([`err::BAD_FLAGS`]).
    BadFlags,
    /// No such parameter / counter ([`err::NOT_FOUND`]).
    NotFound,
    /// A buffer too small ([`err::TOO_SMALL`]).
    TooSmall,
    /// Called outside a burst ([`err::NO_BURST`]).
    NoBurst,
    /// The packet was already dropped or sent this burst ([`err::GONE`]).
    Gone,
    /// A map is full ([`err::FULL`], 1.1).
    Full,
    /// A length change that does not fit the packet's buffer ([`err::NO_ROOM`], 1.1).
    NoRoom,
    /// An init-only call after init ([`err::NOT_INIT`], 1.1).
    NotInit,
    /// Any other code: one that the ABI does not define. `wasmdp_on_burst` returns it as it is (0 is
    /// turned into -1, so that a failure is never reported as success).
    Other(i32),
}

impl Error {
    /// The ABI code of this error (negative for every defined variant).
    pub const fn code(self) -> i32 {
        match self {
            Error::BadIndex => err::BAD_INDEX,
            Error::BadRange => err::BAD_RANGE,
            Error::BadMemory => err::BAD_MEMORY,
            Error::BadEngine => err::BAD_ENGINE,
            Error::BadPort => err::BAD_PORT,
            Error::BadFlags => err::BAD_FLAGS,
            Error::NotFound => err::NOT_FOUND,
            Error::TooSmall => err::TOO_SMALL,
            Error::NoBurst => err::NO_BURST,
            Error::Gone => err::GONE,
            Error::Full => err::FULL,
            Error::NoRoom => err::NO_ROOM,
            Error::NotInit => err::NOT_INIT,
            Error::Other(code) => code,
        }
    }

    /// The error for a negative host return code, `None` for a result (non-negative).
    pub const fn from_code(code: i32) -> Option<Error> {
        Some(match code {
            0.. => return None,
            err::BAD_INDEX => Error::BadIndex,
            err::BAD_RANGE => Error::BadRange,
            err::BAD_MEMORY => Error::BadMemory,
            err::BAD_ENGINE => Error::BadEngine,
            err::BAD_PORT => Error::BadPort,
            err::BAD_FLAGS => Error::BadFlags,
            err::NOT_FOUND => Error::NotFound,
            err::TOO_SMALL => Error::TooSmall,
            err::NO_BURST => Error::NoBurst,
            err::GONE => Error::Gone,
            err::FULL => Error::Full,
            err::NO_ROOM => Error::NoRoom,
            err::NOT_INIT => Error::NotInit,
            other => Error::Other(other),
        })
    }

    /// Turns a host return value into a result: non-negative values are results, negative ones errors.
    #[inline]
    pub const fn check(rc: i32) -> Result<u32, Error> {
        match Error::from_code(rc) {
            None => Ok(rc as u32),
            Some(e) => Err(e),
        }
    }

    /// A short description (`"bad packet index"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Error::BadIndex => "bad packet index",
            Error::BadRange => "offset/length outside the packet",
            Error::BadMemory => "pointer/length outside the plugin's memory",
            Error::BadEngine => "no such engine",
            Error::BadPort => "no such port",
            Error::BadFlags => "offload flag not allowed",
            Error::NotFound => "not found",
            Error::TooSmall => "buffer too small",
            Error::NoBurst => "not inside a burst",
            Error::Gone => "packet already dropped or sent",
            Error::Full => "map full",
            Error::NoRoom => "no room in the packet's buffer",
            Error::NotInit => "only allowed in init",
            Error::Other(_) => "unknown error",
        }
    }
}

/// `Ok` for a negative code, `Err(code)` for a non-negative value (which is a result, not an error).
impl TryFrom<i32> for Error {
    type Error = i32;

    fn try_from(code: i32) -> Result<Self, i32> {
        Error::from_code(code).ok_or(code)
    }
}

impl From<Error> for i32 {
    fn from(e: Error) -> i32 {
        e.code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Other(code) => write!(f, "error {code}"),
            e => f.write_str(e.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in -13..0 {
            let e = Error::try_from(code).unwrap();
            assert_eq!(e.code(), code);
            assert!(!matches!(e, Error::Other(_)), "{code}");
        }
        assert_eq!(Error::try_from(-14), Ok(Error::Other(-14)));
        assert_eq!(Error::try_from(0), Err(0));
        assert_eq!(Error::try_from(7), Err(7));
        assert_eq!(Error::check(5), Ok(5));
        assert_eq!(Error::check(err::GONE), Err(Error::Gone));
        assert_eq!(i32::from(Error::NoBurst), err::NO_BURST);
    }
}
