//! The linker flags a Node addon needs (symbols resolved by the host at load time).
fn main() {
    napi_build::setup();
}
