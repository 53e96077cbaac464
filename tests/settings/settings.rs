//! The settings model: the policy file and the flags over it, the one
//! place templates and encodings are loaded, and the alias rule
//! ([`ServerKey`]) shared by the settings, the assembler and the lock.

use crate::common;

use common::snapshot;
use mcp_preamble::pin::Lock;
use mcp_preamble::settings::{PolicyFile, ServerKey, Settings, Similarity};
use mcp_preamble::{Assembler, ErrorKind, ServerSnapshot};

const FILE: &str =
    "version = 1\n[defaults]\nbudget = 400\ntemplate = \"xml\"\nencoding = \"cl100k_base\"\n";

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-preamble-settings-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_file_first_then_the_flags() {
    let file = Settings::from_str(FILE, "mcp-preamble.toml").unwrap();
    let servers = [snapshot("seed-invoice-server")];
    // The file alone.
    let assembly = Assembler::from_settings(&file)
        .unwrap()
        .assemble(&servers)
        .unwrap();
    assert_eq!(assembly.servers()[0].budget, Some(400));
    assert_eq!(assembly.template(), "xml");
    assert_eq!(assembly.encoding(), "cl100k_base");
    // Flags laid over it win; what they leave unset is the file's.
    let mut layered = file.clone();
    layered.overrides.budget = Some(30);
    layered.overrides.template = Some("markdown".to_string());
    let assembly = Assembler::from_settings(&layered)
        .unwrap()
        .assemble(&servers)
        .unwrap();
    assert_eq!(assembly.servers()[0].budget, Some(30));
    assert_eq!(assembly.template(), "markdown");
    assert_eq!(assembly.encoding(), "cl100k_base");
    assert_eq!(layered.effective().budget, Some(30));
    assert_eq!(
        layered.defaults.budget,
        Some(400),
        "the file's layer is kept"
    );
    // from_policy is from_settings of the file.
    let policy = PolicyFile::from_str(FILE, "mcp-preamble.toml").unwrap();
    assert_eq!(policy.settings, file);
    let via_policy = Assembler::from_policy(&policy)
        .unwrap()
        .assemble(&servers)
        .unwrap();
    let via_settings = Assembler::from_settings(&file)
        .unwrap()
        .assemble(&servers)
        .unwrap();
    assert_eq!(via_policy.to_json(), via_settings.to_json());
}

/// Per server the flags' layer (`server_overrides`) wins over
/// `[servers.<alias>]` as `overrides` does over `[defaults]`, and lands in
/// the same builder calls as the keys.
#[test]
fn the_server_flags_lie_over_the_servers_table() {
    let servers = [snapshot("seed-invoice-server")];
    let report = |settings: &Settings| {
        let a = Assembler::from_settings(settings)
            .unwrap()
            .assemble(&servers)
            .unwrap();
        let s = &a.servers()[0];
        (s.budget, s.deferred.is_some(), a.text().to_string())
    };
    let file = Settings::from_str(
        "version = 1\n[defaults]\ndefer_over = 1\n[servers.seed-invoice-server]\nbudget = 400\n",
        "p.toml",
    )
    .unwrap();
    let (budget, deferred, _) = report(&file);
    assert_eq!((budget, deferred), (Some(400), true));
    let mut layered = Settings::from_str(
        "version = 1\n[servers.seed-invoice-server]\nbudget = 400\n",
        "p.toml",
    )
    .unwrap();
    let (_, deferred, plain) = report(&layered);
    assert!(!deferred);
    let flags = layered
        .server_overrides
        .entry("seed-invoice-server".to_string())
        .or_default();
    flags.budget = Some(60);
    flags.deferred = true;
    let (budget, deferred, text) = report(&layered);
    assert_eq!((budget, deferred), (Some(60), true));
    assert_ne!(text, plain);
    assert_eq!(layered.servers["seed-invoice-server"].budget, Some(400));
    // The key gives what the flag gives.
    let keys = Settings::from_str(
        "version = 1\n[servers.seed-invoice-server]\nbudget = 60\ndeferred = true\n",
        "p.toml",
    )
    .unwrap();
    assert_eq!(report(&keys), report(&layered));
}

#[test]
fn each_kind_of_template_and_encoding_is_loaded_in_one_place() {
    let servers = [snapshot("seed-invoice-server")];
    let load = |settings: &Settings| {
        Assembler::from_settings(settings)
            .unwrap()
            .assemble(&servers)
            .unwrap()
    };
    for (template, encoding, shown) in [
        ("markdown", "o200k_base", "o200k_base"),
        ("xml", "cl100k_base", "cl100k_base"),
        ("markdown", "gpt-4o", "o200k_base"),
        ("markdown", "gpt-4", "cl100k_base"),
    ] {
        let text = format!(
            "version = 1\n[defaults]\ntemplate = \"{template}\"\nencoding = \"{encoding}\"\n"
        );
        let assembly = load(&Settings::from_str(&text, "p.toml").unwrap());
        assert_eq!(assembly.template(), template);
        assert_eq!(assembly.encoding(), shown);
    }
    // A template file, relative to the policy file's directory.
    let dir = temp_dir("template");
    std::fs::write(
        dir.join("mine.j2"),
        "{% macro server(s) %}[{{ s.name }}]{% endmacro %}{% for b in blocks %}{{ b }}{% endfor %}",
    )
    .unwrap();
    std::fs::write(
        dir.join("mcp-preamble.toml"),
        "version = 1\n[defaults]\ntemplate = \"mine.j2\"\n",
    )
    .unwrap();
    let found = Settings::from_path(dir.join("mcp-preamble.toml"))
        .and_then(|s| Assembler::from_settings(&s))
        .and_then(|a| a.assemble(&servers));
    let missing = Settings::from_str(
        "version = 1\n[defaults]\ntemplate = \"mine.j2\"\n",
        "p.toml",
    )
    .map(|s| Assembler::from_settings(&s).map(|_| ()));
    std::fs::remove_dir_all(&dir).unwrap();
    let assembly = found.unwrap();
    assert_eq!(assembly.template(), "mine.j2");
    assert_eq!(assembly.text(), "[seed-invoice-server]");
    // Without the file's directory the path is not found, and the error
    // names the file and the key.
    let err = missing.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidConfig);
    assert!(
        err.to_string()
            .starts_with("invalid configuration: p.toml: [defaults] template: "),
        "{err}"
    );
}

#[test]
fn the_alias_claims_the_name_for_settings_budgets_and_pins() {
    let aliased = snapshot("seed-invoice-server").with_alias("time");
    let named = ServerSnapshot::new("time").with_instructions("Call now first.");
    assert_eq!(ServerKey::of(&aliased), "time");
    assert_eq!(ServerKey::of(&named), "time");
    let keys = ServerKey::resolve(&[&named, &aliased]);
    assert_eq!(keys[0], None);
    assert_eq!(keys[1].as_ref().map(ServerKey::as_str), Some("time"));

    // The settings' table for "time" applies to the aliased server only.
    let settings = Settings::from_str(
        "version = 1\n[servers.time]\ninstructions = \"Operator text.\"\n",
        "p.toml",
    )
    .unwrap();
    assert!(settings.server(&ServerKey::of(&aliased)).is_some());
    let assembly = Assembler::from_settings(&settings)
        .unwrap()
        .assemble(&[named.clone(), aliased.clone()])
        .unwrap();
    let texts: Vec<&str> = assembly.servers().iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.contains("Operator text."))
            .count(),
        1,
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("Call now first.")));

    // The lock keys a server the same way.
    let mut lock = Lock::new();
    lock.pin(&aliased);
    assert_eq!(
        lock.keys().collect::<Vec<_>>(),
        [ServerKey::of(&aliased).as_str()]
    );
    assert_eq!(ServerKey::alias("time"), ServerKey::of(&aliased));
}

#[test]
fn a_similarity_is_checked_once_and_the_setter_cannot_fail() {
    let t = Similarity::new(0.9).unwrap();
    let _ = Assembler::new().similarity(t);
    let _ = mcp_preamble::lint::Linter::new().similarity(t);
    assert_eq!(
        Similarity::new(1.5).unwrap_err().to_string(),
        "invalid configuration: similarity threshold 1.5 is outside 0.0..=1.0"
    );
    assert!(Similarity::try_from(f64::NAN).is_err());
    let settings =
        Settings::from_str("version = 1\n[defaults]\nsimilarity = 0.5\n", "p.toml").unwrap();
    assert_eq!(settings.defaults.similarity.map(Similarity::get), Some(0.5));
}

#[test]
fn unknown_keys_in_every_table_name_the_closest_key() {
    let err = |text: &str| {
        PolicyFile::from_str(text, "p.toml")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("version = 1\nserver = {}\n"),
        "invalid configuration: p.toml:2:1: unknown key \"server\" in the top level (did you mean \"servers\"?)"
    );
    assert_eq!(
        err("version = 1\n[defaults]\norderr = \"name\"\n"),
        "invalid configuration: p.toml:3:1: unknown key \"orderr\" in [defaults] (did you mean \"order\"?)"
    );
    assert_eq!(
        err("version = 1\n[servers.a]\nlable = \"x\"\n"),
        "invalid configuration: p.toml:3:1: unknown key \"lable\" in [servers.a] (did you mean \"label\"?)"
    );
    assert_eq!(
        err("version = 1\n[servers.a]\nzzzzzzzz = 1\n"),
        "invalid configuration: p.toml:3:1: unknown key \"zzzzzzzz\" in [servers.a] (valid keys: budget, weight, exclude, instructions, label, on_change, tools, tool, always_load, deferred)"
    );
}

/// `[client]` gives the library the identity the CLI uses: a host that
/// shares the policy file connects as the same client (live, against
/// tests/servers/client-echo.mjs, in both handshakes).
#[cfg(feature = "rmcp")]
#[tokio::test]
async fn the_client_table_is_the_identity_sent() {
    use mcp_preamble::connect::{ConnectOptions, Handshake, connect_with};
    use mcp_preamble::rmcp::model::CallToolRequestParams;
    use mcp_preamble::settings::Capability;
    let settings = Settings::from_str(
        "version = 1\n[client]\nname = \"acme-agent\"\nversion = \"1.2.0\"\n\
         capabilities = [\"roots\", \"elicitation\"]\nroots = [\"file:///work/project\"]\n",
        "mcp-preamble.toml",
    )
    .unwrap();
    assert_eq!(
        settings.client.capabilities,
        [Capability::Roots, Capability::Elicitation]
    );
    let config = settings.client.client_config();
    assert_eq!(config.client_info.name, "acme-agent");
    assert_eq!(config.client_info.version, "1.2.0");
    assert!(config.capabilities.roots.is_some() && config.capabilities.sampling.is_none());
    // Without a [client]: the crate's own identity.
    let plain = Settings::new().client.client_config();
    assert_eq!(plain.client_info.name, "mcp-preamble");
    assert_eq!(plain.client_info.version, env!("CARGO_PKG_VERSION"));
    for handshake in [Handshake::Legacy, Handshake::Auto] {
        let entry = common::node_entry("echo", "client-echo.mjs", &[]);
        let options = ConnectOptions::new()
            .handshake(handshake.clone())
            .client(config.clone());
        let connection = connect_with(&entry, &options, settings.client.handler())
            .await
            .unwrap_or_else(|e| panic!("{handshake:?}: {e}"));
        let seen = connection
            .client
            .call_tool(CallToolRequestParams::new("whoami"))
            .await
            .unwrap();
        let seen: serde_json::Value =
            serde_json::from_str(&seen.content[0].as_text().unwrap().text).unwrap();
        assert_eq!(
            seen["names"],
            serde_json::json!(["acme-agent"]),
            "{handshake:?}"
        );
        assert!(seen["capabilities"].get("roots").is_some(), "{seen}");
        assert!(seen["capabilities"].get("elicitation").is_some(), "{seen}");
        assert!(seen["capabilities"].get("sampling").is_none(), "{seen}");
        connection.close().await;
    }
    // A typo in [client] is found like any other.
    let e = Settings::from_str("version = 1\n[client]\nnmae = \"x\"\n", "p.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: p.toml:3:1: unknown key \"nmae\" in [client] (did you mean \"name\"?)"
    );
    let e = Settings::from_str(
        "version = 1\n[client]\ncapabilities = [\"telepathy\"]\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid configuration: p.toml:3:17: unknown variant"),
        "{e}"
    );
}

/// `[gateway]` names what the gateway serves (`Naming::with_settings`), a
/// key it leaves out keeps the default; typos and bad values are found with
/// their place, like any other key's.
#[cfg(feature = "serve")]
#[test]
fn the_serve_table_names_what_the_gateway_serves() {
    use mcp_preamble::serve::{Naming, Prefix};
    let settings = Settings::from_str(
        "version = 1\n[gateway]\nprefix = \"on-collision\"\nseparator = \"-\"\n",
        "p.toml",
    )
    .unwrap();
    let naming = Naming::default().with_settings(&settings.gateway).unwrap();
    assert_eq!(naming.prefix(), Prefix::OnCollision);
    assert_eq!(naming.pattern(), "[{server}-]{tool}");
    let only =
        Settings::from_str("version = 1\n[gateway]\nprefix = \"never\"\n", "p.toml").unwrap();
    let naming = Naming::default().with_settings(&only.gateway).unwrap();
    assert_eq!(naming.pattern(), "{tool}");
    let none = Naming::default()
        .with_settings(&Settings::new().gateway)
        .unwrap();
    assert_eq!(none.pattern(), "{server}__{tool}");
    for (file, said) in [
        (
            "version = 1\n[gateway]\nprefx = \"never\"\n",
            "invalid configuration: p.toml:3:1: unknown key \"prefx\" in [gateway] (did you mean \"prefix\"?)",
        ),
        (
            "version = 1\n[gateway]\nprefix = \"sometimes\"\n",
            "invalid configuration: p.toml:3:10: unknown prefix \"sometimes\" (always, never, on-collision)",
        ),
        (
            "version = 1\n[gateway]\nseparator = \"::\"\n",
            "invalid configuration: p.toml:3:13: separator \"::\" must be 1 to 8 of the characters A-Z a-z 0-9 _ -",
        ),
    ] {
        let e = Settings::from_str(file, "p.toml").unwrap_err();
        assert_eq!(e.to_string(), said, "{file}");
    }
}

/// Issue 55: a model with an encoding of its own and another encoding
/// disagree, as flags or as keys of one file; a tokenizer file without its
/// model family's marker token gets a warning naming both.
#[test]
fn settings_that_disagree_are_errors_and_a_foreign_tokenizer_a_warning() {
    let mut s = Settings::new();
    s.overrides.model = Some("gpt-4o".into());
    s.overrides.encoding = Some("cl100k_base".into());
    let err = s.token_counter().err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidConfig);
    assert_eq!(
        err.to_string(),
        "invalid configuration: settings that disagree: model \"gpt-4o\" counts with o200k_base, not encoding \"cl100k_base\"; give one of them"
    );
    assert!(Assembler::from_settings(&s).is_err());
    // Agreeing settings, and a flag over the file's model, are fine.
    s.overrides.encoding = Some("o200k_base".into());
    assert_eq!(s.token_counter().unwrap().name(), "o200k_base");
    let mut over =
        Settings::from_str("version = 1\n[defaults]\nmodel = \"gpt-4o\"\n", "p.toml").unwrap();
    over.overrides.encoding = Some("cl100k_base".into());
    assert_eq!(over.token_counter().unwrap().name(), "cl100k_base");
    // In one file: the key named; a model counted otherwise disagrees too.
    let file = Settings::from_str(
        "version = 1\n[defaults]\nmodel = \"claude-sonnet-4\"\nencoding = \"o200k_base\"\n",
        "p.toml",
    )
    .unwrap();
    assert_eq!(
        file.token_counter().err().unwrap().to_string(),
        "invalid configuration: p.toml: [defaults] encoding: invalid configuration: settings that disagree: model \"claude-sonnet-4\" counts with an estimate, not encoding \"o200k_base\"; give one of them"
    );

    let dir = temp_dir("foreign-tokenizer");
    let tokenizer = |added: &str| {
        format!(
            r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [{added}],
            "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
            "model": {{"type": "WordLevel", "vocab": {{"a": 0, "[UNK]": 1}}, "unk_token": "[UNK]"}}}}"#
        )
    };
    let marker = |content: &str| {
        format!(
            r#"{{"id": 2, "content": "{content}", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}}"#
        )
    };
    let qwen = dir.join("qwen.json");
    let llama = dir.join("llama.json");
    std::fs::write(&qwen, tokenizer(&marker("<|im_start|>"))).unwrap();
    std::fs::write(&llama, tokenizer(&marker("<|begin_of_text|>"))).unwrap();
    let warnings = |model: &str, file: &std::path::Path| {
        let mut s = Settings::new();
        s.overrides.model = Some(model.into());
        s.overrides.tokenizer = Some(file.display().to_string());
        s.counter_warnings()
    };
    let foreign = warnings("llama-3.1", &qwen);
    let matching = warnings("llama-3.1", &llama);
    let qwen_ok = warnings("qwen-3", &qwen);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        foreign,
        [format!(
            "tokenizer {:?} does not match model \"llama-3.1\": its vocabulary has no \"<|begin_of_text|>\", which every llama-3.1 tokenizer has; tokens are counted with the file",
            qwen.display().to_string()
        )]
    );
    assert!(matching.is_empty());
    assert!(qwen_ok.is_empty());
}
