//! The same commits in other clothes: both images of a file converted line by line, the same way, so
//! the changed line ranges stay the changed line ranges. A line is converted by its text alone, so
//! equal lines stay equal and the edits derived from the converted images are real edits too.

/// How both images of every file are converted before edits are derived from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The history as it is.
    Base,
    /// Every line break `\r\n`; every other edit writes its strings with `\n`, as an assistant does.
    Crlf,
    /// Leading indentation units (the file's, 2 or 4 spaces) as tabs.
    Tabs,
    /// Accented words, CJK, emoji, typographic quotes and dashes.
    NonAscii,
    /// Trailing spaces and tabs on some lines, as editors leave them.
    Trailing,
}

pub const VARIANTS: [Variant; 5] = [
    Variant::Base,
    Variant::Crlf,
    Variant::Tabs,
    Variant::NonAscii,
    Variant::Trailing,
];

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Base => "as committed",
            Variant::Crlf => "CRLF",
            Variant::Tabs => "tab-indented",
            Variant::NonAscii => "non-ASCII",
            Variant::Trailing => "trailing spaces",
        }
    }

    /// Both images converted; the indentation unit is chosen from both so that they agree.
    pub fn convert(self, pre: Option<&str>, post: &str) -> (Option<String>, String) {
        let unit = indent_unit(pre.into_iter().chain([post]));
        let conv = |text: &str| {
            lines(text)
                .into_iter()
                .map(|l| self.line(l, unit))
                .collect::<String>()
        };
        (pre.map(conv), conv(post))
    }

    fn line(self, line: &str, unit: usize) -> String {
        let (body, eol) = split_eol(line);
        match self {
            Variant::Base => line.to_string(),
            Variant::Crlf => format!("{body}{}", if eol.is_empty() { "" } else { "\r\n" }),
            Variant::Tabs => format!("{}{eol}", spaces_to_tabs(body, unit)),
            Variant::NonAscii => format!("{}{eol}", non_ascii(body)),
            Variant::Trailing => {
                let h = hash(body);
                let tail = if body.trim().is_empty() || !h.is_multiple_of(3) {
                    ""
                } else if h.is_multiple_of(2) {
                    "  "
                } else {
                    "\t"
                };
                format!("{body}{tail}{eol}")
            }
        }
    }
}

/// The lines of `text`, each with its line break.
pub fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// A line's text and its line break (`\r\n`, `\n` or none).
pub fn split_eol(line: &str) -> (&str, &str) {
    if let Some(b) = line.strip_suffix("\r\n") {
        (b, "\r\n")
    } else if let Some(b) = line.strip_suffix('\n') {
        (b, "\n")
    } else {
        (line, "")
    }
}

/// 2 if the space-indented lines are not all indented by multiples of 4, else 4.
pub fn indent_unit<'a>(texts: impl Iterator<Item = &'a str>) -> usize {
    let mut odd = 0;
    let mut all = 0;
    for t in texts {
        for l in t.lines() {
            let n = l.len() - l.trim_start_matches(' ').len();
            if n > 0 && !l.trim().is_empty() {
                all += 1;
                odd += usize::from(n % 4 != 0);
            }
        }
    }
    if odd * 10 > all {
        2
    } else {
        4
    }
}

/// Leading runs of `unit` spaces as tabs (what is left over stays spaces).
pub fn spaces_to_tabs(line: &str, unit: usize) -> String {
    let n = line.len() - line.trim_start_matches(' ').len();
    format!(
        "{}{}{}",
        "\t".repeat(n / unit),
        " ".repeat(n % unit),
        &line[n..]
    )
}

/// Leading tabs as `unit` spaces each.
pub fn tabs_to_spaces(line: &str, unit: usize) -> String {
    let n = line.len() - line.trim_start_matches('\t').len();
    format!("{}{}", " ".repeat(n * unit), &line[n..])
}

const WORDS: &[(&str, &str)] = &[
    ("the", "thé"),
    ("file", "fïle"),
    ("edit", "édit"),
    ("edits", "éditß"),
    ("text", "tëxt"),
    ("line", "ligne·行"),
    ("error", "错误"),
    ("test", "tést"),
    ("plan", "plän"),
    ("new", "nouveau🆕"),
    ("old", "ältere"),
    ("string", "строка"),
    ("match", "match🔥"),
];

/// Some words accented, translated or given an emoji; `"…"` pairs curled; apostrophes inside words as ’;
/// ` - ` and ` -- ` as ` — `.
fn non_ascii(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut word = String::new();
    let mut open = true;
    let flush = |word: &mut String, out: &mut String| {
        match WORDS.iter().find(|(w, _)| *w == word.as_str()) {
            Some((_, to)) => out.push_str(to),
            None => out.push_str(word),
        }
        word.clear();
    };
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        let after_letter = !word.is_empty();
        flush(&mut word, &mut out);
        match c {
            '"' => {
                out.push(if open { '\u{201c}' } else { '\u{201d}' });
                open = !open;
            }
            '\'' if after_letter && chars.get(i + 1).is_some_and(|n| n.is_alphabetic()) => {
                out.push('\u{2019}')
            }
            _ => out.push(c),
        }
    }
    flush(&mut word, &mut out);
    out.replace(" -- ", " \u{2014} ")
        .replace(" - ", " \u{2014} ")
}

/// FNV-1a: the same on every run and platform.
pub fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
