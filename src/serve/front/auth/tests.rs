use super::OAuth;
use super::oauth::parse_jwks;
use super::tokens::read_tokens;
use crate::serve::front::gate::{host_allowed, origin_allowed, split_authority};
use jsonwebtoken::Algorithm;

fn temp(name: &str, text: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("mcp-preamble-auth-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_tokens_file_skips_comments_and_blank_lines_and_names_a_bad_line_only() {
    let path = temp(
        "tokens",
        "# ops\n\n  0123456789abcdef0123  \n#x\nABCDEFGHIJKLMNOP+/=~\n",
    );
    assert_eq!(read_tokens(&path).unwrap().len(), 2);
    std::fs::write(&path, "0123456789abcdef0123\nsecret-with space-0123\n").unwrap();
    let e = read_tokens(&path).unwrap_err().to_string();
    assert!(
        e.ends_with("line 2: a token is letters, digits and -._~+/= only (no spaces)"),
        "{e}"
    );
    assert!(!e.contains("secret"), "{e}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_jwks_with_a_secret_key_is_refused_and_an_encryption_key_never_verifies() {
    let secret = r#"{"keys": [{"kty": "oct", "kid": "s", "k": "c2VjcmV0"}]}"#;
    assert_eq!(
        parse_jwks(secret.as_bytes()).unwrap_err(),
        "a jwks of public keys holds a secret (oct) key"
    );
    let jwks = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/auth/jwks.json"),
    )
    .unwrap();
    let signing = temp("jwks-sig", &jwks);
    let oauth = OAuth::new("https://issuer.test", "aud")
        .unwrap()
        .jwks_file(&signing)
        .unwrap();
    assert!(oauth.find(Some("test-rsa"), Algorithm::RS256).is_some());
    // Not for another family, nor another algorithm than the key states.
    assert!(oauth.find(Some("test-rsa"), Algorithm::ES256).is_none());
    assert!(oauth.find(Some("test-rsa"), Algorithm::PS256).is_none());
    // No kid: the one key of the family.
    assert!(oauth.find(None, Algorithm::ES256).is_some());
    let encrypting = temp("jwks-enc", &jwks.replace("\"sig\"", "\"enc\""));
    let oauth = OAuth::new("https://issuer.test", "aud")
        .unwrap()
        .jwks_file(&encrypting)
        .unwrap();
    assert!(oauth.find(Some("test-rsa"), Algorithm::RS256).is_none());
    let _ = std::fs::remove_file(&signing);
    let _ = std::fs::remove_file(&encrypting);
}

#[test]
fn an_issuer_is_https_or_loopback_http() {
    for ok in [
        "https://auth.example.com",
        "http://127.0.0.1:9000",
        "http://localhost/x",
        "http://[::1]:1",
    ] {
        assert!(OAuth::new(ok, "aud").is_ok(), "{ok}");
    }
    for refused in [
        "http://auth.example.com",
        "ftp://x",
        "not a url",
        "http://127.0.0.1.nip.io",
    ] {
        let e = OAuth::new(refused, "aud").err().unwrap().to_string();
        assert!(
            e.contains("not an issuer url") || e.contains("https (http only on loopback)"),
            "{e}"
        );
    }
    assert!(OAuth::new("https://a.test", "").is_err());
}

#[test]
fn hosts_match_by_name_and_by_port_when_given() {
    let allowed = vec!["mcp.example.com".to_string(), "10.0.0.5:8443".to_string()];
    for ok in ["mcp.example.com", "MCP.example.com:443", "10.0.0.5:8443"] {
        assert!(host_allowed(ok, &allowed), "{ok}");
    }
    for refused in [
        "evil.example",
        "10.0.0.5",
        "10.0.0.5:80",
        "mcp.example.com.evil",
    ] {
        assert!(!host_allowed(refused, &allowed), "{refused}");
    }
    assert_eq!(split_authority("[::1]:80"), ("::1", Some("80")));
    assert_eq!(split_authority("::1"), ("::1", None));
}

#[test]
fn an_origin_is_served_only_from_an_allowed_host() {
    let allowed = vec!["mcp.example.com".to_string()];
    assert!(origin_allowed("https://mcp.example.com", &allowed));
    assert!(origin_allowed("https://mcp.example.com:8443", &allowed));
    for refused in [
        "null",
        "https://evil.example",
        "https://mcp.example.com/x",
        "https://user@mcp.example.com",
        "file://mcp.example.com",
    ] {
        assert!(!origin_allowed(refused, &allowed), "{refused}");
    }
    assert!(!origin_allowed("https://mcp.example.com", &[]));
}

#[test]
fn oauth_scopes_are_scope_tokens_kept_in_order_once() {
    let oauth = || OAuth::new("https://auth.test", "https://mcp.test/mcp").unwrap();
    let scoped = oauth()
        .scopes(["mcp:tools", "mcp:read", "mcp:tools"])
        .unwrap();
    assert_eq!(scoped.scopes, ["mcp:tools", "mcp:read"]);
    for bad in ["", "two words", "quo\"te", "back\\slash", "é"] {
        let e = oauth().scopes([bad]).err().unwrap().to_string();
        assert!(e.contains("is not a scope token"), "{bad}: {e}");
    }
}
