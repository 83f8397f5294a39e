//! The board's HTTP API, called in process (no socket): what the page and
//! scripts get for good and bad requests.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use halatafl_board::{router, Board, BoardConfig};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const HEADER: &str = "game,opening,opening_moves,foxes,geese,result,reason,plies,moves,foxes_seconds,geese_seconds,seed,variant\n";

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("halatafl-board-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn board(dir: &std::path::Path) -> axum::Router {
    let csv = dir.join("games.csv");
    std::fs::write(
        &csv,
        format!(
            "{HEADER}1,0,,random,alphabeta:depth=1,geese,pen-filled,2,c7-c6 a4-a5,0,0,1,two-foxes\n\
             2,0,,random,alphabeta:depth=1,geese,pen-filled,2,c7-c6 a4-a6,0,0,1,two-foxes\n"
        ),
    )
    .unwrap();
    let config = BoardConfig {
        games: vec![csv],
        max_movetime: Duration::from_millis(2000),
        max_sims: 1000,
        max_body_bytes: 4096,
        ..BoardConfig::default()
    };
    router(Arc::new(Board::new(config).unwrap()))
}

async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder().method(method).uri(uri);
    let request = match body {
        Some(b) => request
            .header("content-type", "application/json")
            .body(Body::from(b.to_string())),
        None => request.body(Body::empty()),
    }
    .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"text": String::from_utf8_lossy(&bytes)}));
    (status, value)
}

#[tokio::test]
async fn games_are_listed_opened_and_bad_lines_reported() {
    let dir = temp_dir("games");
    let app = board(&dir);
    let (status, list) = call(&app, "GET", "/api/games", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["total"], 1);
    assert_eq!(list["problems"][0]["line"], 3);
    assert!(list["problems"][0]["why"]
        .as_str()
        .unwrap()
        .contains("move 2 `a4-a6`"));
    let (status, game) = call(&app, "GET", "/api/games/0", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(game["line"]["positions"].as_array().unwrap().len(), 3);
    assert_eq!(game["line"]["moves"][1]["text"], "a4-a5");
    let (status, missing) = call(&app, "GET", "/api/games/7", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(missing["error"].as_str().unwrap().contains("no game `7`"));
    let (status, bad) = call(&app, "GET", "/api/games?side=left", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(bad["error"].as_str().unwrap().contains("side `left`"));
    let (status, _) = call(&app, "GET", "/api/games?limit=abc", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn bad_requests_get_a_status_and_a_reason() {
    let dir = temp_dir("bad");
    let app = board(&dir);
    let (status, e) = call(
        &app,
        "POST",
        "/api/line",
        Some(json!({"moves": ["c7-c6", "d4-d6"]})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        e["error"].as_str().unwrap().starts_with("move 2 `d4-d6`"),
        "{e}"
    );
    let (status, e) = call(&app, "POST", "/api/line", Some(json!({"start": "F.F/zz"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        e["error"].as_str().unwrap().starts_with("start `F.F/zz`"),
        "{e}"
    );
    let (status, e) = call(
        &app,
        "POST",
        "/api/line",
        Some(json!({"moves": [], "colour": 1})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(e["error"].as_str().unwrap().contains("colour"), "{e}");
    let huge = json!({"moves": vec!["c7-c6"; 2000]});
    let (status, _) = call(&app, "POST", "/api/line", Some(huge)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, e) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": {}, "kind": "search", "sims": 5000})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(e["error"].as_str().unwrap().contains("--max-sims"), "{e}");
    let (status, e) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": {}, "kind": "oracle"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        e["error"].as_str().unwrap().contains("kind `oracle`"),
        "{e}"
    );
    let (status, e) = call(
        &app,
        "POST",
        "/api/move",
        Some(json!({"line": {}, "agent": "alphabeta:ms=60000"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(e["error"].as_str().unwrap().contains("--max-ms"), "{e}");
    let (status, e) = call(
        &app,
        "POST",
        "/api/move",
        Some(json!({"line": {}, "agent": "net:ckpt=/etc/hostname"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("only the checkpoints it was given"),
        "{e}"
    );
    for uri in [
        "/runs/0/report",
        "/runs/0/..%2F..%2Fetc%2Fpasswd",
        "/../etc/passwd",
        "/assets/../Cargo.toml",
    ] {
        let (status, _) = call(&app, "GET", uri, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
    }
    let (status, e) = call(
        &app,
        "POST",
        "/api/export",
        Some(json!({"line": {"moves": ["c7-c6"]}, "foxes": "a", "geese": "b"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(e["error"].as_str().unwrap().contains("not over"), "{e}");
}

#[tokio::test]
async fn analyses_and_agent_moves_answer_for_the_position_given() {
    let dir = temp_dir("analyse");
    let app = board(&dir);
    let line = json!({"moves": ["c7-c6"]});
    let (status, a) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": line, "kind": "alphabeta", "depth": 2})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["depth"], 2);
    let (status, a) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": line, "kind": "network"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{a}");
    let total: f64 = a["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["prior"].as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    let (status, a) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": line, "kind": "search", "sims": 50, "network": "rollouts"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(a["guide"], "rollouts");
    let (status, a) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": {"variant": "classic geese=13"}, "kind": "network"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(a["error"].as_str().unwrap().contains("trained on"), "{a}");
    let (status, t) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": {"variant": "classic geese=13"}, "kind": "tables"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(t["status"], "unavailable");
    let (status, m) = call(
        &app,
        "POST",
        "/api/move",
        Some(json!({"line": line, "agent": "alphabeta:depth=1"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{m}");
    let text = m["move"]["text"].as_str().unwrap().to_string();
    // The answer is a legal move there: the line goes on with it.
    let (status, _) = call(
        &app,
        "POST",
        "/api/line",
        Some(json!({"moves": ["c7-c6", text]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn a_finished_game_exports_as_an_arena_row() {
    let dir = temp_dir("export");
    let app = board(&dir);
    // Random against random, move by move through the API, to the end.
    let mut moves: Vec<String> = Vec::new();
    loop {
        let (status, line) = call(&app, "POST", "/api/line", Some(json!({"moves": moves}))).await;
        assert_eq!(status, StatusCode::OK);
        if !line["outcome"].is_null() {
            break;
        }
        let (status, m) = call(
            &app,
            "POST",
            "/api/move",
            Some(json!({"line": {"moves": moves}, "agent": "random"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{m}");
        moves.push(m["move"]["text"].as_str().unwrap().to_string());
        assert!(moves.len() < 5000, "the game never ended");
    }
    let request = Request::builder()
        .method("POST")
        .uri("/api/export")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"line": {"moves": moves}, "foxes": "random", "geese": "random"}).to_string(),
        ))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let mut reader = csv::Reader::from_reader(&bytes[..]);
    let rows: Vec<halatafl_arena::GameRow> = reader.deserialize().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].moves, moves.join(" "));
    assert_eq!(rows[0].plies, moves.len());
    rows[0].check().unwrap();
    // A pasted start is not an arena game.
    let pasted = json!({"start": "F.F/.../......./GGGGGGG/GGGGGGG/GGG/GGG f 3", "moves": []});
    let (status, e) = call(
        &app,
        "POST",
        "/api/export",
        Some(json!({"line": pasted, "foxes": "a", "geese": "b"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{e}");
}

#[tokio::test]
async fn classic_tables_are_built_for_the_geese_on_the_board_and_agree_with_the_solver() {
    let config = BoardConfig {
        tables: true,
        ..BoardConfig::default()
    };
    let app = router(Arc::new(Board::new(config).unwrap()));
    // Six geese, the fox to move, no sideways steps: tables of 4 to 6 geese.
    let line = json!({"variant": "classic geese=13", "start": ".../.../..F.G../...G.../..G.G../.G./..G f 0"});
    let ask = json!({"line": line, "kind": "tables"});
    let (status, first) = call(&app, "POST", "/api/analyse", Some(ask.clone())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(first["status"], "building", "{first}");
    let mut answer = first;
    for _ in 0..600 {
        if answer["status"] != "building" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = call(&app, "POST", "/api/analyse", Some(ask.clone()))
            .await
            .1;
    }
    assert_eq!(answer["status"], "solved", "{answer}");
    let (status, solved) = call(
        &app,
        "POST",
        "/api/analyse",
        Some(json!({"line": line, "kind": "solver", "nodes": 5_000_000})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["value"], solved["value"], "{answer} {solved}");
    // Every move's value in the tables is the solver's value of the position it leads to.
    for m in answer["moves"].as_array().unwrap() {
        let child =
            json!({"variant": "classic geese=13", "start": line["start"], "moves": [m["text"]]});
        let (_, s) = call(
            &app,
            "POST",
            "/api/analyse",
            Some(json!({"line": child, "kind": "solver", "nodes": 5_000_000})),
        )
        .await;
        if s["value"].is_null() {
            // The game ended with the move: the tables' value is the result.
            let (_, l) = call(&app, "POST", "/api/line", Some(child)).await;
            assert_eq!(l["outcome"]["result"], m["value"], "{}", m["text"]);
        } else {
            assert_eq!(s["value"], m["value"], "{}", m["text"]);
        }
    }
}
