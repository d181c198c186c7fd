//! Fingerprints: what makes two failures "identical".
//!
//! A fingerprint is FNV-1a (64 bit) over the tool, the category and the
//! failure's message with volatile tokens masked, written as 16 hex digits.

use crate::text::cut_bytes;
use regex_lite::Regex;
use std::sync::OnceLock;

/// Volatile tokens and what they are replaced with, applied in order.
const MASKS: &[(&str, &str)] = &[
    (
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        "<uuid>",
    ),
    (
        r"(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)(?:/[^\s:'`\x22)]*)?",
        "<tmp>",
    ),
    (
        r"(?i)[A-Z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp\\\S*",
        "<tmp>",
    ),
    (
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        "<time>",
    ),
    (r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<time>"),
    (r"\b0x[0-9a-fA-F]+\b", "<addr>"),
    (r"\b[0-9a-f]{12,}\b", "<hex>"),
    (r"(?i)\b(pid|process|thread|tid)([ :=#]+)\d+", "$1$2<n>"),
    (
        r"(?i)\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds|m|min|mins|minutes|h|hrs|hours)\b",
        "<duration>",
    ),
    (r"\b\d+(?:\.\d+)?\s?(?:B|KB|KiB|MB|MiB|GB|GiB)\b", "<size>"),
];

fn compiled() -> &'static [(Regex, &'static str)] {
    static CELL: OnceLock<Vec<(Regex, &'static str)>> = OnceLock::new();
    CELL.get_or_init(|| {
        MASKS
            .iter()
            .map(|(p, r)| {
                let re = Regex::new(p).unwrap_or_else(|e| unreachable!("built-in mask {p}: {e}"));
                (re, *r)
            })
            .collect()
    })
}

/// Masks volatile tokens in a message and squashes its whitespace.
pub fn mask(message: &str) -> String {
    let mut s = crate::text::squash_whitespace(cut_bytes(
        message,
        crate::limits::MAX_FINGERPRINT_SOURCE_BYTES,
    ));
    for (re, replacement) in compiled() {
        if let std::borrow::Cow::Owned(o) = re.replace_all(&s, *replacement) {
            s = o;
        }
    }
    s
}

/// FNV-1a, 64 bit, over parts separated by 0x1f.
pub fn fnv1a(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hash ^= 0x1f;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for b in part.bytes() {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// The fingerprint of a failure: 16 lowercase hex digits.
pub fn fingerprint(tool: &str, category: &str, message: &str) -> String {
    format!("{:016x}", fnv1a(&[tool, category, &mask(message)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_volatile_tokens() {
        let a = mask(
            "error at 0x7ffd1234 in /tmp/.tmpAbC12/x.rs pid 4242 after 1.52s at 2026-11-22T03:47:56Z",
        );
        let b = mask(
            "error at 0x7ffd9999 in /tmp/.tmpZZZ99/x.rs pid 17 after 12ms at 2026-01-02T00:00:00Z",
        );
        assert_eq!(a, b);
        assert!(a.contains("<addr>") && a.contains("<tmp>") && a.contains("pid <n>"));
    }

    #[test]
    fn keeps_meaningful_differences() {
        assert_ne!(
            fingerprint("bash", "test-failure", "test a failed"),
            fingerprint("bash", "test-failure", "test b failed")
        );
        assert_ne!(
            fingerprint("bash", "runtime", "x"),
            fingerprint("sh", "runtime", "x")
        );
        assert_eq!(fingerprint("bash", "runtime", "x").len(), 16);
    }
}
