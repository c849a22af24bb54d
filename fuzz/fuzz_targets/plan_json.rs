//! Arbitrary bytes as a plan (JSON) and a file text: parsing, applying, rendering the result and turning
//! the path into a file on disk must never panic, whatever the input.
//! Input layout: PLAN, then optionally a 0x01 byte and the file's text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use multiedit::engine;

fuzz_target!(|data: &[u8]| {
    let (plan, text) = match data.iter().position(|&b| b == 1) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let Ok(plan) = std::str::from_utf8(plan) else { return };
    let _ = multiedit::paths::to_path(plan);
    let Ok(parsed) = engine::parse_plan(plan) else { return };
    for f in &parsed.files {
        let _ = multiedit::paths::to_path(&f.file_path);
    }
    let text = match text {
        None => None,
        Some(bytes) => match engine::decode("/f", bytes) {
            Ok(t) => Some(t),
            Err(r) => {
                let _ = r.full_text();
                return;
            }
        },
    };
    let texts = vec![text; parsed.files.len()];
    match engine::apply_plan(&parsed, &texts) {
        Ok(outcome) => {
            let _ = multiedit::result::PlanResult::of(&outcome).to_value();
            for (f, before) in outcome.files.iter().zip(&texts) {
                let _ = engine::diff::unified(&f.file_path, before.unwrap_or(""), &f.replacements);
            }
        }
        Err(r) => {
            let _ = r.full_text();
        }
    }
});
