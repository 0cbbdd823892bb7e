//! Dynamic lists (issue 13, item 3): resource providers with pagination,
//! several changes with one notification, templates added and removed
//! while serving, and completion per prompt argument and template
//! variable.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use tiny_mcp::{
    Error, ErrorCode, GetPromptResult, MemoryClient, Message, Prompt, PromptArgument,
    ReadResourceResult, RequestContext, Resource, ResourcePage, ResourceProvider, ResourceTemplate,
    Server, TemplateVariables,
};

use crate::support::{connect, expect_error, messages_before_ping};

/// `count` resources `row://0` .. computed per request, 3 to a page.
struct Rows {
    count: usize,
}

impl ResourceProvider for Rows {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        let all = (0..self.count)
            .map(|i| Resource::new(format!("row://{}", i), format!("row {}", i)))
            .collect();
        ResourcePage::paginate(all, cursor, 3)
    }

    fn read(&self, _: &RequestContext, uri: &str) -> Option<Result<ReadResourceResult, Error>> {
        let n: usize = uri.strip_prefix("row://")?.parse().ok()?;
        if n >= self.count {
            return None;
        }
        Some(Ok(ReadResourceResult::text(
            uri,
            format!("row {} from the provider", n),
        )))
    }
}

fn fixed(_: &RequestContext, uri: &str) -> Result<ReadResourceResult, Error> {
    Ok(ReadResourceResult::text(uri, "fixed"))
}

fn templated(
    _: &RequestContext,
    uri: &str,
    vars: &TemplateVariables,
) -> Result<ReadResourceResult, Error> {
    Ok(ReadResourceResult::text(
        uri,
        format!("template {}", vars["n"]),
    ))
}

fn provided_server() -> Server {
    Server::builder("rows", "1")
        .page_size(2)
        .resource(Resource::new("fixed://a", "a"), fixed)
        .resource(Resource::new("fixed://b", "b"), fixed)
        .resource(Resource::new("fixed://c", "c"), fixed)
        .resource_provider(Rows { count: 4 })
        .resource_provider(Rows { count: 0 })
        .resource_provider(Rows { count: 2 })
        .resource_template(ResourceTemplate::new("row://{n}", "any row"), templated)
        .build()
}

/// Every URI of `resources/list`, following `nextCursor` to the end.
fn list_all(client: &mut MemoryClient) -> (Vec<String>, usize) {
    let (mut uris, mut pages, mut cursor) = (Vec::new(), 0, Value::Null);
    loop {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({ "cursor": cursor })
        };
        let page = client.request("resources/list", Some(params)).unwrap();
        pages += 1;
        for resource in page["resources"].as_array().unwrap() {
            uris.push(resource["uri"].as_str().unwrap().to_string());
        }
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            return (uris, pages);
        }
        assert!(pages < 20, "the pages never end");
    }
}

// server/resources "Listing Resources", server/utilities/pagination: the
// fixed resources come first in pages of page_size, then each provider's
// own pages in order; an empty provider is skipped.
#[test]
fn providers_follow_the_fixed_resources_page_by_page() {
    let server = provided_server();
    let mut client = connect(&server, json!({}));
    let (uris, pages) = list_all(&mut client);
    assert_eq!(
        uris,
        [
            "fixed://a",
            "fixed://b",
            "fixed://c",
            "row://0",
            "row://1",
            "row://2",
            "row://3",
            "row://0",
            "row://1"
        ]
    );
    // a,b | c | 0,1,2 | 3 | 0,1 (the empty provider gives no page).
    assert_eq!(pages, 5);
    for bad in ["p:9:", "p:0:junk", "zzz"].iter() {
        let answer = client.request("resources/list", Some(json!({ "cursor": bad })));
        expect_error(answer, ErrorCode::INVALID_PARAMS, bad);
    }
}

// server/resources "Reading Resources": fixed resources, then providers,
// then templates: a URI a provider lists is read from it, not from a
// template that matches it too; a URI no provider knows falls through.
#[test]
fn listed_uris_take_priority_over_templates() {
    let server = provided_server();
    let mut client = connect(&server, json!({}));
    let read = |client: &mut MemoryClient, uri: &str| {
        let result = client
            .request("resources/read", Some(json!({ "uri": uri })))
            .unwrap();
        result["contents"][0]["text"].as_str().unwrap().to_string()
    };
    assert_eq!(read(&mut client, "fixed://b"), "fixed");
    assert_eq!(read(&mut client, "row://3"), "row 3 from the provider");
    assert_eq!(read(&mut client, "row://9"), "template 9");
    let answer = client.request("resources/read", Some(json!({"uri": "nope://x"})));
    expect_error(answer, ErrorCode::RESOURCE_NOT_FOUND, "unknown URI");
}

fn notifications_named(messages: &[Message], method: &str) -> usize {
    messages
        .iter()
        .filter(|m| matches!(m, Message::Notification(n) if n.method == method))
        .count()
}

// server/resources "List Changed Notification": an edit that replaces the
// whole list sends one notifications/resources/list_changed, and clients
// see the old list or the new one, never a mix.
#[test]
fn an_edit_replaces_a_list_with_one_notification() {
    let server = Server::builder("edits", "1")
        .resource(Resource::new("old://1", "old"), fixed)
        .build();
    let mut client = connect(&server, json!({}));
    server.handle().edit(|edit| {
        edit.clear_resources();
        for i in 0..5 {
            edit.add_resource(Resource::new(format!("new://{}", i), "new"), fixed);
        }
        edit.add_resource_template(ResourceTemplate::new("t://{n}", "t"), templated);
    });
    let before = messages_before_ping(&mut client);
    let method = "notifications/resources/list_changed";
    assert_eq!(notifications_named(&before, method), 1, "{:?}", before);
    let (uris, _) = list_all(&mut client);
    assert_eq!(uris.len(), 5);
    assert!(uris.iter().all(|u| u.starts_with("new://")), "{:?}", uris);
    // An edit that changes nothing sends nothing.
    server.handle().edit(|edit| edit.remove_tool("none"));
    assert_eq!(
        notifications_named(&messages_before_ping(&mut client), method),
        0
    );
}

// server/resources "Resource Templates": templates added and removed while
// serving, each with its list_changed.
#[test]
fn templates_come_and_go_while_serving() {
    let server = Server::builder("templates", "1").offer_resources().build();
    let handle = server.handle();
    let mut client = connect(&server, json!({}));
    handle
        .edit(|edit| edit.add_resource_template(ResourceTemplate::new("t://{n}", "t"), templated));
    let listed = client.request("resources/templates/list", None).unwrap();
    assert_eq!(listed["resourceTemplates"][0]["uriTemplate"], "t://{n}");
    let read = client.request("resources/read", Some(json!({"uri": "t://7"})));
    assert_eq!(read.unwrap()["contents"][0]["text"], "template 7");
    assert!(handle.edit(|edit| edit.remove_resource_template("t://{n}")));
    assert!(!handle.edit(|edit| edit.remove_resource_template("t://{n}")));
    let before = messages_before_ping(&mut client);
    let method = "notifications/resources/list_changed";
    assert_eq!(notifications_named(&before, method), 2, "{:?}", before);
    let answer = client.request("resources/read", Some(json!({"uri": "t://7"})));
    expect_error(answer, ErrorCode::RESOURCE_NOT_FOUND, "a removed template");
}

fn prefixed(words: &'static [&'static str]) -> impl tiny_mcp::ArgumentCompleter {
    move |_: &RequestContext, typed: &str, context: &BTreeMap<String, String>| {
        let suffix = context.get("suffix").cloned().unwrap_or_default();
        Ok(words
            .iter()
            .filter(|w| w.starts_with(typed))
            .map(|w| format!("{}{}", w, suffix))
            .collect())
    }
}

fn completing_server() -> Server {
    let prompt = Prompt::new("review")
        .with_argument(PromptArgument::new("language", "", true))
        .with_argument(PromptArgument::new("style", "", false));
    Server::builder("complete", "1")
        .prompt(prompt, |_: &RequestContext, _: BTreeMap<String, String>| {
            Ok(GetPromptResult::default())
        })
        .resource_template(ResourceTemplate::new("file:///{path}", "f"), templated)
        .complete_prompt_argument("review", "language", prefixed(&["perl", "python", "rust"]))
        .complete_template_variable("file:///{path}", "path", prefixed(&["src", "srv"]))
        .build()
}

fn complete(client: &mut MemoryClient, reference: Value, name: &str, value: &str) -> Value {
    let params = json!({"ref": reference, "argument": {"name": name, "value": value},
        "context": {"arguments": {"suffix": "!"}}});
    client.request("completion/complete", Some(params)).unwrap()["completion"].clone()
}

// server/utilities/completion: each argument's own completer answers,
// with the context's arguments; an argument without one gets no values;
// a reference to nothing is -32602; the capability is declared.
#[test]
fn completion_per_argument_and_variable() {
    let server = completing_server();
    assert!(server.capabilities().completions.is_some());
    let mut client = connect(&server, json!({}));
    let prompt = json!({"type": "ref/prompt", "name": "review"});
    let values = complete(&mut client, prompt.clone(), "language", "p")["values"].clone();
    assert_eq!(values, json!(["perl!", "python!"]));
    let none = complete(&mut client, prompt, "style", "")["values"].clone();
    assert_eq!(none, json!([]));
    let template = json!({"type": "ref/resource", "uri": "file:///{path}"});
    let values = complete(&mut client, template, "path", "sr")["values"].clone();
    assert_eq!(values, json!(["src!", "srv!"]));
    let params = json!({"ref": {"type": "ref/prompt", "name": "nope"},
        "argument": {"name": "x", "value": ""}});
    let answer = client.request("completion/complete", Some(params));
    expect_error(answer, ErrorCode::INVALID_PARAMS, "an unknown prompt");
}

// CMP-2: at most 100 values, with total and hasMore.
#[test]
fn completers_send_at_most_a_hundred_values() {
    let many = |_: &RequestContext, _: &str, _: &BTreeMap<String, String>| {
        Ok((0..250).map(|i| i.to_string()).collect())
    };
    let server = Server::builder("many", "1")
        .prompt(
            Prompt::new("p"),
            |_: &RequestContext, _: BTreeMap<String, String>| Ok(GetPromptResult::default()),
        )
        .complete_prompt_argument("p", "a", many)
        .build();
    let mut client = connect(&server, json!({}));
    let completion = complete(
        &mut client,
        json!({"type": "ref/prompt", "name": "p"}),
        "a",
        "",
    );
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["total"], 250);
    assert_eq!(completion["hasMore"], true);
}

/// A provider whose pages are all empty, forever.
struct Endless;

impl ResourceProvider for Endless {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        let n: u64 = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        Ok(ResourcePage::new(Vec::new()).with_next_cursor((n + 1).to_string()))
    }
}

// A provider that never ends its empty pages cannot hold a worker: the
// crate skips a bounded number of them, then answers an empty page with
// the next cursor (server/utilities/pagination allows any page size).
#[test]
fn endless_empty_pages_are_bounded() {
    let server = Server::builder("endless", "1")
        .resource_provider(Endless)
        .build();
    let mut client = connect(&server, json!({}));
    let page = client.request("resources/list", None).unwrap();
    assert_eq!(page["resources"], json!([]));
    let next = page["nextCursor"].as_str().unwrap().to_string();
    let page = client
        .request("resources/list", Some(json!({ "cursor": next })))
        .unwrap();
    assert!(page["nextCursor"].is_string(), "{}", page);
}

/// A provider whose second page's cursor is the empty string.
struct EmptyCursor;

impl ResourceProvider for EmptyCursor {
    fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
        match cursor {
            None => Ok(ResourcePage::new(vec![Resource::new("e://1", "1")]).with_next_cursor("")),
            Some("") => Ok(ResourcePage::new(vec![Resource::new("e://2", "2")])),
            Some(other) => Err(Error::invalid_params(format!("invalid cursor: {}", other))),
        }
    }
}

// server/utilities/pagination: a cursor is an opaque string; a provider's
// empty one is its own, not its first page again.
#[test]
fn a_provider_s_empty_cursor_is_a_cursor() {
    let server = Server::builder("empty", "1")
        .resource_provider(EmptyCursor)
        .build();
    let mut client = connect(&server, json!({}));
    let (uris, pages) = list_all(&mut client);
    assert_eq!(
        (uris, pages),
        (vec!["e://1".to_string(), "e://2".to_string()], 2)
    );
}
