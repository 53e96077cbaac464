use std::fmt;

/// The category of an [`Error`].
///
/// Match on this rather than on the message text; new kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input was not valid JSON.
    InvalidJson,
    /// The JSON was valid but not the shape the protocol defines.
    InvalidMessage,
    /// The server answered a JSON-RPC error instead of a result.
    RpcError,
    /// A file could not be read.
    Io,
    /// A template failed to compile or render.
    Template,
    /// No built-in template has that name.
    UnknownTemplate,
    /// No tokenizer encoding or model has that name.
    UnknownEncoding,
    /// No model of the model table has that name
    /// ([`Model::from_name`](crate::tokens::Model::from_name)).
    UnknownModel,
    /// A tokenizer file could not be loaded.
    InvalidTokenizer,
    /// A configuration value or file is invalid.
    InvalidConfig,
    /// A live server could not be started or did not complete its handshake.
    Connect,
    /// A live server did not answer in time.
    Timeout,
    /// A server differs from its pin and the operator's `on_change` is
    /// `fail` ([`OnChange::Fail`](crate::pin::OnChange::Fail)).
    Drift,
}

impl ErrorKind {
    /// A stable snake_case name for the kind, as the Python and Node
    /// packages give it (`exc.kind`, `err.kind`) and as programs match on:
    /// `invalid_json`, `invalid_message`, `rpc_error`, `io`, `template`,
    /// `unknown_template`, `unknown_encoding`, `unknown_model`,
    /// `invalid_tokenizer`, `invalid_config`, `connect`, `timeout`, `drift`.
    ///
    /// ```
    /// use mcp_preamble::{ErrorKind, ServerSnapshot};
    /// let err = ServerSnapshot::from_initialize_json("{").unwrap_err();
    /// assert_eq!(err.kind().as_str(), "invalid_json");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidJson => "invalid_json",
            ErrorKind::InvalidMessage => "invalid_message",
            ErrorKind::RpcError => "rpc_error",
            ErrorKind::Io => "io",
            ErrorKind::Template => "template",
            ErrorKind::UnknownTemplate => "unknown_template",
            ErrorKind::UnknownEncoding => "unknown_encoding",
            ErrorKind::UnknownModel => "unknown_model",
            ErrorKind::InvalidTokenizer => "invalid_tokenizer",
            ErrorKind::InvalidConfig => "invalid_config",
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Drift => "drift",
        }
    }

    fn description(self) -> &'static str {
        match self {
            ErrorKind::InvalidJson => "invalid json",
            ErrorKind::InvalidMessage => "invalid message",
            ErrorKind::RpcError => "json-rpc error response",
            ErrorKind::Io => "cannot read file",
            ErrorKind::Template => "template error",
            ErrorKind::UnknownTemplate => "unknown template",
            ErrorKind::UnknownEncoding => "unknown encoding",
            ErrorKind::UnknownModel => "unknown model",
            ErrorKind::InvalidTokenizer => "invalid tokenizer",
            ErrorKind::InvalidConfig => "invalid configuration",
            ErrorKind::Connect => "cannot connect",
            ErrorKind::Timeout => "timed out",
            ErrorKind::Drift => "pin check failed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A JSON-RPC error a server answered, with the method it answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RpcError {
    /// The request method, e.g. `initialize` or `tools/list`.
    pub method: String,
    /// The JSON-RPC error code, e.g. `-32601`.
    pub code: i64,
    /// The server's error message, as sent.
    pub message: String,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed with {}: {}",
            self.method, self.code, self.message
        )
    }
}

impl std::error::Error for RpcError {}

/// The error type of this crate.
///
/// It is opaque: ask [`Error::kind`] for the category, and the accessors for
/// details. Its `Display` is `"<kind>: <detail>"`, all lowercase except for
/// text quoted from the input.
///
/// The detail already says what caused the error (`cannot read file:
/// p.toml: No such file or directory (os error 2)`), so
/// [`source`](std::error::Error::source) is `None`: with anyhow's `{:#}`,
/// `Caused by:` or eyre, each thing is said once.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct Error(Box<Repr>);

#[derive(Debug, thiserror::Error)]
#[error("{}: {detail}", heading.unwrap_or(kind.description()))]
struct Repr {
    kind: ErrorKind,
    /// Words that replace the kind's in the message (a write is an
    /// [`ErrorKind::Io`] too, but not a "cannot read file").
    heading: Option<&'static str>,
    detail: String,
    rpc: Option<RpcError>,
    template: Option<(String, Option<usize>)>,
    /// The error the detail quotes, for `Debug` only: not a `source()`,
    /// which would print its text a second time.
    cause: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, detail: impl Into<String>) -> Error {
        Error(Box::new(Repr {
            kind,
            heading: None,
            detail: detail.into(),
            rpc: None,
            template: None,
            cause: None,
        }))
    }

    /// Keeps the error the detail quotes (shown by `Debug`, never as a
    /// `source()`: the detail already says it).
    pub(crate) fn with_source(
        mut self,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        self.0.cause = Some(Box::new(source));
        self
    }

    /// An [`ErrorKind::Io`] error writing `path`: `cannot write file: PATH: WHY`.
    pub(crate) fn write(path: &std::path::Path, err: std::io::Error) -> Error {
        let mut e = Error::new(ErrorKind::Io, format!("{}: {err}", path.display()));
        e.0.heading = Some("cannot write file");
        e.with_source(err)
    }

    pub(crate) fn rpc(err: RpcError) -> Error {
        let mut e = Error::new(ErrorKind::RpcError, err.to_string());
        e.0.rpc = Some(err);
        e
    }

    pub(crate) fn template(err: minijinja::Error, fallback_name: &str) -> Error {
        let name = err.name().unwrap_or(fallback_name).to_string();
        let line = err.line();
        let mut detail = match line {
            Some(line) => format!("{name} line {line}: "),
            None => format!("{name}: "),
        };
        detail.push_str(&err.kind().to_string().to_lowercase());
        if let Some(d) = err.detail() {
            detail.push_str(" (");
            detail.push_str(d);
            detail.push(')');
        }
        let mut e = Error::new(ErrorKind::Template, detail);
        e.0.template = Some((name, line));
        e.with_source(err)
    }

    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The human-readable detail, without the kind prefix.
    pub fn detail(&self) -> &str {
        &self.0.detail
    }

    /// For [`ErrorKind::RpcError`]: the method, code and message the server sent.
    pub fn rpc_error(&self) -> Option<&RpcError> {
        self.0.rpc.as_ref()
    }

    /// For [`ErrorKind::Template`]: the template's name.
    pub fn template_name(&self) -> Option<&str> {
        self.0.template.as_ref().map(|t| t.0.as_str())
    }

    /// For [`ErrorKind::Template`]: the 1-based line in the template, when known.
    pub fn line(&self) -> Option<usize> {
        self.0.template.as_ref().and_then(|t| t.1)
    }
}

/// Largest file the loaders read (captures, snapshot files, configs,
/// templates): far above any real one, and a bound on what a path such as
/// `/dev/zero` can cost.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads a whole text file of at most [`MAX_FILE_BYTES`], without a leading
/// UTF-8 byte-order mark; failure is an [`ErrorKind::Io`] naming the path.
pub(crate) fn read_file(path: &std::path::Path) -> Result<String> {
    use std::io::Read;
    let io = |e: std::io::Error| {
        Error::new(ErrorKind::Io, format!("{}: {}", path.display(), e)).with_source(e)
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "{}: over the limit of {MAX_FILE_BYTES} bytes",
                path.display()
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            e.utf8_error(),
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Shorthand for `std::result::Result<T, mcp_preamble::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
