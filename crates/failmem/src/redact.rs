//! Secret redaction. Every text the engine stores, renders or snapshots
//! passes through [`redact`] first.
//!
//! Each pattern has literal needles, one of which every match contains, and
//! a [`Reach`]: how far past the needle's line a match can run. The regex
//! runs only over the spans around needle lines, so clean text costs a few
//! substring scans and long text costs little more than its needle lines.

use crate::needles::{NeedleSet, Reach, spans};
use regex_lite::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

/// One secret format.
struct SecretPattern {
    /// Short name shown in the marker: `[REDACTED:<kind>]`.
    kind: &'static str,
    /// Substrings (ASCII, matched case-insensitively) of which one must occur.
    needles: &'static [&'static str],
    /// How far past its needle's line a match can reach: the pattern runs
    /// only over those spans (see [`spans`]).
    reach: Reach,
    /// The pattern. Groups `keep` and `tail`, when present, are kept in front
    /// of and behind the marker.
    pattern: &'static str,
    /// A check on the secret itself (the match without `keep` and `tail`):
    /// a match it refuses is left alone. For the patterns that key on a word
    /// (`bearer`, `password=`) rather than on a provider's prefix.
    check: Option<fn(&str) -> bool>,
    /// A cheap test a span must pass to hold a match at all; spans it
    /// refuses are not searched. It may pass spans without a match, never
    /// refuse one with a match.
    gate: Option<fn(&str) -> bool>,
}

/// The secret formats, most specific first.
const PATTERNS: &[SecretPattern] = &[
    SecretPattern {
        kind: "private-key",
        reach: Reach::End,
        needles: &["-----begin"],
        check: None,
        gate: None,
        pattern: r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?s:.*?)(-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\z)",
    },
    SecretPattern {
        kind: "anthropic-key",
        reach: Reach::Line,
        needles: &["sk-ant-"],
        check: None,
        gate: None,
        pattern: r"sk-ant-[A-Za-z0-9_\-]{16,}",
    },
    SecretPattern {
        kind: "openai-key",
        reach: Reach::Line,
        needles: &["sk-"],
        check: None,
        gate: None,
        pattern: r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}",
    },
    SecretPattern {
        kind: "stripe-key",
        reach: Reach::Line,
        needles: &["sk_live_", "rk_live_", "sk_test_", "rk_test_"],
        check: None,
        gate: None,
        pattern: r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    },
    SecretPattern {
        kind: "aws-access-key",
        reach: Reach::Line,
        needles: &["akia", "asia", "abia", "acca"],
        check: None,
        gate: None,
        pattern: r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    },
    SecretPattern {
        kind: "aws-secret",
        reach: Reach::NonBlankLines(2),
        needles: &["aws"],
        check: None,
        gate: None,
        pattern: r#"(?i)(?P<keep>aws[_\-.]?secret[_\-.]?(?:access[_\-.]?)?key(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)[A-Za-z0-9/+=]{40}"#,
    },
    SecretPattern {
        kind: "github-token",
        reach: Reach::Line,
        needles: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        check: None,
        gate: None,
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    },
    SecretPattern {
        kind: "gitlab-token",
        reach: Reach::Line,
        needles: &["glpat-", "gldt-", "glrt-"],
        check: None,
        gate: None,
        pattern: r"\bgl(?:pat|dt|rt)-[A-Za-z0-9_\-]{20,}",
    },
    SecretPattern {
        kind: "slack-token",
        reach: Reach::Line,
        needles: &["xox"],
        check: None,
        gate: None,
        pattern: r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    },
    SecretPattern {
        kind: "slack-webhook",
        reach: Reach::Line,
        needles: &["hooks.slack.com"],
        check: None,
        gate: None,
        pattern: r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+",
    },
    SecretPattern {
        kind: "google-api-key",
        reach: Reach::Line,
        needles: &["aiza"],
        check: None,
        gate: None,
        pattern: r"\bAIza[0-9A-Za-z_\-]{35}",
    },
    SecretPattern {
        kind: "huggingface-token",
        reach: Reach::Line,
        needles: &["hf_"],
        check: None,
        gate: None,
        pattern: r"\bhf_[A-Za-z0-9]{30,}",
    },
    SecretPattern {
        kind: "npm-token",
        reach: Reach::Line,
        needles: &["npm_"],
        check: None,
        gate: None,
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
    },
    SecretPattern {
        // Keys whose provider prefix names them: Supabase, Groq, xAI,
        // Perplexity, Replicate, DigitalOcean, Shopify, PyPI, SendGrid,
        // Linear, Notion, Google OAuth client secrets, Grafana, Sentry,
        // Doppler.
        kind: "service-token",
        reach: Reach::Line,
        needles: &[
            "sb_secret_",
            "gsk_",
            "xai-",
            "pplx-",
            "r8_",
            "dop_v1_",
            "shpat_",
            "shpss_",
            "shpca_",
            "shppa_",
            "pypi-age",
            "sg.",
            "lin_api_",
            "ntn_",
            "gocspx-",
            "glsa_",
            "sntrys_",
            "dp.st.",
            "dp.ct.",
            "dp.sa.",
            "dp.scim.",
            "dp.audit.",
        ],
        check: None,
        gate: None,
        pattern: r"\b(?:sb_secret_[A-Za-z0-9_\-]{20,}|gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|dop_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|pypi-AgE[A-Za-z0-9_\-]{50,}|SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}|lin_api_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}|GOCSPX-[A-Za-z0-9_\-]{28}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|sntrys_[A-Za-z0-9+/=_\-]{40,}|dp\.(?:st|ct|sa|scim|audit)\.[A-Za-z0-9_\-]{40,})",
    },
    SecretPattern {
        kind: "jwt",
        reach: Reach::Line,
        needles: &["eyj"],
        check: None,
        gate: None,
        pattern: r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    },
    SecretPattern {
        kind: "bearer",
        reach: Reach::NonBlankLines(1),
        needles: &["bearer", "basic", "token"],
        check: Some(looks_random),
        gate: None,
        pattern: r"(?i)(?P<keep>\b(?:bearer|basic|token)\s+)[A-Za-z0-9_\-.~+/]{12,}=*",
    },
    SecretPattern {
        kind: "url-password",
        reach: Reach::Line,
        needles: &["://"],
        check: None,
        gate: None,
        pattern: r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]*:)[^@\s/]+(?P<tail>@)",
    },
    SecretPattern {
        kind: "assignment",
        reach: Reach::NonBlankLines(2),
        needles: ASSIGNED_NAME_ENDINGS,
        check: Some(is_not_a_reference),
        gate: Some(has_assignment),
        pattern: r#"(?i)(?P<keep>\b[A-Z0-9_.\-]*(?:api[_\-]?key|access[_\-]?key|secret[_\-]?key|private[_\-]?key|_key|_token|token|_secret|secret|password|passwd|_pwd|credentials?)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?)[^\s"'\\,;}{]{6,}"#,
    },
];

/// The endings of the names the `assignment` pattern looks for: its needles,
/// and what [`has_assignment`] looks for before a `:` or `=`.
const ASSIGNED_NAME_ENDINGS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "credential",
    "credentials",
];

/// Whether `text` has what every `assignment` match has: a `:` or `=`
/// preceded by whitespace, then optionally a quote (itself optionally
/// escaped), then a name ending in one of [`ASSIGNED_NAME_ENDINGS`].
fn has_assignment(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &b)| {
        if b != b':' && b != b'=' {
            return false;
        }
        let mut end = at;
        while end > 0 && matches!(bytes[end - 1], b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') {
            end -= 1;
        }
        if end > 0 && matches!(bytes[end - 1], b'"' | b'\'') {
            end -= 1;
            if end > 0 && bytes[end - 1] == b'\\' {
                end -= 1;
            }
        }
        let name = &bytes[..end];
        ASSIGNED_NAME_ENDINGS.iter().any(|e| {
            name.len() >= e.len() && name[name.len() - e.len()..].eq_ignore_ascii_case(e.as_bytes())
        })
    })
}

/// Whether a credential after `bearer`, `basic` or `token` looks generated:
/// letters and digits mixed (prose such as "basic implementation" is not).
fn looks_random(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_digit()) && value.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether the value of a `*_KEY=`-style assignment is a literal rather than
/// code that refers to one: `os.environ[`, `getenv(`, `$VAR`,
/// `process.env.JWT_SECRET`, or a lowercase identifier such as `api_key` or
/// `created_at` (`sort_key: created_at`).
fn is_not_a_reference(value: &str) -> bool {
    if value.starts_with('$') || value.contains(['(', ')', '[', ']']) {
        return false;
    }
    let identifier_path = value.split('.').all(|seg| {
        seg.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    let first = value.split('.').next().unwrap_or("");
    let lower_snake = first
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    !(identifier_path && lower_snake && (value.contains('_') || value.contains('.')))
}

/// The needles of every secret pattern, in table order.
fn secret_needles() -> &'static NeedleSet {
    static CELL: OnceLock<NeedleSet> = OnceLock::new();
    CELL.get_or_init(|| NeedleSet::new(&PATTERNS.iter().map(|p| p.needles).collect::<Vec<_>>()))
}

/// Secret pattern `i`'s regex, compiled the first time its needles are found.
fn secret_regex(i: usize) -> &'static Regex {
    static TABLE: crate::lazy_regex::Table = crate::lazy_regex::Table::new();
    TABLE.get(PATTERNS.len(), i, || PATTERNS[i].pattern)
}

/// Replaces every secret in `text` with `[REDACTED:<kind>]`.
///
/// Borrowed when nothing was found. Ordinary text (git hashes, UUIDs, base64
/// fixtures) is left alone: every pattern needs a provider prefix or a
/// secret-like name next to the value. A secret spelled with JSON `\uXXXX`
/// escapes (`\u0073k-ant-…`, which is `sk-ant-…` once the args are parsed)
/// is found too: then the text comes back with those escapes decoded.
pub fn redact(text: &str) -> Cow<'_, str> {
    let plain = redact_plain(text);
    if let Some(decoded) = decode_ascii_escapes(text) {
        let redacted = redact_plain(&decoded).into_owned();
        if redacted != decoded {
            return Cow::Owned(redacted);
        }
    }
    plain
}

/// `text` with every JSON escape `\uXXXX` of an ASCII letter, digit or one of
/// `-_.+/=` decoded, or `None` when it has none. Decoding them changes no
/// JSON string's value.
fn decode_ascii_escapes(text: &str) -> Option<String> {
    if !text.contains("\\u") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6);
        let decoded = hex
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32)
            .filter(|c| c.is_ascii_alphanumeric() || "-_.+/=".contains(*c));
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 6..];
                changed = true;
            }
            None => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Runs every pattern over `text`, each over the spans its needles allow.
fn redact_plain(text: &str) -> Cow<'_, str> {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut lines = secret_needles().lines(text);
    for (i, p) in PATTERNS.iter().enumerate() {
        if lines[i].is_empty() {
            continue;
        }
        if let Some(out) = replace_in_spans(secret_regex(i), p, &current, &lines[i]) {
            lines = secret_needles().lines(&out);
            current = Cow::Owned(out);
        }
    }
    current
}

/// `text` with every match of `p` replaced by its marker, searching only
/// the spans its needle `lines` allow; `None` when nothing matched.
fn replace_in_spans(
    re: &Regex,
    p: &SecretPattern,
    text: &str,
    lines: &[Range<usize>],
) -> Option<String> {
    let mut out = String::new();
    let mut done = 0;
    let mut changed = false;
    for span in spans(text, lines, p.reach) {
        if p.gate.is_some_and(|gate| !gate(&text[span.clone()])) {
            continue;
        }
        if let Cow::Owned(r) = replace_all(re, p, &text[span.clone()]) {
            out.push_str(&text[done..span.start]);
            out.push_str(&r);
            done = span.end;
            changed = true;
        }
    }
    changed.then(|| {
        out.push_str(&text[done..]);
        out
    })
}

/// `text` with every match of `p` replaced by its marker.
fn replace_all<'t>(re: &Regex, p: &SecretPattern, text: &'t str) -> Cow<'t, str> {
    re.replace_all(text, |caps: &regex_lite::Captures<'_>| {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        let keep = caps.name("keep").map_or("", |m| m.as_str());
        let tail = caps.name("tail").map_or("", |m| m.as_str());
        let secret = &whole[keep.len()..whole.len() - tail.len()];
        if p.check.is_some_and(|check| !check(secret)) {
            return whole.to_string();
        }
        format!("{keep}[REDACTED:{}]{tail}", p.kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(s: &str) -> String {
        redact(s).into_owned()
    }

    #[test]
    fn redacts_provider_keys() {
        let cases = [
            "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "glpat-abcdefghijklmnopqrst",
            "xoxb-123456789012-abcdefghijkl",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ];
        for secret in cases {
            let out = redacted(&format!("token is {secret} here"));
            assert!(!out.contains(secret), "{secret} leaked: {out}");
            assert!(out.contains("[REDACTED:"), "{out}");
        }
    }

    #[test]
    fn redacts_assignments_headers_urls_and_keys() {
        let text = "OPENAI_API_KEY=abc123def456ghi\nAuthorization: Bearer abcdef123456789xyz\n\
                    postgres://admin:hunter2secret@db:5432/app\n\
                    -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nafter";
        let out = redacted(text);
        for secret in [
            "abc123def456ghi",
            "abcdef123456789xyz",
            "hunter2secret",
            "MIIEow",
        ] {
            assert!(!out.contains(secret), "{secret} leaked: {out}");
        }
        assert!(out.contains("OPENAI_API_KEY=[REDACTED:"));
        assert!(out.contains("postgres://admin:[REDACTED:url-password]@db:5432/app"));
        assert!(out.ends_with("after"));
    }

    /// Every text of the secrets corpus and of the outcome corpus, whole
    /// and line by line.
    fn corpus_texts() -> Vec<String> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../conformance");
        let mut texts = Vec::new();
        for dir in ["secrets", "corpus"] {
            let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path).unwrap();
                texts.extend(text.lines().map(str::to_string));
                texts.push(text);
            }
        }
        texts
    }

    #[test]
    fn searching_needle_spans_finds_what_searching_everything_finds() {
        let texts = corpus_texts();
        assert!(texts.len() > 500, "{} texts", texts.len());
        let mut replaced = 0;
        for text in &texts {
            let lines = secret_needles().lines(text);
            for (i, p) in PATTERNS.iter().enumerate() {
                let re = secret_regex(i);
                let whole = replace_all(re, p, text);
                let spans = replace_in_spans(re, p, text, &lines[i]);
                let spans = spans.as_deref().unwrap_or(text);
                assert_eq!(spans, whole, "{} differs on {text:?}", p.kind);
                replaced += usize::from(whole != text.as_str());
            }
        }
        assert!(
            replaced >= 10,
            "only {replaced} replacements: the corpus lost its secrets"
        );
    }

    #[test]
    fn the_assignment_gate_passes_every_assignment_match() {
        let i = PATTERNS
            .iter()
            .position(|p| p.kind == "assignment")
            .unwrap();
        let (re, p) = (secret_regex(i), &PATTERNS[i]);
        let gate = p.gate.unwrap();
        let mut matched = 0;
        for name in [
            "API_KEY",
            "x.secret",
            "Password",
            "db_pwd",
            "CREDENTIALS",
            "token",
            "ACCESS-KEY",
        ] {
            for quote in ["", "\"", "'", "\\\"", "\\'"] {
                for space in ["", " ", "\t ", "\n\n  "] {
                    for sep in [":", "="] {
                        let text = format!("{name}{quote}{space}{sep}{space}{quote}hunter2hunter2");
                        if re.is_match(&text) {
                            matched += 1;
                            assert!(gate(&text), "{text:?}");
                        }
                    }
                }
            }
        }
        assert!(matched > 200, "{matched}");
        for text in ["press any key to go on", "error: the key is missing", "a=b"] {
            assert!(!gate(text), "{text:?}");
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let text = "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\n\
                    test_user_550e8400-e29b-41d4-a716-446655440000 ok\n\
                    fixture: aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ=\n\
                    error: the key `name` is missing\nmonkey: banana\n\
                    https://github.com/org/repo/blob/main/src/lib.rs";
        assert_eq!(redacted(text), text);
    }
}
