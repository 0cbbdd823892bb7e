//! ELIC-8, client/elicitation (2025-11-25): the content of an accepted
//! form is checked against the form's `requestedSchema` before the handler
//! sees it; the handler gets an invalid-params error naming the field and
//! the rule. Decline and cancel are not checked.

use serde_json::{json, Value};

use crate::support::forms::{bad_profiles, form_server, good_profile};
use crate::support::{call_tool, connect, first_text};

/// What `tool`'s handler got when the client answered its
/// `elicitation/create` with `answer`.
fn handler_got(tool: &str, answer: Value) -> String {
    let server = form_server("forms", "1");
    let mut client = connect(&server, json!({"elicitation": {}}));
    client.on_server_request(move |request| {
        assert_eq!(request.method, "elicitation/create");
        Ok(answer.clone())
    });
    let result = call_tool(&mut client, tool, json!({}));
    first_text(&result).to_string()
}

// ELIC-8 (2025-11-25): each broken rule reaches ctx.elicit as an error
// naming the field and the rule.
#[test]
fn elicit_refuses_content_that_breaks_the_schema() {
    for (answer, words) in bad_profiles() {
        let got = handler_got("profile", answer.clone());
        assert!(
            got.starts_with("refused: elicitation answer: field "),
            "{}: {}",
            answer,
            got
        );
        for word in words.iter() {
            assert!(got.contains(word), "{:?} not in {} ({})", word, got, answer);
        }
    }
}

// ELIC-8 (2025-11-25): content that fits passes as it came; decline and
// cancel are not checked.
#[test]
fn elicit_passes_content_that_fits_and_declines() {
    let got = handler_got("profile", good_profile());
    assert_eq!(got, format!("accept {}", good_profile()["content"]));
    let decline = json!({"action": "decline", "content": {"age": "old"}});
    assert_eq!(handler_got("profile", decline), "decline");
    assert_eq!(
        handler_got("profile", json!({"action": "cancel"})),
        "cancel"
    );
}

// ELIC-8, SEP-2322 (2025-11-25): ctx.request_inputs checks the answer to
// its form too, naming the input's key.
#[test]
fn request_inputs_refuses_content_that_breaks_the_schema() {
    let (answer, words) = bad_profiles().remove(2);
    let got = handler_got("profile_named", answer);
    assert!(
        got.starts_with("refused: elicitation answer \"profile\": field "),
        "{}",
        got
    );
    assert!(got.contains(words[0]) && got.contains(words[1]), "{}", got);
    let got = handler_got("profile_named", good_profile());
    assert_eq!(got, format!("accept {}", good_profile()["content"]));
}
