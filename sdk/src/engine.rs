//! [`Engine`]: the host's native forwarding engines a plugin may run ([`wasmdp_abi::engine`]).

use core::fmt;
use core::str::FromStr;

use wasmdp_abi::engine;

use crate::Error;

/// A native engine of the host, for [`Burst::run_engine`](crate::Burst::run_engine) and
/// [`Sticky`](crate::Sticky).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// `io`: forward unchanged.
    Io,
    /// `mac`: source MAC := TX port's MAC, destination := its `peer_mac`.
    Mac,
    /// `macswap`: swap source and destination MAC (SIMD).
    Macswap,
    /// `5tswap`: swap MACs, IP addresses and L4 ports.
    FiveTupleSwap,
    /// `copy`: copy into fresh buffers (SIMD memcpy).
    Copy,
    /// `drop` (the host's `rxonly`): drop, counted as engine drops.
    Drop,
    /// VXLAN encapsulation with the port's `vxlan:` settings (ABI 1.1).
    VxlanEncap,
    /// VXLAN decapsulation (ABI 1.1).
    VxlanDecap,
    /// Geneve encapsulation with the port's `geneve:` settings (ABI 1.1).
    GeneveEncap,
    /// Geneve decapsulation (ABI 1.1).
    GeneveDecap,
}

impl Engine {
    /// Every engine, in id order.
    pub const ALL: [Engine; 10] = [
        Engine::Io,
        Engine::Mac,
        Engine::Macswap,
        Engine::FiveTupleSwap,
        Engine::Copy,
        Engine::Drop,
        Engine::VxlanEncap,
        Engine::VxlanDecap,
        Engine::GeneveEncap,
        Engine::GeneveDecap,
    ];

    /// The ABI id ([`wasmdp_abi::engine`]).
    pub const fn id(self) -> u32 {
        match self {
            Engine::Io => engine::IO,
            Engine::Mac => engine::MAC,
            Engine::Macswap => engine::MACSWAP,
            Engine::FiveTupleSwap => engine::FIVETSWAP,
            Engine::Copy => engine::COPY,
            Engine::Drop => engine::RXONLY,
            Engine::VxlanEncap => engine::VXLAN_ENCAP,
            Engine::VxlanDecap => engine::VXLAN_DECAP,
            Engine::GeneveEncap => engine::GENEVE_ENCAP,
            Engine::GeneveDecap => engine::GENEVE_DECAP,
        }
    }

    /// The engine with this ABI id.
    pub const fn from_id(id: u32) -> Option<Engine> {
        Some(match id {
            engine::IO => Engine::Io,
            engine::MAC => Engine::Mac,
            engine::MACSWAP => Engine::Macswap,
            engine::FIVETSWAP => Engine::FiveTupleSwap,
            engine::COPY => Engine::Copy,
            engine::RXONLY => Engine::Drop,
            engine::VXLAN_ENCAP => Engine::VxlanEncap,
            engine::VXLAN_DECAP => Engine::VxlanDecap,
            engine::GENEVE_ENCAP => Engine::GeneveEncap,
            engine::GENEVE_DECAP => Engine::GeneveDecap,
            _ => return None,
        })
    }

    /// The parameter name: `io`, `mac`, `macswap`, `5tswap`, `copy`, `drop`.
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Io => "io",
            Engine::Mac => "mac",
            Engine::Macswap => "macswap",
            Engine::FiveTupleSwap => "5tswap",
            Engine::Copy => "copy",
            Engine::Drop => "drop",
            Engine::VxlanEncap => "vxlan_encap",
            Engine::VxlanDecap => "vxlan_decap",
            Engine::GeneveEncap => "geneve_encap",
            Engine::GeneveDecap => "geneve_decap",
        }
    }

    /// The engine for a parameter name: one of [`Engine::NAMES`], or `rxonly` (the host's name for
    /// `drop`).
    pub fn from_name(name: &str) -> Option<Engine> {
        match name {
            "rxonly" => Some(Engine::Drop),
            _ => Engine::ALL.into_iter().find(|e| e.name() == name),
        }
    }

    /// The accepted names, for messages.
    pub const NAMES: &'static str = "io|mac|macswap|5tswap|copy|drop|vxlan_encap|vxlan_decap|geneve_encap|geneve_decap";
}

impl TryFrom<u32> for Engine {
    type Error = Error;

    /// [`Error::BadEngine`] for an unknown id.
    fn try_from(id: u32) -> Result<Self, Error> {
        Engine::from_id(id).ok_or(Error::BadEngine)
    }
}

impl FromStr for Engine {
    type Err = Error;

    /// [`Error::BadEngine`] for an unknown name.
    fn from_str(s: &str) -> Result<Self, Error> {
        Engine::from_name(s).ok_or(Error::BadEngine)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names() {
        for (i, e) in Engine::ALL.into_iter().enumerate() {
            assert_eq!(e.id(), i as u32);
            assert_eq!(Engine::from_id(e.id()), Some(e));
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
            assert!(Engine::NAMES.split('|').any(|n| n == e.name()));
        }
        assert_eq!(Engine::ALL.len() as u32, engine::COUNT);
        assert_eq!(Engine::from_id(engine::COUNT), None);
        assert_eq!(Engine::try_from(99), Err(Error::BadEngine));
        assert_eq!(Engine::from_name("rxonly"), Some(Engine::Drop));
        assert_eq!("MACSWAP".parse::<Engine>(), Err(Error::BadEngine));
        assert_eq!(Engine::FiveTupleSwap.id(), engine::FIVETSWAP);
    }
}
