//! A document's symbols as multiedit reads them: each symbol's range and name in byte offsets of the
//! text they were computed on, the name paths plans address them by, and the outline an agent reads.
//!
//! A name path is the names from the outermost symbol in, separated by `/` (`Calculator/add`). It
//! names every symbol whose innermost names are those (`add` names each `add`, whatever holds it); a
//! leading `/` asks for the outermost name to be a top-level one; `[n]` picks the n-th (from 0, in file
//! order) of several. A name matches a symbol's name when they are equal, or when the name equals it
//! without the parameter list some servers add (`add(int, int)`); qualified names count as their parts
//! (clangd's `Calculator::add`, gopls's `(*Calculator).Add`), and Rust's `impl Trait for Calculator` as
//! `Calculator`.
//!
//! Every symbol also has an address: the name path that names it alone (`Found::address`), which
//! every outline, description and refusal gives, so that a name multiedit offers, sent back, finds
//! that one symbol: its path as the outline spells it where that is unique, else with a leading `/`
//! (a top-level `add` beside `Calculator/add`), else by its parts (clangd's `Calculator::sub` is
//! `Calculator/sub`), else with its place among the symbols of that path (`add[1]`, overloads).

use std::collections::HashMap;

use ropey::Rope;

use crate::engine::NamePath;
use crate::protocol::ext::ReportedSymbol;
use crate::protocol::positions::{self as convert, Encoding};
use crate::refusal::{Kind, Refusal};
use crate::result::{OutlineSymbol, SymbolsResult};
use tower_lsp_server::ls_types::Position;

/// One symbol, in byte offsets of the text it was computed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub(crate) name: String,
    pub(crate) detail: Option<String>,
    /// LSP's `SymbolKind`.
    pub(crate) kind: u32,
    /// The whole symbol, and its name.
    pub(crate) range: (usize, usize),
    pub(crate) selection: (usize, usize),
    /// 1-based first and last line of `range`.
    pub(crate) lines: (usize, usize),
    pub(crate) children: Vec<Symbol>,
}

/// LSP's names for `SymbolKind` 1 to 26, as an outline shows them.
const KINDS: [&str; 26] = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum member",
    "struct",
    "event",
    "operator",
    "type parameter",
];

pub(crate) fn kind_name(kind: u32) -> &'static str {
    kind.checked_sub(1)
        .and_then(|k| KINDS.get(k as usize))
        .copied()
        .unwrap_or("symbol")
}

/// The byte offset of an LSP position, or `None` when the position does not fit the text (a line past
/// its end, a column past its line or inside a character): the symbols were computed on another text.
pub(crate) fn byte_of(rope: &Rope, pos: Position, enc: Encoding) -> Option<usize> {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return None;
    }
    let content = convert::line_content(rope, line);
    let col = pos.character as usize;
    let chars = match enc {
        Encoding::Utf16 => {
            if col > content.len_utf16_cu() {
                return None;
            }
            let c = content.utf16_cu_to_char(col);
            (content.char_to_utf16_cu(c) == col).then_some(c)?
        }
        Encoding::Utf8 => {
            if col > content.len_bytes() {
                return None;
            }
            let c = content.byte_to_char(col);
            (content.char_to_byte(c) == col).then_some(c)?
        }
    };
    Some(rope.line_to_byte(line) + content.char_to_byte(chars))
}

/// The editor's symbols in byte offsets of `rope`, or why they do not fit it.
pub fn read(
    reported: &[ReportedSymbol],
    rope: &Rope,
    enc: Encoding,
) -> Result<Vec<Symbol>, String> {
    reported
        .iter()
        .map(|s| {
            let at = |p: Position| {
                byte_of(rope, p, enc).ok_or_else(|| {
                    format!(
                        "the symbol {} is at line {}, column {}, which the text does not have",
                        s.name,
                        p.line + 1,
                        p.character + 1
                    )
                })
            };
            let range = (at(s.range.start)?, at(s.range.end)?);
            let selection = (at(s.selection_range.start)?, at(s.selection_range.end)?);
            if range.0 > range.1 || selection.0 > selection.1 {
                return Err(format!("the symbol {} ends before it starts", s.name));
            }
            Ok(Symbol {
                name: s.name.clone(),
                detail: s.detail.clone().filter(|d| !d.trim().is_empty()),
                kind: s.kind,
                range,
                selection,
                lines: (
                    s.range.start.line as usize + 1,
                    s.range.end.line as usize + 1,
                ),
                children: read(&s.children, rope, enc)?,
            })
        })
        .collect()
}

/// The names a symbol's name stands for, outermost first, each with the spellings it matches.
fn segments(name: &str) -> Vec<Vec<String>> {
    let name = name.trim();
    // gopls: `(*Calculator).Add`, `(Calculator).Add`.
    if let Some(rest) = name.strip_prefix('(') {
        if let Some((receiver, method)) = rest.split_once(").") {
            let receiver = receiver.trim_start_matches('*').trim();
            return vec![vec![receiver.to_string()], spellings(method)];
        }
    }
    // rust-analyzer: `impl Calculator`, `impl Display for Calculator`, `impl<T> Stack<T>`.
    if let Some(rest) = name
        .strip_prefix("impl")
        .filter(|r| r.starts_with([' ', '<']))
    {
        let target = rest.rsplit(" for ").next().unwrap_or(rest);
        let target = skip_generics(target.trim()).trim();
        let bare = target.split('<').next().unwrap_or(target).trim();
        return vec![vec![name.to_string(), bare.to_string()]];
    }
    // The signature is not part of the qualified name: `Calc::add(int, int)`.
    let (head, signature) = match name.find('(') {
        Some(i) if name.ends_with(')') => (&name[..i], Some(&name[i..])),
        _ => (name, None),
    };
    let parts: Vec<&str> = head.split("::").filter(|p| !p.is_empty()).collect();
    if parts.len() < 2 {
        return vec![spellings(name)];
    }
    let mut out: Vec<Vec<String>> = parts.iter().map(|p| vec![p.trim().to_string()]).collect();
    if let (Some(last), Some(sig)) = (out.last_mut(), signature) {
        last.push(format!("{}{sig}", last[0]));
    }
    out
}

/// `impl<T> Stack<T>`'s `<T>` after `impl`.
fn skip_generics(s: &str) -> &str {
    let Some(rest) = s.strip_prefix('<') else {
        return s;
    };
    let mut depth = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return &rest[i + 1..];
                }
            }
            _ => {}
        }
    }
    s
}

/// A name, and the same without the parameter list a server may add to it.
fn spellings(name: &str) -> Vec<String> {
    let name = name.trim();
    let mut out = vec![name.to_string()];
    if let Some(i) = name.find('(').filter(|_| name.ends_with(')')) {
        let bare = name[..i].trim();
        if !bare.is_empty() {
            out.push(bare.to_string());
        }
    }
    out
}

/// A symbol found, with the names of what holds it.
#[derive(Debug, Clone)]
pub struct Found<'s> {
    pub(crate) symbol: &'s Symbol,
    /// The names from the outermost in, this symbol's last, as the symbols spell them.
    pub(crate) path: Vec<&'s str>,
    /// The matchable segments of that chain.
    chain: Vec<Vec<String>>,
    /// The name path that names this symbol alone among the file's (`addresses`): `Calculator/add`,
    /// `/add`, `add[1]`.
    pub(crate) address: String,
}

impl Found<'_> {
    /// `Calculator/add`, as the symbols spell it (which may name others too: `address` names it alone).
    pub(crate) fn path_text(&self) -> String {
        self.path.join("/")
    }

    /// "method Calculator/add (lines 3-5)", by its address.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {} ({})",
            kind_name(self.symbol.kind),
            self.address,
            self.lines_text()
        )
    }

    /// "line 3", "lines 3-5".
    fn lines_text(&self) -> String {
        let s = self.symbol;
        if s.lines.0 == s.lines.1 {
            format!("line {}", s.lines.0)
        } else {
            format!("lines {}-{}", s.lines.0, s.lines.1)
        }
    }

    /// The same with the detail its server gives (a signature, which tells overloads apart):
    /// "function pick (line 1): int (int)".
    pub(crate) fn describe_in_full(&self) -> String {
        self.with_detail(self.describe())
    }

    /// `what`, then the first line of the symbol's detail.
    fn with_detail(&self, what: String) -> String {
        match self.symbol.detail.as_deref().and_then(|d| d.lines().next()) {
            Some(d) => format!("{what}: {d}"),
            None => what,
        }
    }
}

/// Every symbol, depth first in file order.
pub(crate) fn all(symbols: &[Symbol]) -> Vec<Found<'_>> {
    fn walk<'s>(
        symbols: &'s [Symbol],
        path: &[&'s str],
        chain: &[Vec<String>],
        out: &mut Vec<Found<'s>>,
    ) {
        let mut sorted: Vec<&Symbol> = symbols.iter().collect();
        sorted.sort_by_key(|s| s.range.0);
        for s in sorted {
            let mut p = path.to_vec();
            p.push(&s.name);
            let mut c = chain.to_vec();
            c.extend(segments(&s.name));
            out.push(Found {
                symbol: s,
                path: p.clone(),
                chain: c.clone(),
                address: String::new(),
            });
            walk(&s.children, &p, &c, out);
        }
    }
    let mut out = Vec::new();
    walk(symbols, &[], &[], &mut out);
    let addresses = addresses(&out);
    for (f, a) in out.iter_mut().zip(addresses) {
        f.address = a;
    }
    out
}

/// Each symbol's address: the first of its name paths that, parsed as a plan's `symbol` is and
/// resolved as `find` resolves it, names that symbol alone. A name that holds `/` can be named by no
/// path; its path as spelled is given then.
fn addresses(every: &[Found<'_>]) -> Vec<String> {
    // Only a symbol whose innermost name has a path's last name can match that path.
    let mut by_last: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, f) in every.iter().enumerate() {
        for spelling in f.chain.last().into_iter().flatten() {
            let ks = by_last.entry(spelling.as_str()).or_default();
            if ks.last() != Some(&k) {
                ks.push(k);
            }
        }
    }
    // Where `text` leads: the symbols it names, in file order, and the index it asks for.
    let named = |text: &str| -> Option<(Vec<usize>, Option<usize>)> {
        let wanted = NamePath::parse(text, "symbol").ok()?;
        let ks = by_last.get(wanted.names.last()?.as_str())?;
        let hits = ks
            .iter()
            .copied()
            .filter(|&k| matches(&every[k], &wanted))
            .collect();
        Some((hits, wanted.index))
    };
    let resolves_to = |text: &str, k: usize| match named(text) {
        Some((hits, None)) => hits == [k],
        Some((hits, Some(i))) => hits.get(i) == Some(&k),
        None => false,
    };
    every
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let spelled = f.path_text();
            let join = |pick: fn(&Vec<String>) -> &String| {
                f.chain
                    .iter()
                    .map(pick)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/")
            };
            let parts = join(|s| &s[0]);
            let bare = join(|s| s.last().unwrap_or(&s[0]));
            let mut tried: Vec<String> = Vec::new();
            for p in [&spelled, &parts, &bare] {
                tried.push(p.clone());
                tried.push(format!("/{p}"));
            }
            // Overloads: their place among the symbols of their path.
            for p in [&parts, &spelled] {
                if let Some(i) = named(p).and_then(|(hits, _)| hits.iter().position(|&h| h == k)) {
                    tried.push(format!("{p}[{i}]"));
                }
            }
            tried
                .into_iter()
                .find(|t| resolves_to(t, k))
                .unwrap_or(spelled)
        })
        .collect()
}

fn matches(found: &Found<'_>, wanted: &NamePath) -> bool {
    let n = wanted.names.len();
    let chain = &found.chain;
    if chain.len() < n || (wanted.rooted && chain.len() != n) {
        return false;
    }
    chain[chain.len() - n..]
        .iter()
        .zip(&wanted.names)
        .all(|(spellings, name)| spellings.iter().any(|s| s == name))
}

/// The one symbol `wanted` names in `symbols`, or the refusal: not found (with the file's outline and
/// the closest names) or ambiguous (every candidate with its line).
pub fn find<'s>(
    symbols: &'s [Symbol],
    wanted: &NamePath,
    file: &str,
) -> Result<Found<'s>, Refusal> {
    let every = all(symbols);
    let candidates: Vec<&Found<'_>> = every.iter().filter(|f| matches(f, wanted)).collect();
    match (candidates.len(), wanted.index) {
        (1, None | Some(0)) => return Ok(candidates[0].clone()),
        (n, Some(i)) if i < n => return Ok(candidates[i].clone()),
        (0, _) => {}
        (n, None) => {
            let listed: Vec<String> = candidates
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let place = format!("{}[{i}]", wanted.text);
                    if f.address == place {
                        // Its address is this place: said once.
                        let what = format!("{} ({})", kind_name(f.symbol.kind), f.lines_text());
                        format!("{place}: {}", f.with_detail(what))
                    } else {
                        format!("{place}: {}", f.describe_in_full())
                    }
                })
                .collect();
            // Each by its address, unless only their places tell some apart (overloads).
            let by_path = if candidates.iter().all(|f| !f.address.ends_with(']')) {
                let paths: Vec<&str> = candidates.iter().map(|f| f.address.as_str()).collect();
                format!(" or by its path ({})", paths.join(", "))
            } else {
                String::new()
            };
            let message = format!(
                "Found {n} symbols named {} in {file}, but a symbol edit must name one: name it by its place among them \
                 ({}[0] is the first in the file){by_path}.\nSymbol: {}",
                wanted.text, wanted.text, wanted.text
            );
            return Err(
                Refusal::new(Kind::SymbolAmbiguous, message).with_hint(Some(format!(
                    "The symbols it names:\n{}",
                    listed.join("\n")
                ))),
            );
        }
        (n, Some(i)) => {
            let listed: Vec<String> = candidates
                .iter()
                .enumerate()
                .map(|(k, f)| format!("[{k}]: {}", f.describe_in_full()))
                .collect();
            let message = format!("Symbol not found in file: {} names {n} symbols in {file}, and [{i}] asks for one more.\nSymbol: {}", strip_index(&wanted.text), wanted.text);
            return Err(
                Refusal::new(Kind::SymbolNotFound, message).with_hint(Some(format!(
                    "The symbols it names:\n{}",
                    listed.join("\n")
                ))),
            );
        }
    }
    let message = format!("Symbol not found in file.\nSymbol: {}", wanted.text);
    Err(Refusal::new(Kind::SymbolNotFound, message).with_hint(Some(not_found_hint(&every, wanted))))
}

fn strip_index(text: &str) -> &str {
    text.rsplit_once('[').map_or(text, |(p, _)| p)
}

/// The closest names, then the file's outline.
fn not_found_hint(every: &[Found<'_>], wanted: &NamePath) -> String {
    if every.is_empty() {
        return "The language server gives no symbol for this file.".into();
    }
    let last = wanted
        .names
        .last()
        .map(|n| n.to_lowercase())
        .unwrap_or_default();
    let mut scored: Vec<(f64, &Found<'_>)> = every
        .iter()
        .map(|f| {
            let own = f
                .chain
                .last()
                .and_then(|s| s.last())
                .map(|s| s.to_lowercase())
                .unwrap_or_default();
            let mut score = strsim::normalized_levenshtein(&own, &last);
            if !last.is_empty() && (own.contains(&last) || last.contains(&own)) {
                score = score.max(0.75);
            }
            (score, f)
        })
        .filter(|(score, _)| *score >= 0.5)
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(a.1.symbol.range.0.cmp(&b.1.symbol.range.0))
    });
    let mut out = String::new();
    if !scored.is_empty() {
        let names: Vec<String> = scored
            .iter()
            .take(3)
            .map(|(_, f)| f.describe_in_full())
            .collect();
        out.push_str(&format!("The closest: {}.\n", names.join("; ")));
    }
    out.push_str("The file's outline (name paths to use):\n");
    out.push_str(&render(every, OUTLINE_HINT_LINES));
    out
}

/// Lines of outline `multiedit.symbols` gives.
const OUTLINE_LINES: usize = 1000;

/// `multiedit.symbols`' result: the tree, with the name path of each symbol, and its text. `given`:
/// who gave them, as the text says it ("the editor's language servers give them").
pub(crate) fn result(file_path: &str, symbols: &[Symbol], given: &str) -> SymbolsResult {
    /// The tree in the order `all` walks it (depth first, each level in file order), so that each
    /// symbol takes its address from `addresses`.
    fn tree(
        symbols: &[Symbol],
        addresses: &mut impl Iterator<Item = String>,
    ) -> Vec<OutlineSymbol> {
        let mut sorted: Vec<&Symbol> = symbols.iter().collect();
        sorted.sort_by_key(|s| s.range.0);
        sorted
            .into_iter()
            .map(|s| {
                let path = addresses.next().unwrap_or_else(|| s.name.clone());
                OutlineSymbol {
                    name: s.name.clone(),
                    kind: kind_name(s.kind).to_string(),
                    line: s.lines.0,
                    end_line: s.lines.1,
                    detail: s.detail.clone(),
                    path,
                    children: tree(&s.children, addresses),
                }
            })
            .collect()
    }
    let every = all(symbols);
    let text = if every.is_empty() {
        format!("{file_path}: the language server gives no symbol for it.\n")
    } else {
        format!(
            "{file_path}: {} symbol{}, as {given} (kind, name path for a plan's \"symbol\", lines):\n{}",
            every.len(),
            if every.len() == 1 { "" } else { "s" },
            render(&every, OUTLINE_LINES)
        )
    };
    SymbolsResult {
        file_path: file_path.to_string(),
        symbols: tree(symbols, &mut every.iter().map(|f| f.address.clone())),
        text,
        earlier_diagnostics: Vec::new(),
    }
}

/// Lines of outline a refusal's hint gives.
const OUTLINE_HINT_LINES: usize = 60;

/// The outline as text: one symbol a line, indented by depth, with its kind, name path and lines; at
/// most `max` lines, then how many more.
pub(crate) fn render(every: &[Found<'_>], max: usize) -> String {
    let mut out = String::new();
    for f in every.iter().take(max) {
        let s = f.symbol;
        let lines = if s.lines.0 == s.lines.1 {
            format!("{}", s.lines.0)
        } else {
            format!("{}-{}", s.lines.0, s.lines.1)
        };
        let detail = s
            .detail
            .as_deref()
            .and_then(|d| d.lines().next())
            .map(|d| format!("  {d}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}{} {}  (line{} {lines}){detail}\n",
            "  ".repeat(f.path.len() - 1),
            kind_name(s.kind),
            f.address,
            if s.lines.0 == s.lines.1 { "" } else { "s" }
        ));
    }
    if every.len() > max {
        out.push_str(&format!("… {} more symbols\n", every.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::Range;

    fn sym(
        name: &str,
        kind: u32,
        lines: (u32, u32),
        children: Vec<ReportedSymbol>,
    ) -> ReportedSymbol {
        let range = Range::new(Position::new(lines.0, 0), Position::new(lines.1, 1));
        ReportedSymbol {
            name: name.into(),
            detail: None,
            kind,
            range,
            selection_range: range,
            children,
        }
    }

    fn tree() -> (Rope, Vec<Symbol>) {
        let text = "x\n".repeat(30);
        let rope = Rope::from_str(&text);
        let reported = vec![
            sym(
                "Calculator",
                5,
                (0, 12),
                vec![
                    sym("add", 6, (2, 4), vec![]),
                    sym("add", 6, (6, 8), vec![]),
                    sym("total", 7, (10, 10), vec![]),
                ],
            ),
            sym("Calculator::sub", 6, (14, 16), vec![]),
            sym(
                "impl Display for Calculator",
                19,
                (18, 20),
                vec![sym("fmt", 6, (19, 19), vec![])],
            ),
            sym("main(int, char **)", 12, (22, 24), vec![]),
        ];
        let symbols = read(&reported, &rope, Encoding::Utf16).unwrap();
        (rope, symbols)
    }

    fn path(s: &str) -> NamePath {
        NamePath::parse(s, "symbol").unwrap()
    }

    #[test]
    fn name_paths_find_one_symbol_or_say_why_not() {
        let (_, symbols) = tree();
        let lines = |p: &str| find(&symbols, &path(p), "/w/calc.cpp").map(|f| f.symbol.lines);
        assert_eq!(lines("total"), Ok((11, 11)));
        assert_eq!(lines("Calculator/add[1]"), Ok((7, 9)));
        assert_eq!(
            lines("Calculator/sub"),
            Ok((15, 17)),
            "clangd's qualified name"
        );
        assert_eq!(
            lines("Calculator/fmt"),
            Ok((20, 20)),
            "rust-analyzer's impl"
        );
        assert_eq!(
            lines("main"),
            Ok((23, 25)),
            "the signature is not part of the name"
        );
        assert_eq!(lines("/main"), Ok((23, 25)));
        assert_eq!(lines("/add").unwrap_err().kind, Kind::SymbolNotFound);

        let r = find(&symbols, &path("add"), "/w/calc.cpp").unwrap_err();
        assert_eq!(r.kind, Kind::SymbolAmbiguous);
        assert_eq!(
            r.message,
            "Found 2 symbols named add in /w/calc.cpp, but a symbol edit must name one: name it by its place among them \
             (add[0] is the first in the file).\nSymbol: add"
        );
        // Each named by its place among them, and described by its address (the overloads' place
        // among the symbols of their path).
        assert_eq!(r.hint.as_deref(), Some("The symbols it names:\nadd[0]: method Calculator/add[0] (lines 3-5)\nadd[1]: method Calculator/add[1] (lines 7-9)"));
        let r = find(&symbols, &path("Calculator/add"), "/w/calc.cpp").unwrap_err();
        assert_eq!(r.hint.as_deref(), Some("The symbols it names:\nCalculator/add[0]: method (lines 3-5)\nCalculator/add[1]: method (lines 7-9)"), "an address that is the place is said once");

        let r = find(&symbols, &path("Calculator/ad"), "/w/calc.cpp").unwrap_err();
        assert_eq!(
            (r.kind, r.message.as_str()),
            (
                Kind::SymbolNotFound,
                "Symbol not found in file.\nSymbol: Calculator/ad"
            )
        );
        let hint = r.hint.unwrap();
        assert!(
            hint.starts_with(
                "The closest: method Calculator/add[0] (lines 3-5); method Calculator/add[1] (lines 7-9)"
            ),
            "{hint}"
        );
        // `Calculator` names the class and rust-analyzer's `impl Display for Calculator`: the class is
        // `Calculator[0]`; clangd's `Calculator::sub` is `Calculator/sub`.
        assert!(hint.ends_with("The file's outline (name paths to use):\nclass Calculator[0]  (lines 1-13)\n  method Calculator/add[0]  (lines 3-5)\n  \
            method Calculator/add[1]  (lines 7-9)\n  property Calculator/total  (line 11)\nmethod Calculator/sub  (lines 15-17)\n\
            object impl Display for Calculator  (lines 19-21)\n  method impl Display for Calculator/fmt  (line 20)\n\
            function main(int, char **)  (lines 23-25)\n"), "{hint}");
        assert_eq!(find(&symbols, &path("add[2]"), "/w/a").unwrap_err().message, "Symbol not found in file: add names 2 symbols in /w/a, and [2] asks for one more.\nSymbol: add[2]");
    }

    /// The names a symbol refusal offers, each with the lines of the symbol it says the name is for
    /// (`None` where it says none): the place and paths in the message, each listed symbol's place and
    /// address, the closest names and every name path of the outline.
    fn offered(r: &Refusal) -> Vec<(String, Option<(usize, usize)>)> {
        let mut out = Vec::new();
        let m = &r.message;
        if let Some(rest) = m
            .split_once("name it by its place among them (")
            .map(|(_, r)| r)
        {
            out.push((
                rest.split_once(" is the first").unwrap().0.to_string(),
                None,
            ));
        }
        if let Some(rest) = m.split_once(" or by its path (").map(|(_, r)| r) {
            let list = rest.split_once(").\nSymbol:").unwrap().0;
            out.extend(list.split(", ").map(|p| (p.to_string(), None)));
        }
        // "kind ADDRESS (lines 3-5)..." or "kind ADDRESS  (lines 3-5)...": the address and the lines.
        let described = |d: &str| -> Option<(String, (usize, usize))> {
            let mut kinds: Vec<&str> = KINDS.iter().copied().chain(["symbol"]).collect();
            kinds.sort_by_key(|k| std::cmp::Reverse(k.len()));
            let kind = kinds.iter().find(|k| d.starts_with(&format!("{k} ")))?;
            let rest = &d[kind.len() + 1..];
            let (name, lines) = rest.split_once(" (line")?;
            let lines = lines.trim_start_matches('s').trim_start();
            let lines = lines.split(')').next()?;
            let (a, b) = lines.split_once('-').unwrap_or((lines, lines));
            let lines = (a.parse().ok()?, b.parse().ok()?);
            Some((name.trim_end().to_string(), lines))
        };
        let hint = r.hint.as_deref().unwrap_or("");
        if let Some(list) = hint.strip_prefix("The symbols it names:\n") {
            for line in list.lines() {
                let (place, what) = line.split_once(": ").unwrap();
                // "add[0]: method (lines 3-5)": the place is the address.
                let lines = described(what)
                    .map(|(name, lines)| {
                        if !name.is_empty() {
                            out.push((name, Some(lines)));
                        }
                        lines
                    })
                    .or_else(|| described(&format!("{what} x")).map(|(_, l)| l));
                let place = match place.strip_prefix('[') {
                    // An index past the end: "[k]" of the path it was sent with.
                    Some(_) => format!(
                        "{}{place}",
                        m.split_once(": ")
                            .unwrap()
                            .1
                            .split(" names ")
                            .next()
                            .unwrap()
                    ),
                    None => place.to_string(),
                };
                out.push((place, lines));
            }
        }
        for line in hint.lines() {
            if let Some(closest) = line.strip_prefix("The closest: ") {
                for d in closest.trim_end_matches('.').split("; ") {
                    let (name, lines) = described(d).unwrap();
                    out.push((name, Some(lines)));
                }
            }
        }
        if let Some((_, outline)) = hint.split_once("(name paths to use):\n") {
            for line in outline.lines() {
                let (name, lines) = described(line.trim_start()).unwrap();
                out.push((name, Some(lines)));
            }
        }
        out
    }

    /// Sends each name back: it names one symbol, the one it was offered for.
    fn each_offered_name_resolves(symbols: &[Symbol], r: &Refusal) -> usize {
        let names = offered(r);
        for (name, lines) in &names {
            let wanted = NamePath::parse(name, "symbol")
                .unwrap_or_else(|e| panic!("{name:?} offered by {r:?}: {e}"));
            let found = find(symbols, &wanted, "/w/calc.cpp").unwrap_or_else(|e| {
                panic!(
                    "{name:?}, offered by\n{}\n{:?}\nis refused: {e:?}",
                    r.message, r.hint
                )
            });
            if let Some(lines) = lines {
                assert_eq!(found.symbol.lines, *lines, "{name:?} offered by {r:?}");
            }
        }
        names.len()
    }

    #[test]
    fn every_name_a_symbol_refusal_offers_names_one_symbol() {
        // A top-level `add` beside `Calculator/add`: `add` names both, so it is not offered for either.
        let rope = Rope::from_str(&"x\n".repeat(60));
        let read_all =
            |reported: &[ReportedSymbol]| read(reported, &rope, Encoding::Utf16).unwrap();
        let symbols = read_all(&[
            sym("Calculator", 5, (0, 4), vec![sym("add", 6, (1, 3), vec![])]),
            sym("add", 12, (6, 8), vec![]),
        ]);
        let r = find(&symbols, &path("add"), "/w/calc.cpp").unwrap_err();
        assert_eq!(
            r.message,
            "Found 2 symbols named add in /w/calc.cpp, but a symbol edit must name one: name it by its place among them \
             (add[0] is the first in the file) or by its path (Calculator/add, /add).\nSymbol: add"
        );
        assert_eq!(
            r.hint.as_deref(),
            Some("The symbols it names:\nadd[0]: method Calculator/add (lines 2-4)\nadd[1]: function /add (lines 7-9)")
        );
        assert_eq!(each_offered_name_resolves(&symbols, &r), 7);

        // Overloads, qualified names, impls, a nested class of the same name, signatures.
        let symbols = read_all(&[
            sym(
                "Calculator",
                5,
                (0, 12),
                vec![
                    sym("add", 6, (2, 4), vec![]),
                    sym("add", 6, (6, 8), vec![]),
                    sym("total", 7, (10, 10), vec![]),
                ],
            ),
            sym("add", 12, (14, 16), vec![]),
            sym("Calculator::sub", 6, (18, 20), vec![]),
            sym(
                "impl Display for Calculator",
                19,
                (22, 24),
                vec![sym("fmt", 6, (23, 23), vec![])],
            ),
            sym("main(int, char **)", 12, (26, 28), vec![]),
            sym(
                "Outer",
                3,
                (30, 40),
                vec![sym(
                    "Calculator",
                    5,
                    (31, 39),
                    vec![
                        sym("add", 6, (32, 34), vec![]),
                        sym("sub", 6, (36, 38), vec![]),
                    ],
                )],
            ),
            sym("pick(int)", 12, (42, 42), vec![]),
            sym("pick(double)", 12, (43, 43), vec![]),
        ]);
        let mut offered_names = 0;
        for sent in [
            "add",
            "Calculator/add",
            "Calculator",
            "/Calculator",
            "sub",
            "Calculator/sub",
            "pick",
            "add[9]",
            "Calculator/add[5]",
            "ad",
            "Calculator/ad",
            "Outer/ad",
            "fm",
        ] {
            let r = find(&symbols, &path(sent), "/w/calc.cpp").unwrap_err();
            offered_names += each_offered_name_resolves(&symbols, &r);
        }
        assert!(offered_names > 100, "{offered_names}");
        // The outline an agent reads names each symbol by the same addresses.
        let outline = result(
            "/w/calc.cpp",
            &symbols,
            "the editor's language servers give them",
        );
        fn walk(symbols: &[OutlineSymbol], out: &mut Vec<(String, (usize, usize))>) {
            for s in symbols {
                out.push((s.path.clone(), (s.line, s.end_line)));
                walk(&s.children, out);
            }
        }
        let mut paths = Vec::new();
        walk(&outline.symbols, &mut paths);
        assert_eq!(paths.len(), 15);
        for (p, lines) in paths {
            assert_eq!(
                find(&symbols, &path(&p), "/w/calc.cpp").map(|f| f.symbol.lines),
                Ok(lines),
                "{p}"
            );
        }
    }

    #[test]
    fn positions_outside_the_text_are_not_read() {
        let rope = Rope::from_str("a😀b\nc\n");
        assert_eq!(
            byte_of(&rope, Position::new(0, 3), Encoding::Utf16),
            Some(5)
        );
        assert_eq!(
            byte_of(&rope, Position::new(0, 2), Encoding::Utf16),
            None,
            "inside the surrogate pair"
        );
        assert_eq!(
            byte_of(&rope, Position::new(0, 2), Encoding::Utf8),
            None,
            "inside the character"
        );
        assert_eq!(byte_of(&rope, Position::new(0, 6), Encoding::Utf8), Some(6));
        assert_eq!(byte_of(&rope, Position::new(1, 2), Encoding::Utf8), None);
        assert_eq!(byte_of(&rope, Position::new(2, 0), Encoding::Utf8), Some(9));
        assert_eq!(byte_of(&rope, Position::new(3, 0), Encoding::Utf8), None);
        let bad = vec![sym("f", 12, (0, 7), vec![])];
        assert_eq!(
            read(&bad, &rope, Encoding::Utf8).unwrap_err(),
            "the symbol f is at line 8, column 2, which the text does not have"
        );
    }
}
