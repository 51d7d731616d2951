//! `scenarios/config_gate/`: a retry policy gated in CI from the files a repository
//! deploys. The shipped files pass `retrysim check`; the pull request of the README
//! (the route's `num_retries` from 2 to 5) fails it with the amplification it causes;
//! and the imports are exactly the layers a hand-written transcription gives.

use std::path::Path;
use std::process::{Command, Output};

fn gate_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/config_gate")
}

/// A copy of the folder, with `edit` applied to `envoy.yaml`.
fn copy(edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(gate_dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let text = if name == "envoy.yaml" {
            edit(&text)
        } else {
            text
        };
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

fn check(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(dir)
        .args(["check", "gate.toml", "--deny-unmodelled"])
        .output()
        .unwrap()
}

#[test]
fn the_shipped_policy_passes_and_raising_num_retries_to_5_fails_with_its_amplification() {
    let shipped = copy(str::to_string);
    let o = check(shipped.path());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pr = copy(|t| {
        assert!(t.contains("num_retries: 2\n"));
        t.replace("num_retries: 2\n", "num_retries: 5\n")
    });
    let o = check(pr.path());
    assert_eq!(o.status.code(), Some(1));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains("FAIL gate.toml - amplification: 6.5"),
        "{said}"
    );
    assert!(
        said.contains("FAIL gate.toml - peak_inbound_ratio: 9.3"),
        "{said}"
    );
}

#[test]
fn the_imports_are_the_layers_written_by_hand() {
    let d = copy(str::to_string);
    let gate = std::fs::read_to_string(d.path().join("gate.toml")).unwrap();
    let by_hand = gate
        .replace(
            "import = { format = \"grpc_service_config\", file = \"service_config.json\", service = \"shop.inventory.v1.Inventory\", method = \"Reserve\" }",
            "max_attempts = 3\nmax_attempts_cap = 5\nretry_on = [\"rejected\", \"error\"]\nrespect_retry_after = true\n\
             backoff = { kind = \"grpc\", initial = \"100ms\", max = \"1s\", multiplier = 2, formula = \"current\" }\ntotal_timeout = \"2s\"",
        )
        .replace(
            "import = { format = \"envoy\", file = \"envoy.yaml\", route = \"reserve\" }",
            "max_attempts = 3\nretry_on = [\"rejected_5xx\", \"error\", \"timeout\"]\nattempt_timeout = \"500ms\"\n\
             respect_retry_after = false\ncancel_on_timeout = true\n\
             backoff = { kind = \"envoy\", base = \"25ms\", max = \"250ms\" }\n\
             budget = { kind = \"envoy_max_retries\", max_retries = 1000 }\ntotal_timeout = \"3s\"",
        );
    assert!(!by_hand.contains("import ="), "{by_hand}");
    std::fs::write(d.path().join("by_hand.toml"), by_hand).unwrap();
    let out = |name: &str, folder: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .current_dir(d.path())
            .args(["run", name, "--no-plots", "-q", "--out", folder])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        ["summary.csv", "timeseries.csv", "attempts_by_ordinal.csv"]
            .map(|f| std::fs::read(d.path().join(folder).join(f)).unwrap())
    };
    assert!(out("gate.toml", "a") == out("by_hand.toml", "b"));
}
