//! Logging in to HTTP servers that ask for it: `mcp login URL`, `mcp
//! logout URL`, and the login on demand of every other HTTP command (a
//! server's `401` starts it), the logins kept in one file between runs.
//!
//! The user is reached through a [`LoopbackBrowser`]: the authorization
//! URL is printed on stderr and, when `BROWSER` is set, given to that
//! command as its last argument (unset: the platform's opener, see
//! [`system_opener`]; empty: none); the login ends when the browser comes
//! back to the listener on `127.0.0.1`.
//!
//! Spec: basic/authorization (2025-11-25; 2026-07-28).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use tiny_mcp::oauth::{FileTokenStore, Login, LoopbackBrowser, OAuth, TokenStore};
use tiny_mcp::{ClientBuilder, Error};

/// The command-line options of this module, each followed by a value.
pub const OPTIONS: [&str; 5] = [
    "--token-file",
    "--client-id",
    "--client-secret",
    "--client-metadata-url",
    "--login-timeout",
];

/// How the CLI logs in: the values of [`OPTIONS`].
#[derive(Debug, Default)]
pub struct Options {
    /// `--token-file PATH`: where logins are kept instead of
    /// [`default_token_file`].
    token_file: Option<PathBuf>,
    /// `--client-id ID`: a client registered beforehand.
    client_id: Option<String>,
    /// `--client-secret SECRET`: that client's secret.
    client_secret: Option<String>,
    /// `--client-metadata-url URL`: a Client ID Metadata Document.
    metadata_url: Option<String>,
    /// `--login-timeout SECONDS`: how long to wait for the browser.
    /// Default: the [`LoopbackBrowser`]'s, 5 minutes.
    timeout: Option<Duration>,
}

impl Options {
    /// Takes the value of `name`, one of [`OPTIONS`].
    ///
    /// # Errors
    ///
    /// A usage message when the value is not valid.
    pub fn set(&mut self, name: &str, value: String) -> Result<(), String> {
        match name {
            "--token-file" => self.token_file = Some(PathBuf::from(value)),
            "--client-id" => self.client_id = Some(value),
            "--client-secret" => self.client_secret = Some(value),
            "--client-metadata-url" => self.metadata_url = Some(value),
            "--login-timeout" => self.timeout = Some(crate::seconds(name, &value)?),
            _ => return Err(format!("unknown option {}", name)),
        }
        Ok(())
    }

    /// Whether the options go together.
    ///
    /// # Errors
    ///
    /// A usage message for a secret without its client id.
    pub fn check(&self) -> Result<(), String> {
        match (&self.client_id, &self.client_secret) {
            (None, Some(_)) => Err("--client-secret needs --client-id".into()),
            _ => Ok(()),
        }
    }

    /// The login of this command line: the loopback browser, the client's
    /// identity, and the token file ([`token_file`](Self::token_file));
    /// logins last as long as the process when there is no file.
    pub fn oauth(&self) -> OAuth {
        let mut browser = LoopbackBrowser::new().on_url(show_url);
        if let Some(timeout) = self.timeout {
            browser = browser.timeout(timeout);
        }
        let mut oauth = OAuth::new(browser).client_name("mcp (tiny-mcp command line)");
        if let Some(id) = &self.client_id {
            oauth = oauth.client_id(id);
        }
        if let Some(secret) = &self.client_secret {
            oauth = oauth.client_secret(secret);
        }
        if let Some(url) = &self.metadata_url {
            oauth = oauth.client_metadata_url(url);
        }
        match self.token_file() {
            Some(path) => oauth.store(Warned(FileTokenStore::new(path))),
            None => oauth,
        }
    }

    /// `--token-file`, else [`default_token_file`].
    fn token_file(&self) -> Option<PathBuf> {
        self.token_file.clone().or_else(default_token_file)
    }

    /// [`oauth`](Self::oauth) for `login` and `logout`, which need the
    /// file.
    ///
    /// # Errors
    ///
    /// [`Error::invalid_params`] when there is no token file: no
    /// `--token-file`, no `XDG_CONFIG_HOME`, no `APPDATA` (Windows), no
    /// `HOME`.
    fn kept_oauth(&self) -> Result<OAuth, Error> {
        match self.token_file() {
            Some(_) => Ok(self.oauth()),
            None => Err(Error::invalid_params(format!(
                "nowhere to keep logins: set {} or give --token-file PATH",
                if cfg!(windows) { "APPDATA" } else { "HOME" }
            ))),
        }
    }
}

/// `$XDG_CONFIG_HOME/tiny-mcp/tokens.json`; else, on Windows,
/// `%APPDATA%\tiny-mcp\tokens.json` (the user's roaming profile, where
/// `HOME` is rarely set); else `$HOME/.config/tiny-mcp/tokens.json`. A
/// variable that is empty or not an absolute path counts as unset (XDG
/// Base Directory Specification).
pub fn default_token_file() -> Option<PathBuf> {
    token_file_in(|name| std::env::var_os(name), cfg!(windows))
}

/// [`default_token_file`] with the environment read through `var`, for
/// `windows` or not.
fn token_file_in(var: impl Fn(&str) -> Option<OsString>, windows: bool) -> Option<PathBuf> {
    let dir = |name: &str| {
        var(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let config = dir("XDG_CONFIG_HOME")
        .or_else(|| if windows { dir("APPDATA") } else { None })
        .or_else(|| dir("HOME").map(|home| home.join(".config")));
    config.map(|config| config.join("tiny-mcp").join("tokens.json"))
}

/// `mcp login URL`: forgets the login kept for `url`, connects (logging
/// in when the server answers `401`), and says on one line of stdout
/// which server it is, which authorization server logged the user in and
/// with which scopes, or that the server needs no login. Never prints a
/// token.
///
/// # Errors
///
/// What connecting returns: [`ErrorKind::Authorization`] when the login
/// fails, naming its step.
///
/// [`ErrorKind::Authorization`]: tiny_mcp::ErrorKind::Authorization
pub fn login(builder: ClientBuilder, url: &str, options: &Options) -> Result<(), Error> {
    let oauth = options.kept_oauth()?;
    oauth.logout(url)?;
    let client = builder.oauth(oauth.clone()).connect_http(url)?;
    let server = match client.server_info() {
        Some(info) => format!("{} at {}", info.name, crate::shown_url(url)),
        None => crate::shown_url(url),
    };
    client.close();
    match oauth.login_for(url)? {
        Some(Login {
            tokens: Some(tokens),
            issuer,
            ..
        }) => println!(
            "logged in to {} (authorization server {}; scopes: {})",
            server,
            issuer.as_deref().unwrap_or("unnamed"),
            tokens.scope.as_deref().unwrap_or("none named"),
        ),
        _ => println!("{} needs no login", server),
    }
    Ok(())
}

/// `mcp logout URL`: forgets the login kept for `url` (tokens and
/// registration) and says whether there was one. The server is not asked.
///
/// # Errors
///
/// The token file cannot be read or written.
pub fn logout(url: &str, options: &Options) -> Result<(), Error> {
    let oauth = options.kept_oauth()?;
    let kept = oauth.login_for(url)?.is_some();
    oauth.logout(url)?;
    let url = crate::shown_url(url);
    match kept {
        true => println!("logged out of {}", url),
        false => println!("no login kept for {}", url),
    }
    Ok(())
}

/// Shows the authorization URL: on stderr, and to the `BROWSER` command
/// when the variable is set (its words, then the URL as the last
/// argument). The command runs on its own; the login waits for the
/// browser on the loopback listener, not for the command.
fn show_url(url: &str) {
    note!(
        "mcp: to log in, open this URL in a browser:\n\n    {}\n",
        url
    );
    let line = match std::env::var("BROWSER") {
        Ok(line) if !line.trim().is_empty() => line,
        Ok(_) => return,
        Err(_) => match system_opener() {
            Some(opener) => opener.to_string(),
            None => return,
        },
    };
    let mut words = line.split_whitespace();
    let mut command = match words.next() {
        Some(program) => Command::new(program),
        None => return,
    };
    // Its stdout would mix with mcp's output; its stderr is the user's.
    command
        .args(words)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    match command.spawn() {
        Ok(child) => reap(child, line),
        Err(e) => note!("mcp: warning: cannot run BROWSER ({}): {}", line, e),
    }
}

/// The platform's command that opens a URL in the user's browser, when
/// `BROWSER` is not set (an empty `BROWSER` opens nothing): `xdg-open`
/// where it is installed (Linux, the BSDs), `open` on macOS. None
/// elsewhere: the URL is on stderr.
fn system_opener() -> Option<&'static str> {
    let candidates: &[&str] = if cfg!(target_os = "macos") {
        &["/usr/bin/open"]
    } else if cfg!(unix) {
        &["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"]
    } else {
        &[]
    };
    candidates
        .iter()
        .find(|path| std::path::Path::new(path).exists())
        .copied()
}

/// Waits for the `BROWSER` command on a thread of its own, so that the
/// login goes on at once; a command that fails is a warning (the URL is
/// on stderr). The thread ends with the command or with the process.
fn reap(mut child: Child, line: String) {
    let waiter = thread::Builder::new()
        .name("mcp-browser".into())
        .spawn(move || match child.wait() {
            Ok(status) if !status.success() => {
                note!("mcp: warning: BROWSER ({}) failed: {}", line, status)
            }
            Ok(_) => {}
            Err(e) => note!("mcp: warning: BROWSER ({}): {}", line, e),
        });
    if let Err(e) = waiter {
        // The command runs on; only its exit status goes unseen.
        note!("mcp: warning: cannot wait for BROWSER: {}", e);
    }
}

/// A [`FileTokenStore`] whose failures to save are said on stderr: the
/// client only logs them, and this program has no logger.
#[derive(Debug)]
struct Warned(FileTokenStore);

impl TokenStore for Warned {
    fn load(&self, server: &str) -> Result<Option<Login>, Error> {
        self.0.load(server)
    }

    fn save(&self, server: &str, login: &Login) -> Result<(), Error> {
        self.0.save(server, login).map_err(|e| {
            note!("mcp: warning: the login is not kept: {}", e);
            e
        })
    }

    fn remove(&self, server: &str) -> Result<(), Error> {
        self.0.remove(server)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(vars: &[(&str, &str)], windows: bool) -> Option<PathBuf> {
        let var = |name: &str| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| OsString::from(value))
        };
        token_file_in(var, windows)
    }

    // The default token file: XDG_CONFIG_HOME first; APPDATA only on
    // Windows (where HOME is rarely set); then HOME/.config; a relative
    // or empty value counts as unset (XDG Base Directory Specification).
    #[test]
    fn token_file_follows_the_platform() {
        let tokens = |dir: &str| Some(PathBuf::from(dir).join("tiny-mcp").join("tokens.json"));
        let all = [
            ("XDG_CONFIG_HOME", "/xdg"),
            ("APPDATA", "/appdata"),
            ("HOME", "/home/me"),
        ];
        assert_eq!(file(&all, false), tokens("/xdg"));
        assert_eq!(file(&all, true), tokens("/xdg"));
        let no_xdg = [
            ("XDG_CONFIG_HOME", "relative"),
            ("APPDATA", "/appdata"),
            ("HOME", "/home/me"),
        ];
        assert_eq!(file(&no_xdg, false), tokens("/home/me/.config"));
        assert_eq!(file(&no_xdg, true), tokens("/appdata"));
        let home_only = [("APPDATA", ""), ("HOME", "/home/me")];
        assert_eq!(file(&home_only, true), tokens("/home/me/.config"));
        assert_eq!(file(&[("APPDATA", "/appdata")], false), None);
    }
}
