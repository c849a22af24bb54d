//! What setup adds to a file's text (JSON members and list items spliced in, a TOML key set), and
//! the same taken back.

use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::json::{insert_elements, remove_if_empty, remove_json, value_at};
use super::record::Wrote;
use super::rules::Add;
use crate::cli::config_file::{insert_member, refuse_parse, render, Members};

/// What adding to a JSON file came to.
pub(super) enum Added {
    Changed(String, Wrote),
    /// Everything was there already.
    Already,
    /// The user's own setting is there, otherwise than setup would set it: said why.
    Left(String),
}

/// The TOML text `text` with `key = value` set in the table at `table`, which must be there (setup
/// wrote it); a value of the user's there stays.
pub(super) fn add_toml(
    text: &str,
    table: &[&str],
    key: &str,
    value: &str,
) -> Result<Added, String> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        format!(
            "is not valid TOML ({})",
            e.to_string().trim().replace('\n', " ")
        )
    })?;
    let dotted = format!("{}.{key}", table.join("."));
    let mut at = Some(doc.as_item_mut());
    for k in table {
        at = at.and_then(|i| i.get_mut(k));
    }
    let Some(t) = at.and_then(|t| t.as_table_like_mut()) else {
        return Ok(Added::Left(format!(
            "{} is not there yet (setup writes it first), so {dotted} was not set",
            table.join(".")
        )));
    };
    match t.get(key) {
        Some(v) if v.as_str() == Some(value) => return Ok(Added::Already),
        Some(v) => {
            return Ok(Added::Left(format!(
                "{dotted} is already set to {} (setup would set {value:?})",
                v.as_value()
                    .map(|v| v.to_string().trim().to_string())
                    .unwrap_or_default()
            )))
        }
        None => {}
    }
    t.insert(key, toml_edit::value(value));
    let mut new = doc.to_string();
    let crlf = text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count();
    if crlf {
        new = new.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    Ok(Added::Changed(
        new,
        Wrote::Toml {
            table: table.iter().map(|k| k.to_string()).collect(),
            key: key.to_string(),
            value: value.to_string(),
        },
    ))
}

impl Add {
    /// The keys of the member it adds to, from the top.
    fn path(&self) -> &'static [&'static str] {
        match self {
            Add::List { path, .. } | Add::Member { path, .. } => path,
        }
    }

    /// What it puts at its path: the list of its items, or the value.
    fn leaf(&self) -> Value {
        match self {
            Add::List { items, .. } => Value::Array(items.clone()),
            Add::Member { value, .. } => Value::from(*value),
        }
    }

    /// The members below the first missing one, `path[from]`, as one value.
    fn nest(&self, from: usize) -> Value {
        self.path()[from + 1..]
            .iter()
            .rev()
            .fold(self.leaf(), |v, k| json!({ *k: v }))
    }

    /// Every item it adds (a member: none).
    fn all_items(&self) -> Vec<Value> {
        match self {
            Add::List { items, .. } => items.clone(),
            Add::Member { .. } => Vec::new(),
        }
    }

    /// What it wrote: `items`, and `made`, the depth of the member it inserted to hold them.
    fn wrote(&self, made: Option<usize>, items: Vec<Value>) -> Wrote {
        let made = made.map(|n| self.path()[..=n].iter().map(|k| k.to_string()).collect());
        let path = self.path().iter().map(|k| k.to_string()).collect();
        match self {
            Add::List { .. } => Wrote::List { path, items, made },
            Add::Member { value, .. } => Wrote::Member {
                path,
                value: value.to_string(),
                made,
            },
        }
    }
}

/// The JSON text `text` (empty: a new file) with `add` made.
pub(super) fn add_json(text: &str, add: &Add) -> Result<Added, String> {
    let path = add.path();
    if text.trim().is_empty() {
        let doc = add.nest(0);
        let doc = json!({ path[0]: doc });
        return Ok(Added::Changed(
            format!("{}\n", render(&doc, "  ", "", false)),
            add.wrote(Some(0), add.all_items()),
        ));
    }
    let whole: Value = serde_json::from_str(text).map_err(|e| refuse_parse(e, text))?;
    if !whole.is_object() {
        return Err("does not hold a JSON object".into());
    }
    let mut object = text.trim();
    for (depth, key) in path.iter().enumerate() {
        let members: Members = serde_json::from_str(object).map_err(|e| refuse_parse(e, text))?;
        let Some((_, raw)) = members.0.iter().rev().find(|(k, _)| k == key) else {
            let new = insert_member(text, object, &members, key, &add.nest(depth));
            return checked(text, new, add.wrote(Some(depth), add.all_items()));
        };
        let raw: &RawValue = raw;
        let at = raw.get();
        let dotted = path[..=depth].join(".");
        if depth + 1 < path.len() {
            if !at.trim_start().starts_with('{') {
                return Ok(Added::Left(format!("{dotted} is not an object ({at})")));
            }
            object = at;
            continue;
        }
        return match add {
            Add::Member { value, .. } => member_set(text, at, &dotted, value),
            Add::List { items, .. } => list_extended(text, at, &dotted, items, add),
        };
    }
    unreachable!("the loop returns at the last key")
}

/// The member `dotted`, whose value's text is `at` (a slice of `text`), set to `value`: already so,
/// or left as the user set it.
fn member_set(text: &str, at: &str, dotted: &str, value: &str) -> Result<Added, String> {
    let current: Value = serde_json::from_str(at).map_err(|e| refuse_parse(e, text))?;
    if current == value {
        Ok(Added::Already)
    } else {
        Ok(Added::Left(format!("{dotted} is already set to {current} (setup would set {value:?}): edits still go around multiedit")))
    }
}

/// The list `dotted`, whose text is `at` (a slice of `text`), with those of `add`'s `items` it does
/// not hold yet appended.
fn list_extended(
    text: &str,
    at: &str,
    dotted: &str,
    items: &[Value],
    add: &Add,
) -> Result<Added, String> {
    let Ok(elements) = serde_json::from_str::<Vec<&RawValue>>(at) else {
        return Ok(Added::Left(format!("{dotted} is not a list ({at})")));
    };
    let present: Vec<Value> = elements
        .iter()
        .filter_map(|e| serde_json::from_str(e.get()).ok())
        .collect();
    let missing: Vec<&Value> = items.iter().filter(|i| !present.contains(i)).collect();
    if missing.is_empty() {
        return Ok(Added::Already);
    }
    let new = insert_elements(text, at, &elements, &missing);
    checked(
        text,
        new,
        add.wrote(None, missing.iter().map(|v| (*v).clone()).collect()),
    )
}

/// A spliced text must parse, and taking the addition back must give what was there.
fn checked(old: &str, new: String, wrote: Wrote) -> Result<Added, String> {
    let parse = |t: &str| serde_json::from_str::<Value>(t).ok();
    let back = take_back(&new, &wrote).0;
    match (parse(&new), parse(&back)) {
        (Some(v), Some(b)) if v.is_object() && Some(&b) == parse(old).as_ref() => {
            Ok(Added::Changed(new, wrote))
        }
        _ => Err("could not be merged safely".into()),
    }
}

/// `text` without what `w` added, where it is still as setup wrote it; and what was left, and why.
pub(super) fn take_back(text: &str, w: &Wrote) -> (String, Vec<String>) {
    let mut left = Vec::new();
    let text = match w {
        Wrote::List { path, items, made } => {
            list_taken_back(text, path, items, made.as_deref(), &mut left)
        }
        Wrote::Member { path, value, made } => {
            member_taken_back(text, path, value, made.as_deref(), &mut left)
        }
        Wrote::File { text: ours } => {
            if text != *ours {
                left.push("the file was changed since setup wrote it: left as it is (remove it yourself if it is no longer wanted)".into());
                text.to_string()
            } else {
                String::new()
            }
        }
        Wrote::Block { text: ours } => block_taken_back(text, ours, &mut left),
        Wrote::Toml { table, key, value } => toml_taken_back(text, table, key, value, &mut left),
    };
    (text, left)
}

/// `text` without the `items` setup added to the list at `path`, and without the member it made to
/// hold them (`made`) if that holds nothing now; an item no longer there is said in `left`.
fn list_taken_back(
    text: &str,
    path: &[String],
    items: &[Value],
    made: Option<&[String]>,
    left: &mut Vec<String>,
) -> String {
    let mut text = text.to_string();
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    for item in items {
        match remove_json(&text, &keys, Some(item)) {
            Some(new) => text = new,
            None => left.push(format!(
                "{item} is no longer in {} as setup wrote it (changed or removed): nothing taken back for it",
                keys.join(".")
            )),
        }
    }
    if let Some(made) = made {
        text = remove_if_empty(&text, made);
    }
    text
}

/// `text` without the member at `path` while it is still the `value` setup set (else said in
/// `left`), and without the member setup made to hold it (`made`) if that holds nothing now.
fn member_taken_back(
    text: &str,
    path: &[String],
    value: &str,
    made: Option<&[String]>,
    left: &mut Vec<String>,
) -> String {
    let mut text = text.to_string();
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    match value_at(&text, &keys) {
        Some(Value::String(v)) if v == *value => {
            if let Some(new) = remove_json(&text, &keys, None) {
                text = new;
            }
        }
        Some(other) => left.push(format!(
            "{} is now {other}, not the {value:?} setup wrote: left as it is",
            keys.join(".")
        )),
        None => {}
    }
    if let Some(made) = made {
        text = remove_if_empty(&text, made);
    }
    text
}

/// `text` without the block `ours` setup appended, and the blank line it put before it; a block
/// changed since is said in `left`.
fn block_taken_back(text: &str, ours: &str, left: &mut Vec<String>) -> String {
    let mut text = text.to_string();
    match text.find(ours) {
        Some(at) => {
            let mut start = at;
            // The blank line setup put before the block goes with it.
            for sep in ["\r\n", "\n"] {
                if text[..start].ends_with(&format!("{sep}{sep}")) {
                    start -= sep.len();
                    break;
                }
            }
            text.replace_range(start..at + ours.len(), "");
        }
        None => left.push("the block setup added to it was changed: left as it is".into()),
    }
    text
}

/// The TOML text `text` without `key` of the table at `table` while it is still the `value` setup
/// set (else said in `left`).
fn toml_taken_back(
    text: &str,
    table: &[String],
    key: &str,
    value: &str,
    left: &mut Vec<String>,
) -> String {
    let dotted = format!("{}.{key}", table.join("."));
    let mut doc = match text.parse::<toml_edit::DocumentMut>() {
        Ok(doc) => doc,
        Err(_) => {
            left.push(format!(
                "the file is no longer valid TOML: {dotted} left as it is"
            ));
            return text.to_string();
        }
    };
    let mut at = Some(doc.as_item_mut());
    for k in table {
        at = at.and_then(|i| i.get_mut(k.as_str()));
    }
    if let Some(t) = at.and_then(|t| t.as_table_like_mut()) {
        match t.get(key).map(|v| v.as_str().map(str::to_string)) {
            Some(Some(v)) if v == *value => {
                t.remove(key);
                return doc.to_string();
            }
            Some(now) => left.push(format!(
                "{dotted} is now {}, not the {value:?} setup wrote: left as it is",
                now.map(|v| format!("{v:?}"))
                    .unwrap_or_else(|| "another value".into())
            )),
            None => {}
        }
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::super::record::{splice_back, unsplice};
    use super::*;

    fn list(path: &'static [&'static str], items: &[&'static str]) -> Add {
        Add::List {
            path,
            items: items.iter().map(|i| json!(i)).collect(),
        }
    }

    fn changed(text: &str, add: &Add) -> (String, Wrote) {
        match add_json(text, add).unwrap() {
            Added::Changed(t, w) => (t, w),
            _ => panic!("nothing added to {text}"),
        }
    }

    #[test]
    fn adding_then_taking_back_gives_the_same_bytes() {
        let deny = list(&["permissions", "deny"], &["Edit", "Write"]);
        for old in [
            "{\n  \"model\": \"opus\"\n}\n",
            "{\"model\":\"opus\",\"permissions\":{\"allow\":[\"Bash(ls)\"]}}",
            "{\n\t\"permissions\": {\n\t\t\"deny\": [\n\t\t\t\"Bash(rm *)\"\n\t\t]\n\t}\n}\n",
            "{\"permissions\": {\"deny\": [\"Read(.env)\"]}}",
            "{\r\n  \"permissions\": {\r\n    \"deny\": [\r\n      \"X\"\r\n    ]\r\n  }\r\n}\r\n",
        ] {
            let (new, wrote) = changed(old, &deny);
            let v: Value = serde_json::from_str(&new).unwrap();
            let names: Vec<&str> = v["permissions"]["deny"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            assert!(names.ends_with(&["Edit", "Write"]), "{new}");
            let (back, left) = take_back(&new, &wrote);
            assert_eq!(back, old, "taken back structurally");
            assert!(left.is_empty());
            let s = splice_back(old, &new);
            assert_eq!(unsplice(&new, &[s]).unwrap(), old);
        }
        let (new, _) = changed("{\"permissions\": {\"deny\": [\"Edit\"]}}", &deny);
        assert_eq!(new, "{\"permissions\": {\"deny\": [\"Edit\", \"Write\"]}}");
        assert!(matches!(add_json(&new, &deny).unwrap(), Added::Already));
        let (fresh, _) = changed("", &deny);
        assert_eq!(
            fresh,
            "{\n  \"permissions\": {\n    \"deny\": [\"Edit\", \"Write\"]\n  }\n}\n"
        );
    }

    #[test]
    fn a_setting_of_the_users_is_left_and_named() {
        let edit = Add::Member {
            path: &["permission", "edit"],
            value: "deny",
        };
        match add_json("{\"permission\": {\"edit\": \"ask\"}}", &edit).unwrap() {
            Added::Left(why) => assert_eq!(why, "permission.edit is already set to \"ask\" (setup would set \"deny\"): edits still go around multiedit"),
            _ => panic!("changed"),
        }
        let (new, wrote) = changed("{\"permission\": {\"bash\": \"ask\"}}", &edit);
        assert_eq!(
            new,
            "{\"permission\": {\"bash\": \"ask\",\"edit\":\"deny\"}}"
        );
        let edited = new.replace("\"deny\"", "\"ask\"");
        let (back, left) = take_back(&edited, &wrote);
        assert_eq!(back, edited);
        assert_eq!(
            left,
            ["permission.edit is now \"ask\", not the \"deny\" setup wrote: left as it is"]
        );
        // A user's rule added beside setup's stays, setup's go.
        let deny = list(&["permissions", "deny"], &["Edit", "Write"]);
        let (new, wrote) = changed("{}", &deny);
        let mixed = new.replace("\"Write\"", "\"Write\", \"Bash(rm *)\"");
        let (back, left) = take_back(&mixed, &wrote);
        assert_eq!(
            value_at(&back, &["permissions", "deny"]),
            Some(json!(["Bash(rm *)"])),
            "{back}"
        );
        assert!(left.is_empty());
    }
}
