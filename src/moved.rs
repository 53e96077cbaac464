//! Names that lived at the crate root before 0.2 and moved to the module
//! that owns them. Each is a deprecated alias of its new path, so code
//! written against 0.1 still builds, with a warning naming the new path.
//! CHANGELOG.md lists them.

#![allow(deprecated)]

use std::borrow::Cow;
use std::path::Path;

use crate::error::Result;
use crate::model::ServerSnapshot;

/// Moved to [`lint::Finding`](crate::lint::Finding).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::Finding`")]
pub type Finding = crate::lint::Finding;

/// Moved to [`lint::HostCut`](crate::lint::HostCut).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::HostCut`")]
pub type HostCut = crate::lint::HostCut;

/// Moved to [`lint::HostProfile`](crate::lint::HostProfile).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::HostProfile`")]
pub type HostProfile = crate::lint::HostProfile;

/// Moved to [`lint::HostSurvival`](crate::lint::HostSurvival).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::HostSurvival`")]
pub type HostSurvival = crate::lint::HostSurvival;

/// Moved to [`lint::LintCode`](crate::lint::LintCode).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::LintCode`")]
pub type LintCode = crate::lint::LintCode;

/// Moved to [`lint::LintReport`](crate::lint::LintReport).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::LintReport`")]
pub type LintReport = crate::lint::LintReport;

/// Moved to [`lint::Linter`](crate::lint::Linter).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::Linter`")]
pub type Linter = crate::lint::Linter;

/// Moved to [`lint::LostUnit`](crate::lint::LostUnit).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::LostUnit`")]
pub type LostUnit = crate::lint::LostUnit;

/// Moved to [`lint::ServerLint`](crate::lint::ServerLint).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::ServerLint`")]
pub type ServerLint = crate::lint::ServerLint;

/// Moved to [`lint::Severity`](crate::lint::Severity).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::Severity`")]
pub type Severity = crate::lint::Severity;

/// Moved to [`pin::Lock`](crate::pin::Lock).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::Lock`")]
pub type Lock = crate::pin::Lock;

/// Moved to [`pin::LockEntry`](crate::pin::LockEntry).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::LockEntry`")]
pub type LockEntry = crate::pin::LockEntry;

/// Moved to [`pin::OnChange`](crate::pin::OnChange).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::OnChange`")]
pub type OnChange = crate::pin::OnChange;

/// Moved to [`pin::Pin`](crate::pin::Pin).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::Pin`")]
pub type Pin = crate::pin::Pin;

/// Moved to [`pin::PinState`](crate::pin::PinState).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::PinState`")]
pub type PinState = crate::pin::PinState;

/// Moved to [`pin::PinnedInstructions`](crate::pin::PinnedInstructions).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::pin::PinnedInstructions`"
)]
pub type PinnedInstructions = crate::pin::PinnedInstructions;

/// Moved to [`pin::PinnedTool`](crate::pin::PinnedTool).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::PinnedTool`")]
pub type PinnedTool = crate::pin::PinnedTool;

/// Moved to [`settings::PolicyFile`](crate::settings::PolicyFile).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::settings::PolicyFile`"
)]
pub type PolicyFile = crate::settings::PolicyFile;

/// Moved to [`files::Capture`](crate::files::Capture).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::files::Capture`")]
pub type Capture = crate::files::Capture;

/// Moved to [`files::McpConfig`](crate::files::McpConfig).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::files::McpConfig`")]
pub type McpConfig = crate::files::McpConfig;

/// Moved to [`files::ServerEntry`](crate::files::ServerEntry).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::files::ServerEntry`")]
pub type ServerEntry = crate::files::ServerEntry;

/// Moved to [`files::ServerTransport`](crate::files::ServerTransport).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::files::ServerTransport`"
)]
pub type ServerTransport = crate::files::ServerTransport;

/// Moved to [`files::SnapshotFile`](crate::files::SnapshotFile).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::files::SnapshotFile`")]
pub type SnapshotFile = crate::files::SnapshotFile;

/// Moved to [`report::Deferral`](crate::report::Deferral).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::Deferral`")]
pub type Deferral = crate::report::Deferral;

/// Moved to [`report::DeferReason`](crate::report::DeferReason).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::DeferReason`")]
pub type DeferReason = crate::report::DeferReason;

/// Moved to [`report::HiddenChars`](crate::report::HiddenChars).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::HiddenChars`")]
pub type HiddenChars = crate::report::HiddenChars;

/// Moved to [`report::Limit`](crate::report::Limit).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::Limit`")]
pub type Limit = crate::report::Limit;

/// Moved to [`report::LimitHit`](crate::report::LimitHit).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::LimitHit`")]
pub type LimitHit = crate::report::LimitHit;

/// Moved to [`report::Omission`](crate::report::Omission).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::Omission`")]
pub type Omission = crate::report::Omission;

/// Moved to [`report::Removal`](crate::report::Removal).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::Removal`")]
pub type Removal = crate::report::Removal;

/// Moved to [`report::RemovalReason`](crate::report::RemovalReason).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::report::RemovalReason`"
)]
pub type RemovalReason = crate::report::RemovalReason;

/// Moved to [`report::Restatement`](crate::report::Restatement).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::report::Restatement`")]
pub type Restatement = crate::report::Restatement;

/// Renamed to [`settings::Defaults`](crate::settings::Defaults).
#[deprecated(
    since = "0.2.0",
    note = "renamed to `mcp_preamble::settings::Defaults`"
)]
pub type PolicyDefaults = crate::settings::Defaults;

/// Renamed to [`settings::ServerSettings`](crate::settings::ServerSettings).
#[deprecated(
    since = "0.2.0",
    note = "renamed to `mcp_preamble::settings::ServerSettings`"
)]
pub type ServerPolicy = crate::settings::ServerSettings;

/// The policy file reads [`Order`](crate::Order) itself now.
#[deprecated(since = "0.2.0", note = "use `mcp_preamble::Order`")]
pub type PolicyOrder = crate::assemble::Order;

/// Moved to [`lint::DEFAULT_MAX_TOKENS`](crate::lint::DEFAULT_MAX_TOKENS).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::lint::DEFAULT_MAX_TOKENS`"
)]
pub const DEFAULT_MAX_TOKENS: usize = crate::lint::DEFAULT_MAX_TOKENS;

/// Moved to [`lint::DEFAULT_MAX_TOOL_TOKENS`](crate::lint::DEFAULT_MAX_TOOL_TOKENS).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::lint::DEFAULT_MAX_TOOL_TOKENS`"
)]
pub const DEFAULT_MAX_TOOL_TOKENS: usize = crate::lint::DEFAULT_MAX_TOOL_TOKENS;

/// Moved to [`pin::LOCK_VERSION`](crate::pin::LOCK_VERSION).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::pin::LOCK_VERSION`")]
pub const LOCK_VERSION: u32 = crate::pin::LOCK_VERSION;

/// Moved to [`settings::POLICY_VERSION`](crate::settings::POLICY_VERSION).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::settings::POLICY_VERSION`"
)]
pub const POLICY_VERSION: u32 = crate::settings::POLICY_VERSION;

/// Moved to [`files::SNAPSHOT_FORMAT_VERSION`](crate::files::SNAPSHOT_FORMAT_VERSION).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::files::SNAPSHOT_FORMAT_VERSION`"
)]
pub const SNAPSHOT_FORMAT_VERSION: u32 = crate::files::SNAPSHOT_FORMAT_VERSION;

/// Moved to [`files::MAX_FILE_BYTES`](crate::files::MAX_FILE_BYTES).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::files::MAX_FILE_BYTES`"
)]
pub const MAX_FILE_BYTES: u64 = crate::files::MAX_FILE_BYTES;

/// Moved to [`lint::lint`](crate::lint::lint).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::lint::lint`")]
pub fn lint(server: &ServerSnapshot) -> Vec<crate::lint::Finding> {
    crate::lint::lint(server)
}

/// Moved to [`files::load_server_file`](crate::files::load_server_file).
#[deprecated(
    since = "0.2.0",
    note = "moved to `mcp_preamble::files::load_server_file`"
)]
pub fn load_server_file(path: impl AsRef<Path>) -> Result<ServerSnapshot> {
    crate::files::load_server_file(path)
}

/// Moved to [`text::terminal_safe`](crate::text::terminal_safe).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::text::terminal_safe`")]
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    crate::text::terminal_safe(s)
}

/// Moved to [`text::json_safe`](crate::text::json_safe).
#[deprecated(since = "0.2.0", note = "moved to `mcp_preamble::text::json_safe`")]
pub fn json_safe(json: &str) -> Cow<'_, str> {
    crate::text::json_safe(json)
}
