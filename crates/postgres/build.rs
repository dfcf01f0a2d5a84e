// `embed_migrations!` reads the folder at compile time but cannot tell cargo about it, so a new or
// edited migration would otherwise leave a stale binary.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
