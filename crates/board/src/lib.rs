//! The analysis board: `halatafl serve`, a local web server whose page (in
//! `assets/`, embedded in the binary: no CDN, works offline) browses the
//! games of runs and CSVs, steps through them on an SVG board, shows what
//! the network, a search, alpha-beta, the solver and the classic tables say
//! of a position, and plays any agent from any position. docs/board.md is
//! its guide.
//!
//! - [`line`]: positions and moves as the page draws them, all from the
//!   rules engine (the page applies no rule itself);
//! - [`catalog`]: the games of the files and runs given, bad lines reported;
//! - [`analysis`] and [`tables`]: what each engine says of a position;
//! - [`players`]: which agents and budgets a request may ask for;
//! - [`report_page`]: a run's report on its own page;
//! - [`server`]: the routes, bounds and errors.
//!
//! Safe by default: it listens on 127.0.0.1 unless told otherwise, reads
//! only the files it was given (no request names a path, except a
//! checkpoint it was given), bounds request bodies, search budgets and the
//! searches running at once, and answers a bad request with a status and a
//! message, never by stopping.

#![warn(missing_docs)]

pub mod analysis;
pub mod catalog;
pub mod config;
pub mod line;
pub mod players;
pub mod report_page;
pub mod server;
pub mod tables;

pub use config::BoardConfig;
pub use server::{router, Board};

use std::sync::Arc;

/// Serves `config` until Ctrl-C (or SIGTERM). `on_ready` hears the address
/// it listens on (with port 0, the port chosen) and the board, once the
/// games are read and the socket is bound.
pub fn run(
    config: BoardConfig,
    on_ready: impl FnOnce(std::net::SocketAddr, &Board),
) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("starting the server's runtime: {e}"))?;
    runtime.block_on(async move {
        let address = std::net::SocketAddr::new(config.bind, config.port);
        let board = Arc::new(Board::new(config)?);
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|e| format!("listening on {address}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        on_ready(bound, &board);
        axum::serve(listener, router(board))
            .with_graceful_shutdown(shutdown())
            .await
            .map_err(|e| format!("serving: {e}"))
    })
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
