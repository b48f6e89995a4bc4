//! SDK for wasmdp policy plugins.
//!
//! Placeholder until the plugin ABI lands: the crate exists so that the workspace has its final shape.
#![no_std]
