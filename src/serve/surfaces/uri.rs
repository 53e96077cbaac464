//! Whether a URI is one a resource template (RFC 6570) can make: how the
//! gateway finds the upstream a `resources/read` of an unlisted URI goes to.
//!
//! A match, not an expansion: each `{…}` expression stands for any run of
//! the characters its operator may produce (none or `.`/`;`: no `/`, `?`
//! or `#`; `/`: no `?` or `#`; `+`, `#`, `?`, `&`: anything), led by the
//! operator's character where it has one, or for nothing (an undefined
//! variable). Linear in the URI per part, so a hostile template costs at
//! most its parts times the URI's length.

/// The most parts (literals and expressions) of a template the gateway
/// matches; a longer template matches nothing.
const MAX_PARTS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Vec<char>),
    /// An expression: its leading character, if any, and whether `/` may
    /// be in it and whether `?` and `#` may.
    Expr {
        lead: Option<char>,
        slash: bool,
        query: bool,
    },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::serve) struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// `None` for a template that does not parse (an unclosed `{`) or has
    /// too many parts.
    pub(in crate::serve) fn parse(template: &str) -> Option<UriTemplate> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            if let Some(inner) = rest.strip_prefix('{') {
                let end = inner.find('}')?;
                parts.push(expr(&inner[..end]));
                rest = &inner[end + 1..];
            } else {
                let end = rest.find('{').unwrap_or(rest.len());
                parts.push(Part::Literal(rest[..end].chars().collect()));
                rest = &rest[end..];
            }
            if parts.len() > MAX_PARTS {
                return None;
            }
        }
        Some(UriTemplate { parts })
    }

    /// Whether the template can make `uri`.
    pub(in crate::serve) fn matches(&self, uri: &str) -> bool {
        let u: Vec<char> = uri.chars().collect();
        let mut reach = vec![false; u.len() + 1];
        reach[0] = true;
        for part in &self.parts {
            reach = match part {
                Part::Literal(l) => literal(&reach, &u, l),
                Part::Expr { lead, slash, query } => run(&reach, &u, *lead, *slash, *query),
            };
            if !reach.contains(&true) {
                return false;
            }
        }
        reach[u.len()]
    }
}

fn expr(body: &str) -> Part {
    match body.chars().next() {
        Some('+') => Part::Expr {
            lead: None,
            slash: true,
            query: true,
        },
        Some(c @ ('#' | '?' | '&')) => Part::Expr {
            lead: Some(c),
            slash: true,
            query: true,
        },
        Some('/') => Part::Expr {
            lead: Some('/'),
            slash: true,
            query: false,
        },
        Some(c @ ('.' | ';')) => Part::Expr {
            lead: Some(c),
            slash: false,
            query: false,
        },
        _ => Part::Expr {
            lead: None,
            slash: false,
            query: false,
        },
    }
}

/// The positions after `l` from each reachable position.
fn literal(reach: &[bool], u: &[char], l: &[char]) -> Vec<bool> {
    let mut next = vec![false; reach.len()];
    for (p, _) in reach.iter().enumerate().filter(|(_, r)| **r) {
        if u.len() - p >= l.len() && u[p..p + l.len()] == *l {
            next[p + l.len()] = true;
        }
    }
    next
}

/// The positions after an expression from each reachable position: the
/// same one (nothing), or past its lead and any run of allowed characters.
fn run(reach: &[bool], u: &[char], lead: Option<char>, slash: bool, query: bool) -> Vec<bool> {
    let allowed = |c: char| match c {
        '/' => slash,
        '?' | '#' => query,
        _ => true,
    };
    let mut next = reach.to_vec();
    let mut active = false;
    for q in 0..=u.len() {
        let begins = match lead {
            None => reach[q],
            Some(c) => q > 0 && reach[q - 1] && u[q - 1] == c,
        };
        active |= begins;
        if active {
            next[q] = true;
        }
        if q < u.len() && !allowed(u[q]) {
            active = false;
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(template: &str, uri: &str) -> bool {
        UriTemplate::parse(template).unwrap().matches(uri)
    }

    #[test]
    fn simple_expressions_stay_within_a_segment() {
        assert!(m("book://a/chapters/{n}", "book://a/chapters/3"));
        assert!(m("book://a/chapters/{n}", "book://a/chapters/"));
        assert!(!m("book://a/chapters/{n}", "book://a/chapters/3/x"));
        assert!(!m("book://a/chapters/{n}", "book://b/chapters/3"));
        assert!(m("file:///{+path}", "file:///a/b/c.txt"));
        assert!(m("db://{table}/{id}{?fields}", "db://users/7?fields=a,b"));
        assert!(!m("db://{table}/{id}", "db://users/7?x"));
        assert!(m("x://{/seg}", "x:///a/b"));
    }

    #[test]
    fn bad_or_oversized_templates_do_not_parse() {
        assert_eq!(UriTemplate::parse("a{b"), None);
        assert_eq!(UriTemplate::parse(&"{x}/".repeat(40)), None);
        assert!(
            UriTemplate::parse("plain://uri")
                .unwrap()
                .matches("plain://uri")
        );
    }
}
