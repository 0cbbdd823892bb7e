//! Required scopes: server-wide, and per tool, prompt, resource and
//! resource template, for every request that acts on one: calls, reads,
//! subscriptions and listen streams, completions (basic/authorization
//! "Scope Challenge Handling").
//!
//! The policy is data the builder fills; the HTTP edge asks it what a
//! request needs ([`methods::scopes_needed`](super::methods::scopes_needed)) and
//! answers 403 with the challenge when the principal lacks any; the list
//! methods ask it what a principal may see when lists are filtered.
//! Requests without a principal (stdio, a server without a token
//! verifier) are never checked: scopes only mean something once a
//! verifier established who is calling.

use std::collections::HashMap;

use serde_json::Value;

use super::caller::Principal;
use super::registry::{Registry, Resolved};

/// What a request acts on: the `offer` column of the method table, and
/// where its params name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offer {
    /// A tool, by `name` (`tools/call`).
    Tool,
    /// A prompt, by `name` (`prompts/get`).
    Prompt,
    /// A resource or a template's resource, by `uri` (`resources/read`,
    /// `resources/subscribe`).
    Resource,
    /// The prompt or resource template of `ref` (`completion/complete`:
    /// `{"type": "ref/prompt", "name"}` or `{"type": "ref/resource",
    /// "uri"}`).
    Reference,
    /// Each resource of `notifications.resourceSubscriptions`
    /// (`subscriptions/listen`).
    Subscriptions,
}

/// The string in `value`'s `field`.
fn text<'a>(value: &'a Value, field: &str) -> Option<&'a str> {
    value.get(field).and_then(Value::as_str)
}

/// The scopes `map` holds for `name`.
fn named<'a>(map: &'a HashMap<String, Vec<String>>, name: Option<&str>) -> &'a [String] {
    name.and_then(|n| map.get(n)).map_or(&[], Vec::as_slice)
}

/// The scopes the server requires, as the builder set them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopePolicy {
    /// Needed by every request.
    pub(crate) server: Vec<String>,
    pub(crate) tools: HashMap<String, Vec<String>>,
    pub(crate) prompts: HashMap<String, Vec<String>>,
    /// By resource URI.
    pub(crate) resources: HashMap<String, Vec<String>>,
    /// By URI template, as registered.
    pub(crate) templates: HashMap<String, Vec<String>>,
    /// `tools/list` and the other lists show a principal only what it may
    /// use.
    pub(crate) filter_lists: bool,
}

impl ScopePolicy {
    /// Every scope the policy names, sorted, each once: the default
    /// `scopes_supported` of the protected resource metadata.
    pub(crate) fn all_named(&self) -> Vec<String> {
        let maps = [&self.tools, &self.prompts, &self.resources, &self.templates];
        let mut all = Vec::new();
        for scope in self
            .server
            .iter()
            .chain(maps.iter().flat_map(|m| m.values().flatten()))
        {
            insert_sorted(&mut all, scope.clone());
        }
        all
    }

    /// The scopes a request acting on `offer` with `params` needs: the
    /// server-wide ones, then the item's own, each once.
    pub(crate) fn needed(
        &self,
        registry: &Registry,
        offer: Option<Offer>,
        params: Option<&Value>,
    ) -> Vec<String> {
        let mut needed = self.server.clone();
        let mut add = |scopes: &[String]| {
            for scope in scopes {
                if !needed.contains(scope) {
                    needed.push(scope.clone());
                }
            }
        };
        let params = match (offer, params) {
            (Some(offer), Some(params)) => (offer, params),
            _ => return needed,
        };
        match params {
            (Offer::Tool, p) => add(named(&self.tools, text(p, "name"))),
            (Offer::Prompt, p) => add(named(&self.prompts, text(p, "name"))),
            (Offer::Resource, p) => add(self.resource(registry, text(p, "uri").unwrap_or(""))),
            (Offer::Reference, p) => {
                let reference = p.get("ref").unwrap_or(&Value::Null);
                match text(reference, "type") {
                    Some("ref/prompt") => add(named(&self.prompts, text(reference, "name"))),
                    Some("ref/resource") => {
                        let uri = text(reference, "uri").unwrap_or("");
                        add(named(&self.templates, Some(uri)));
                        add(self.resource(registry, uri));
                    }
                    _ => {}
                }
            }
            (Offer::Subscriptions, p) => {
                let uris = p.pointer("/notifications/resourceSubscriptions");
                for uri in uris.and_then(Value::as_array).into_iter().flatten() {
                    add(self.resource(registry, uri.as_str().unwrap_or("")));
                }
            }
        }
        needed
    }

    /// The scopes of the resource at `uri`; a URI that only a template
    /// matches takes the template's.
    fn resource(&self, registry: &Registry, uri: &str) -> &[String] {
        let found = self
            .resources
            .get(uri)
            .or_else(|| match registry.resolve(uri) {
                Some(Resolved::Template(entry, _)) => {
                    self.templates.get(&entry.template.uri_template)
                }
                _ => None,
            });
        found.map_or(&[], Vec::as_slice)
    }

    /// The items the policy names that `registry` does not hold, as
    /// `tool x`, `prompt y`, …: likely typos, which leave the item guarded
    /// by the server-wide scopes alone (the builder warns of them).
    pub(crate) fn unknown(&self, registry: &Registry) -> Vec<String> {
        let mut unknown = Vec::new();
        for name in self.tools.keys() {
            if registry.tool(name).is_none() {
                insert_sorted(&mut unknown, format!("tool {}", name));
            }
        }
        for name in self.prompts.keys() {
            if registry.prompt(name).is_none() {
                insert_sorted(&mut unknown, format!("prompt {}", name));
            }
        }
        for uri in self.resources.keys() {
            if !registry.resources.iter().any(|e| &e.resource.uri == uri) {
                insert_sorted(&mut unknown, format!("resource {}", uri));
            }
        }
        for template in self.templates.keys() {
            if !registry
                .templates
                .iter()
                .any(|e| &e.template.uri_template == template)
            {
                insert_sorted(&mut unknown, format!("resource template {}", template));
            }
        }
        unknown
    }

    /// `true` if lists are filtered and `principal` lacks one of the
    /// scopes in `map` under `key`: the item is hidden from it.
    pub(crate) fn hides(
        &self,
        principal: Option<&Principal>,
        map: &HashMap<String, Vec<String>>,
        key: &str,
    ) -> bool {
        match (self.filter_lists, principal, map.get(key)) {
            (true, Some(principal), Some(needed)) => !principal.lacks(needed).is_empty(),
            _ => false,
        }
    }
}

/// Puts `item` into the sorted `list` unless it is there: short lists,
/// read once when the server is built, with no sort routine in the binary.
fn insert_sorted(list: &mut Vec<String>, item: String) {
    if let Err(i) = list.binary_search(&item) {
        list.insert(i, item);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn policy() -> ScopePolicy {
        let mut policy = ScopePolicy {
            server: vec!["mcp:tools".into()],
            ..ScopePolicy::default()
        };
        policy
            .tools
            .insert("admin".into(), vec!["mcp:admin".into(), "mcp:tools".into()]);
        policy
    }

    #[test]
    fn needed_is_server_wide_then_the_item_s_own() {
        let policy = policy();
        let registry = Registry::default();
        let admin = json!({"name": "admin"});
        assert_eq!(
            policy.needed(&registry, Some(Offer::Tool), Some(&admin)),
            ["mcp:tools", "mcp:admin"]
        );
        let other = json!({"name": "other"});
        assert_eq!(
            policy.needed(&registry, Some(Offer::Tool), Some(&other)),
            ["mcp:tools"]
        );
        assert_eq!(
            policy.needed(&registry, Some(Offer::Prompt), Some(&admin)),
            ["mcp:tools"],
            "a prompt of the same name is not the tool"
        );
        assert_eq!(policy.needed(&registry, None, None), ["mcp:tools"]);
        // completion/complete takes the scopes of what `ref` names, and a
        // listen stream those of each resource it subscribes to.
        let mut policy = policy;
        policy.prompts.insert("p".into(), vec!["mcp:p".into()]);
        policy
            .templates
            .insert("s://{id}".into(), vec!["mcp:t".into()]);
        policy
            .resources
            .insert("s://fixed".into(), vec!["mcp:r".into()]);
        let prompt = json!({"ref": {"type": "ref/prompt", "name": "p"}});
        assert_eq!(
            policy.needed(&registry, Some(Offer::Reference), Some(&prompt)),
            ["mcp:tools", "mcp:p"]
        );
        let template = json!({"ref": {"type": "ref/resource", "uri": "s://{id}"}});
        assert_eq!(
            policy.needed(&registry, Some(Offer::Reference), Some(&template)),
            ["mcp:tools", "mcp:t"]
        );
        let listen = json!({"notifications": {"resourceSubscriptions": ["s://fixed", "x"]}});
        assert_eq!(
            policy.needed(&registry, Some(Offer::Subscriptions), Some(&listen)),
            ["mcp:tools", "mcp:r"]
        );
        let unknown = [
            "prompt p",
            "resource s://fixed",
            "resource template s://{id}",
            "tool admin",
        ];
        assert_eq!(policy.unknown(&registry), unknown);
        assert_eq!(
            policy.all_named(),
            ["mcp:admin", "mcp:p", "mcp:r", "mcp:t", "mcp:tools"]
        );
    }

    #[test]
    fn filtered_lists_hide_what_a_principal_may_not_use() {
        let mut policy = policy();
        let user = Principal::new("u").with_scopes(["mcp:tools"]);
        let root = Principal::new("r").with_scopes(["mcp:tools", "mcp:admin"]);
        assert!(
            !policy.hides(Some(&user), &policy.tools, "admin"),
            "off by default"
        );
        policy.filter_lists = true;
        assert!(policy.hides(Some(&user), &policy.tools, "admin"));
        assert!(!policy.hides(Some(&root), &policy.tools, "admin"));
        assert!(!policy.hides(Some(&user), &policy.tools, "other"));
        assert!(
            !policy.hides(None, &policy.tools, "admin"),
            "no principal, no check"
        );
    }
}
