//! The RFC 6570 template matcher of `resources/read` on arbitrary
//! templates and URIs: the first line of the input is the template, the
//! rest the URI. It must not panic, and what it matches must be a
//! template's expansion: each variable's value decodes to valid UTF-8.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = match std::str::from_utf8(data) {
        Ok(text) => text,
        Err(_) => return,
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    if let Some(variables) = tiny_mcp::fuzzing::match_uri_template(template, uri) {
        for name in variables.keys() {
            assert!(template.contains(name.as_str()), "a variable the template lacks");
        }
    }
});
