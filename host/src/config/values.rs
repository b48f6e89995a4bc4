//! Value types that check themselves while parsing, so that errors carry serde_yaml's line number.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::fmt;

/// An integer in `MIN..=MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bounded<const MIN: u64, const MAX: u64>(pub u64);

impl<const MIN: u64, const MAX: u64> Bounded<MIN, MAX> {
    /// The value as usize.
    pub fn get(self) -> usize {
        self.0 as usize
    }
    /// The value as u16 (callers use it only for ranges that fit).
    pub fn u16(self) -> u16 {
        self.0 as u16
    }
}

impl<'de, const MIN: u64, const MAX: u64> Deserialize<'de> for Bounded<MIN, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = i128::deserialize(d)?;
        if v < MIN as i128 || v > MAX as i128 {
            return Err(de::Error::custom(format!("invalid value {v}: allowed {MIN}..={MAX}")));
        }
        Ok(Bounded(v as u64))
    }
}

/// A MAC address written `aa:bb:cc:dd:ee:ff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// Parses `aa:bb:cc:dd:ee:ff` (or with `-`).
    pub fn parse(s: &str) -> Option<MacAddr> {
        let mut out = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for b in out.iter_mut() {
            let p = parts.next()?;
            if p.len() != 2 {
                return None;
            }
            *b = u8::from_str_radix(p, 16).ok()?;
        }
        parts.next().is_none().then_some(MacAddr(out))
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        MacAddr::parse(&s).ok_or_else(|| {
            de::Error::custom(format!("invalid MAC address `{s}`: expected six hex bytes like 02:00:00:00:00:01"))
        })
    }
}

/// `tx_offloads:` names, resolved to flags while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OffloadList(pub u64);

impl<'de> Deserialize<'de> for OffloadList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let mut flags = 0;
        for n in names {
            flags |= crate::offload::flag_for(&n).ok_or_else(|| {
                let allowed: Vec<_> = crate::offload::OFFLOADS.iter().map(|o| o.name).collect();
                de::Error::custom(format!("unknown offload `{n}`: allowed {}", allowed.join(", ")))
            })?;
        }
        Ok(OffloadList(flags))
    }
}

/// serde adapter for [`crate::simd::SimdChoice`].
pub mod simd_choice {
    use super::*;
    use crate::simd::SimdChoice;

    /// Parses `auto|scalar|sse|avx2|avx512`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimdChoice, D::Error> {
        let s = String::deserialize(d)?;
        SimdChoice::from_name(&s)
            .ok_or_else(|| de::Error::custom(format!("unknown simd `{s}`: allowed {}", SimdChoice::NAMES)))
    }
}

/// An engine name, checked against the engine table while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineName(pub String);

impl<'de> Deserialize<'de> for EngineName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match crate::engines::lookup(&s) {
            Some(_) => Ok(EngineName(s)),
            None => Err(de::Error::custom(format!("unknown engine `{s}`: allowed {}", crate::engines::names()))),
        }
    }
}

/// A driver name, checked against the driver table while parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverName(pub String);

impl<'de> Deserialize<'de> for DriverName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match crate::ports::lookup(&s) {
            Some(_) => Ok(DriverName(s)),
            None => Err(de::Error::custom(format!("unknown driver `{s}`: allowed {}", crate::ports::names()))),
        }
    }
}

/// A burst size on the command line, 1..=512 (`burst:` in the file is a [`Bounded`]).
pub fn parse_burst(s: &str) -> Result<usize, String> {
    in_range(s, 1, crate::mbuf::MAX_BURST)
}

/// A whole number in `min..=max` on the command line (in the file: a [`Bounded`]).
pub fn in_range(s: &str, min: usize, max: usize) -> Result<usize, String> {
    let v: u64 = s.trim().parse().map_err(|_| format!("`{s}` is not a whole number"))?;
    if v < min as u64 || v > max as u64 {
        return Err(format!("{s}: allowed {min}..={max}"));
    }
    Ok(v as usize)
}
