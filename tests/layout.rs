//! What `cargo test` shows: no empty "running 0 tests" block for a target
//! without tests. Each binary in src/bin is a line or two calling the
//! library (tests/ drives it), so Cargo.toml declares it with
//! `test = false`; one that grows unit tests of its own may drop that.

use std::path::Path;

#[test]
fn binaries_without_unit_tests_are_not_test_targets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let declared: Vec<&str> = manifest.split("[[bin]]").skip(1).collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("src/bin")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if std::fs::read_to_string(&path)
            .unwrap()
            .contains("#[cfg(test)]")
        {
            continue;
        }
        let line = format!("path = \"src/bin/{name}\"");
        let ok = declared.iter().any(|d| {
            let d = d.split("\n[").next().unwrap_or(d);
            d.contains(&line) && d.contains("test = false")
        });
        if !ok {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "declare these in Cargo.toml as [[bin]] with test = false (they have no unit tests): {missing:?}"
    );
    // Every library of the workspace: the root package and each crate.
    let mut libs = vec![root.join("Cargo.toml")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let manifest = e.unwrap().path().join("Cargo.toml");
        let m = std::fs::read_to_string(&manifest).unwrap();
        if manifest.parent().unwrap().join("src/lib.rs").exists() && !m.contains("[[bin]]") {
            libs.push(manifest);
        }
    }
    for lib in &libs {
        let m = std::fs::read_to_string(lib).unwrap();
        assert!(
            m.contains("[lib]\ndoctest = false"),
            "{}: no doc tests, so doctest = false",
            lib.display()
        );
    }
}
