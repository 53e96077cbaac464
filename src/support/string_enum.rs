//! [`string_enum!`]: a fieldless enum whose variants each have a wire name.

/// Declares a fieldless, `Copy` enum with one wire name per variant, and
/// writes what every such enum of the crate had by hand: `as_str` (with
/// the doc comment given after the enum), `Display` (through `f.pad`, so
/// width and alignment apply) and, when asked, `FromStr`.
///
/// Attributes and doc comments on the enum and its variants pass through
/// unchanged (`#[derive]`, `#[non_exhaustive]`, `#[serde(...)]`). The macro
/// does not write serde attributes: an enum that serializes keeps its own
/// `rename_all`, and the tests in this file check that serde and `as_str`
/// agree for every variant.
///
/// ```ignore
/// string_enum! {
///     /// Which handshake the connection used.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum Era {
///         /// The 2025 protocol era.
///         Legacy => "legacy",
///         /// The 2026-07-28 revision.
///         Modern => "modern",
///     }
///     /// `"legacy"` or `"modern"`.
///     fn as_str;
///     // Optional: `s` is the unknown text, the expression its error.
///     impl FromStr, Err = String, |s| format!("unknown era {s:?}");
/// }
/// ```
macro_rules! string_enum {
    // With `FromStr`: the enum as below, then the parser.
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $wire:literal
            ),+ $(,)?
        }
        $(#[$as_str_meta:meta])+
        fn as_str;
        impl FromStr, Err = $err:ty, |$s:ident| $make_err:expr;
    ) => {
        $crate::support::string_enum! {
            $(#[$meta])*
            $vis enum $name {
                $(
                    $(#[$vmeta])*
                    $variant => $wire,
                )+
            }
            $(#[$as_str_meta])+
            fn as_str;
        }

        impl ::core::str::FromStr for $name {
            type Err = $err;

            fn from_str($s: &str) -> ::core::result::Result<$name, $err> {
                match $s {
                    $($wire => Ok($name::$variant),)+
                    _ => Err($make_err),
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $wire:literal
            ),+ $(,)?
        }
        $(#[$as_str_meta:meta])+
        fn as_str;
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            $(#[$as_str_meta])*
            $vis fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// Every variant, in declaration order (for the round-trip tests).
            #[cfg(test)]
            pub(crate) const ALL: &'static [$name] = &[$($name::$variant),+];
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.pad(self.as_str())
            }
        }
    };
}

pub(crate) use string_enum;

#[cfg(test)]
mod tests {
    use std::fmt::{Debug, Display};

    use serde::Serialize;
    use serde::de::DeserializeOwned;

    string_enum! {
        /// A test enum with `FromStr`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        enum Fruit {
            /// Red.
            Apple => "apple",
            /// Long.
            BlueBerry => "blue-berry",
        }
        /// Its name.
        fn as_str;
        impl FromStr, Err = String, |s| format!("no fruit {s:?}");
    }

    string_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Single {
            Only => "only"
        }
        /// Its name.
        fn as_str;
    }

    /// `as_str` gives `wire` in order, `Display` is `as_str` (padded), and
    /// no two variants share a name.
    fn check<T: Copy + Debug + Display + PartialEq>(
        all: &[T],
        as_str: fn(T) -> &'static str,
        wire: &[&str],
    ) {
        let names: Vec<&str> = all.iter().map(|v| as_str(*v)).collect();
        assert_eq!(names, wire);
        for v in all {
            let s = as_str(*v);
            assert_eq!(v.to_string(), s);
            assert_eq!(
                format!("{v:>24}|{v:<24}|{v:.2}"),
                format!("{s:>24}|{s:<24}|{s:.2}")
            );
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    /// serde writes `as_str` as a JSON string.
    fn serializes<T: Copy + Serialize>(all: &[T], as_str: fn(T) -> &'static str) {
        for v in all {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json, serde_json::Value::from(as_str(*v)));
        }
    }

    /// serde reads `as_str` back as the same variant.
    fn deserializes<T: Copy + Debug + PartialEq + DeserializeOwned>(
        all: &[T],
        as_str: fn(T) -> &'static str,
    ) {
        for v in all {
            let back: T = serde_json::from_value(as_str(*v).into()).unwrap();
            assert_eq!(back, *v);
        }
    }

    #[test]
    fn the_macro_writes_as_str_display_and_from_str() {
        check(Fruit::ALL, Fruit::as_str, &["apple", "blue-berry"]);
        for v in Fruit::ALL {
            assert_eq!(v.as_str().parse::<Fruit>(), Ok(*v));
            assert_eq!(v.to_string().parse::<Fruit>(), Ok(*v));
        }
        assert_eq!(
            "Apple".parse::<Fruit>(),
            Err("no fruit \"Apple\"".to_string())
        );
        assert_eq!("".parse::<Fruit>(), Err("no fruit \"\"".to_string()));
        check(Single::ALL, Single::as_str, &["only"]);
    }

    #[test]
    fn era_and_instructions_state() {
        use crate::model::{Era, InstructionsState};
        check(Era::ALL, Era::as_str, &["legacy", "modern"]);
        serializes(Era::ALL, Era::as_str);
        deserializes(Era::ALL, Era::as_str);
        let states = &["absent", "blank", "present"];
        check(InstructionsState::ALL, InstructionsState::as_str, states);
        serializes(InstructionsState::ALL, InstructionsState::as_str);
        deserializes(InstructionsState::ALL, InstructionsState::as_str);
    }

    #[test]
    fn on_change_and_pin_state() {
        use crate::pin::{OnChange, PinState};
        check(
            OnChange::ALL,
            OnChange::as_str,
            &["accept", "hold", "drop", "fail"],
        );
        serializes(OnChange::ALL, OnChange::as_str);
        deserializes(OnChange::ALL, OnChange::as_str);
        check(
            PinState::ALL,
            PinState::as_str,
            &["unpinned", "new", "same", "changed"],
        );
        serializes(PinState::ALL, PinState::as_str);
    }

    #[test]
    fn removal_reason() {
        use crate::report::RemovalReason;
        check(
            RemovalReason::ALL,
            RemovalReason::as_str,
            &[
                "restates_tool",
                "repeated",
                "same_as_server",
                "budget",
                "policy",
                "mentions_hidden_tool",
            ],
        );
        serializes(RemovalReason::ALL, RemovalReason::as_str);
    }

    #[test]
    fn rewrite_form() {
        use crate::rewrite::Form;
        check(Form::ALL, Form::as_str, &["code", "call", "identifier"]);
        serializes(Form::ALL, Form::as_str);
    }

    #[test]
    fn limit() {
        use crate::limits::Limit;
        check(
            Limit::ALL,
            Limit::as_str,
            &[
                "instructions_bytes",
                "tools",
                "tool_description_bytes",
                "schema",
                "dedup_units",
                "tool_pages",
                "render_fuel",
                "skills",
                "skill_pages",
            ],
        );
        serializes(Limit::ALL, Limit::as_str);
        deserializes(Limit::ALL, Limit::as_str);
    }

    #[test]
    fn defer_reason() {
        use crate::visibility::DeferReason;
        check(
            DeferReason::ALL,
            DeferReason::as_str,
            &["configured", "tool_pattern", "tool_count", "tool_tokens"],
        );
        serializes(DeferReason::ALL, DeferReason::as_str);
    }

    #[cfg(feature = "hub")]
    #[test]
    fn server_state() {
        use crate::hub::ServerState;
        check(
            ServerState::ALL,
            ServerState::as_str,
            &["connected", "reconnecting", "gone"],
        );
        serializes(ServerState::ALL, ServerState::as_str);
    }
}
