//! Read-only panels rendered from pure functions to HTML text.
//!
//! Why not `view!`: every reactive view node monomorphises a chunk of the framework, and the
//! result panels are large trees rebuilt on every input anyway. Building them as strings keeps
//! the wasm within the page budget, and makes them testable natively (`cargo test`), without a
//! browser. Inputs stay Leptos components. Everything user-visible goes through [`escape`].

pub mod breakdown;
pub mod export;
pub mod fixes;
pub mod paste;
pub mod snapshot;
pub mod timeline;

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A tiny builder: `el("p", &[("class", "x")], &escape(text))`.
pub fn el(tag: &str, attrs: &[(&str, &str)], inner: &str) -> String {
    let mut s = format!("<{tag}");
    for (k, v) in attrs {
        s.push(' ');
        s.push_str(k);
        s.push_str("=\"");
        s.push_str(&escape(v));
        s.push('"');
    }
    s.push('>');
    s.push_str(inner);
    s.push_str("</");
    s.push_str(tag);
    s.push('>');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_everything_that_could_break_out() {
        assert_eq!(escape("<b>&\"'"), "&lt;b&gt;&amp;&quot;&#39;");
        assert_eq!(
            el("p", &[("title", "a\"b")], "x"),
            "<p title=\"a&quot;b\">x</p>"
        );
    }
}
