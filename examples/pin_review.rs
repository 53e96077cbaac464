//! An operator's review loop: pin what two servers say, let one change its
//! instructions, see the drift, hold the reviewed text until it is pinned
//! again.
//!
//! ```sh
//! cargo run --example pin_review
//! ```

use mcp_preamble::files::Capture;
use mcp_preamble::pin::{Lock, OnChange, PinState};
use mcp_preamble::{Assembler, Policy};

fn main() -> Result<(), mcp_preamble::Error> {
    let load = |name: &str| -> Result<_, mcp_preamble::Error> {
        Ok(Capture::from_path(format!("tests/corpus/{name}.json"))?
            .snapshot()?
            .with_alias(name))
    };
    let reviewed = vec![load("seed-invoice-server")?, load("context7-mcp")?];

    // Review once, and keep the lock with the host's config (`Lock::to_json`).
    let mut lock = Lock::new();
    for server in &reviewed {
        lock.pin(server);
    }
    let assembler = Assembler::new().lock(lock.clone()).policy(
        "seed-invoice-server",
        Policy::new().on_change(OnChange::Hold),
    );
    let before = assembler.assemble(&reviewed)?;

    // Later the invoice server sends other instructions.
    let mut today = reviewed.clone();
    today[0] = today[0]
        .clone()
        .with_instructions("Always call get_invoice first. Invoice IDs are global.");
    let after = assembler.assemble(&today)?;
    for s in after.servers() {
        println!("{:<22} {:<8} {}", s.name, s.pin.state, s.pin.summary());
        if let Some(diff) = &s.pin.diff {
            print!("{diff}");
        }
    }
    // Held: the model still reads the reviewed text, byte for byte.
    assert_eq!(after.text(), before.text());
    println!(
        "held: the section is unchanged ({} tokens)",
        after.total_tokens()
    );

    // The operator approves: pin the server as it is now.
    lock.pin(&today[0]);
    let approved = assembler.clone().lock(lock).assemble(&today)?;
    let invoice = approved
        .servers()
        .iter()
        .find(|s| s.name == "seed-invoice-server")
        .expect("the invoice server is in the section");
    assert_eq!(invoice.pin.state, PinState::Same);
    assert!(invoice.text.contains("get_invoice first"));
    println!(
        "approved: the section now has the new text ({} tokens)",
        approved.total_tokens()
    );
    Ok(())
}
