//! A small, obviously-correct reference implementation of MultiEdit plans (`model`), a generator of
//! random cases from bytes (`gen`) and the comparison of the engine against the reference (`compare`).
//! Shared by `tests/differential.rs` (proptest) and the fuzz target in `fuzz/`.

#![allow(dead_code)]

pub mod compare;
pub mod gen;
pub mod model;

/// Panics with a readable report when the engine and the reference disagree on the case `data` encodes.
pub fn assert_agree(data: &[u8]) {
    let case = gen::case(data);
    if let Err(why) = compare::check(&case) {
        panic!("engine and reference disagree: {why}\ncase: {case:#?}\nbytes: {data:?}");
    }
}
