//! Spec: client/elicitation (2025-11-25).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jsonrpc::JsonObject;

/// Params of `elicitation/create`: form mode or URL mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// `{"mode": "url", "message", "url", "elicitationId"}`
    Url(ElicitRequestUrlParams),
    /// `{"mode"?: "form", "message", "requestedSchema"}`
    Form(ElicitRequestFormParams),
}

/// Read as serde reads an untagged enum, URL mode first, then form mode,
/// with its message when neither fits; from a plain `Value`, not serde's
/// buffered content, whose readers (with `ResourceContents`'s, read the same
/// way) were 12 KB of the static `mcp`.
impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if let Ok(url) = ElicitRequestUrlParams::deserialize(&value) {
            return Ok(ElicitRequestParams::Url(url));
        }
        if let Ok(form) = ElicitRequestFormParams::deserialize(&value) {
            return Ok(ElicitRequestParams::Form(form));
        }
        Err(serde::de::Error::custom(
            "data did not match any variant of untagged enum ElicitRequestParams",
        ))
    }
}

/// Form-mode elicitation: `{"mode": "form", "message", "requestedSchema"}`.
///
/// `requestedSchema` is `{"type": "object", "properties": {…},
/// "required"?: […]}` with flat primitive properties. Never ask for secrets
/// in form mode (ELIC-2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestFormParams {
    /// `"form"`; omitting it also means form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to ask the user.
    pub message: String,
    /// The form's schema.
    pub requested_schema: Value,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// The names of `requestedSchema.properties` in the order the server
    /// wrote them, when the client read them from the server's own bytes
    /// (a 2025-11-25 `elicitation/create` request); empty otherwise. Not on
    /// the wire.
    #[serde(skip)]
    pub(crate) property_order: Vec<String>,
}

impl ElicitRequestFormParams {
    /// A form with a message and a schema.
    pub fn new(message: impl Into<String>, requested_schema: Value) -> ElicitRequestFormParams {
        ElicitRequestFormParams {
            mode: Some("form".into()),
            message: message.into(),
            requested_schema,
            meta: None,
            property_order: Vec::new(),
        }
    }

    /// The names of the form's fields (`requestedSchema.properties`), in
    /// the order the server wrote them where the client saw it (the
    /// `elicitation/create` requests of 2025-11-25, over stdio and HTTP),
    /// else by name. A form asked of a person follows this order: JSON
    /// objects are unordered, but servers write their fields in the order
    /// they mean them to be asked.
    ///
    /// Spec: client/elicitation "Requested Schema" (2025-11-25).
    pub fn property_names(&self) -> Vec<&str> {
        let properties = match self.requested_schema.get("properties") {
            Some(Value::Object(properties)) => properties,
            _ => return Vec::new(),
        };
        let mut names: Vec<&str> = self
            .property_order
            .iter()
            .map(String::as_str)
            .filter(|name| properties.contains_key(*name))
            .collect();
        for name in properties.keys() {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        names
    }

    /// The `default` of each property of the schema that has one
    /// (client/elicitation "Requested Schema", SEP-1034): what a client
    /// puts into its answer for the fields the user left alone.
    ///
    /// ```
    /// use serde_json::json;
    /// use tiny_mcp::ElicitRequestFormParams;
    ///
    /// let form = ElicitRequestFormParams::new("Who?", json!({"type": "object", "properties": {
    ///     "name": {"type": "string", "default": "Ada"}, "age": {"type": "integer"}}}));
    /// assert_eq!(serde_json::Value::Object(form.default_values()), json!({"name": "Ada"}));
    /// ```
    pub fn default_values(&self) -> JsonObject {
        let properties = match self.requested_schema.get("properties") {
            Some(Value::Object(properties)) => properties,
            _ => return JsonObject::new(),
        };
        properties
            .iter()
            .filter_map(|(name, schema)| Some((name.clone(), schema.get("default")?.clone())))
            .collect()
    }
}

/// URL-mode elicitation: `{"mode": "url", "message", "url", "elicitationId"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: String,
    /// Why the user should open the URL.
    pub message: String,
    /// The URL to open (ELIC-3: no credentials in it).
    pub url: String,
    /// Opaque id, unique per server, echoed by
    /// `notifications/elicitation/complete`.
    pub elicitation_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ElicitRequestUrlParams {
    /// A URL elicitation.
    pub fn new(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> ElicitRequestUrlParams {
        ElicitRequestUrlParams {
            mode: "url".into(),
            message: message.into(),
            url: url.into(),
            elicitation_id: elicitation_id.into(),
            meta: None,
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(p)
    }
}

impl From<ElicitRequestUrlParams> for ElicitRequestParams {
    fn from(p: ElicitRequestUrlParams) -> Self {
        ElicitRequestParams::Url(p)
    }
}

/// What the user did: `"accept"`, `"decline"` or `"cancel"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (or, in URL mode, consented).
    Accept,
    /// Said no.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Result of `elicitation/create`: `{"action", "content"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's values (form mode, `accept` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ElicitResult {
    /// `accept` with the form's values (form mode), or `None` (URL mode:
    /// the user agreed to open the URL).
    pub fn accept(content: Option<JsonObject>) -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Accept,
            content,
            meta: None,
        }
    }

    /// The form's values as a `T` when the user accepted; `None` when they
    /// declined or cancelled.
    ///
    /// ```
    /// use tiny_mcp::ElicitResult;
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Confirm { confirm: bool }
    ///
    /// let mut values = tiny_mcp::JsonObject::new();
    /// values.insert("confirm".into(), true.into());
    /// let answer: Option<Confirm> = ElicitResult::accept(Some(values)).accepted_as()?;
    /// assert!(answer.map_or(false, |a| a.confirm));
    /// assert!(ElicitResult::decline().accepted_as::<Confirm>()?.is_none());
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Json`](crate::ErrorKind::Json) when the accepted
    /// values do not fit `T` (a client that ignored the requested schema):
    /// as a tool's error, an `isError` result saying so.
    pub fn accepted_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<Option<T>, crate::error::Error> {
        if self.action != ElicitAction::Accept {
            return Ok(None);
        }
        let content = Value::Object(self.content.clone().unwrap_or_default());
        Ok(Some(serde_json::from_value(content)?))
    }

    /// `decline`: the user said no.
    pub fn decline() -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }

    /// `cancel`: the user dismissed the request without choosing.
    pub fn cancel() -> ElicitResult {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The derived reader the hand-written one replaced.
    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum Derived {
        Url(ElicitRequestUrlParams),
        Form(ElicitRequestFormParams),
    }

    // Elicitation params read as the derived untagged reader read them.
    #[test]
    fn elicit_request_params_read_as_derived() {
        let cases = [
            json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}),
            json!({"message": "m", "url": "https://x", "elicitationId": "e", "mode": "form"}),
            json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object"}}),
            json!({"message": "m", "requestedSchema": {}, "_meta": {"k": 1}}),
            json!({"message": "m", "url": "https://x"}),
            json!({"mode": "url", "message": 1}),
            json!({}),
            json!([]),
            json!("m"),
            Value::Null,
        ];
        for case in cases.iter() {
            let ours = serde_json::from_value::<ElicitRequestParams>(case.clone());
            let derived = serde_json::from_value::<Derived>(case.clone());
            match (ours, derived) {
                (Ok(ElicitRequestParams::Url(ours)), Ok(Derived::Url(derived))) => {
                    assert_eq!(ours, derived, "{}", case)
                }
                (Ok(ElicitRequestParams::Form(ours)), Ok(Derived::Form(derived))) => {
                    assert_eq!(ours, derived, "{}", case)
                }
                (Err(ours), Err(derived)) => {
                    let derived = derived
                        .to_string()
                        .replace("Derived", "ElicitRequestParams");
                    assert_eq!(ours.to_string(), derived, "{}", case)
                }
                (ours, derived) => panic!("{}: {:?} vs {:?}", case, ours, derived),
            }
        }
    }
}
