//! examples/kubernetes: the DaemonSet mounts the ConfigMap as a folder where the command reads the
//! config (never with subPath, which kubelet never updates, so hot swaps would silently stop), with
//! host networking and the capabilities the drivers need; the config in it is a valid wasmdp config
//! whose plugin comes from the same ConfigMap.

use serde_yaml::Value;
use std::path::Path;

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kubernetes").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn the_daemonset_mounts_the_configmap_where_wasmdp_reads_it_with_the_capabilities_it_needs() {
    let ds: Value = serde_yaml::from_str(&example("daemonset.yaml")).unwrap();
    assert_eq!(ds["kind"], "DaemonSet");
    let pod = &ds["spec"]["template"]["spec"];
    assert_eq!(pod["hostNetwork"], true, "the ports are the node's interfaces");
    let c = &pod["containers"][0];
    let args: Vec<&str> = c["args"].as_sequence().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(args[0], "run");
    let config = Path::new(args[1]);
    let caps: Vec<&str> = c["securityContext"]["capabilities"]["add"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    for need in ["NET_RAW", "NET_ADMIN", "BPF", "IPC_LOCK"] {
        assert!(caps.contains(&need), "capability {need} (af_packet / af_xdp) missing: {caps:?}");
    }
    // The ConfigMap volume, mounted on the config's folder, as a folder.
    let volume = pod["volumes"].as_sequence().unwrap().iter().find(|v| v["configMap"].is_mapping()).unwrap();
    let mount = c["volumeMounts"].as_sequence().unwrap().iter().find(|m| m["name"] == volume["name"]).unwrap();
    assert_eq!(Path::new(mount["mountPath"].as_str().unwrap()), config.parent().unwrap());
    assert!(mount.get("subPath").is_none(), "a subPath mount is never updated by kubelet");
    assert_eq!(volume["configMap"]["name"], "wasmdp");
    // The metrics port the pod annotations name is the one the config listens on.
    let annotations = &ds["spec"]["template"]["metadata"]["annotations"];
    let cfg = wasmdp::config::parse(&example("config.yaml"), "examples/kubernetes/config.yaml").unwrap();
    let listen = cfg.metrics.listen.expect("metrics.listen");
    assert_eq!(annotations["prometheus.io/port"].as_str().unwrap(), listen.port().to_string());
    // The policy's plugin is a file of the same ConfigMap: a bare name, read beside the config.
    let plugin = &cfg.ports[0].policy.links()[0].plugin;
    assert_eq!(plugin.parent(), Some(Path::new("")), "{}", plugin.display());
}
