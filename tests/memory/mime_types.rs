//! What a `resources/read` answer says its contents are: the MIME type the
//! handler set, else the one registered with the resource or template
//! that matched, else `text/plain` for text.

use serde_json::{json, Value};
use tiny_mcp::{
    Error, ReadResourceResult, RequestContext, Resource, ResourceContents, ResourcePage,
    ResourceProvider, ResourceTemplate, Server, TemplateVariables,
};

use crate::support::connect;

/// Lists nothing, reads `gen://…` as text without a MIME type.
struct Generated;

impl ResourceProvider for Generated {
    fn list(&self, _: &RequestContext, _: Option<&str>) -> Result<ResourcePage, Error> {
        Ok(ResourcePage::default())
    }

    fn read(&self, _: &RequestContext, uri: &str) -> Option<Result<ReadResourceResult, Error>> {
        uri.starts_with("gen://")
            .then(|| Ok(ReadResourceResult::text(uri, "generated")))
    }
}

fn server() -> Server {
    Server::builder("types", "1")
        .resource(
            Resource::new("test://readme", "readme").with_mime_type("text/markdown"),
            |_: &RequestContext, uri: &str| Ok(ReadResourceResult::text(uri, "# Read me")),
        )
        .resource(
            Resource::new("test://plain", "plain"),
            |_: &RequestContext, uri: &str| Ok(ReadResourceResult::text(uri, "plain")),
        )
        .resource(
            Resource::new("test://table", "table").with_mime_type("text/markdown"),
            |_: &RequestContext, uri: &str| {
                // The handler's own type wins; a part with another URI
                // keeps what it has.
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(uri, "text/csv", "a,b"),
                    ReadResourceResult::text("test://table/notes", "n").contents[0].clone(),
                ]))
            },
        )
        .resource(
            Resource::new("test://logo", "logo").with_mime_type("image/png"),
            |_: &RequestContext, uri: &str| {
                let blob = ResourceContents::blob(uri, "", "iVBORw0KGgo=");
                Ok(ReadResourceResult::new(vec![without_type(blob)]))
            },
        )
        .resource_template(
            ResourceTemplate::new("test://rows/{id}", "row").with_mime_type("application/json"),
            |_: &RequestContext, uri: &str, vars: &TemplateVariables| {
                let text = json!({"id": vars["id"]}).to_string();
                Ok(ReadResourceResult::text(uri, text))
            },
        )
        .resource_provider(Generated)
        .build()
}

/// `contents` with its `mimeType` taken away.
fn without_type(contents: ResourceContents) -> ResourceContents {
    let mut value = serde_json::to_value(contents).expect("contents serialize");
    if let Value::Object(object) = &mut value {
        object.remove("mimeType");
    }
    serde_json::from_value(value).expect("contents read back")
}

fn read(client: &mut tiny_mcp::MemoryClient, uri: &str) -> Value {
    match client.request("resources/read", Some(json!({ "uri": uri }))) {
        Ok(result) => result["contents"].clone(),
        Err(e) => panic!("resources/read {} failed: {:?}", uri, e),
    }
}

// server/resources "Resource Contents", "Resource Templates": contents
// without a MIME type (`ReadResourceResult::text` sets none) carry the
// registered resource's or template's `mimeType`; without one, text is
// `text/plain`; a handler's own type and other URIs' contents are kept.
#[test]
fn read_contents_carry_the_registered_mime_type() {
    let mut client = connect(&server(), json!({}));
    assert_eq!(
        read(&mut client, "test://readme"),
        json!([{"uri": "test://readme", "mimeType": "text/markdown", "text": "# Read me"}])
    );
    assert_eq!(
        read(&mut client, "test://rows/7"),
        json!([{"uri": "test://rows/7", "mimeType": "application/json", "text": "{\"id\":\"7\"}"}])
    );
    assert_eq!(
        read(&mut client, "test://plain"),
        json!([{"uri": "test://plain", "mimeType": "text/plain", "text": "plain"}])
    );
    assert_eq!(
        read(&mut client, "gen://x"),
        json!([{"uri": "gen://x", "mimeType": "text/plain", "text": "generated"}])
    );
    assert_eq!(
        read(&mut client, "test://table"),
        json!([
            {"uri": "test://table", "mimeType": "text/csv", "text": "a,b"},
            {"uri": "test://table/notes", "text": "n"}
        ])
    );
    assert_eq!(
        read(&mut client, "test://logo"),
        json!([{"uri": "test://logo", "mimeType": "image/png", "blob": "iVBORw0KGgo="}])
    );
}
