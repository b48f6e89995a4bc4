//! The ABI's imports as `extern` functions (`wasm32` only), made from its one table
//! ([`wasmdp_abi::for_each_import!`]): names, argument and result types cannot disagree with the
//! host's checks. Each takes guest pointers as the `i32` bit pattern of the address; the safe
//! wrappers of [`sys`](super) are the only callers.

macro_rules! declare_imports {
    ($( $(#[doc = $doc:literal])* [$since:literal $when:ident] $konst:ident $name:ident
        ($($arg:ident: $wty:ident $(=> $nty:ty)?),*) -> $ret:tt; )*) => {
        // The module name is `wasmdp_abi::IMPORT_MODULE` (an attribute takes a literal only).
        #[link(wasm_import_module = "wasmdp")]
        unsafe extern "C" {
            $( $(#[doc = $doc])* pub(crate) fn $name($($arg: $wty),*) -> $ret; )*
        }
    };
}

wasmdp_abi::for_each_import!(declare_imports);
