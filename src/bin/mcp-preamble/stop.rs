//! The signals that stop `wrap` and `serve`, and the end of the servers
//! they started: a signal's default action would leave them running.

use std::process::ExitCode;

use crate::error::CliError;

/// Completes on SIGTERM or Ctrl-C (SIGINT), whichever comes first. SIGTERM
/// is watched from this call on (one during the start is not lost).
pub fn stop_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .inspect_err(|e| tracing::warn!(error = %e, "cannot watch for SIGTERM"))
        .ok();
    async move {
        #[cfg(unix)]
        let terminated = async {
            match terminate.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminated = std::future::pending::<()>();
        tokio::select! {
            () = terminated => tracing::info!("SIGTERM: shutting down"),
            _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: shutting down"),
        }
    }
}

/// Runs `work` until it ends or SIGTERM or Ctrl-C comes; either way every
/// server started is ended with what it started (its process group)
/// before this returns. A signal is an orderly stop: `Ok(SUCCESS)`.
pub async fn until_stopped(
    work: impl Future<Output = Result<ExitCode, CliError>>,
) -> Result<ExitCode, CliError> {
    let stop = stop_signal();
    // Kept while the servers end: dropping it first would kill them
    // without their SIGTERM.
    let work = std::pin::pin!(work);
    let ended = tokio::select! {
        ended = work => ended,
        () = stop => Ok(ExitCode::SUCCESS),
    };
    mcp_preamble::connect::end_servers().await;
    ended
}
