//! The collect endpoint's wire decoder must answer every input with events or
//! an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let _ = leadtrail::ingest::wire::parse(body);
});
