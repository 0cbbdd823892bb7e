//! The command line of `mcp bridge`, checked before anything starts: a
//! header the remote server could never be sent is a usage error (exit
//! 2), not an error on every request.

use std::process;
use std::time::Duration;

use tiny_mcp::ClientBuilder;

use super::Options;
use crate::login;

/// The options of `mcp bridge` (the words after `bridge`).
///
/// # Errors
///
/// A usage message.
pub fn parse(mut raw: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        url: String::new(),
        headers: Vec::new(),
        token: None,
        era: None,
        timeout: Duration::from_secs(3600),
        login: login::Options::default(),
    };
    while let Some(arg) = raw.next() {
        let mut value = |name: &str| raw.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--to" => options.url = value("--to")?,
            "--header" => options.headers.push(header(&value("--header")?)?),
            "--token" => options.token = Some(value("--token")?),
            "--era" => options.era = Some(crate::era(&value("--era")?)?),
            "--timeout" => options.timeout = crate::seconds("--timeout", &value("--timeout")?)?,
            name if login::OPTIONS.contains(&name) => options.login.set(name, value(name)?)?,
            "-h" | "--help" => {
                println!("{}", crate::USAGE);
                process::exit(0);
            }
            other => return Err(format!("bridge: unknown option {}", other)),
        }
    }
    options.login.check()?;
    if options.url.is_empty() {
        return Err("bridge needs --to URL".into());
    }
    if options.token.is_some() && options.authorization_header() {
        return Err("give --token or --header \"Authorization: ...\", not both".into());
    }
    Ok(options)
}

/// `"Name: value"` of `--header`, as `ClientBuilder::check_header` takes
/// it (the value is never shown: it may be a key).
///
/// # Errors
///
/// A usage message.
pub fn header(text: &str) -> Result<(String, String), String> {
    let (name, value) = match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => (name.trim(), value.trim()),
        _ => return Err("--header takes \"Name: value\"".into()),
    };
    ClientBuilder::check_header(name, value).map_err(|e| format!("--header: {}", e))?;
    Ok((name.to_string(), value.to_string()))
}

impl Options {
    /// Whether `--header` gives an `Authorization` header: the program's
    /// own credentials, sent as they are instead of logging in.
    pub fn authorization_header(&self) -> bool {
        self.headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    }
}
