//! [`Params`]: the plugin's `params:` from the port's config, as text.

use crate::{sys, Engine, Error, Refusal};

/// Longest value the typed getters read; a longer one is refused as too long.
const VALUE_CAP: usize = 64;

/// The plugin's parameters (the `params:` map of the port's plugin config). Values arrive as text
/// (`vlan: 100` is `"100"`); the typed getters parse them and, for a bad value, return a [`Refusal`]
/// that names the key and the value, ready for `?` in [`Policy::init`](crate::Policy::init).
///
/// ```no_run
/// use wasmdp_sdk::{Engine, Params, Refusal};
/// fn read(params: &Params) -> Result<(Engine, u32), Refusal> {
///     let engine = params.get_engine("engine")?.unwrap_or(Engine::Macswap);
///     let threshold = params.get_u32("threshold")?.unwrap_or(256);
///     Ok((engine, threshold))
/// }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Params {
    _private: (),
}

impl Params {
    /// The host's parameters (a handle: the values stay in the host).
    pub const fn host() -> Params {
        Params { _private: () }
    }

    /// The value of `key` copied into `buf`; `None` when the key is absent, and also when the value
    /// does not fit `buf` or is not UTF-8 (use [`Params::try_get`] to tell those apart).
    pub fn get<'b>(&self, key: &str, buf: &'b mut [u8]) -> Option<&'b str> {
        self.try_get(key, buf).ok().flatten()
    }

    /// The value of `key` copied into `buf`: `Ok(None)` when absent, [`Error::TooSmall`] when it does
    /// not fit, [`Error::BadRange`] when it is not UTF-8.
    pub fn try_get<'b>(&self, key: &str, buf: &'b mut [u8]) -> Result<Option<&'b str>, Error> {
        let n = match sys::param_get(key, buf) {
            Ok(n) => n,
            Err(Error::NotFound) => return Ok(None),
            Err(e) => return Err(e),
        };
        let bytes = buf.get(..n).ok_or(Error::BadRange)?;
        core::str::from_utf8(bytes).map(Some).map_err(|_| Error::BadRange)
    }

    /// Whether `key` is set.
    pub fn contains(&self, key: &str) -> bool {
        !matches!(sys::param_get(key, &mut []), Err(Error::NotFound))
    }

    /// Reads `key` for a typed getter and parses it with `parse`; `what` describes the expected value.
    pub(crate) fn typed<T>(
        &self,
        key: &str,
        what: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, Refusal> {
        let mut buf = [0u8; VALUE_CAP];
        let value = match self.try_get(key, &mut buf) {
            Ok(None) => return Ok(None),
            Ok(Some(v)) => v,
            Err(Error::TooSmall) => return Err(Refusal::param(key, "(too long)", what)),
            Err(Error::BadRange) => return Err(Refusal::param(key, "(not UTF-8)", what)),
            Err(e) => return Err(e.into()),
        };
        match parse(value.trim()) {
            Some(v) => Ok(Some(v)),
            None => Err(Refusal::param(key, value, what)),
        }
    }

    /// `key` as a `u64`: decimal, or hexadecimal with `0x`.
    pub fn get_u64(&self, key: &str) -> Result<Option<u64>, Refusal> {
        self.typed(key, "a number", parse_u64)
    }

    /// `key` as a `u32`: decimal, or hexadecimal with `0x`.
    pub fn get_u32(&self, key: &str) -> Result<Option<u32>, Refusal> {
        self.typed(key, "a number 0..=4294967295", |s| parse_u64(s).and_then(|v| u32::try_from(v).ok()))
    }

    /// `key` as a `u16` (ports, VLAN TCIs): decimal, or hexadecimal with `0x`.
    pub fn get_u16(&self, key: &str) -> Result<Option<u16>, Refusal> {
        self.typed(key, "a number 0..=65535", |s| parse_u64(s).and_then(|v| u16::try_from(v).ok()))
    }

    /// `key` as a `u8` (IP protocol numbers): decimal, or hexadecimal with `0x`.
    pub fn get_u8(&self, key: &str) -> Result<Option<u8>, Refusal> {
        self.typed(key, "a number 0..=255", |s| parse_u64(s).and_then(|v| u8::try_from(v).ok()))
    }

    /// `key` as a boolean: `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
    pub fn get_bool(&self, key: &str) -> Result<Option<bool>, Refusal> {
        self.typed(key, "true or false", |s| match s {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        })
    }

    /// `key` as an engine name ([`Engine::NAMES`]: `io|mac|macswap|5tswap|copy|drop`).
    pub fn get_engine(&self, key: &str) -> Result<Option<Engine>, Refusal> {
        self.typed(key, Engine::NAMES, Engine::from_name)
    }
}

/// A decimal or `0x` hexadecimal number.
pub fn parse_u64(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() || digits.starts_with('+') {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;

    #[test]
    fn typed_getters() {
        mock::reset();
        mock::set_param("n", "256");
        mock::set_param("hex", "0x64");
        mock::set_param("big", "70000");
        mock::set_param("neg", "-1");
        mock::set_param("e", "5tswap");
        mock::set_param("b", "true");
        mock::set_param("long", "x".repeat(100).as_str());
        let p = Params::host();
        let mut buf = [0u8; 8];
        assert_eq!(p.get("n", &mut buf), Some("256"));
        assert_eq!(p.get("missing", &mut buf), None);
        assert_eq!(p.try_get("long", &mut buf), Err(Error::TooSmall));
        assert!(p.contains("long") && !p.contains("missing"));
        assert_eq!(p.get_u32("n").unwrap(), Some(256));
        assert_eq!(p.get_u16("hex").unwrap(), Some(100));
        assert_eq!(p.get_u8("n").unwrap_err().reason(), "param `n`: `256` is not a number 0..=255");
        assert_eq!(p.get_u16("big").unwrap_err().reason(), "param `big`: `70000` is not a number 0..=65535");
        assert!(p.get_u64("neg").is_err());
        assert_eq!(p.get_u32("missing").unwrap(), None);
        assert_eq!(p.get_engine("e").unwrap(), Some(Engine::FiveTupleSwap));
        assert_eq!(p.get_engine("n").unwrap_err().reason(), std::format!("param `n`: `256` is not {}", Engine::NAMES));
        assert_eq!(p.get_bool("b").unwrap(), Some(true));
        assert_eq!(p.get_bool("long").unwrap_err().reason(), "param `long`: `(too long)` is not true or false");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_u64("0"), Some(0));
        assert_eq!(parse_u64("0xFFff"), Some(0xffff));
        assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64("18446744073709551616"), None);
        for bad in ["", "0x", "+1", "1.5", "12a", " 1"] {
            assert_eq!(parse_u64(bad), None, "{bad}");
        }
    }
}
