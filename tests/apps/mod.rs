//! MCP Apps, the extension `io.modelcontextprotocol/ui` (SEP-1865,
//! `specification/2026-01-26/apps.mdx` of `modelcontextprotocol/ext-apps`):
//! views registered and checked, the declaration in both eras, what a
//! request's client renders, the listing's degradation, and the client.

use serde_json::{json, Value};
use tiny_mcp::{
    extensions, CallToolResult, Client, Era, ErrorKind, JsonObject, RequestContext, Resource,
    Server, ServerBuilder, Tool, ToolUiMeta, ToolVisibility, UiResourceCsp, UiResourceMeta,
    UI_MIME_TYPE,
};

use crate::support::{call_tool, connect, WAIT};

const VIEW: &str = "ui://tests/view";
const HTML: &str = "<!DOCTYPE html><html><body>view</body></html>";

fn ui_caps() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": [UI_MIME_TYPE]}}})
}

fn view_meta() -> UiResourceMeta {
    UiResourceMeta::new()
        .with_csp(UiResourceCsp::new().with_connect_domains(["https://api.example.com"]))
        .with_prefers_border(false)
}

/// A server with one view, `show` (both), `refresh` (app only) and
/// `plain` (no view); `show` answers whether the request's client renders
/// views.
fn builder() -> ServerBuilder {
    let view = Resource::new(VIEW, "view").with_ui(view_meta());
    let answer = |ctx: &RequestContext, _: JsonObject| {
        let ui = ctx.supports_ui();
        Ok(CallToolResult::text_and_structured(
            format!("ui: {}", ui),
            json!({ "ui": ui }),
        ))
    };
    Server::builder("apps-tests", "1.0.0")
        .ui_resource(view, HTML)
        .expect("a ui:// view")
        .tool(
            Tool::without_arguments("show").with_ui(ToolUiMeta::new(VIEW)),
            answer,
        )
        .tool(
            Tool::without_arguments("refresh")
                .with_ui(ToolUiMeta::new(VIEW).with_visibility([ToolVisibility::App])),
            answer,
        )
        .tool(Tool::without_arguments("plain"), answer)
}

fn envelope(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "apps-tests", "version": "0"},
    })
}

fn tool_names(list: &Value) -> Vec<&str> {
    let tools = list["tools"].as_array().expect("tools");
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

// "Content Requirements": a view needs the ui:// scheme and the view MIME
// type; "Resource Discovery": a tool's resourceUri must name a registered
// view. Both refused when the server is built, with a clear message.
#[test]
fn registration_is_checked() {
    let scheme = Server::builder("s", "1").ui_resource(Resource::new("https://x/v", "v"), HTML);
    let error = match scheme {
        Err(e) => e,
        Ok(_) => panic!("an https:// view is refused"),
    };
    assert!(
        matches!(error.kind(), ErrorKind::InvalidParams(_)),
        "{:?}",
        error
    );
    assert!(error.to_string().contains("ui://"), "{}", error);
    let typed = Resource::new("ui://v", "v").with_mime_type("text/html");
    let error = Server::builder("s", "1").ui_resource(typed, HTML).err();
    let message = error.expect("text/html is refused").to_string();
    assert!(message.contains(UI_MIME_TYPE), "{}", message);

    let orphan = Server::builder("s", "1").tool(
        Tool::without_arguments("t").with_ui(ToolUiMeta::new("ui://nowhere")),
        |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("x")),
    );
    let message = match orphan.try_build() {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a tool naming an unknown view is refused"),
    };
    assert!(message.contains("ui://nowhere"), "{}", message);
    // A plain resource at the same URI is not a view.
    let plain = Server::builder("s", "1")
        .resource(
            Resource::new("ui://nowhere", "r"),
            |_: &RequestContext, uri: &str| Ok(tiny_mcp::ReadResourceResult::text(uri, "x")),
        )
        .tool(
            Tool::without_arguments("t").with_ui(ToolUiMeta::new("ui://nowhere")),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("x")),
        );
    let message = match plain.try_build() {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a plain resource is not a view"),
    };
    assert!(message.contains("not a view"), "{}", message);
    assert!(builder().try_build().is_ok());
}

// `build` panics with the same message (a program's mistake, not a peer's).
#[test]
#[should_panic(expected = "ui://nowhere")]
fn build_panics_on_an_unknown_view() {
    Server::builder("s", "1")
        .tool(
            Tool::without_arguments("t").with_ui(ToolUiMeta::new("ui://nowhere")),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("x")),
        )
        .build();
}

// "UI Resource Format": the listing and the contents carry `_meta.ui`; the
// contents have the view MIME type; `list_ui_resources(false)` leaves the
// view out of resources/list (allowed: "Servers MAY omit UI-only
// resources") and resources/read still serves it.
#[test]
fn views_listed_and_read() {
    let expected = serde_json::to_value(view_meta()).unwrap();
    let server = builder().build();
    let mut client = connect(&server, json!({}));
    let list = client.request("resources/list", None).unwrap();
    assert_eq!(list["resources"][0]["uri"], VIEW);
    assert_eq!(list["resources"][0]["mimeType"], UI_MIME_TYPE);
    assert_eq!(list["resources"][0]["_meta"]["ui"], expected);
    let read = client
        .request("resources/read", Some(json!({"uri": VIEW})))
        .unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], UI_MIME_TYPE);
    assert_eq!(contents["text"], HTML);
    assert_eq!(contents["_meta"]["ui"], expected);

    let hidden = builder().list_ui_resources(false).build();
    let mut client = connect(&hidden, json!({}));
    let list = client.request("resources/list", None).unwrap();
    assert_eq!(list["resources"], json!([]));
    let read = client.request("resources/read", Some(json!({"uri": VIEW})));
    assert_eq!(read.unwrap()["contents"][0]["text"], HTML);
}

// Negotiation: the server declares the extension in `initialize`
// (2025-11-25, alone among the extensions) and in `server/discover`
// (2026-07-28); a server without views declares nothing.
#[test]
fn extension_declared_in_both_eras() {
    let server = builder().build();
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    let init = client.initialize(json!({})).unwrap();
    let declared = &init["capabilities"]["extensions"];
    assert_eq!(declared, &json!({ extensions::UI: {} }), "{}", init);

    let mut modern = server.connect_memory();
    modern.set_timeout(WAIT);
    let params = json!({ "_meta": envelope(json!({})) });
    let discover = modern.request("server/discover", Some(params)).unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"][extensions::UI],
        json!({})
    );

    let plain = Server::builder("s", "1")
        .tool(
            Tool::without_arguments("t"),
            |_: &RequestContext, _: JsonObject| Ok(CallToolResult::text("x")),
        )
        .build();
    let init = connect_init(&plain);
    assert!(init["capabilities"].get("extensions").is_none(), "{}", init);
}

fn connect_init(server: &Server) -> Value {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client.initialize(json!({})).unwrap()
}

// `RequestContext::supports_ui`: the session's capabilities in
// 2025-11-25, this request's `_meta` in 2026-07-28 (the same session may
// carry requests declaring either).
#[test]
fn handler_knows_whether_the_client_renders_views() {
    let server = builder().build();
    let mut apps = connect(&server, ui_caps());
    assert_eq!(
        call_tool(&mut apps, "show", json!({}))["structuredContent"]["ui"],
        true
    );
    let mut text = connect(&server, json!({}));
    assert_eq!(
        call_tool(&mut text, "show", json!({}))["structuredContent"]["ui"],
        false
    );
    let other = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/x"]}}});
    let mut other = connect(&server, other);
    assert_eq!(
        call_tool(&mut other, "show", json!({}))["structuredContent"]["ui"],
        false
    );

    let mut modern = server.connect_memory();
    modern.set_timeout(WAIT);
    for (caps, ui) in [(ui_caps(), true), (json!({}), false)] {
        let params = json!({"name": "show", "arguments": {}, "_meta": envelope(caps)});
        let result = modern.request("tools/call", Some(params)).unwrap();
        assert_eq!(result["structuredContent"]["ui"], ui, "{}", result);
    }
}

// "Graceful Degradation", opted in: a client that renders no views gets
// the tools without `_meta.ui` and without the app-only ones; one that
// does gets everything; per request in 2026-07-28. Off (the default),
// every client gets the same list.
#[test]
fn listing_degrades_for_text_clients() {
    let server = builder().hide_ui_from_text_clients(true).build();
    let mut text = connect(&server, json!({}));
    let list = text.request("tools/list", None).unwrap();
    assert_eq!(tool_names(&list), ["show", "plain"]);
    assert!(list["tools"][0].get("_meta").is_none(), "{}", list);
    let mut apps = connect(&server, ui_caps());
    let list = apps.request("tools/list", None).unwrap();
    assert_eq!(tool_names(&list), ["show", "refresh", "plain"]);
    assert_eq!(list["tools"][0]["_meta"]["ui"]["resourceUri"], VIEW);
    assert_eq!(list["tools"][0]["_meta"]["ui/resourceUri"], VIEW);
    assert_eq!(
        list["tools"][1]["_meta"]["ui"]["visibility"],
        json!(["app"])
    );

    let mut modern = server.connect_memory();
    modern.set_timeout(WAIT);
    for (caps, names) in [(ui_caps(), 3), (json!({}), 2)] {
        let params = json!({ "_meta": envelope(caps) });
        let list = modern.request("tools/list", Some(params)).unwrap();
        assert_eq!(tool_names(&list).len(), names, "{}", list);
    }

    let open = builder().build();
    let mut text = connect(&open, json!({}));
    let list = text.request("tools/list", None).unwrap();
    assert_eq!(tool_names(&list), ["show", "refresh", "plain"]);
    assert_eq!(
        list["tools"][1]["_meta"]["ui"]["visibility"],
        json!(["app"])
    );
}

// The client side a host needs, over Streamable HTTP in both eras: it
// declares the extension (the server's handler sees it), reads each tool's
// `_meta.ui`, reads the view with its `_meta`, and calls the app-only
// tool.
#[test]
fn client_is_a_host() {
    let server = builder().build();
    let http = server.serve_http("127.0.0.1:0").expect("serve HTTP");
    let url = format!("http://{}/mcp", http.local_addr());
    for era in [Era::V2025_11_25, Era::V2026_07_28] {
        let client = Client::builder("host", "1.0.0")
            .era(era)
            .ui_extension([UI_MIME_TYPE])
            .connect_http(&url)
            .expect("connect");
        assert!(client
            .server_capabilities()
            .declares_extension(extensions::UI));
        let tools = client.list_tools().unwrap();
        let show = tools.iter().find(|t| t.name == "show").unwrap();
        assert_eq!(show.ui().unwrap().resource_uri.as_deref(), Some(VIEW));
        let refresh = tools.iter().find(|t| t.name == "refresh").unwrap();
        assert!(!refresh.is_visible_to_model());
        assert!(tools
            .iter()
            .find(|t| t.name == "plain")
            .unwrap()
            .ui()
            .is_none());
        let read = client.read_resource(VIEW).unwrap();
        assert_eq!(read.contents[0].mime_type(), Some(UI_MIME_TYPE));
        assert_eq!(read.contents[0].ui(), Some(view_meta()));
        let result = client.call_tool("refresh", json!({})).unwrap();
        assert_eq!(
            result.structured_content,
            Some(json!({"ui": true})),
            "{:?}",
            era
        );
        client.close();
    }
    let plain = Client::builder("text", "1.0.0").connect_http(&url).unwrap();
    let result = plain.call_tool("show", json!({})).unwrap();
    assert_eq!(result.structured_content, Some(json!({"ui": false})));
    plain.close();
    server.close();
    http.join().unwrap();
}

// 2025-11-25 stateless HTTP: no `initialize` reaches a POST, so nobody
// knows whether its client renders views; the listing does not degrade
// (a host with views would lose them), and `supports_ui` says `false`.
#[test]
fn stateless_posts_get_the_whole_list() {
    let server = builder().hide_ui_from_text_clients(true).build();
    let http = server
        .http()
        .stateless(true)
        .serve("127.0.0.1:0")
        .expect("serve HTTP");
    let url = format!("http://{}/mcp", http.local_addr());
    let client = Client::builder("host", "1.0.0")
        .era(Era::V2025_11_25)
        .ui_extension([UI_MIME_TYPE])
        .connect_http(&url)
        .expect("connect");
    let names: Vec<String> = client
        .list_tools()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["show", "refresh", "plain"]);
    let show = client.call_tool("show", json!({})).unwrap();
    assert_eq!(show.structured_content, Some(json!({"ui": false})));
    client.close();
    server.close();
    http.join().unwrap();
}
