//! Where a symbol's body lies, from the file's own delimiters: the brace block that ends the symbol,
//! found by a scan that knows the language's comments and strings and that requires every bracket to
//! balance. LSP gives a symbol's range and its name only; where the scan cannot settle the body (a
//! language without brace blocks, brackets that do not balance, a symbol that does not end with a
//! block) the edit is refused, never guessed.

/// How one language writes comments and strings, as far as brackets are concerned.
#[derive(Debug, Clone, Copy, Default)]
struct Syntax {
    /// `'a` without a closing quote is a lifetime (Rust).
    lifetimes: bool,
    /// `` `...` ``: a raw string (Go), or a template with `${ }` holes (JavaScript, TypeScript).
    backtick: Backtick,
    /// `"""..."""` (Java, Kotlin, Swift, Scala, Dart, C#).
    triple_quotes: bool,
    /// `r"..."`, `r#"..."#`, `br"..."` (Rust).
    rust_raw: bool,
    /// `R"delim(...)delim"` (C++).
    cpp_raw: bool,
    /// `@"..."` with `""` for a quote (C#).
    verbatim: bool,
    /// `/* /* */ */` nests (Rust, Kotlin, Swift, Scala, Dart).
    nested_comments: bool,
    /// `#` starts a comment (PHP).
    hash_comments: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Backtick {
    #[default]
    None,
    Raw,
    Template,
}

/// The languages whose bodies are brace blocks, by file extension.
pub(crate) const LANGUAGES: &str = "C, C++, Objective-C, C#, Java, JavaScript, TypeScript, Go, Rust, Kotlin, Swift, Scala, Dart and PHP";

fn syntax(extension: &str) -> Option<Syntax> {
    // `'x'` (a character in C, a string in JavaScript) is skipped as a quoted literal everywhere.
    let c = Syntax::default();
    Some(match extension.to_ascii_lowercase().as_str() {
        "c" | "h" | "m" => c,
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" | "mm" => {
            Syntax { cpp_raw: true, ..c }
        }
        "cs" => Syntax {
            verbatim: true,
            triple_quotes: true,
            ..c
        },
        "java" => Syntax {
            triple_quotes: true,
            ..c
        },
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => Syntax {
            backtick: Backtick::Template,
            ..Syntax::default()
        },
        "go" => Syntax {
            backtick: Backtick::Raw,
            ..c
        },
        "rs" => Syntax {
            lifetimes: true,
            rust_raw: true,
            nested_comments: true,
            ..c
        },
        "kt" | "kts" | "scala" | "sc" => Syntax {
            triple_quotes: true,
            nested_comments: true,
            ..c
        },
        "swift" => Syntax {
            triple_quotes: true,
            nested_comments: true,
            ..Syntax::default()
        },
        "dart" => Syntax {
            triple_quotes: true,
            nested_comments: true,
            ..Syntax::default()
        },
        "php" => Syntax {
            hash_comments: true,
            ..Syntax::default()
        },
        _ => return None,
    })
}

/// Why a body could not be settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoBody {
    /// The file's language has no brace blocks the scan knows.
    Language,
    /// What in the symbol's text kept the scan from settling it.
    Text(String),
}

/// The body of the symbol spanning `text[start..end]` whose name ends at `name_end`: the byte
/// offsets of the `{` and the `}` of the last top-level block, which must end the symbol (a `;` after
/// it aside).
pub fn body(
    text: &str,
    extension: &str,
    start: usize,
    name_end: usize,
    end: usize,
) -> Result<(usize, usize), NoBody> {
    let syntax = syntax(extension).ok_or(NoBody::Language)?;
    let from = name_end.clamp(start, end);
    let b = text.as_bytes();
    let mut stack: Vec<(u8, usize)> = Vec::new();
    let mut last: Option<(usize, usize)> = None;
    let mut i = from;
    let unbalanced = |what: String| NoBody::Text(what);
    while i < end {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => i = line_end(b, i, end),
            b'#' if syntax.hash_comments => i = line_end(b, i, end),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = block_comment(b, i, end, syntax.nested_comments)
                    .ok_or_else(|| unbalanced("a comment that does not end inside it".into()))?
            }
            b'(' | b'[' | b'{' => {
                stack.push((c, i));
                i += 1;
            }
            b')' | b']' | b'}' => {
                let want = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                match stack.pop() {
                    Some((open, at)) if open == want => {
                        if c == b'}' && stack.is_empty() {
                            last = Some((at, i));
                        }
                    }
                    _ => {
                        return Err(unbalanced(format!(
                            "a {} at line {} that closes nothing opened in the symbol",
                            c as char,
                            line_of(b, i)
                        )))
                    }
                }
                i += 1;
            }
            _ => {
                i = skip_literal(b, i, end, &syntax).ok_or_else(|| {
                    unbalanced(format!(
                        "a string or character at line {} that does not end inside it",
                        line_of(b, i)
                    ))
                })?
            }
        }
    }
    if let Some((open, at)) = stack.last() {
        return Err(unbalanced(format!(
            "a {} at line {} that nothing in the symbol closes",
            *open as char,
            line_of(b, *at)
        )));
    }
    let Some((open, close)) = last else {
        return Err(NoBody::Text("it holds no { } block".into()));
    };
    let after = text[close + 1..end].trim();
    if !(after.is_empty() || after == ";") {
        return Err(NoBody::Text(format!(
            "it does not end with its block (after the }} at line {} comes {:?})",
            line_of(b, close),
            after
        )));
    }
    Ok((open, close))
}

fn line_of(b: &[u8], i: usize) -> usize {
    b[..i].iter().filter(|&&c| c == b'\n').count() + 1
}

fn line_end(b: &[u8], i: usize, end: usize) -> usize {
    memchr::memchr(b'\n', &b[i..end]).map_or(end, |k| i + k + 1)
}

/// Past a `/* */` comment starting at `i`; `None` when it runs past `end`.
fn block_comment(b: &[u8], i: usize, end: usize, nested: bool) -> Option<usize> {
    let mut depth = 1;
    let mut k = i + 2;
    while k < end {
        if b[k] == b'*' && b.get(k + 1) == Some(&b'/') {
            depth -= 1;
            k += 2;
            if depth == 0 {
                return Some(k);
            }
        } else if nested && b[k] == b'/' && b.get(k + 1) == Some(&b'*') {
            depth += 1;
            k += 2;
        } else {
            k += 1;
        }
    }
    None
}

/// Past a string or character literal starting at `i`, or `i + 1` for any other byte; `None` when a
/// literal runs past `end`.
fn skip_literal(b: &[u8], i: usize, end: usize, s: &Syntax) -> Option<usize> {
    let c = b[i];
    let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    if s.rust_raw && !prev_ident && (c == b'r' || (c == b'b' && b.get(i + 1) == Some(&b'r'))) {
        let mut k = i + if c == b'b' { 2 } else { 1 };
        let hashes = b[k..end].iter().take_while(|&&h| h == b'#').count();
        k += hashes;
        if b.get(k) == Some(&b'"') {
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            return find(b, k + 1, end, &close).map(|p| p + close.len());
        }
        return Some(i + 1);
    }
    if s.cpp_raw && c == b'R' && !prev_ident && b.get(i + 1) == Some(&b'"') {
        let open = i + 2;
        let paren = open + b[open..end].iter().position(|&x| x == b'(')?;
        let mut close = vec![b')'];
        close.extend_from_slice(&b[open..paren]);
        close.push(b'"');
        return find(b, paren + 1, end, &close).map(|p| p + close.len());
    }
    if s.verbatim && c == b'@' && b.get(i + 1) == Some(&b'"') {
        let mut k = i + 2;
        while k < end {
            if b[k] == b'"' {
                if b.get(k + 1) == Some(&b'"') {
                    k += 2;
                    continue;
                }
                return Some(k + 1);
            }
            k += 1;
        }
        return None;
    }
    match c {
        b'"' if s.triple_quotes && b[i..end].starts_with(b"\"\"\"") => {
            find(b, i + 3, end, b"\"\"\"").map(|p| p + 3)
        }
        b'"' => quoted(b, i, end, b'"'),
        b'\'' if s.lifetimes => {
            // A character is one character (or an escape) then a quote; a lifetime is a name with none.
            if b.get(i + 1) == Some(&b'\\') {
                return quoted(b, i, end, b'\'');
            }
            let width = match b.get(i + 1) {
                Some(&x) if x >= 0xF0 => 4,
                Some(&x) if x >= 0xE0 => 3,
                Some(&x) if x >= 0xC0 => 2,
                _ => 1,
            };
            if b.get(i + 1 + width) == Some(&b'\'') {
                Some(i + 2 + width)
            } else {
                Some(i + 1)
            }
        }
        b'\'' => quoted(b, i, end, b'\''),
        b'`' => match s.backtick {
            Backtick::None => Some(i + 1),
            Backtick::Raw => memchr::memchr(b'`', &b[i + 1..end]).map(|k| i + 1 + k + 1),
            Backtick::Template => template(b, i, end, s),
        },
        _ => Some(i + 1),
    }
}

/// Past a quoted literal with backslash escapes; `None` when it does not end before `end` (or a line
/// break ends it first: no such literal spans lines).
fn quoted(b: &[u8], i: usize, end: usize, quote: u8) -> Option<usize> {
    let mut k = i + 1;
    while k < end {
        match b[k] {
            b'\\' => k += 2,
            b'\n' => return None,
            x if x == quote => return Some(k + 1),
            _ => k += 1,
        }
    }
    None
}

/// Past a JavaScript template literal, its `${ }` holes (which may hold strings and templates) included.
fn template(b: &[u8], i: usize, end: usize, s: &Syntax) -> Option<usize> {
    let mut k = i + 1;
    while k < end {
        match b[k] {
            b'\\' => k += 2,
            b'`' => return Some(k + 1),
            b'$' if b.get(k + 1) == Some(&b'{') => {
                let mut depth = 1;
                k += 2;
                while k < end && depth > 0 {
                    match b[k] {
                        b'{' => {
                            depth += 1;
                            k += 1;
                        }
                        b'}' => {
                            depth -= 1;
                            k += 1;
                        }
                        _ => k = skip_literal(b, k, end, s)?,
                    }
                }
                if depth > 0 {
                    return None;
                }
            }
            _ => k += 1,
        }
    }
    None
}

fn find(b: &[u8], from: usize, end: usize, needle: &[u8]) -> Option<usize> {
    if from > end {
        return None;
    }
    memchr::memmem::find(&b[from..end], needle).map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of the whole text as one symbol named by its first word.
    fn of(ext: &str, text: &str) -> Result<String, NoBody> {
        let name_end = text.find([' ', '(']).unwrap_or(0);
        body(text, ext, 0, name_end, text.len()).map(|(a, b)| text[a + 1..b].to_string())
    }

    #[test]
    fn the_block_that_ends_the_symbol_is_its_body() {
        assert_eq!(
            of(
                "ts",
                "add(a: {x: number}): {y: string} { return {y: `}${a.x}`}; }"
            )
            .unwrap(),
            " return {y: `}${a.x}`}; "
        );
        assert_eq!(
            of(
                "c",
                "int f(char c) { if (c == '}') return 1; /* } */ return 0; // }\n}"
            )
            .unwrap(),
            " if (c == '}') return 1; /* } */ return 0; // }\n"
        );
        assert_eq!(
            of(
                "rs",
                "fn f<'a>(s: &'a str) -> char { let b = r#\"}\"#; '}' }"
            )
            .unwrap(),
            " let b = r#\"}\"#; '}' "
        );
        assert_eq!(
            of("cpp", "int f() { auto s = R\"x(})x\"; return 0; };").unwrap(),
            " auto s = R\"x(})x\"; return 0; "
        );
        assert_eq!(of("go", "F() { s := `}` }").unwrap(), " s := `}` ");
        assert_eq!(
            of("cs", "F() { var s = @\"}\"\"\"; }").unwrap(),
            " var s = @\"}\"\"\"; "
        );
    }

    #[test]
    fn what_the_scan_cannot_settle_is_said() {
        assert_eq!(of("py", "def f():\n  return 1\n"), Err(NoBody::Language));
        assert_eq!(
            of("ts", "f = (a) => a + 1"),
            Err(NoBody::Text("it holds no { } block".into()))
        );
        assert_eq!(
            of("ts", "f(a) { return a; } + 1"),
            Err(NoBody::Text(
                "it does not end with its block (after the } at line 1 comes \"+ 1\")".into()
            ))
        );
        assert_eq!(
            of("js", "f(a) { return a.replace(/}/, ''); }"),
            Err(NoBody::Text(
                "a } at line 1 that closes nothing opened in the symbol".into()
            ))
        );
        assert_eq!(
            of("c", "f() { puts(\"}); }"),
            Err(NoBody::Text(
                "a string or character at line 1 that does not end inside it".into()
            ))
        );
    }
}
