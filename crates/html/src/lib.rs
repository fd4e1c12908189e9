//! HTML as text, escaped: what the page's result panels (src/html) and the snapshot worker's view
//! (crates/snapshot-web) are built from, natively testable, without a framework's weight.

pub mod chart;

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
