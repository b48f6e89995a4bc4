//! Boundary-crossing costs for the bench report.

/// One host->plugin and one plugin->host call, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct CallCost {
    /// An empty `wasmdp_on_burst` call from the host.
    pub host_to_plugin_ns: f64,
    /// One import call (`burst_len`) from the plugin.
    pub plugin_to_host_ns: f64,
}

/// Measures both.
pub fn measure() -> anyhow::Result<CallCost> {
    let (h2p, p2h) = crate::plugin::measure_calls()?;
    Ok(CallCost { host_to_plugin_ns: h2p, plugin_to_host_ns: p2h })
}
