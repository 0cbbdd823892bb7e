//! Checks that more than one profile runs, with the server's names and
//! texts as parameters.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;
use tiny_mcp::{
    CallOptions, CallToolResult, CancelToken, Client, ContentBlock, Era, ResourceContents,
};

fn era_name(era: Era) -> &'static str {
    match era {
        Era::V2026_07_28 => "2026-07-28",
        _ => "2025-11-25",
    }
}

pub(crate) fn print_notes(client: &Client) {
    println!(
        "note era: {} (protocol version {}{})",
        era_name(client.era()),
        client.protocol_version(),
        client
            .session_id()
            .map_or_else(String::new, |_| ", with a session".to_string())
    );
    if let Some(info) = client.server_info() {
        println!("note server: {} {}", info.name, info.version);
    }
}

/// serverInfo has a name; the server declares the tools capability.
pub(crate) fn server_info(client: &Client) -> Result<(), String> {
    let info = client
        .server_info()
        .ok_or("the server gave no serverInfo")?;
    if info.name.is_empty() {
        return Err("serverInfo has an empty name".into());
    }
    if client.server_capabilities().tools.is_none() {
        return Err("the server declares no tools capability".into());
    }
    Ok(())
}

/// `tools/list` names every tool in `wanted`.
pub(crate) fn list_tools(client: &Client, wanted: &[&str]) -> Result<(), String> {
    let tools = client.list_tools().map_err(|e| e.to_string())?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for want in wanted {
        if !names.contains(want) {
            return Err(format!("no tool {:?} in {:?}", want, names));
        }
    }
    Ok(())
}

/// The text of a result's first block.
pub(crate) fn first_text(result: &CallToolResult) -> Result<&str, String> {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => Ok(&text.text),
        Some(other) => Err(format!("the first block is not text: {:?}", other)),
        None => Err("the result has no content".into()),
    }
}

/// Calls `tool`; a result with isError is an error.
pub(crate) fn call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, String> {
    let result = client
        .call_tool(tool, arguments)
        .map_err(|e| e.to_string())?;
    if result.is_error == Some(true) {
        return Err(format!("isError: {:?}", first_text(&result)));
    }
    Ok(result)
}

/// Calls `tool` and expects a successful result whose text is `want`.
pub(crate) fn expect_text(
    client: &Client,
    tool: &str,
    arguments: Value,
    want: &str,
) -> Result<(), String> {
    let result = call(client, tool, arguments)?;
    let got = first_text(&result)?;
    if got != want {
        return Err(format!("got {:?}, want {:?}", got, want));
    }
    Ok(())
}

/// Calls `tool` and expects isError with a text that contains `want`.
pub(crate) fn expect_error(
    client: &Client,
    tool: &str,
    arguments: Value,
    want: &str,
) -> Result<(), String> {
    let result = client
        .call_tool(tool, arguments)
        .map_err(|e| e.to_string())?;
    if result.is_error != Some(true) {
        return Err(format!("isError is {:?}", result.is_error));
    }
    let text = first_text(&result)?;
    if !text.contains(want) {
        return Err(format!("the error text {:?} lacks {:?}", text, want));
    }
    Ok(())
}

/// Calls `tool` asking for progress; expects the text `want` and the
/// notifications (1, total) … (steps, total).
pub(crate) fn progress(
    client: &Client,
    tool: &str,
    arguments: Value,
    steps: u32,
    want: &str,
) -> Result<(), String> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    let options = CallOptions::new().on_progress(move |p| s.lock().push((p.progress, p.total)));
    let result = client
        .call_tool_with(tool, arguments, &options)
        .map_err(|e| e.to_string())?;
    let got = first_text(&result)?;
    if got != want {
        return Err(format!("got {:?}, want {:?}", got, want));
    }
    let seen = seen.lock().clone();
    let total = Some(f64::from(steps));
    let expected: Vec<(f64, Option<f64>)> = (1..=steps).map(|i| (f64::from(i), total)).collect();
    if seen != expected {
        return Err(format!(
            "progress (progress, total) seen {:?}, want {:?}",
            seen, expected
        ));
    }
    Ok(())
}

/// Calls `tool` (one that runs far longer than `bound`) asking for
/// progress, cancels it when the first progress notification arrives, and
/// expects the call to end as cancelled within `bound`; then a ping must
/// succeed (the connection outlived the cancellation).
pub(crate) fn cancel(
    client: &Client,
    tool: &str,
    arguments: Value,
    bound: Duration,
) -> Result<(), String> {
    let token = CancelToken::new();
    let on_progress = token.clone();
    let options = CallOptions::new()
        .cancel_token(token)
        .on_progress(move |_| on_progress.cancel());
    let started = Instant::now();
    let outcome = client.call_tool_with(tool, arguments, &options);
    let took = started.elapsed();
    match outcome {
        Err(e) if e.is_cancelled() => {}
        Err(e) => return Err(format!("the call ended with {} after {:?}", e, took)),
        Ok(result) => {
            return Err(format!(
                "the call was not cancelled: it returned {:?} after {:?}",
                first_text(&result),
                took
            ))
        }
    }
    if took > bound {
        return Err(format!(
            "cancelled only after {:?} (bound {:?})",
            took, bound
        ));
    }
    client
        .ping()
        .map_err(|e| format!("ping after the cancellation: {}", e))
}

/// `resources/list` has `uri` with the MIME type `mime`.
pub(crate) fn list_resources(client: &Client, uri: &str, mime: &str) -> Result<(), String> {
    let resources = client.list_resources().map_err(|e| e.to_string())?;
    match resources.iter().find(|r| r.uri == uri) {
        Some(r) if r.mime_type.as_deref() == Some(mime) => Ok(()),
        Some(r) => Err(format!("mimeType {:?}", r.mime_type)),
        None => Err(format!(
            "no {} in {:?}",
            uri,
            resources.iter().map(|r| &r.uri).collect::<Vec<_>>()
        )),
    }
}

/// `resources/read` of `uri` gives one text whose start is `prefix`.
pub(crate) fn read_resource(client: &Client, uri: &str, prefix: &str) -> Result<(), String> {
    let read = client.read_resource(uri).map_err(|e| e.to_string())?;
    match read.contents.as_slice() {
        [ResourceContents::Text { uri: got, text, .. }] => {
            if got != uri || !text.starts_with(prefix) {
                return Err(format!("uri {:?}, text {:?}", got, text));
            }
            Ok(())
        }
        other => Err(format!("want one text content, got {:?}", other)),
    }
}

/// `prompts/list` has `name`, which takes the argument `argument`.
pub(crate) fn list_prompts(client: &Client, name: &str, argument: &str) -> Result<(), String> {
    let prompts = client.list_prompts().map_err(|e| e.to_string())?;
    let prompt = prompts
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| format!("no prompt {} in {} prompts", name, prompts.len()))?;
    let takes = prompt
        .arguments
        .as_ref()
        .map_or(false, |args| args.iter().any(|a| a.name == argument));
    if !takes {
        return Err(format!("{}'s arguments: {:?}", name, prompt.arguments));
    }
    Ok(())
}

/// `prompts/get` of `name` with `arguments`: the first message's text is `want`.
pub(crate) fn get_prompt(
    client: &Client,
    name: &str,
    arguments: &[(&str, &str)],
    want: &str,
) -> Result<(), String> {
    let prompt = client
        .get_prompt(name, arguments)
        .map_err(|e| e.to_string())?;
    match prompt.messages.first().map(|m| &m.content) {
        Some(ContentBlock::Text(text)) if text.text == want => Ok(()),
        other => Err(format!("first message {:?}, want {:?}", other, want)),
    }
}
