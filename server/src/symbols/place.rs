//! A symbol edit made exact: the span of the file's text it replaces (or the place it inserts at) and
//! the text it puts there, from the symbol's range as the language server gave it.
//!
//! The rules, which keep the file's blank lines and indentation around the symbol:
//! - `replace: "whole"`: the symbol's range. A symbol alone on its lines is replaced as whole lines
//!   (its indentation included, its last line break not), so one line break at the end of new_string
//!   is dropped; an empty new_string removes those lines.
//! - `replace: "body"`: between the braces of the block that ends the symbol (`braces.rs`). A body on
//!   lines of its own is replaced as whole lines, the lines of `{` and `}` kept; a body on the line of
//!   its braces is replaced between them, the spaces next to them kept.
//! - `insert: "before"`: new lines before the symbol's first line, above the comments and attributes
//!   directly over it (`//`, `/*`, `*`, `#[`, `@` lines), which belong to it.
//! - `insert: "after"`: new lines after the symbol's last line.
//! - Indentation: new_string is taken as written when its first non-blank line starts with the
//!   indentation the place has (the symbol's line; a body's first line); written from column 0, each
//!   of its non-blank lines is given that indentation; any other indentation is refused, naming both
//!   (re-indenting it would be a guess). A place inside a line (a symbol that shares its line, a body
//!   on its braces' line) takes new_string as written.

use super::braces::{self, NoBody};
use super::outline::Found;
use crate::engine;
use crate::engine::{Span, Spans, SymbolAction};
use crate::refusal::{Kind, Refusal};
use crate::result::plural;

/// The file's text, with its lines.
struct Lines<'t> {
    text: &'t str,
}

impl Lines<'_> {
    fn line_start(&self, p: usize) -> usize {
        self.text[..p].rfind('\n').map_or(0, |i| i + 1)
    }

    /// Where the line holding `p` ends, before its line break.
    fn content_end(&self, p: usize) -> usize {
        let end = self.text[p..].find('\n').map_or(self.text.len(), |i| p + i);
        if end > 0 && self.text.as_bytes()[end - 1] == b'\r' && end < self.text.len() {
            end - 1
        } else {
            end
        }
    }

    /// Past the line break of the line holding `p` (the text's end on its last line).
    fn next_line(&self, p: usize) -> usize {
        self.text[p..]
            .find('\n')
            .map_or(self.text.len(), |i| p + i + 1)
    }

    fn begins_line(&self, p: usize) -> bool {
        self.text[self.line_start(p)..p]
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
    }

    fn ends_line(&self, p: usize) -> bool {
        self.text[p..self.content_end(p)].trim().is_empty()
    }

    fn indent(&self, p: usize) -> &str {
        let s = self.line_start(p);
        let line = &self.text[s..self.content_end(s)];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }
}

/// The span a symbol edit replaces and its text.
pub fn place(
    text: &str,
    extension: &str,
    found: &Found<'_>,
    action: SymbolAction,
    new_string: &str,
) -> Result<Spans, Refusal> {
    let lines = Lines { text };
    let s = found.symbol;
    // A range a server ends with the next line's start, or starts on blank space, means the symbol's text.
    let raw = &text[s.range.0..s.range.1];
    let start = s.range.0 + (raw.len() - raw.trim_start().len());
    let end = start + raw.trim().len();
    let what = found.describe();
    let span = |start: usize, end: usize, text: String| Span { start, end, text };
    let (verb, place) = match action {
        SymbolAction::Whole if lines.begins_line(start) && lines.ends_line(end) => {
            whole_lines(&lines, start, end, new_string, &what)?
        }
        SymbolAction::Whole => ("Replaced", span(start, end, new_string.to_string())),
        SymbolAction::Body => {
            let (open, close) = braces::body(text, extension, start, s.selection.1, end)
                .map_err(|why| no_body(&what, extension, why))?;
            (
                "Replaced the body of",
                body(&lines, open, close, new_string, &what)?,
            )
        }
        SymbolAction::Before if lines.begins_line(start) => {
            let at = attached_above(&lines, lines.line_start(start));
            (
                "Inserted before",
                span(
                    at,
                    at,
                    with_break(&reindent(new_string, lines.indent(start), &what)?),
                ),
            )
        }
        SymbolAction::Before => (
            "Inserted before",
            span(start, start, new_string.to_string()),
        ),
        SymbolAction::After if lines.ends_line(end) => (
            "Inserted after",
            lines_after(&lines, start, end, new_string, &what)?,
        ),
        SymbolAction::After => ("Inserted after", span(end, end, new_string.to_string())),
    };
    let what = match action {
        SymbolAction::Body => format!("the body of {what}"),
        _ => what,
    };
    let summary = match (action, verb) {
        (SymbolAction::Body, _) => format!("Replaced {what}"),
        _ => format!("{verb} {what}"),
    };
    Ok(Spans {
        spans: vec![place],
        summary,
        what,
        numbered: true,
    })
}

/// `replace: "whole"` of a symbol alone on its lines (`start..end`): the lines replaced, their last
/// break kept, or removed with it for an empty new_string; with the verb that says which.
fn whole_lines(
    lines: &Lines<'_>,
    start: usize,
    end: usize,
    new_string: &str,
    what: &str,
) -> Result<(&'static str, Span), Refusal> {
    let first = lines.line_start(start);
    let indent = lines.indent(start);
    if new_string.is_empty() {
        // The symbol's lines go, blank lines around them stay.
        return Ok((
            "Removed",
            Span {
                start: first,
                end: lines.next_line(end),
                text: String::new(),
            },
        ));
    }
    let new = strip_break(new_string);
    Ok((
        "Replaced",
        Span {
            start: first,
            end: lines.content_end(end),
            text: reindent(new, indent, what)?,
        },
    ))
}

/// `replace: "body"` between the braces at `open` and `close`: as whole lines when the body has
/// lines of its own (new_string given the indentation of its first line), else between the spaces
/// next to the braces.
fn body(
    lines: &Lines<'_>,
    open: usize,
    close: usize,
    new_string: &str,
    what: &str,
) -> Result<Span, Refusal> {
    let text = lines.text;
    let inner_start = if lines.ends_line(open + 1) {
        lines.next_line(open)
    } else {
        open + 1
    };
    let on_own_lines = inner_start > open + 1
        && lines.begins_line(close)
        && inner_start <= lines.line_start(close);
    if !on_own_lines {
        let inner = &text[open + 1..close];
        let a = open + 1 + (inner.len() - inner.trim_start().len());
        let b = (open + 1 + inner.trim_end().len()).max(a);
        return Ok(Span {
            start: a,
            end: b,
            text: new_string.to_string(),
        });
    }
    let inner_end = lines.line_start(close);
    let body = &text[inner_start..inner_end];
    let new = with_break(new_string);
    let new = match body.lines().find(|l| !l.trim().is_empty()) {
        Some(first) => reindent(
            &new,
            &first[..first.len() - first.trim_start_matches([' ', '\t']).len()],
            what,
        )?,
        // An empty body shows no indentation to follow.
        None => new,
    };
    Ok(Span {
        start: inner_start,
        end: inner_end,
        text: new,
    })
}

/// `insert: "after"` a symbol (`start..end`) that ends its line: new lines after its last line, in
/// its indentation when it begins its line.
fn lines_after(
    lines: &Lines<'_>,
    start: usize,
    end: usize,
    new_string: &str,
    what: &str,
) -> Result<Span, Refusal> {
    let text = lines.text;
    let at = lines.next_line(end);
    let indent = if lines.begins_line(start) {
        lines.indent(start)
    } else {
        ""
    };
    let mut new = with_break(&reindent(new_string, indent, what)?);
    if at == text.len() && !text.ends_with('\n') {
        // The file's last line has no break: the new lines start on one of their own.
        new.insert(0, '\n');
        new.pop();
    }
    Ok(Span {
        start: at,
        end: at,
        text: new,
    })
}

/// The refusal for a body the file's delimiters do not settle.
fn no_body(what: &str, extension: &str, why: NoBody) -> Refusal {
    let reason = match why {
        NoBody::Language => format!(
            "multiedit finds a body by the file's braces, in {} files; .{extension} files are not among them",
            braces::LANGUAGES
        ),
        NoBody::Text(why) => format!("its braces do not settle it: {why}"),
    };
    Refusal::new(Kind::NoBody, format!("Cannot find the body of {what}: {reason}. Nothing was changed."))
        .with_hint(Some("Replace the whole symbol instead (replace: \"whole\", with its declaration in new_string), or address the text with old_string.".into()))
}

/// The lines directly above `line` (no blank line between) that belong to the symbol: comments, doc
/// comments, attributes and decorators. Returns where the first of them starts.
fn attached_above(lines: &Lines<'_>, line: usize) -> usize {
    let mut at = line;
    while at > 0 {
        let prev = lines.line_start(at - 1);
        let t = lines.text[prev..at].trim();
        let attached = ["//", "/*", "*", "#[", "@"]
            .iter()
            .any(|p| t.starts_with(p));
        if t.is_empty() || !attached {
            break;
        }
        at = prev;
    }
    at
}

fn strip_break(s: &str) -> &str {
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

fn with_break(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

/// new_string at the place's indentation: as written when its first non-blank line has it, from
/// column 0 each non-blank line given it, refused otherwise.
fn reindent(new: &str, indent: &str, what: &str) -> Result<String, Refusal> {
    let Some(first) = new.lines().find(|l| !l.trim().is_empty()) else {
        return Ok(new.to_string());
    };
    let has = &first[..first.len() - first.trim_start_matches([' ', '\t']).len()];
    if has == indent {
        return Ok(new.to_string());
    }
    if !has.is_empty() {
        return Err(Refusal::of(
            engine::Kind::InvalidPlan,
            format!(
                "new_string starts indented with {}, but {what} is indented with {}. Nothing was changed. Write new_string \
                 at that indentation, or from column 0 (multiedit then indents each line of it with {}).",
                spaces(has),
                spaces(indent),
                spaces(indent)
            ),
        ));
    }
    Ok(new
        .split_inclusive('\n')
        .map(|l| {
            if l.trim().is_empty() {
                l.to_string()
            } else {
                format!("{indent}{l}")
            }
        })
        .collect())
}

/// "4 spaces", "1 tab", "nothing".
fn spaces(ws: &str) -> String {
    if ws.is_empty() {
        return "nothing".into();
    }
    let tabs = ws.bytes().filter(|&b| b == b'\t').count();
    let sp = ws.len() - tabs;
    match (tabs, sp) {
        (0, s) => plural(s, "space"),
        (t, 0) => plural(t, "tab"),
        (t, s) => format!("{} and {}", plural(t, "tab"), plural(s, "space")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::NamePath;
    use crate::protocol::ext::ReportedSymbol;
    use crate::protocol::positions::Encoding;
    use crate::symbols::outline::{self, Symbol};
    use ropey::Rope;
    use tower_lsp_server::ls_types::{Position, Range};

    const CALC: &str = "\
export class Calculator {
  total = 0;

  /** Adds. */
  add(a: number, b: number): number {
    return a + b;
  }

  sub(a: number, b: number) { return a - b; }
}
";

    /// The symbols as VS Code's TypeScript server spans them (0-based lines, UTF-16 columns).
    fn symbols(rope: &Rope) -> Vec<Symbol> {
        let r = |l0, c0, l1, c1| Range::new(Position::new(l0, c0), Position::new(l1, c1));
        let method = |name: &str, range, sel| ReportedSymbol {
            name: name.into(),
            detail: None,
            kind: 6,
            range,
            selection_range: sel,
            children: vec![],
        };
        let reported = vec![ReportedSymbol {
            name: "Calculator".into(),
            detail: None,
            kind: 5,
            range: r(0, 0, 9, 1),
            selection_range: r(0, 13, 0, 23),
            children: vec![
                method("add", r(4, 2, 6, 3), r(4, 2, 4, 5)),
                method("sub", r(8, 2, 8, 45), r(8, 2, 8, 5)),
            ],
        }];
        outline::read(&reported, rope, Encoding::Utf16).unwrap()
    }

    fn apply(action: SymbolAction, name: &str, new: &str) -> Result<(String, String), Refusal> {
        let rope = Rope::from_str(CALC);
        let symbols = symbols(&rope);
        let found = outline::find(
            &symbols,
            &NamePath::parse(name, "symbol").unwrap(),
            "/w/calc.ts",
        )?;
        let spans = place(CALC, "ts", &found, action, new)?;
        let s = &spans.spans[0];
        Ok((
            format!("{}{}{}", &CALC[..s.start], s.text, &CALC[s.end..]),
            spans.summary,
        ))
    }

    #[test]
    fn a_body_on_its_own_lines_is_replaced_as_lines_at_its_indentation() {
        let (text, summary) = apply(
            SymbolAction::Body,
            "Calculator/add",
            "const sum = a + b;\nreturn sum;",
        )
        .unwrap();
        assert_eq!(
            summary,
            "Replaced the body of method Calculator/add (lines 5-7)"
        );
        assert!(text.contains("  add(a: number, b: number): number {\n    const sum = a + b;\n    return sum;\n  }\n\n  sub("), "{text}");
        // Written at the body's indentation: as written.
        let (same, _) = apply(
            SymbolAction::Body,
            "Calculator/add",
            "    const sum = a + b;\n    return sum;\n",
        )
        .unwrap();
        assert_eq!(same, text);
        let r = apply(SymbolAction::Body, "Calculator/add", "  return 0;").unwrap_err();
        assert_eq!(
            r.message,
            "new_string starts indented with 2 spaces, but method Calculator/add (lines 5-7) is indented with 4 spaces. Nothing \
             was changed. Write new_string at that indentation, or from column 0 (multiedit then indents each line of it with 4 spaces)."
        );
        // On its braces' line: between them.
        let (text, _) = apply(SymbolAction::Body, "sub", "return b - a;").unwrap();
        assert!(
            text.contains("  sub(a: number, b: number) { return b - a; }\n"),
            "{text}"
        );
    }

    #[test]
    fn whole_symbols_and_inserts_keep_the_blank_lines_and_comments_around_them() {
        let (text, summary) = apply(
            SymbolAction::Whole,
            "add",
            "add(a: number): number {\n  return a;\n}\n",
        )
        .unwrap();
        assert_eq!(summary, "Replaced method Calculator/add (lines 5-7)");
        assert!(
            text.contains(
                "\n\n  /** Adds. */\n  add(a: number): number {\n    return a;\n  }\n\n  sub"
            ),
            "{text}"
        );
        let (text, summary) = apply(SymbolAction::Whole, "add", "").unwrap();
        assert_eq!(summary, "Removed method Calculator/add (lines 5-7)");
        assert!(text.contains("  /** Adds. */\n\n  sub"), "{text}");
        let (text, _) = apply(
            SymbolAction::Before,
            "add",
            "mul(a: number, b: number) {\n  return a * b;\n}\n\n",
        )
        .unwrap();
        assert!(text.contains("  total = 0;\n\n  mul(a: number, b: number) {\n    return a * b;\n  }\n\n  /** Adds. */\n  add("), "{text}");
        let (text, summary) = apply(
            SymbolAction::After,
            "add",
            "\nneg(a: number) {\n  return -a;\n}",
        )
        .unwrap();
        assert_eq!(summary, "Inserted after method Calculator/add (lines 5-7)");
        assert!(
            text.contains(
                "    return a + b;\n  }\n\n  neg(a: number) {\n    return -a;\n  }\n\n  sub("
            ),
            "{text}"
        );
    }

    #[test]
    fn a_body_the_braces_do_not_settle_is_refused_with_what_to_do() {
        let rope = Rope::from_str("def add(a, b):\n    return a + b\n");
        let reported = vec![ReportedSymbol {
            name: "add".into(),
            detail: None,
            kind: 12,
            range: Range::new(Position::new(0, 0), Position::new(1, 16)),
            selection_range: Range::new(Position::new(0, 4), Position::new(0, 7)),
            children: vec![],
        }];
        let symbols = outline::read(&reported, &rope, Encoding::Utf16).unwrap();
        let found = outline::find(
            &symbols,
            &NamePath::parse("add", "s").unwrap(),
            "/w/calc.py",
        )
        .unwrap();
        let r = place(
            &rope.to_string(),
            "py",
            &found,
            SymbolAction::Body,
            "return 0",
        )
        .unwrap_err();
        assert_eq!(r.kind, Kind::NoBody);
        assert_eq!(
            r.message,
            format!("Cannot find the body of function add (lines 1-2): multiedit finds a body by the file's braces, in {} files; .py files are not among them. Nothing was changed.", braces::LANGUAGES)
        );
        assert_eq!(r.hint.as_deref(), Some("Replace the whole symbol instead (replace: \"whole\", with its declaration in new_string), or address the text with old_string."));
    }
}
