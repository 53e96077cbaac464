use super::*;

#[test]
fn the_key_lists_are_the_schemas_fields() {
    assert_eq!(
        Settings::keys(),
        ["version", "defaults", "servers", "client", "gateway"]
    );
    assert_eq!(
        ClientSettings::keys(),
        ["name", "version", "capabilities", "roots"]
    );
    assert_eq!(GatewaySettings::keys(), ["prefix", "separator"]);
    assert_eq!(
        Defaults::keys(),
        [
            "budget",
            "total_budget",
            "template",
            "encoding",
            "model",
            "tokenizer",
            "dedup",
            "similarity",
            "order",
            "list_tool_only_servers",
            "tool_descriptions",
            "shortening_note",
            "on_change",
            "tool_names",
            "defer_over",
        ]
    );
    assert_eq!(
        ServerSettings::keys(),
        [
            "budget",
            "weight",
            "exclude",
            "instructions",
            "label",
            "on_change",
            "tools",
            "tool",
            "always_load",
            "deferred"
        ]
    );
}

/// Every key of the list is read by serde (none is a leftover), and
/// each struct holds as many fields as its list names (none is
/// missing from it): a field added to the schema is a key.
#[test]
fn every_serde_field_is_a_known_key() {
    let debug_fields = |debug: String| debug.matches(": ").count();
    // Settings' four skipped fields are not keys of the file.
    assert_eq!(
        debug_fields(
            format!("{:?}", Settings::new())
                .replace(&format!("{:?}", Defaults::default()), "D")
                .replace(&format!("{:?}", ClientSettings::default()), "C")
                .replace(&format!("{:?}", GatewaySettings::default()), "S")
        ),
        Settings::keys().len() + 4
    );
    assert_eq!(
        debug_fields(format!("{:?}", GatewaySettings::default())),
        GatewaySettings::keys().len()
    );
    assert_eq!(
        debug_fields(format!("{:?}", Defaults::default())),
        Defaults::keys().len()
    );
    assert_eq!(
        debug_fields(format!("{:?}", ServerSettings::default())),
        ServerSettings::keys().len()
    );
    let values = [
        ("budget", "1"),
        ("total_budget", "1"),
        ("template", "\"xml\""),
        ("encoding", "\"cl100k_base\""),
        ("model", "\"claude-sonnet-4\""),
        ("tokenizer", "\"tokenizer.json\""),
        ("dedup", "true"),
        ("similarity", "0.5"),
        ("order", "\"insertion\""),
        ("list_tool_only_servers", "true"),
        ("tool_descriptions", "true"),
        ("on_change", "\"hold\""),
        ("tool_names", "\"claude-code\""),
        ("shortening_note", "false"),
        ("weight", "2.0"),
        ("exclude", "true"),
        ("instructions", "\"x\""),
        ("label", "\"y\""),
        ("tools", "{ deny = [\"x*\"] }"),
        ("tool", "{ x = { description = \"d\" } }"),
        ("always_load", "true"),
        ("defer_over", "3"),
        ("deferred", "true"),
    ];
    let value = |k: &str| values.iter().find(|(n, _)| *n == k).unwrap().1;
    for k in Defaults::keys() {
        let text = format!("{k} = {}", value(k));
        toml::from_str::<Defaults>(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    for k in ServerSettings::keys() {
        let text = format!("{k} = {}", value(k));
        toml::from_str::<ServerSettings>(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

#[test]
fn overrides_win_over_the_file() {
    let mut s = Settings::new();
    s.defaults.budget = Some(400);
    s.defaults.dedup = Some(false);
    s.overrides.budget = Some(30);
    let d = s.effective();
    assert_eq!(d.budget, Some(30));
    assert_eq!(d.dedup, Some(false));
    assert_eq!(d.total_budget, None);
}

#[test]
fn templates_and_encodings_of_each_kind() {
    // Built-in names and a model name.
    let mut s = Settings::new();
    s.defaults.template = Some("xml".into());
    s.defaults.encoding = Some("gpt-4".into());
    let a = Assembler::from_settings(&s).unwrap();
    let debug = format!("{a:?}");
    assert!(debug.contains("template: \"xml\""), "{debug}");
    assert!(debug.contains("encoding: \"cl100k_base\""), "{debug}");
    // A file, relative to the policy file's directory.
    let dir = std::env::temp_dir().join(format!("mcp-preamble-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mine.j2"),
        "{% macro server(s) %}{{ s.name }}{% endmacro %}{% for b in blocks %}{{ b }}{% endfor %}",
    )
    .unwrap();
    s.defaults.template = Some("mine.j2".into());
    s.base_dir = Some(dir.clone());
    s.origin = "p.toml".into();
    let found = Assembler::from_settings(&s).map(|a| format!("{a:?}"));
    // Not found without the directory, and the error names the file and key.
    s.base_dir = None;
    let e = Assembler::from_settings(&s).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    let found = found.unwrap_or_else(|e| e.to_string());
    assert!(found.contains("template: \"mine.j2\""), "{found}");
    assert_eq!(e.kind(), ErrorKind::InvalidConfig);
    assert!(
        e.to_string()
            .starts_with("invalid configuration: p.toml: [defaults] template: "),
        "{e}"
    );
    // An override is the loader's own error, and wins over the file.
    s.overrides.template = Some("html".into());
    assert_eq!(
        Assembler::from_settings(&s).unwrap_err().to_string(),
        Template::builtin("html").unwrap_err().to_string()
    );
    s.overrides.template = Some("markdown".into());
    s.overrides.encoding = Some("o200k_base".into());
    let a = Assembler::from_settings(&s).unwrap();
    assert!(format!("{a:?}").contains("encoding: \"o200k_base\""));
    s.overrides.encoding = Some("nope".into());
    assert_eq!(
        s.encoding().unwrap_err().to_string(),
        Encoding::from_name("nope").unwrap_err().to_string()
    );
}

#[test]
fn a_budget_of_zero_tokens_is_refused_in_every_layer() {
    let refused = |settings: &Settings| {
        Assembler::from_settings(settings)
            .err()
            .map(|e| e.to_string())
    };
    let tail = "= 0 leaves no room for any text: give 1 or more tokens";
    let file = |body: &str| Settings::from_str(&format!("version = 1\n{body}"), "p.toml").unwrap();
    assert_eq!(
        refused(&file("[defaults]\nbudget = 0\n")),
        Some(format!(
            "invalid configuration: p.toml: [defaults] budget {tail}"
        ))
    );
    assert_eq!(
        refused(&file("[defaults]\ntotal_budget = 0\n")),
        Some(format!(
            "invalid configuration: p.toml: [defaults] total_budget {tail}"
        ))
    );
    assert_eq!(
        refused(&file("[servers.billing]\nbudget = 0\n")),
        Some(format!(
            "invalid configuration: p.toml: [servers.billing] budget {tail}"
        ))
    );
    // A flag over the file's 0 wins; a flag of 0 is refused under its own name.
    let mut over = file("[defaults]\nbudget = 0\n");
    over.overrides.budget = Some(5);
    assert_eq!(refused(&over), None);
    over.overrides.total_budget = Some(0);
    assert_eq!(
        refused(&over),
        Some(format!("invalid configuration: total_budget {tail}"))
    );
    let mut server = Settings::new();
    server
        .server_overrides
        .entry("billing".into())
        .or_default()
        .budget = Some(0);
    assert_eq!(
        refused(&server),
        Some(format!(
            "invalid configuration: the budget of \"billing\" {tail}"
        ))
    );
    // One token is a budget.
    assert_eq!(refused(&file("[defaults]\nbudget = 1\n")), None);
}

#[test]
fn counts_take_ascii_digits_only() {
    assert_eq!(parse_count("0500", "tokens").unwrap(), 500);
    assert_eq!(parse_count("0", "tools").unwrap(), 0);
    for bad in ["", "-1", "+5", " 5", "5 ", "1e3", "５"] {
        let e = parse_count(bad, "tools").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert_eq!(e.detail(), format!("{bad:?} is not a number of tools"));
    }
    let huge = "99999999999999999999999";
    assert_eq!(
        parse_count(huge, "tokens").unwrap_err().detail(),
        format!("{huge} is too large a number of tokens")
    );
}
