//! `cargo xtask <step>`: the binary. Everything is in `lib.rs` (the clap tree and the dispatch).

fn main() {
    xtask::main()
}
