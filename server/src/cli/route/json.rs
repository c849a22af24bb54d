//! JSON text as setup splices it (the value at a path, items appended, an entry cut out with what
//! separates it) and as the agents read it (`jsonc`).

use serde_json::value::RawValue;
use serde_json::Value;

use crate::cli::config_file::{eol, indent_at, offset_in, Members};

/// The value at `keys` in the JSON object `text`.
pub(super) fn value_at(text: &str, keys: &[&str]) -> Option<Value> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    for k in keys {
        v = v.get_mut(*k)?.take();
    }
    Some(v)
}

/// Removes the member at `made` if what it holds is empty now (`{}`, `[]`, or objects holding only
/// those).
pub(super) fn remove_if_empty(text: &str, made: &[String]) -> String {
    fn empty(v: &Value) -> bool {
        match v {
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.values().all(empty),
            _ => false,
        }
    }
    let keys: Vec<&str> = made.iter().map(String::as_str).collect();
    match value_at(text, &keys) {
        Some(v) if empty(&v) => remove_json(text, &keys, None).unwrap_or_else(|| text.to_string()),
        _ => text.to_string(),
    }
}

/// `items` appended to the array whose text is `array` (a slice of `whole`).
pub(super) fn insert_elements(
    whole: &str,
    array: &str,
    elements: &[&RawValue],
    items: &[&Value],
) -> String {
    let crlf = whole.contains("\r\n");
    let start = offset_in(whole, array);
    let quoted: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    match elements.last() {
        None => {
            let end = start + array.len();
            format!(
                "{}[{}]{}",
                &whole[..start],
                quoted.join(", "),
                &whole[end..]
            )
        }
        Some(last) => {
            let after_last = offset_in(whole, last.get()) + last.get().len();
            let inner = &array[1..array.len() - 1];
            let added = if inner.contains('\n') {
                let indent = indent_at(whole, offset_in(whole, last.get()));
                eol(
                    quoted.iter().map(|q| format!(",\n{indent}{q}")).collect(),
                    crlf,
                )
            } else {
                let sep = if inner.contains(", ") || elements.len() == 1 {
                    ", "
                } else {
                    ","
                };
                quoted.iter().map(|q| format!("{sep}{q}")).collect()
            };
            format!("{}{added}{}", &whole[..after_last], &whole[after_last..])
        }
    }
}

/// `text` without the string `item` of the array at `keys` (`None`: without the member at `keys`);
/// `None` when it is not there. The text between the previous entry and the removed one goes with
/// it (or, for the first, the text up to the next), which undoes what `insert_member` and
/// `insert_elements` add.
pub(super) fn remove_json(text: &str, keys: &[&str], item: Option<&Value>) -> Option<String> {
    let mut object = text.trim();
    for (depth, key) in keys.iter().enumerate() {
        let members: Members = serde_json::from_str(object).ok()?;
        let i = members.0.iter().rposition(|(k, _)| k == key)?;
        let raw = members.0[i].1.get();
        if depth + 1 < keys.len() {
            object = raw;
            continue;
        }
        let Some(item) = item else {
            // Spans of the members: from the key to the end of the value.
            let spans: Vec<(usize, usize)> = members
                .0
                .iter()
                .map(|(k, v)| {
                    let value_at = offset_in(text, v.get());
                    let quoted = serde_json::to_string(k).expect("a key serialises");
                    (
                        text[..value_at].rfind(&quoted).unwrap_or(value_at),
                        value_at + v.get().len(),
                    )
                })
                .collect();
            return Some(cut(text, object, &spans, i));
        };
        let elements: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
        let j = elements
            .iter()
            .position(|e| serde_json::from_str::<Value>(e.get()).ok().as_ref() == Some(item))?;
        let spans: Vec<(usize, usize)> = elements
            .iter()
            .map(|e| {
                (
                    offset_in(text, e.get()),
                    offset_in(text, e.get()) + e.get().len(),
                )
            })
            .collect();
        return Some(cut(text, raw, &spans, j));
    }
    None
}

/// `text` without entry `i` of the container `container` (a slice of `text`) whose entries span `spans`.
fn cut(text: &str, container: &str, spans: &[(usize, usize)], i: usize) -> String {
    let (from, to) = if spans.len() == 1 {
        let start = offset_in(text, container);
        (start + 1, start + container.len() - 1)
    } else if i > 0 {
        (spans[i - 1].1, spans[i].1)
    } else {
        (spans[0].0, spans[1].0)
    };
    format!("{}{}", &text[..from], &text[to..])
}

/// A JSON-with-comments text (`//` and `/* */` comments, trailing commas) as a value, as OpenCode
/// reads its `.jsonc` files; `None` if it does not parse.
pub(crate) fn jsonc(text: &str) -> Option<Value> {
    let chars: Vec<char> = text.chars().collect();
    let mut plain: Vec<char> = Vec::with_capacity(chars.len());
    let (mut i, mut in_string) = (0, false);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if in_string {
            plain.push(c);
            if c == '\\' {
                plain.extend(next);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            plain.push(c);
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            plain.push(' ');
            continue;
        } else {
            plain.push(c);
        }
        i += 1;
    }
    // Trailing commas: a comma outside strings whose next non-space character closes a container.
    let mut out = String::with_capacity(plain.len());
    let mut in_string = false;
    let mut k = 0;
    while k < plain.len() {
        let c = plain[k];
        if in_string {
            out.push(c);
            if c == '\\' && k + 1 < plain.len() {
                out.push(plain[k + 1]);
                k += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == ',' {
            let after = plain[k + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(after, Some('}') | Some(']')) {
                out.push(c);
            }
        } else {
            in_string = c == '"';
            out.push(c);
        }
        k += 1;
    }
    serde_json::from_str(&out).ok()
}

#[cfg(test)]
mod jsonc_tests {
    use super::jsonc;
    use serde_json::json;

    #[test]
    fn comments_and_trailing_commas_are_read_as_opencode_reads_them() {
        assert_eq!(
            jsonc("{\n  // mine\n  \"permission\": {\"edit\": \"allow\", /* x */},\n  \"url\": \"http://a//b\",\n}\n"),
            Some(json!({"permission": {"edit": "allow"}, "url": "http://a//b"}))
        );
        assert_eq!(jsonc(r#"{"a": "\",//"}"#), Some(json!({"a": "\",//"})));
        assert_eq!(jsonc("{"), None);
    }
}
