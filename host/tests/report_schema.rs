//! The `--stats-json` report has every key the README documents, from a real run: the README's
//! paragraph on the report is read and each key it names in backticks is looked for in the report;
//! the drop reasons the README lists are exactly the report's.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap()
}

/// The backticked lowercase identifiers of the README paragraph that starts with `start`.
fn documented(start: &str) -> BTreeSet<String> {
    let text = readme();
    let at = text.find(start).unwrap_or_else(|| panic!("README lacks `{start}`"));
    let para = &text[at..text[at..].find("\n\n").map_or(text.len(), |e| at + e)];
    para.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(String::from)
        .collect()
}

fn keys(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.insert(k.clone());
                keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn every_documented_report_key_is_in_a_real_report() {
    // A plugin port (the plugin_* keys), a pcap port (rx_skipped), a ring pair.
    let capture = std::env::temp_dir().join(format!("wasmdp-schema-{}.pcap", std::process::id()));
    let mut pcap = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0];
    pcap.extend([0u8; 8].iter().chain(&[10, 0, 0, 0, 10, 0, 0, 0]).chain(&[0xab; 10])); // one short record
    std::fs::write(&capture, &pcap).unwrap();
    let yaml = format!(
        "ports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: pcap, pcap: {{rx: {}}}}}\n  - {{name: d, driver: null}}\n",
        common::plugin_path("size_steering").display(),
        capture.display()
    );
    let j = common::run_yaml(&yaml, 0.2);
    std::fs::remove_file(&capture).unwrap();
    let mut present = BTreeSet::new();
    keys(&j, &mut present);
    let want = documented("`--stats-json` writes");
    assert!(want.len() > 30, "the README paragraph was found: {want:?}");
    let missing: Vec<_> = want.iter().filter(|k| !present.contains(*k) && *k != "info").collect();
    assert!(missing.is_empty(), "documented but not in the report: {missing:?}\n{j}");
    // The drop reasons, by name, exactly.
    let reasons: BTreeSet<String> = j["ports"][0]["dropped_by_reason"].as_object().unwrap().keys().cloned().collect();
    let documented_reasons: BTreeSet<String> =
        ["tx_full", "tx_oversize", "tx_error", "nombuf", "engine", "policy", "offload", "plugin", "tunnel", "headroom"]
            .map(String::from)
            .into();
    assert_eq!(reasons, documented_reasons);
    for r in &documented_reasons {
        assert!(readme().contains(&format!("`{r}` (")), "the README explains drop reason `{r}`");
    }
    assert_eq!(j["ports"][2]["rx_skipped_by_reason"]["short"], 1);
}
