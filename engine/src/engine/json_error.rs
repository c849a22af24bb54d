//! A JSON text's first mistake in plain words, named where it starts. serde_json stops where the text
//! stopped making sense, in a parser's words: a string left open is reported at the line break inside
//! it ("control character found", a line later than the quote that opened it), a comma too many at the
//! bracket after it, a missing one at the token after it. A writer fixes a text by where the mistake
//! is: this names that place (1-based line and column, columns in characters) and what is wrong.

/// "line 3, column 20: a string that starts here is not closed before the line ends (...)": where the
/// mistake `e` (from parsing `text`) starts, and what it is.
pub fn describe(text: &str, e: &serde_json::Error) -> String {
    let words = e.to_string();
    let words = match words.rfind(" at line ") {
        Some(i) => &words[..i],
        None => &words,
    };
    let b = text.as_bytes();
    let stop = stopped_at(text, e.line(), e.column());
    let at = |offset: usize| position(text, offset);
    let tok = || token(text, stop);
    // Where the parser expected a token, the character it met may say what went wrong by itself.
    let expecting = words.starts_with("expected ")
        || words == "key must be a string"
        || words == "trailing characters";
    if let Some(said) = special(text, stop).filter(|_| expecting) {
        return said;
    }
    match words {
        w if w.starts_with("control character") => control_character(text, stop),
        "EOF while parsing a string" => format!(
            "{}: a string that starts here is not closed: the text ends inside it",
            at(open_string(text, text.len()).unwrap_or(stop))
        ),
        "trailing comma" => trailing_comma(text, stop),
        "expected `,` or `}`" | "expected `,` or `]`" => {
            missing_comma(text, stop, words.ends_with("`}`"))
        }
        "key must be a string" => match word(text, stop) {
            Some(w) => format!(
                "{}: the key `{w}` is not in double quotes (JSON keys are strings: \"{w}\")",
                at(stop)
            ),
            None => format!(
                "{}: `{}` where a key (a string in double quotes) must come",
                at(stop),
                tok()
            ),
        },
        "expected value" => match b.get(stop) {
            Some(&c @ (b'}' | b']' | b',')) => {
                format!("{}: a value is missing before `{}`", at(stop), c as char)
            }
            _ => not_a_value(&at(stop), &tok()),
        },
        "expected ident" => {
            let start = text[..stop]
                .bytes()
                .rev()
                .take_while(u8::is_ascii_alphabetic)
                .count();
            let start = stop - start;
            not_a_value(&at(start), &token(text, start))
        }
        "invalid escape" => invalid_escape(text, stop),
        w if w.starts_with("EOF while parsing") => unclosed(text),
        "trailing characters" => format!(
            "{}: `{}` after the end of the JSON value, which ends at {} (send one JSON object and nothing \
             after it)",
            at(stop),
            tok(),
            at(text[..stop].trim_end().len().saturating_sub(1))
        ),
        "invalid number" => invalid_number(text, stop),
        "expected `:`" => format!(
            "{}: a `:` is missing before `{}` (a key, then `:`, then its value)",
            at(stop),
            tok()
        ),
        w => format!("{}: {w}", at(stop)),
    }
}

/// A control character inside a string, at `stop`: most often a line break, so the string that holds
/// it is one left open, named where its quote is.
fn control_character(text: &str, stop: usize) -> String {
    let at = |offset: usize| position(text, offset);
    match text.as_bytes().get(stop) {
        Some(b'\n' | b'\r') => format!(
            "{}: a string that starts here is not closed before the line ends (a line break inside a JSON \
             string must be written \\n)",
            at(open_string(text, stop).unwrap_or(stop))
        ),
        Some(b'\t') => format!(
            "{}: a tab inside a string (a tab inside a JSON string must be written \\t)",
            at(stop)
        ),
        _ => {
            let c = text[stop..].chars().next().map_or(0, u32::from);
            format!(
                "{}: the control character U+{c:04X} inside a string (write it as \\u{c:04x})",
                at(stop)
            )
        }
    }
}

/// A comma after the last member or element, named where the comma is (serde_json names the
/// bracket at `stop`, after it).
fn trailing_comma(text: &str, stop: usize) -> String {
    let comma = text[..stop].trim_end().len().saturating_sub(1);
    let (what, close) = if text.as_bytes().get(stop) == Some(&b']') {
        ("element of an array", ']')
    } else {
        ("member of an object", '}')
    };
    format!(
        "{}: a comma after the last {what} (JSON allows none before `{close}`: remove it)",
        position(text, comma)
    )
}

/// Something at `stop` where a `,` or the closing bracket must come, in an object (`in_object`) or an
/// array: a missing comma when a value starts there.
fn missing_comma(text: &str, stop: usize, in_object: bool) -> String {
    let at = |offset: usize| position(text, offset);
    let (what, close) = if in_object {
        ("members of an object", '}')
    } else {
        ("elements of an array", ']')
    };
    let before = text[..stop].trim_end().len().saturating_sub(1);
    if starts_value(text, stop) {
        format!(
            "{}: a comma is missing before `{}` (after the value that ends at {}): {what} are \
             separated by commas",
            at(stop),
            token(text, stop),
            at(before)
        )
    } else {
        format!(
            "{}: `{}` where a `,` or a `{close}` must come (after the value that ends at {})",
            at(stop),
            token(text, stop),
            at(before)
        )
    }
}

/// A backslash at or just before `stop` that starts no escape JSON knows.
fn invalid_escape(text: &str, stop: usize) -> String {
    let slash = if stop > 0 && text.as_bytes()[stop - 1] == b'\\' {
        stop - 1
    } else {
        stop
    };
    let escape: String = text[slash..].chars().take(2).collect();
    format!(
        "{}: `{escape}` is not an escape JSON knows (a backslash inside a JSON string is written \\\\, \
         a line break \\n, a tab \\t, a double quote \\\")",
        position(text, slash)
    )
}

/// The text ends before its value does: named at the outermost object or array left open, with
/// the brackets it lacks.
fn unclosed(text: &str) -> String {
    let b = text.as_bytes();
    let open = open_brackets(text);
    match open.last() {
        None if text.trim().is_empty() => "the text is empty".to_string(),
        None => format!(
            "{}: the text ends where a value must come",
            position(text, text.len())
        ),
        Some(&first) => {
            let what = if b[first] == b'{' { "object" } else { "array" };
            let missing: String = open
                .iter()
                .rev()
                .map(|&o| if b[o] == b'{' { '}' } else { ']' })
                .collect();
            format!(
                "{}: the {what} that opens here is not closed: the text ends first (it lacks `{missing}` at \
                 its end)",
                position(text, first)
            )
        }
    }
}

/// A number JSON does not take, named from its first character (serde_json stops at `stop`, inside it).
fn invalid_number(text: &str, stop: usize) -> String {
    let start = text[..stop]
        .bytes()
        .rev()
        .take_while(|c| c.is_ascii_digit() || b".eE+-".contains(c))
        .count();
    format!(
        "{}: `{}` is not a JSON number (written as 12, -3, 0.5 or 1e3: no leading zero, no + sign, a digit \
         on each side of the dot)",
        position(text, stop - start),
        token(text, stop - start)
    )
}

/// Mistakes told by the character itself, wherever the parser met it: single quotes, typographic
/// quotes, comments.
fn special(text: &str, stop: usize) -> Option<String> {
    let rest = &text[stop..];
    let at = || position(text, stop);
    match rest.chars().next()? {
        '\'' => Some(format!(
            "{}: a string in single quotes (JSON strings take double quotes: \"...\")",
            at()
        )),
        '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}' => Some(format!(
            "{}: a typographic quote `{}` (JSON strings take straight double quotes: \"...\")",
            at(),
            rest.chars().next()?
        )),
        '\u{feff}' => Some(format!(
            "{}: a byte order mark (U+FEFF), which JSON does not take: save the text without it",
            at()
        )),
        '/' if rest.starts_with("//") || rest.starts_with("/*") => Some(format!(
            "{}: a comment (JSON has no comments: remove it)",
            at()
        )),
        _ => None,
    }
}

fn not_a_value(at: &str, tok: &str) -> String {
    format!(
        "{at}: `{tok}` is not a JSON value (a value is a string in double quotes, a number, true, false, null, an \
         object or an array)"
    )
}

/// The byte offset of the character serde_json stopped at: its `line` and `column` count bytes, the
/// column of the last byte it read, 0 when that was the line break ending the line before.
fn stopped_at(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => break,
        }
    }
    let mut offset = match column {
        0 => start.saturating_sub(1),
        c => (start + c - 1).min(text.len()),
    };
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// "line 3, column 20" of a byte offset; the column counts characters, from 1.
fn position(text: &str, offset: usize) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    format!(
        "line {}, column {}",
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1
    )
}

/// The token at `offset`, as the text has it: a string literal (cut on its line, and past 40
/// characters), a word or number, else the one character.
fn token(text: &str, offset: usize) -> String {
    let rest = &text[offset.min(text.len())..];
    let Some(first) = rest.chars().next() else {
        return "the end of the text".into();
    };
    let t: &str = if first == '"' {
        let line = rest.split(['\n', '\r']).next().unwrap_or(rest);
        let mut end = line.len();
        let mut escaped = false;
        for (i, c) in line.char_indices().skip(1) {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        &line[..end]
    } else if first.is_alphanumeric() || "_-+.$".contains(first) {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || "_-+.$".contains(c)))
            .unwrap_or(rest.len());
        &rest[..end]
    } else {
        &rest[..first.len_utf8()]
    };
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    }
}

/// A bare word at `offset` (an unquoted key), if one starts there.
fn word(text: &str, offset: usize) -> Option<String> {
    let rest = &text[offset..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '-'))
        .unwrap_or(rest.len());
    (end > 0 && !rest.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
        .then(|| rest[..end].to_string())
}

/// Whether a JSON value starts at `offset` (so the mistake before it is a missing comma).
fn starts_value(text: &str, offset: usize) -> bool {
    let rest = &text[offset..];
    match rest.bytes().next() {
        Some(b'"' | b'{' | b'[' | b'-' | b'0'..=b'9') => true,
        _ => ["true", "false", "null"].iter().any(|w| {
            rest.strip_prefix(w)
                .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
        }),
    }
}

/// Where the string open at byte `upto` starts, reading `text` as JSON up to there.
fn open_string(text: &str, upto: usize) -> Option<usize> {
    scan(text, upto).1
}

/// The objects and arrays still open at the end of `text`, outermost first.
fn open_brackets(text: &str) -> Vec<usize> {
    scan(text, text.len()).0
}

/// Reads `text` up to `upto` as JSON's lexer does, and says which brackets are open there and where
/// the string open there (if one is) starts.
fn scan(text: &str, upto: usize) -> (Vec<usize>, Option<usize>) {
    let b = text.as_bytes();
    let mut open = Vec::new();
    let mut string = None;
    let mut i = 0;
    while i < upto.min(b.len()) {
        match (string, b[i]) {
            (Some(_), b'\\') => i += 1,
            (Some(_), b'"') => string = None,
            (Some(_), _) => {}
            (None, b'"') => string = Some(i),
            (None, b'{' | b'[') => open.push(i),
            (None, b'}' | b']') => {
                open.pop();
            }
            (None, _) => {}
        }
        i += 1;
    }
    (open, string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> String {
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        describe(text, &e)
    }

    #[test]
    fn an_unterminated_string_is_named_where_it_starts() {
        // serde_json: "control character (\u0000-\u001F) found while parsing a string at line 4 column 0".
        assert_eq!(
            said("{\n  \"file_path\": \"/a\",\n  \"edits\": [{\"old_string\": \"abc\n  , \"new_string\": \"x\"}]\n}\n"),
            "line 3, column 28: a string that starts here is not closed before the line ends (a line break inside \
             a JSON string must be written \\n)"
        );
        assert_eq!(
            said("{\"file_path\": \"/é\", \"edits\": [{\"old_string\": \"abc"),
            "line 1, column 46: a string that starts here is not closed: the text ends inside it"
        );
        assert_eq!(
            said("{\"a\": \"x\tb\"}"),
            "line 1, column 9: a tab inside a string (a tab inside a JSON string must be written \\t)"
        );
    }

    #[test]
    fn a_trailing_comma_is_named_where_it_is() {
        assert_eq!(
            said("{\n  \"file_path\": \"/a\",\n  \"edits\": [\n    {\"old_string\": \"a\", \"new_string\": \"b\"},\n  ]\n}\n"),
            "line 4, column 43: a comma after the last element of an array (JSON allows none before `]`: remove it)"
        );
        assert_eq!(
            said("{\"file_path\": \"/a\", \"edits\": [{\"old_string\": \"a\", \"new_string\": \"b\",}]}"),
            "line 1, column 68: a comma after the last member of an object (JSON allows none before `}`: remove it)"
        );
    }

    #[test]
    fn a_missing_comma_is_named_at_the_token_after_it() {
        assert_eq!(
            said("{\n  \"file_path\": \"/a\"\n  \"edits\": []\n}\n"),
            "line 3, column 3: a comma is missing before `\"edits\"` (after the value that ends at line 2, column \
             19): members of an object are separated by commas"
        );
        assert_eq!(
            said("[{\"old_string\": \"a\"} {\"old_string\": \"b\"}]"),
            "line 1, column 22: a comma is missing before `{` (after the value that ends at line 1, column 20): \
             elements of an array are separated by commas"
        );
        assert_eq!(
            said("{\"a\": 1 x}"),
            "line 1, column 9: `x` where a `,` or a `}` must come (after the value that ends at line 1, column 7)"
        );
    }

    #[test]
    fn single_quotes_typographic_quotes_and_comments_are_named() {
        assert_eq!(
            said("{'file_path': '/a'}"),
            "line 1, column 2: a string in single quotes (JSON strings take double quotes: \"...\")"
        );
        assert_eq!(
            said("{\"file_path\": '/a'}"),
            "line 1, column 15: a string in single quotes (JSON strings take double quotes: \"...\")"
        );
        assert_eq!(
            said("{\u{201c}file_path\u{201d}: 1}"),
            "line 1, column 2: a typographic quote `\u{201c}` (JSON strings take straight double quotes: \"...\")"
        );
        assert_eq!(
            said("{\"file_path\": \"/a\", // the file\n}"),
            "line 1, column 21: a comment (JSON has no comments: remove it)"
        );
    }

    #[test]
    fn other_mistakes_are_named_in_plain_words() {
        let cases = [
            ("{file_path: 1}", "line 1, column 2: the key `file_path` is not in double quotes (JSON keys are strings: \"file_path\")"),
            ("{\"a\": }", "line 1, column 7: a value is missing before `}`"),
            ("{\"a\": True}", "line 1, column 7: `True` is not a JSON value (a value is a string in double quotes, a number, true, false, null, an object or an array)"),
            ("{\"a\": tru}", "line 1, column 7: `tru` is not a JSON value (a value is a string in double quotes, a number, true, false, null, an object or an array)"),
            ("{\"file_path\": \"C:\\path\"}", "line 1, column 18: `\\p` is not an escape JSON knows (a backslash inside a JSON string is written \\\\, a line break \\n, a tab \\t, a double quote \\\")"),
            ("{\"file_path\": \"/a\", \"edits\": [", "line 1, column 30: the array that opens here is not closed: the text ends first (it lacks `]}` at its end)"),
            ("{\"file_path\": \"/a\"}}", "line 1, column 20: `}` after the end of the JSON value, which ends at line 1, column 19 (send one JSON object and nothing after it)"),
            ("{\"a\" 1}", "line 1, column 6: a `:` is missing before `1` (a key, then `:`, then its value)"),
            ("{\"a\": 01}", "line 1, column 7: `01` is not a JSON number (written as 12, -3, 0.5 or 1e3: no leading zero, no + sign, a digit on each side of the dot)"),
            ("{\"a\": 1.}", "line 1, column 7: `1.` is not a JSON number (written as 12, -3, 0.5 or 1e3: no leading zero, no + sign, a digit on each side of the dot)"),
            ("{\"a\": , \"b\": 1}", "line 1, column 7: a value is missing before `,`"),
            ("  \n", "the text is empty"),
            ("{\"a\": 1,\n\u{feff}\"b\": 2}", "line 2, column 1: a byte order mark (U+FEFF), which JSON does not take: save the text without it"),
        ];
        for (text, want) in cases {
            assert_eq!(said(text), want, "{text:?}");
        }
    }

    /// Every prefix of a plan, and the plan with any one character taken out or a slip put in, is
    /// described without a panic (multi-byte characters included).
    #[test]
    fn any_broken_text_is_described() {
        let plan = "{\"file_path\": \"/é/a\", \"edits\": [{\"old_string\": \"ü\\n\\\"x\\\"\", \"new_string\": \"€ 1\", \"replace_all\": true}, {\"old_string\": \"b\", \"new_string\": null, \"expected_replacements\": -2.5e3}]}";
        assert!(serde_json::from_str::<serde_json::Value>(plan).is_ok());
        let mut texts: Vec<String> = Vec::new();
        for (i, c) in plan.char_indices() {
            texts.push(plan[..i].to_string());
            texts.push(format!("{}{}", &plan[..i], &plan[i + c.len_utf8()..]));
            for slip in ["'", "\n", ",", "/", "\\", "é", "}", "\u{201c}", "x"] {
                texts.push(format!("{}{slip}{}", &plan[..i], &plan[i..]));
            }
        }
        for text in texts {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                let said = describe(&text, &e);
                assert!(!said.is_empty(), "{text:?}");
            }
        }
    }
}
