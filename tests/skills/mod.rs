//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension of
//! 2026-07-28): skills read from a directory tree and served through
//! `skills/list`, `skills/get`, `resources/read`, `resources/list` and
//! `resources/directory/read`, on the in-memory dispatcher. The conformance
//! suite's three `sep-2640-skills-*` scenarios run against the `everything`
//! example over HTTP (`scripts/check/conformance-run.sh`).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tiny_mcp::{ErrorCode, ErrorObject, MemoryClient, Server};

use crate::support::{connect, expect_error, WAIT};

const EXT: &str = "io.modelcontextprotocol/skills";

/// A fresh directory under the system's temporary one, removed on drop.
struct Tree(PathBuf);

impl Tree {
    fn new(name: &str) -> Tree {
        let dir =
            std::env::temp_dir().join(format!("tiny-mcp-skills-{}-{}", std::process::id(), name));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a temporary directory");
        Tree(dir)
    }

    fn file(&self, path: &str, text: &str) -> &Tree {
        let path = self.0.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        self
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const REVIEW: &str = "---\nname: review\ndescription: Review a change.\nmetadata:\n  version: \"2\"\n---\n# Review\n";

/// Two skills: `review` (with `notes/abc.txt` holding "abc") and
/// `team/ops/deploy`.
fn tree(name: &str) -> Tree {
    let tree = Tree::new(name);
    tree.file("review/SKILL.md", REVIEW)
        .file("review/notes/abc.txt", "abc")
        .file(
            "team/ops/deploy/SKILL.md",
            "---\nname: deploy\ndescription: Ship it.\n---\n",
        );
    tree
}

fn enveloped(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

fn call(client: &mut MemoryClient, method: &str, params: Value) -> Result<Value, ErrorObject> {
    client.request(method, Some(enveloped(params)))
}

fn ok(outcome: Result<Value, ErrorObject>, what: &str) -> Value {
    outcome.unwrap_or_else(|e| panic!("{} failed: {:?}", what, e))
}

fn client(server: &Server) -> MemoryClient {
    let mut client = server.connect_memory();
    client.set_timeout(WAIT);
    client
}

// SEP-2640 "Capability Negotiation", "Listing Skills", "Skill Entries":
// the extension with directoryRead and resources; complete manifests with
// sha256 digests and sizes; verbatim frontmatter; cache hints.
#[test]
fn skills_are_listed_with_complete_manifests() {
    let tree = tree("list");
    let server = Server::builder("skills", "1")
        .skills_dir(tree.path())
        .unwrap()
        .build();
    let mut client = client(&server);
    let discover = ok(call(&mut client, "server/discover", json!({})), "discover");
    let caps = &discover["capabilities"];
    assert_eq!(caps["extensions"][EXT], json!({"directoryRead": true}));
    assert!(caps["resources"].is_object(), "{}", caps);
    let listed = ok(call(&mut client, "skills/list", json!({})), "skills/list");
    assert!(
        listed["ttlMs"].is_u64() && listed["cacheScope"].is_string(),
        "{}",
        listed
    );
    let uris: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://review/SKILL.md",
            "skill://team/ops/deploy/SKILL.md"
        ]
    );
    let review = &listed["skills"][0];
    assert_eq!(
        review["frontmatter"],
        json!({"name": "review", "description": "Review a change.", "metadata": {"version": "2"}})
    );
    let files = review["resources"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let abc = files
        .iter()
        .find(|f| f["uri"] == "skill://review/notes/abc.txt")
        .unwrap();
    // FIPS 180-4's "abc" vector.
    assert_eq!(
        abc["digest"],
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(abc["size"], 3);
    let manifest = files
        .iter()
        .find(|f| f["uri"] == "skill://review/SKILL.md")
        .unwrap();
    assert_eq!(manifest["size"], REVIEW.len());
}

// SEP-2640 "Getting a Skill", "Reading Skill Content", "Resource Metadata":
// skills/get by URI (-32602 otherwise); files read through resources/read;
// each SKILL.md in resources/list with the frontmatter's name and
// description.
#[test]
fn skills_are_got_and_read() {
    let tree = tree("get");
    let server = Server::builder("skills", "1")
        .skills_dir(tree.path())
        .unwrap()
        .build();
    let mut client = client(&server);
    let got = ok(
        call(
            &mut client,
            "skills/get",
            json!({"uri": "skill://team/ops/deploy/SKILL.md"}),
        ),
        "get",
    );
    assert_eq!(got["skill"]["frontmatter"]["name"], "deploy");
    assert!(got.get("nextCursor").is_none());
    let e = call(
        &mut client,
        "skills/get",
        json!({"uri": "skill://nope/SKILL.md"}),
    );
    expect_error(e, ErrorCode::INVALID_PARAMS, "an unknown skill");
    let read = ok(
        call(
            &mut client,
            "resources/read",
            json!({"uri": "skill://review/notes/abc.txt"}),
        ),
        "read",
    );
    assert_eq!(read["contents"][0]["text"], "abc");
    assert_eq!(read["contents"][0]["mimeType"], "text/plain");
    let listed = ok(
        call(&mut client, "resources/list", json!({})),
        "resources/list",
    );
    let manifest = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://review/SKILL.md")
        .cloned();
    let manifest = manifest.expect("SKILL.md in resources/list");
    assert_eq!(
        (&manifest["name"], &manifest["mimeType"]),
        (&json!("review"), &json!("text/markdown"))
    );
    assert_eq!(manifest["description"], "Review a change.");
}

// SEP-2640 "Reading Directories": direct children only, folders as
// inode/directory, the skill-path prefix is a directory too; a file or an
// unknown URI is -32602.
#[test]
fn directories_list_their_direct_children() {
    let tree = tree("dirs");
    let server = Server::builder("skills", "1")
        .skills_dir(tree.path())
        .unwrap()
        .build();
    let mut client = client(&server);
    let root = ok(
        call(
            &mut client,
            "resources/directory/read",
            json!({"uri": "skill://review"}),
        ),
        "read",
    );
    let children: Vec<(String, String)> = root["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap().into(),
                r["mimeType"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        children,
        [
            (
                "skill://review/SKILL.md".to_string(),
                "text/markdown".to_string()
            ),
            (
                "skill://review/notes".to_string(),
                "inode/directory".to_string()
            ),
        ]
    );
    let prefix = ok(
        call(
            &mut client,
            "resources/directory/read",
            json!({"uri": "skill://team"}),
        ),
        "prefix",
    );
    assert_eq!(prefix["resources"][0]["uri"], "skill://team/ops");
    for not_a_dir in [
        "skill://review/SKILL.md",
        "skill://elsewhere",
        "skill://",
        "skill:",
        "skill://review//",
    ] {
        let e = call(
            &mut client,
            "resources/directory/read",
            json!({"uri": not_a_dir}),
        );
        expect_error(e, ErrorCode::INVALID_PARAMS, not_a_dir);
    }
}

// The extension is 2026-07-28's: in 2025-11-25 its methods do not exist;
// without skills they do not exist either (-32601).
#[test]
fn skills_methods_exist_only_where_declared() {
    let tree = tree("eras");
    let server = Server::builder("skills", "1")
        .skills_dir(tree.path())
        .unwrap()
        .build();
    let mut v2025 = connect(&server, json!({}));
    let e = v2025.request("skills/list", None);
    expect_error(e, ErrorCode::METHOD_NOT_FOUND, "skills/list in 2025-11-25");
    let bare = Server::builder("bare", "1").build();
    let mut v2026 = client(&bare);
    let e = call(&mut v2026, "skills/list", json!({}));
    expect_error(e, ErrorCode::METHOD_NOT_FOUND, "skills/list without skills");
}

// SEP-2640 "Skill Format", "Resource Mapping", "Limits": a skill whose
// name is not its directory's, one without a description, and one over
// 512 files are refused, naming the skill.
#[test]
fn broken_skills_are_refused_by_name() {
    let cases: [(&str, &[(&str, &str)]); 2] = [
        (
            "misnamed",
            &[("wrong/SKILL.md", "---\nname: right\ndescription: d\n---\n")],
        ),
        (
            "undescribed",
            &[("quiet/SKILL.md", "---\nname: quiet\n---\n")],
        ),
    ];
    for (name, files) in cases {
        let tree = Tree::new(name);
        for (path, text) in files {
            tree.file(path, text);
        }
        let err = Server::builder("s", "1")
            .skills_dir(tree.path())
            .unwrap_err();
        assert!(err.to_string().starts_with("skill "), "{}: {}", name, err);
    }
    let big = Tree::new("big");
    big.file("big/SKILL.md", "---\nname: big\ndescription: d\n---\n");
    for n in 0..512 {
        big.file(&format!("big/f{}.txt", n), "x");
    }
    let err = Server::builder("s", "1")
        .skills_dir(big.path())
        .unwrap_err();
    assert!(err.to_string().contains("over the limit of 512"), "{}", err);
}

// SEP-2640 "Limits", DESIGN.md §6 (issue 27 item 9): a file larger than
// the limit is refused by its size, before it is read (a sparse 1 GiB
// file: reading it whole would hold 1 GiB), naming its size and the limit.
#[test]
fn a_file_over_the_limit_is_refused_by_its_size() {
    let tree = Tree::new("huge");
    tree.file("huge/SKILL.md", "---\nname: huge\ndescription: d\n---\n");
    let file = fs::File::create(tree.path().join("huge/big.bin")).expect("create big.bin");
    file.set_len(1 << 30).expect("a sparse 1 GiB file");
    let err = Server::builder("s", "1")
        .skills_dir(tree.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("big.bin is 1073741824 bytes"), "{}", err);
    assert!(err.contains("over the limit of 16777216 bytes"), "{}", err);
}

// SEP-2640 "Skill Format" (issue 27 item 9): symbolic links are not
// followed, and a linked SKILL.md is reported as one, not as missing.
#[cfg(unix)]
#[test]
fn a_linked_skill_md_is_reported_as_a_link() {
    let tree = Tree::new("linked");
    tree.file("elsewhere.md", "---\nname: linked\ndescription: d\n---\n");
    fs::create_dir_all(tree.path().join("linked")).expect("the skill's folder");
    let target = tree.path().join("elsewhere.md");
    std::os::unix::fs::symlink(target, tree.path().join("linked/SKILL.md")).expect("a link");
    let err = Server::builder("s", "1")
        .skills_dir(tree.path())
        .unwrap_err()
        .to_string();
    assert!(err.contains("SKILL.md is a symbolic link"), "{}", err);
}

// Runtime add and remove (ServerHandle): a server without skills declares
// the extension once one is added, and a removed skill is gone.
#[test]
fn skills_are_added_and_removed_while_serving() {
    let tree = tree("runtime");
    let server = Server::builder("late", "1").build();
    let added = server.handle().add_skills_dir(tree.path()).unwrap();
    assert_eq!(added.len(), 2);
    let mut client = client(&server);
    let listed = ok(call(&mut client, "skills/list", json!({})), "skills/list");
    assert_eq!(listed["skills"].as_array().unwrap().len(), 2);
    assert!(server.handle().remove_skill("skill://review/SKILL.md"));
    assert!(!server.handle().remove_skill("skill://review/SKILL.md"));
    let listed = ok(call(&mut client, "skills/list", json!({})), "skills/list");
    assert_eq!(
        listed["skills"][0]["uri"],
        "skill://team/ops/deploy/SKILL.md"
    );
    let e = call(
        &mut client,
        "resources/read",
        json!({"uri": "skill://review/notes/abc.txt"}),
    );
    expect_error(e, ErrorCode::INVALID_PARAMS, "a removed skill's file");
}
