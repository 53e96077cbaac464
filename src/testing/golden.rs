//! Golden files of rendered sections.

use crate::report::Assembly;
use crate::text;

/// An assembly as a golden file: the section text, then
/// `--- <encoding>, <template> template: <n> tokens ---`, then per server
/// `<name>: <tokens> tokens` (with `of <budget>` and `, truncated` when they
/// apply) or `<name>: not included`, each followed by its removals
/// (`  removed (<reason>[ <tool or server>]): <text>`) and diagnostics.
pub fn golden(assembly: &Assembly) -> String {
    let mut out = String::new();
    out.push_str(assembly.text());
    if !assembly.text().is_empty() && !assembly.text().ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "--- {}, {} template: {} tokens ---\n",
        assembly.encoding(),
        assembly.template(),
        assembly.total_tokens()
    ));
    for s in assembly.servers() {
        if s.included {
            out.push_str(&format!("{}: {} tokens", s.name, s.tokens));
            if let Some(b) = s.budget {
                out.push_str(&format!(" of {b}"));
            }
            if s.truncated {
                out.push_str(", truncated");
            }
            out.push('\n');
        } else {
            out.push_str(&format!("{}: not included\n", s.name));
        }
        for r in &s.removed {
            let by = r
                .tool
                .as_deref()
                .or(r.server.as_deref())
                .map(|x| format!(" {x}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  removed ({}{by}): {}\n",
                r.reason,
                text::one_line(&r.text)
            ));
        }
        for d in &s.notes {
            out.push_str(&format!("  {d}\n"));
        }
    }
    out
}

/// Asserts an [`Assembly`] against an [insta](https://docs.rs/insta)
/// snapshot of its [`golden`](crate::testing::golden) text, stored next to
/// the calling test (feature `testing`).
///
/// `assert_section_snapshot!(assembly)` names the snapshot after the test;
/// `assert_section_snapshot!("name", assembly)` names it. Review and accept
/// changes as with any insta snapshot (`INSTA_UPDATE=always`, or `cargo insta review`).
#[macro_export]
macro_rules! assert_section_snapshot {
    ($assembly:expr $(,)?) => {
        $crate::testing::__insta::assert_snapshot!(
            ::core::option::Option::<&str>::None,
            $crate::testing::golden(&$assembly),
            ::core::stringify!($assembly)
        )
    };
    ($name:expr, $assembly:expr $(,)?) => {
        $crate::testing::__insta::assert_snapshot!(
            $name,
            $crate::testing::golden(&$assembly),
            ::core::stringify!($assembly)
        )
    };
}
