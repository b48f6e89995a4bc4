//! The byte layouts of the structures that cross the boundary in the plugin's memory (the burst
//! area's header, descriptors and direct heads; the context), each written once with
//! [`layout!`](macro@crate::layout): the offset constants code uses (`area::hdr::LEN`, ...) and a table of
//! [`Field`]s that `sdk/c/wasmdp.h`'s structs and docs/ABI.md's layout tables are generated from.
//! Every field is little-endian.

/// A field's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `i16`.
    I16,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// A MAC address: 6 bytes in network order.
    Mac,
}

impl Ty {
    /// Its size in bytes.
    pub const fn size(self) -> usize {
        match self {
            Ty::U8 => 1,
            Ty::U16 | Ty::I16 => 2,
            Ty::U32 | Ty::I32 => 4,
            Ty::U64 => 8,
            Ty::Mac => 6,
        }
    }

    /// Its alignment in bytes (a MAC is bytes).
    pub const fn align(self) -> usize {
        match self {
            Ty::Mac => 1,
            t => t.size(),
        }
    }
}

/// Who writes a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// The host, before the call.
    In,
    /// The plugin: reset by the host before the call, read after it.
    Out,
}

/// Which shape of a structure has the field (descriptors differ with `area::DIRECT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// Every shape.
    All,
    /// Areas with windows (without `DIRECT`).
    Windows,
    /// Areas with `DIRECT`.
    Direct,
}

/// One field of a structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Its constant's name (`LEN`); lower-cased, the C struct member.
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// Who writes it.
    pub dir: Dir,
    /// Its offset from the structure's start.
    pub offset: usize,
    /// Which shapes have it.
    pub only: Only,
    /// What it holds.
    pub doc: &'static str,
}

#[doc(hidden)]
#[macro_export]
macro_rules! __layout_ty {
    (u8) => {
        $crate::layout::Ty::U8
    };
    (u16) => {
        $crate::layout::Ty::U16
    };
    (i16) => {
        $crate::layout::Ty::I16
    };
    (u32) => {
        $crate::layout::Ty::U32
    };
    (i32) => {
        $crate::layout::Ty::I32
    };
    (u64) => {
        $crate::layout::Ty::U64
    };
    (mac) => {
        $crate::layout::Ty::Mac
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __layout_dir {
    (in) => {
        $crate::layout::Dir::In
    };
    (out) => {
        $crate::layout::Dir::Out
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __layout_only {
    () => {
        $crate::layout::Only::All
    };
    (windows) => {
        $crate::layout::Only::Windows
    };
    (direct) => {
        $crate::layout::Only::Direct
    };
}

/// Declares a structure's fields as `NAME: TYPE in|out @ OFFSET [windows|direct];`, each with its
/// doc lines: a `pub const NAME: usize = OFFSET` per field and `pub const TABLE: &[Field]` listing
/// them (the name given first).
#[macro_export]
macro_rules! layout {
    ($table:ident; $( $(#[doc = $doc:literal])* $name:ident: $ty:ident $dir:ident @ $off:literal $($only:ident)?; )*) => {
        $(
            #[doc = concat!("`", stringify!($ty), "` ", stringify!($dir), " at ", stringify!($off), ":")]
            $(#[doc = $doc])*
            pub const $name: usize = $off;
        )*

        /// The fields above, for the generated C header and docs.
        pub const $table: &[$crate::layout::Field] = &[$(
            $crate::layout::Field {
                name: stringify!($name),
                ty: $crate::__layout_ty!($ty),
                dir: $crate::__layout_dir!($dir),
                offset: $off,
                only: $crate::__layout_only!($($only)?),
                doc: concat!($($doc, "\n"),*),
            },
        )*];
    };
}

/// Checks that a table's fields fit `size` bytes and do not overlap within a shape: what the
/// generated structs rely on.
pub const fn check(fields: &[Field], size: usize) -> bool {
    let mut i = 0;
    while i < fields.len() {
        let a = fields[i];
        if a.offset + a.ty.size() > size || !a.offset.is_multiple_of(a.ty.align()) {
            return false;
        }
        let mut j = i + 1;
        while j < fields.len() {
            let b = fields[j];
            let shared = !matches!((a.only, b.only), (Only::Windows, Only::Direct) | (Only::Direct, Only::Windows));
            if shared && a.offset < b.offset + b.ty.size() && b.offset < a.offset + a.ty.size() {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}
