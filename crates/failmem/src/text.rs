//! Small, allocation-light text helpers: bounded cuts at character
//! boundaries, head-and-tail truncation, ANSI stripping and token estimates.

/// The largest index `<= at` that is a char boundary of `s`.
pub fn floor_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest index `>= at` that is a char boundary of `s`.
pub fn ceil_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The first `max` bytes of `s`, cut back to a char boundary.
pub fn cut_bytes(s: &str, max: usize) -> &str {
    &s[..floor_boundary(s, max)]
}

/// Keeps at most `max_chars` characters, ending with `…` when cut.
pub fn cut_chars(s: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    match s.char_indices().nth(max_chars) {
        None => s.to_string(),
        Some(_) => {
            let end = s
                .char_indices()
                .nth(max_chars - 1)
                .map_or(s.len(), |(i, _)| i);
            let mut out = s[..end].trim_end().to_string();
            out.push('…');
            out
        }
    }
}

/// Removes ANSI escape sequences (colours, cursor moves) and carriage-return
/// progress redraws, so patterns see the text a person would.
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\u{1b}') && !s.contains('\r') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    // CSI: parameters and intermediates, then one final byte in @..~.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    // OSC: up to BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            chars.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The documented token estimate: one token per four characters, rounded up.
pub fn estimate_tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

/// Collapses runs of whitespace to one space and trims the ends.
pub fn squash_whitespace(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_chars_marks_the_cut() {
        assert_eq!(cut_chars("abc", 3), "abc");
        assert_eq!(cut_chars("abcd", 3), "ab…");
        assert_eq!(cut_chars("ééééé", 4).chars().count(), 4);
        assert_eq!(cut_chars("abc", 0), "");
    }

    #[test]
    fn strips_ansi_and_progress_redraws() {
        let s = "\u{1b}[1m\u{1b}[31merror\u{1b}[0m: x\r\nnext\rredraw";
        assert_eq!(strip_ansi(s), "error: x\nnext\nredraw");
        assert!(matches!(strip_ansi("plain"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn token_estimate_rounds_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
    }
}
