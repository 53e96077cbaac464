use super::*;
use crate::support::hash::sha1_hex;

fn n(scheme: &str, server: &str, tool: &str) -> String {
    scheme
        .parse::<ToolNames>()
        .unwrap()
        .exposed(server, tool)
        .into_string()
}

#[test]
fn each_host_names_a_tool_its_way() {
    assert_eq!(n("claude-code", "my.srv", "get-x"), "mcp__my_srv__get-x");
    assert_eq!(n("claude-code", "s", "a😀b"), "mcp__s__a__b");
    assert_eq!(n("opencode", "my srv", "a/b"), "mcp__my_srv__a_b");
    assert_eq!(n("codex", "my-srv", "get.x"), "mcp__my_srv__get_x");
    assert_eq!(
        n("vscode", "GitHub Server", "get.x"),
        "mcp_github_server_get_x"
    );
    assert_eq!(
        n("vscode", "io.github.upstash/context7", "t"),
        "mcp_io_github_ups_t"
    );
    assert_eq!(n("plain", "s", "get.x"), "get.x");
    assert_eq!(n("{server}__{tool}", "my.srv", "get x"), "my_srv__get_x");
    assert_eq!(n("x-{tool}", "ignored", "t"), "x-t");
}

#[test]
fn long_names_fit_the_cap_the_way_each_host_does() {
    let tool = "t".repeat(60);
    let cc = ToolNames::host(Host::ClaudeCode).exposed("srv", &tool);
    assert_eq!(cc.as_str(), format!("mcp__srv__{tool}"));
    assert_eq!(cc.fit(), Fit::OverCap);
    let codex = ToolNames::host(Host::Codex).exposed("srv", &tool);
    assert_eq!(codex.as_str().len(), MAX_LEN);
    assert_eq!(codex.fit(), Fit::Hashed);
    let raw = format!("mcp__srv__{tool}");
    assert_eq!(
        codex.as_str(),
        format!("{}{}", &raw[..24], sha1_hex(raw.as_bytes()))
    );
    let vs = ToolNames::host(Host::Vscode).exposed("srv", &tool);
    assert_eq!(vs.as_str(), &format!("mcp_srv_{tool}")[..MAX_LEN]);
    assert_eq!(vs.fit(), Fit::Cut);
    let p = ToolNames::pattern("{server}__{tool}")
        .unwrap()
        .exposed("srv", &tool);
    assert_eq!(p.as_str().chars().count(), MAX_LEN);
    assert!(p.as_str().starts_with("srv__ttt"));
    assert_eq!(p.fit(), Fit::Hashed);
}

#[test]
fn a_table_never_gives_one_name_twice() {
    let names = ToolNames::host(Host::ClaudeCode);
    let t = names.table([("s", "a.b"), ("s", "a_b"), ("s", "a.b")]);
    assert_eq!(t.len(), 2);
    assert_eq!(t.get("s", "a.b").unwrap().as_str(), "mcp__s__a_b");
    let second = t.get("s", "a_b").unwrap();
    assert_ne!(second.as_str(), "mcp__s__a_b");
    assert_eq!(second.fit(), Fit::Hashed);
    assert_eq!(t.resolve(second.as_str()), Some(("s", "a_b")));
    assert_eq!(t.collisions().len(), 1);
    assert_eq!(t.collisions()[0].wanted, "mcp__s__a_b");
    // A pattern whose parts can meet: alias `a__b` with tool `c`, alias `a` with tool `b__c`.
    let g = ToolNames::pattern("{server}__{tool}").unwrap();
    let t = g.table([("a__b", "c"), ("a", "b__c")]);
    assert_ne!(t.get("a__b", "c"), t.get("a", "b__c"));
    assert_eq!(t.collisions().len(), 1);
}

#[test]
fn vscode_numbers_repeated_prefixes() {
    let t = ToolNames::host(Host::Vscode).table([("foo", "x"), ("Foo", "x"), ("foo", "y")]);
    assert_eq!(t.get("foo", "x").unwrap().as_str(), "mcp_foo_x");
    assert_eq!(t.get("Foo", "x").unwrap().as_str(), "mcp_foo2_x");
    assert_eq!(t.get("foo", "y").unwrap().as_str(), "mcp_foo_y");
    assert!(t.collisions().is_empty());
}

#[test]
fn schemes_parse_and_print_back() {
    for s in ToolNames::names()
        .into_iter()
        .chain(["{server}__{tool}", "gw_{tool}"])
    {
        assert_eq!(s.parse::<ToolNames>().unwrap().to_string(), s);
    }
    let err = |s: &str| s.parse::<ToolNames>().unwrap_err().to_string();
    assert!(err("claude_code").contains("did you mean \"claude-code\"?"));
    assert!(err("{server}").contains("has no {tool}"));
    assert!(err("{tool}{tool}").contains("has {tool} twice"));
    assert!(err("{server}.{tool}").contains("may hold only"));
    assert!(err(&format!("{}{{tool}}", "x".repeat(60))).contains("too little"));
    assert_eq!(ToolNames::default(), ToolNames::plain());
}

#[test]
fn server_labels_follow_the_host() {
    let vs = ToolNames::host(Host::Vscode);
    assert_eq!(vs.server_label(Some("a"), "n", Some("T")), "T");
    assert_eq!(vs.server_label(Some("a"), "n", None), "n");
    let cc = ToolNames::host(Host::ClaudeCode);
    assert_eq!(cc.server_label(Some("a"), "n", Some("T")), "a");
    assert_eq!(cc.server_label(None, "n", Some("T")), "n");
}

#[test]
fn a_pattern_within_a_shorter_cap_hashes_past_it() {
    let p: ToolNames = "{server}__{tool}".parse().unwrap();
    let short = p.clone().within(49);
    assert_eq!(short.exposed("a", "b").as_str(), "a__b");
    let long = short.exposed("ledger", &"x".repeat(60));
    assert_eq!(long.as_str().chars().count(), 49);
    assert_eq!(long.fit(), Fit::Hashed);
    assert!(long.as_str().starts_with("ledger__xxx"));
    // The same tool at 64 is another name: the cap is part of the scheme.
    assert_ne!(p.exposed("ledger", &"x".repeat(60)).as_str(), long.as_str());
    assert_ne!(p, short);
    // Never below the pattern's own text and the hash, never above 64.
    let least = p.clone().within(3).exposed("ledger", &"x".repeat(60));
    // The pattern's `__`, 8 hex digits and 2 more: 3 characters, `_`, the hash.
    assert_eq!(least.as_str().chars().count(), 12);
    assert_eq!(p.clone().within(500), p);
    // Collisions within the table are hashed within the cap too.
    let table = short.table([("a b", &"y".repeat(60)[..]), ("a_b", &"y".repeat(60)[..])]);
    assert!(
        table
            .iter()
            .all(|(_, _, n)| n.as_str().chars().count() <= 49)
    );
    // Other schemes are unchanged.
    let cc = ToolNames::host(Host::ClaudeCode);
    assert_eq!(cc.clone().within(10), cc);
}

#[test]
fn a_bracketed_prefix_is_given_only_to_shared_names() {
    let p: ToolNames = "[{server}__]{tool}".parse().unwrap();
    assert_eq!(p.to_string(), "[{server}__]{tool}");
    assert!(p.tells_servers_apart());
    // One tool alone: the prefix, as `exposed` gives one name without a table.
    assert_eq!(p.exposed("a", "x").as_str(), "a__x");
    let t = p.table([("a", "x"), ("a", "only"), ("b", "x"), ("b", "y.z")]);
    let name = |s: &str, tool: &str| t.get(s, tool).unwrap().as_str().to_string();
    assert_eq!(name("a", "x"), "a__x");
    assert_eq!(name("b", "x"), "b__x");
    assert_eq!(name("a", "only"), "only");
    assert_eq!(name("b", "y.z"), "y_z");
    assert!(t.collisions().is_empty());
    // Bare names that meet after `_` replaces `.` are shared too.
    let t = p.table([("a", "y_z"), ("b", "y.z")]);
    assert_eq!(t.get("a", "y_z").unwrap().as_str(), "a__y_z");
    assert_eq!(t.get("b", "y.z").unwrap().as_str(), "b__y_z");
    // A name kept from before stays; the newcomer is prefixed.
    let kept = Kept {
        given: p.table([("a", "x")]),
        reserved: Default::default(),
    };
    let t = p.table_keeping([("a", "x"), ("b", "x")], &kept);
    assert_eq!(t.get("a", "x").unwrap().as_str(), "x");
    assert_eq!(t.get("b", "x").unwrap().as_str(), "b__x");
    // A name reserved for the gateway's own tool is not given bare.
    let kept = Kept {
        given: Default::default(),
        reserved: ["x".to_string()].into(),
    };
    let t = p.table_keeping([("a", "x")], &kept);
    assert_eq!(t.get("a", "x").unwrap().as_str(), "a__x");
}

#[test]
fn patterns_without_a_server_cannot_tell_servers_apart() {
    let never: ToolNames = "{tool}".parse().unwrap();
    assert!(!never.tells_servers_apart());
    let t = never.table([("a", "x"), ("b", "x")]);
    assert_eq!(t.get("a", "x").unwrap().as_str(), "x");
    assert_ne!(t.get("b", "x").unwrap().as_str(), "x");
    assert_eq!(t.collisions().len(), 1);
    assert!(!ToolNames::plain().tells_servers_apart());
    assert!(ToolNames::host(Host::ClaudeCode).tells_servers_apart());
}

#[test]
fn brackets_are_checked() {
    let err = |s: &str| s.parse::<ToolNames>().unwrap_err().to_string();
    assert!(err("[{tool}]").contains("has {tool} inside [ ]"));
    assert!(err("[]{tool}").contains("has an empty [ ]"));
    assert!(err("[{server}_{tool}").contains("has a [ without its ]"));
    assert!(err("[a][b]{tool}").contains("one [ ] pair only"));
    assert!(err("{server}]{tool}").contains("one [ ] pair only"));
}
