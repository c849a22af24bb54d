//! Arbitrary bytes as a patch (a unified diff, an apply_patch envelope, SEARCH/REPLACE blocks or
//! anything else) and a file text: detecting, parsing, placing the hunks, and rendering the result must
//! never panic, and what is written is exactly the composed replacements applied to the file.
//! Input layout: PATCH, then optionally a 0x01 byte and the text every file of the patch holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use multiedit::engine::{self, Matching};
use multiedit::formats;

fuzz_target!(|data: &[u8]| {
    let (patch, text) = match data.iter().position(|&b| b == 1) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"a\nb\na\nc\n"[..]),
    };
    let (Ok(patch), Ok(text)) = (std::str::from_utf8(patch), std::str::from_utf8(text)) else { return };
    for matching in [Matching::Exact, Matching::Tolerant] {
        let plan = match formats::plan_from_text(patch, None, Some(std::path::Path::new("/w")), matching) {
            Ok((plan, _)) => plan,
            Err(r) => {
                let _ = r.full_text();
                return;
            }
        };
        let texts: Vec<Option<&str>> = plan
            .files
            .iter()
            .map(|f| (f.op != engine::FileOp::Create).then_some(text))
            .collect();
        match engine::apply_plan(&plan, &texts) {
            Ok(outcome) => {
                let _ = multiedit::result::PlanResult::of(&outcome).to_value();
                for (f, before) in outcome.files.iter().zip(&texts) {
                    let before = before.unwrap_or("");
                    let _ = engine::diff::file_diff(f, before);
                    if !f.created {
                        assert_eq!(engine::apply_replacements(before, &f.replacements), f.text, "replacements and text agree");
                    }
                }
            }
            Err(r) => {
                let _ = r.full_text();
            }
        }
    }
});
