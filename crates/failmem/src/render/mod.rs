//! The template engine: minijinja with failmem's syntax, filters and
//! limits, and the token budget.
//!
//! Record text reaches a template as data, never as template code. Each
//! render runs with minijinja's fuel and a cap on output bytes, so no
//! template can hang or flood the engine. The result is trimmed and never
//! exceeds the token budget: the caller says how many entries can be
//! dropped, the fewest drops that fit win, and if even the shortest render
//! is too long it is cut with a marker. What a template sees is decided by
//! its owner: the session's templates in `session::templates`, the retry
//! brief in `memory::brief`.

use crate::config::TemplateSource;
use crate::error::Error;
use crate::limits;
use crate::text::{cut_chars, estimate_tokens};
use minijinja::{Environment, Template, Value};

/// The marker ending a render that had to be cut to fit the budget.
pub const CUT_MARKER: &str = "\n[…]";

/// `clip(n)`: at most `n` characters, ending with `…` when cut.
fn clip(value: String, n: usize) -> String {
    cut_chars(&value, n)
}

pub(crate) fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(limits::RENDER_FUEL));
    // Trimmed block tags keep the templates readable; the defaults cannot fail to build.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.add_filter("clip", clip);
    env
}

pub(crate) fn template_error(name: &str, e: &minijinja::Error) -> String {
    let mut msg = format!("{name}: {}", e.kind());
    if let Some(line) = e.line() {
        msg.push_str(&format!(" at line {line}"));
    }
    if let Some(detail) = e.detail() {
        msg.push_str(&format!(": {detail}"));
    }
    msg
}

/// Checks that every host template compiles.
pub fn check_templates(templates: &[TemplateSource]) -> Result<(), Error> {
    let env = environment();
    for t in templates {
        env.template_from_str(&t.source)
            .map_err(|e| Error::InvalidTemplate(template_error(&t.name, &e)))?;
    }
    Ok(())
}

/// An `io::Write` that refuses to grow past a limit.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.buf.len() + data.len() > self.limit {
            return Err(std::io::Error::other("output limit reached"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Renders `template` with the context `context(drops)` gives for a number of
/// dropped entries, within `budget` tokens; `droppable` is how many entries
/// can go. `name` names the template in errors.
pub(crate) fn render_fitted(
    name: &str,
    template: &Template<'_, '_>,
    droppable: usize,
    budget: usize,
    context: impl Fn(usize) -> Value,
) -> Result<String, Error> {
    let render_with = |drop: usize| -> Result<String, Error> {
        let mut out = Bounded {
            buf: Vec::new(),
            limit: limits::MAX_RENDER_BYTES,
        };
        template
            .render_captured_to(context(drop), &mut out)
            .map(|_| ())
            .map_err(|e| {
                if out.buf.len() + 1 >= limits::MAX_RENDER_BYTES
                    || e.kind() == minijinja::ErrorKind::WriteFailure
                {
                    Error::RenderFailed(format!(
                        "{name}: the output exceeded {} bytes",
                        limits::MAX_RENDER_BYTES
                    ))
                } else {
                    Error::RenderFailed(template_error(name, &e))
                }
            })?;
        let text = String::from_utf8(out.buf)
            .map_err(|_| Error::RenderFailed(format!("{name}: output is not UTF-8")))?;
        Ok(text.trim().to_string())
    };
    fit(budget, droppable, render_with)
}

/// Finds the fewest drops whose render fits `budget` tokens (renders are
/// assumed to shrink as entries are dropped), cutting the shortest render
/// if nothing fits.
fn fit(
    budget: usize,
    droppable: usize,
    render: impl Fn(usize) -> Result<String, Error>,
) -> Result<String, Error> {
    let full = render(0)?;
    if estimate_tokens(&full) <= budget {
        return Ok(full);
    }
    let (mut lo, mut hi) = (1, droppable);
    let mut best: Option<String> = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let text = render(mid)?;
        if estimate_tokens(&text) <= budget {
            best = Some(text);
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    if let Some(text) = best {
        return Ok(text);
    }
    let shortest = if droppable > 0 {
        render(droppable)?
    } else {
        full
    };
    let keep = budget * 4 - CUT_MARKER.chars().count();
    let mut cut: String = shortest.chars().take(keep).collect();
    cut.push_str(CUT_MARKER);
    Ok(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_drops_the_fewest_entries() {
        let render = |d: usize| Ok("x".repeat(40 * (10 - d)));
        let out = fit(50, 10, render).unwrap();
        assert_eq!(out.len(), 200);
    }

    #[test]
    fn fit_cuts_when_nothing_fits() {
        let out = fit(10, 0, |_| Ok("y".repeat(500))).unwrap();
        assert!(estimate_tokens(&out) <= 10);
        assert!(out.ends_with(CUT_MARKER));
    }
}
