//! Random texts and plans through the engine and the reference implementation in tests/support/reference/:
//! same outcome, same text, same refusal kind. Any input that panics is a difference (or a crash).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/reference/mod.rs"]
mod reference;

fuzz_target!(
    init: {
        reference::model::MAX_TEXT.store(1 << 20, std::sync::atomic::Ordering::Relaxed);
    },
    |data: &[u8]| {
        reference::assert_agree(data);
    }
);
