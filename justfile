# Thin recipes over cargo and the scripts; every one works without just too.

# Play the built-in demo.
demo:
    cargo run --bin fsview-demo

# Run every test.
test:
    cargo test --workspace

# Regenerate the man pages from the clap definitions.
man:
    cargo xtask man

# What CI runs.
ci:
    bash .ci/run

# Benchmarks of the core tools (ratios against cat, sed and stat).
bench-core:
    scripts/bench-core

# Benchmarks of ctx-build.
bench-ctx:
    scripts/bench-ctx

# Benchmark of fsview-edit (ratio against sed -i).
bench-edit:
    scripts/bench-edit

# Install the fast (static) build, man pages and completions into ~/.local.
install:
    scripts/install
