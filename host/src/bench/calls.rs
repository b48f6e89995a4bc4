//! Boundary-crossing costs for the bench report: `crate::plugin::CallCosts`.

pub use crate::plugin::CallCosts as CallCost;

/// Measures them.
pub fn measure() -> anyhow::Result<CallCost> {
    crate::plugin::measure_calls()
}
