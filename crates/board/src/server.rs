//! The HTTP side: routes, bounds and errors. Every answer of the API is
//! JSON; every failure is a status with `{"error": "..."}` saying what was
//! wrong with the request. Searches run on blocking threads, at most
//! `max_searches` at once, each stopped at `max_movetime`.

use crate::analysis::{self, NetChoice};
use crate::catalog::{Catalog, GameFilter, Source, MAX_GAME_PLIES};
use crate::config::BoardConfig;
use crate::line::{LineRequest, LineView, MoveView};
use crate::players::Players;
use crate::report_page;
use crate::tables::ClassicTables;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use halatafl_agent::{Budget, StopSignal};
use halatafl_rules::{excerpt, Game};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

const INDEX_HTML: &str = include_str!("../assets/index.html");
const BOARD_JS: &str = include_str!("../assets/board.js");
const BOARD_CSS: &str = include_str!("../assets/board.css");

/// A failed request: its status and what was wrong.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn bad(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> ApiError {
        ApiError {
            status: r.status(),
            message: format!("request body: {}", r.body_text()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> ApiError {
        ApiError {
            status: r.status(),
            message: format!("query: {}", r.body_text()),
        }
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

/// What every handler shares.
pub struct Board {
    config: BoardConfig,
    catalog: RwLock<Arc<Catalog>>,
    players: Players,
    tables: ClassicTables,
    searches: Arc<Semaphore>,
    /// Where the runs' reports are drawn: a folder of this board's own,
    /// removed when the board is dropped.
    report_dir: PathBuf,
    /// The files each run's last drawn report may serve, by run index.
    report_files: Mutex<Vec<Vec<String>>>,
    seeds: AtomicU64,
}

impl Board {
    /// The board of `config`: its games read, its agents checked. An
    /// agent spec that is wrong stops it here, with the reason.
    pub fn new(config: BoardConfig) -> Result<Board, String> {
        let players = Players::new(&config)?;
        let catalog = Catalog::load(&sources(&config));
        // Unique per board, so boards of one process never share it.
        static BOARDS: AtomicU64 = AtomicU64::new(0);
        let report_dir = std::env::temp_dir().join(format!(
            "halatafl-board-{}-{}",
            std::process::id(),
            BOARDS.fetch_add(1, Ordering::Relaxed)
        ));
        Ok(Board {
            tables: ClassicTables::new(config.tables, config.tables_mib),
            searches: Arc::new(Semaphore::new(config.max_searches.max(1))),
            report_files: Mutex::new(vec![Vec::new(); config.runs.len()]),
            seeds: AtomicU64::new(config.seed),
            catalog: RwLock::new(Arc::new(catalog)),
            players,
            report_dir,
            config,
        })
    }

    /// How many games were read and how many lines were not.
    pub fn counts(&self) -> (usize, usize, usize) {
        let c = self.catalog();
        (c.games.len(), c.files.len(), c.problems.len())
    }

    fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().expect("catalog lock").clone()
    }

    /// The folder run `i`'s report is drawn into.
    fn report_out(&self, i: usize) -> PathBuf {
        self.report_dir.join(format!("run-{i}"))
    }

    fn next_seed(&self) -> u64 {
        self.seeds.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `work` on a blocking thread once a search slot is free (at
    /// most `queue_wait`), with a stop signal raised at `max_movetime`.
    async fn search<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(StopSignal) -> Result<T, String> + Send + 'static,
    ) -> Result<T, ApiError> {
        let permit = tokio::time::timeout(
            self.config.queue_wait,
            self.searches.clone().acquire_owned(),
        )
        .await
        .map_err(|_| ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: format!(
                "busy: {} searches are running and none ended within {} s; try again",
                self.config.max_searches,
                self.config.queue_wait.as_secs()
            ),
        })?
        .expect("the semaphore is never closed");
        let stop = StopSignal::new();
        let timer = {
            let stop = stop.clone();
            let cap = self.config.max_movetime;
            tokio::spawn(async move {
                tokio::time::sleep(cap).await;
                stop.stop();
            })
        };
        let done = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work(stop)
        })
        .await;
        timer.abort();
        match done {
            Ok(result) => result.map_err(ApiError::bad),
            Err(e) => Err(ApiError {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                message: format!("the search failed: {e}"),
            }),
        }
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        // Drawn reports are copies; nothing else is kept there.
        let _ = std::fs::remove_dir_all(&self.report_dir);
    }
}

/// The game files and run directories of `config`, in the order listed.
fn sources(config: &BoardConfig) -> Vec<Source> {
    let csvs = config.games.iter().cloned().map(Source::Csv);
    csvs.chain(config.runs.iter().cloned().map(Source::Run))
        .collect()
}

/// The router of `board`: the page, its assets, the API and the reports.
pub fn router(board: Arc<Board>) -> Router {
    let limit = board.config.max_body_bytes;
    Router::new()
        .route("/", get(|| async { Html(INDEX_HTML) }))
        .route(
            "/assets/board.js",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
                    BOARD_JS,
                )
            }),
        )
        .route(
            "/assets/board.css",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
                    BOARD_CSS,
                )
            }),
        )
        .route("/api/info", get(info))
        .route("/api/games", get(games))
        .route("/api/games/{id}", get(game))
        .route("/api/reload", post(reload))
        .route("/api/line", post(line))
        .route("/api/analyse", post(analyse))
        .route("/api/move", post(agent_move))
        .route("/api/export", post(export))
        .route("/runs/{run}/report", get(report))
        .route("/runs/{run}/{file}", get(report_file))
        .fallback(|| async {
            ApiError::not_found("no such page: the board serves /, /api/... and /runs/N/report")
        })
        .layer(DefaultBodyLimit::max(limit))
        .with_state(board)
}

async fn info(State(board): State<Arc<Board>>) -> ApiResult {
    let c = &board.config;
    let (games, files, problems) = board.counts();
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "agents": board.players.offered,
        "networks": board.players.networks.iter().map(NetChoice::spec).collect::<Vec<_>>(),
        "runs": c.runs.iter().enumerate().map(|(i, r)| json!({"id": i, "dir": r.display().to_string()})).collect::<Vec<_>>(),
        "games": games, "files": files, "problems": problems,
        "tables": c.tables,
        "limits": {
            "max_ms": c.max_movetime.as_millis() as u64,
            "max_sims": c.max_sims,
            "max_depth": c.max_depth,
            "max_solver_nodes": c.max_solver_nodes,
            "max_searches": c.max_searches,
        },
    })))
}

async fn games(
    State(board): State<Arc<Board>>,
    query: Result<Query<GameFilter>, QueryRejection>,
) -> ApiResult {
    let Query(filter) = query?;
    filter.check().map_err(ApiError::bad)?;
    let catalog = board.catalog();
    let offset = filter.offset.unwrap_or(0);
    let limit = filter.limit.unwrap_or(200);
    let matched: Vec<_> = catalog.filtered(&filter).map(|g| &g.summary).collect();
    Ok(Json(json!({
        "total": catalog.games.len(),
        "matched": matched.len(),
        "offset": offset,
        "games": matched.iter().skip(offset).take(limit).collect::<Vec<_>>(),
        "problems": catalog.problems,
        "facets": catalog.facets(),
    })))
}

async fn game(State(board): State<Arc<Board>>, UrlPath(id): UrlPath<String>) -> ApiResult {
    let catalog = board.catalog();
    let found = id
        .parse::<usize>()
        .ok()
        .and_then(|i| catalog.games.get(i))
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no game `{}`: this server lists games 0 to {}",
                excerpt(&id, None),
                catalog.games.len().saturating_sub(1)
            ))
        })?;
    let game = found.line.game(MAX_GAME_PLIES).map_err(ApiError::bad)?;
    Ok(Json(json!({
        "summary": found.summary,
        "request": found.line,
        "line": LineView::of(&game),
    })))
}

async fn reload(State(board): State<Arc<Board>>) -> ApiResult {
    let b = board.clone();
    let catalog = tokio::task::spawn_blocking(move || Catalog::load(&sources(&b.config)))
        .await
        .map_err(|e| ApiError::bad(format!("reading the games failed: {e}")))?;
    let counts = (catalog.games.len(), catalog.problems.len());
    *board.catalog.write().expect("catalog lock") = Arc::new(catalog);
    Ok(Json(json!({"games": counts.0, "problems": counts.1})))
}

fn game_of(request: &LineRequest) -> Result<Game, ApiError> {
    request.game(MAX_GAME_PLIES).map_err(ApiError::bad)
}

async fn line(body: Result<Json<LineRequest>, JsonRejection>) -> ApiResult {
    let Json(request) = body?;
    let game = game_of(&request)?;
    Ok(Json(
        serde_json::to_value(LineView::of(&game)).expect("a line serializes"),
    ))
}

/// What to analyse and how.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyseRequest {
    line: LineRequest,
    /// `network`, `search`, `alphabeta`, `solver` or `tables`.
    kind: String,
    /// The network (`best`, `net:ckpt=PATH`); for `search`, `rollouts`
    /// (or nothing) searches without one.
    #[serde(default)]
    network: Option<String>,
    #[serde(default)]
    sims: Option<u32>,
    #[serde(default)]
    ms: Option<u64>,
    #[serde(default)]
    depth: Option<u32>,
    #[serde(default)]
    nodes: Option<u64>,
}

async fn analyse(
    State(board): State<Arc<Board>>,
    body: Result<Json<AnalyseRequest>, JsonRejection>,
) -> ApiResult {
    let Json(r) = body?;
    let game = game_of(&r.line)?;
    let c = &board.config;
    let max_ms = c.max_movetime.as_millis() as u64;
    let within = |key, value: u64, max: u64, flag| {
        crate::players::within(key, value, 1, max, flag).map_err(ApiError::bad)
    };
    if let Some(ms) = r.ms {
        within("ms", ms, max_ms, "--max-ms")?;
    }
    let movetime = r.ms.map(Duration::from_millis);
    let network = |spec: Option<&str>| {
        board
            .players
            .network(spec.unwrap_or("best"))
            .map_err(ApiError::bad)
    };
    let value = match r.kind.as_str() {
        "network" => {
            let net = network(r.network.as_deref())?;
            let a = board
                .search(move |_| analysis::network(&game, &net))
                .await?;
            serde_json::to_value(a)
        }
        "search" => {
            let sims = r.sims.unwrap_or(800);
            within("sims", sims.into(), c.max_sims.into(), "--max-sims")?;
            let net = match r.network.as_deref() {
                None | Some("rollouts") => None,
                Some(spec) => Some(network(Some(spec))?),
            };
            let seed = board.next_seed();
            let a = board
                .search(move |stop| {
                    let deadline = movetime.map(|t| Instant::now() + t);
                    analysis::search(&game, net.as_ref(), sims, deadline, &stop, seed)
                })
                .await?;
            serde_json::to_value(a)
        }
        "alphabeta" => {
            if let Some(depth) = r.depth {
                within("depth", depth.into(), c.max_depth.into(), "--max-depth")?;
            }
            let (depth, movetime) = match (r.depth, movetime) {
                (None, None) => (None, Some(Duration::from_millis(1000.min(max_ms)))),
                given => given,
            };
            let a = board
                .search(move |stop| analysis::alphabeta(&game, depth, movetime, &stop))
                .await?;
            serde_json::to_value(a)
        }
        "solver" => {
            let nodes = r.nodes.unwrap_or(1_000_000);
            within("nodes", nodes, c.max_solver_nodes, "--max-solver-nodes")?;
            let position = *game.position();
            let a = board
                .search(move |_| analysis::solve(&position, nodes))
                .await?;
            serde_json::to_value(a)
        }
        "tables" => serde_json::to_value(board.tables.answer(game.position())),
        other => {
            return Err(ApiError::bad(format!(
                "kind `{}`: expected network, search, alphabeta, solver or tables",
                excerpt(other, None)
            )))
        }
    };
    Ok(Json(value.expect("an analysis serializes")))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    line: LineRequest,
    /// The agent's spec.
    agent: String,
}

async fn agent_move(
    State(board): State<Arc<Board>>,
    body: Result<Json<MoveRequest>, JsonRejection>,
) -> ApiResult {
    let Json(r) = body?;
    let game = game_of(&r.line)?;
    if let Some(o) = game.outcome() {
        return Err(ApiError::bad(format!(
            "the game is over ({}, {}): no move to play",
            o.result_word(),
            o.reason.name()
        )));
    }
    board
        .players
        .check(&r.agent)
        .map_err(|e| ApiError::bad(format!("agent `{}`: {e}", excerpt(&r.agent, None))))?;
    let seed = board.next_seed();
    let spec = r.agent.clone();
    let decision = board
        .search(move |stop| {
            let started = Instant::now();
            let mut agent =
                halatafl_program::agents::build_agent(&spec, seed, game.position().variant())
                    .map_err(|e| e.to_string())?;
            let budget = Budget {
                stop: Some(stop),
                ..Budget::default()
            };
            let d = agent
                .try_choose(&game, &budget)
                .map_err(|e| e.to_string())?;
            Ok((d, started.elapsed().as_secs_f64()))
        })
        .await?;
    let (d, seconds) = decision;
    Ok(Json(json!({
        "agent": r.agent,
        "move": MoveView::of(d.mv),
        "value": d.value,
        "depth": d.info.depth,
        "nodes": d.info.nodes,
        "pv": d.info.pv.iter().map(|&m| MoveView::of(m)).collect::<Vec<_>>(),
        "seconds": seconds,
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportRequest {
    line: LineRequest,
    foxes: String,
    geese: String,
    #[serde(default)]
    foxes_seconds: f64,
    #[serde(default)]
    geese_seconds: f64,
}

/// The game as one row of the arena's CSV (docs/matches.md), to download.
async fn export(body: Result<Json<ExportRequest>, JsonRejection>) -> Result<Response, ApiError> {
    let Json(r) = body?;
    let game = game_of(&r.line)?;
    if game.outcome().is_none() {
        return Err(ApiError::bad(
            "the game is not over: the arena's CSV holds finished games (the moves can be copied as they are)",
        ));
    }
    for (side, name) in [("foxes", &r.foxes), ("geese", &r.geese)] {
        if name.trim().is_empty() || name.len() > 200 || name.contains(['\n', '\r']) {
            return Err(ApiError::bad(format!(
                "{side}: expected the player's name or spec on one line"
            )));
        }
    }
    if game.start_position() != &halatafl_rules::Position::start(game.position().variant()) {
        return Err(ApiError::bad(
            "the game starts from a pasted position: the arena's CSV replays games from the variant's start",
        ));
    }
    let start = Game::new(*game.start_position());
    let row = halatafl_arena::GameRow::from_game(
        1,
        0,
        &start,
        &game,
        r.foxes,
        r.geese,
        [r.foxes_seconds.max(0.0), r.geese_seconds.max(0.0)],
        0,
    );
    let bytes = halatafl_arena::csv_bytes(&[row])
        .map_err(|e| ApiError::bad(format!("writing the row: {e}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"halatafl-game.csv\"",
            ),
        ],
        bytes,
    )
        .into_response())
}

fn run_index(board: &Board, run: &str) -> Result<usize, ApiError> {
    run.parse::<usize>()
        .ok()
        .filter(|&i| i < board.config.runs.len())
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no run `{}`: this server was given {} run directories",
                excerpt(run, None),
                board.config.runs.len()
            ))
        })
}

async fn report(
    State(board): State<Arc<Board>>,
    UrlPath(run): UrlPath<String>,
) -> Result<Html<String>, ApiError> {
    let i = run_index(&board, &run)?;
    let dir = board.config.runs[i].clone();
    let out = board.report_out(i);
    let drawn = tokio::task::spawn_blocking(move || report_page::draw(&dir, &out))
        .await
        .map_err(|e| ApiError::bad(e.to_string()))?;
    let title = format!("report: {}", board.config.runs[i].display());
    match drawn {
        Ok(d) => {
            board.report_files.lock().expect("report lock")[i] = d.files;
            Ok(Html(report_page::page(&title, &d.html)))
        }
        Err(why) => Ok(Html(report_page::page(
            &title,
            &format!(
                "<p class=\"problem\">No report: {}</p>",
                report_page::escape(&why)
            ),
        ))),
    }
}

/// A file of a drawn report: only a name the report wrote is served.
async fn report_file(
    State(board): State<Arc<Board>>,
    UrlPath((run, file)): UrlPath<(String, String)>,
) -> Result<Response, ApiError> {
    let i = run_index(&board, &run)?;
    let known = board.report_files.lock().expect("report lock")[i].contains(&file);
    if !known {
        return Err(ApiError::not_found(format!(
            "no file `{}` in run {i}'s report (open /runs/{i}/report first)",
            excerpt(&file, None)
        )));
    }
    let path = board.report_out(i).join(&file);
    let bytes = std::fs::read(&path).map_err(|e| ApiError::not_found(format!("{file}: {e}")))?;
    let kind = match file.rsplit('.').next() {
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => "text/plain; charset=utf-8",
    };
    Ok(([(header::CONTENT_TYPE, kind)], bytes).into_response())
}
