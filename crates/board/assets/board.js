// The analysis board's page. It applies no rule of the game itself: every
// position, legal move and result comes from the server's rules engine
// (POST /api/line); the page draws them and sends what is clicked.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const FILES = "abcdefg";
const STEP = 80, MARGIN = 60;

const state = {
  variant: "two-foxes",
  start: null,        // a pasted position string, or null for the variant's start
  moves: [],          // the moves of the line shown
  line: null,         // the server's view of the whole line
  cursor: 0,          // the ply shown
  prefixLegal: null,  // legal moves at the cursor when it is not at the end
  path: [],           // points clicked for the move being entered
  arrows: [],         // analysis arrows: [{path, weight, label}]
  opened: null,       // the catalog game shown, if any
  names: { foxes: "human", geese: "human" },
  busy: false,
};

// ---------- the server ----------

async function api(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let data;
  try { data = JSON.parse(text); } catch (_) { data = { error: text }; }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function request(moves) {
  return { variant: state.variant, start: state.start, moves: moves ?? state.moves };
}

function showError(e) {
  $("error").textContent = e ? String(e.message || e) : "";
}

// ---------- coordinates ----------

function xy(name) {
  const f = FILES.indexOf(name[0]), r = Number(name[1]) - 1;
  return [MARGIN + f * STEP, MARGIN + (6 - r) * STEP];
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// ---------- drawing ----------

function legalHere() {
  if (!state.line) return [];
  return state.cursor === state.moves.length ? state.line.legal : (state.prefixLegal || []);
}

function draw() {
  const svg = $("board");
  svg.replaceChildren();
  if (!state.line) return;
  const board = state.line.board;
  const pos = state.line.positions[state.cursor];
  // The pen, the lines, the points.
  if (board.pen.length) {
    const xs = board.pen.map(xy);
    const minX = Math.min(...xs.map((p) => p[0])) - 28, maxX = Math.max(...xs.map((p) => p[0])) + 28;
    const minY = Math.min(...xs.map((p) => p[1])) - 28, maxY = Math.max(...xs.map((p) => p[1])) + 28;
    el("rect", { class: "pen", x: minX, y: minY, width: maxX - minX, height: maxY - minY, rx: 14 }, svg);
  }
  for (const [a, b] of board.links) {
    const [x1, y1] = xy(a), [x2, y2] = xy(b);
    el("line", { class: "link", x1, y1, x2, y2 }, svg);
  }
  for (const p of board.points) {
    const [x, y] = xy(p);
    el("circle", { class: "spot", cx: x, cy: y, r: 5 }, svg);
  }
  for (let f = 0; f < 7; f++) {
    const t = el("text", { class: "coord", x: MARGIN + f * STEP - 4, y: 596 }, svg);
    t.textContent = FILES[f];
  }
  for (let r = 1; r <= 7; r++) {
    const t = el("text", { class: "coord", x: 4, y: MARGIN + (7 - r) * STEP + 5 }, svg);
    t.textContent = String(r);
  }
  // The move that led here.
  if (state.cursor > 0) {
    const m = state.line.moves[state.cursor - 1];
    el("polyline", { class: "last", points: m.path.map((p) => xy(p).join(",")).join(" ") }, svg);
    for (const c of m.captured) {
      const [x, y] = xy(c);
      el("circle", { class: "taken", cx: x, cy: y, r: 20 }, svg);
    }
  }
  // Click targets on every point, under the pieces, which take their own clicks.
  for (const p of board.points) {
    const [x, y] = xy(p);
    const t = el("circle", { class: "target", cx: x, cy: y, r: 30, "data-target": p }, svg);
    t.addEventListener("click", () => clickPoint(p));
  }
  // The pieces: each carries its point and kind, so tests read the board.
  for (const p of pos.foxes) piece(svg, p, "fox");
  for (const p of pos.geese) piece(svg, p, "goose");
  // The hints for the move being entered.
  for (const p of nextLandings()) {
    const [x, y] = xy(p);
    el("circle", { class: "hint", cx: x, cy: y, r: 11 }, svg);
  }
  drawArrows(svg);
}

function piece(svg, p, kind) {
  const [x, y] = xy(p);
  const selected = state.path.length && state.path[0] === p ? " selected" : "";
  const c = el("circle", { class: kind + selected, cx: x, cy: y, r: 24, "data-point": p, "data-piece": kind }, svg);
  c.addEventListener("click", (e) => { e.stopPropagation(); clickPoint(p); });
}

function drawArrows(svg) {
  if (!state.arrows.length) return;
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "head", viewBox: "0 0 10 10", refX: 6, refY: 5, markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#1f8a4c" }, marker);
  for (const a of state.arrows) {
    const pts = a.path.map(xy);
    el("polyline", {
      class: "arrow", points: pts.map((p) => p.join(",")).join(" "),
      "stroke-width": 3 + 14 * a.weight, opacity: 0.35 + 0.6 * a.weight, "marker-end": "url(#head)",
    }, svg);
    // The label sits beside the middle of the last leg, off the line, so
    // arrows that end on one point keep their labels apart.
    const [x1, y1] = pts[pts.length - 2], [x2, y2] = pts[pts.length - 1];
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const [nx, ny] = [-(y2 - y1) / len, (x2 - x1) / len];
    const t = el("text", { class: "arrow-label", x: (x1 + x2) / 2 + 12 * nx - 14, y: (y1 + y2) / 2 + 12 * ny + 5 }, svg);
    t.textContent = a.label;
  }
}

function render() {
  const line = state.line;
  if (!line) return;
  $("slider").max = String(state.moves.length);
  $("slider").value = String(state.cursor);
  $("ply").textContent = `ply ${state.cursor} / ${state.moves.length}`;
  const pos = line.positions[state.cursor];
  $("fen").value = pos.fen;
  let status = `${pos.side} to move`;
  if (state.cursor === state.moves.length && line.outcome) {
    status = line.outcome.result === "draw"
      ? `drawn (${line.outcome.reason})`
      : `${line.outcome.result} win (${line.outcome.reason})`;
  }
  $("status").textContent = status;
  const moves = $("moves");
  moves.replaceChildren();
  line.moves.forEach((m, i) => {
    const s = document.createElement("span");
    s.textContent = (i % 2 === 0 ? `${i / 2 + 1}. ` : "") + m.text;
    s.dataset.ply = String(i + 1);
    if (i + 1 === state.cursor) s.className = "current";
    s.addEventListener("click", () => goTo(i + 1));
    moves.appendChild(s);
    moves.appendChild(document.createTextNode(" "));
  });
  const current = moves.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  draw();
}

// ---------- the line ----------

async function loadLine(moves, cursor) {
  const line = await api("POST", "/api/line", request(moves));
  state.moves = moves;
  state.line = line;
  state.cursor = cursor ?? moves.length;
  state.prefixLegal = null;
  state.path = [];
  state.arrows = [];
  showError(null);
  if (state.cursor !== moves.length) await fetchPrefixLegal();
  render();
}

async function fetchPrefixLegal() {
  const prefix = await api("POST", "/api/line", request(state.moves.slice(0, state.cursor)));
  state.prefixLegal = prefix.legal;
}

async function goTo(ply) {
  ply = Math.max(0, Math.min(state.moves.length, ply));
  if (ply === state.cursor) return;
  state.cursor = ply;
  state.path = [];
  state.arrows = [];
  state.prefixLegal = null;
  render();
  if (ply !== state.moves.length) {
    try { await fetchPrefixLegal(); } catch (e) { showError(e); }
  }
}

// ---------- entering a move by clicks ----------

function movesOnPath() {
  return legalHere().filter((m) => state.path.every((p, i) => m.path[i] === p));
}

function nextLandings() {
  if (!state.path.length) return [];
  const n = state.path.length;
  return [...new Set(movesOnPath().filter((m) => m.path.length > n).map((m) => m.path[n]))];
}

async function clickPoint(p) {
  if (state.busy) return;
  const legal = legalHere();
  if (!legal.length) return;
  if (!state.path.length) {
    if (legal.some((m) => m.path[0] === p)) { state.path = [p]; draw(); }
    return;
  }
  const last = state.path[state.path.length - 1];
  // The same point again: play the move that stops here, if one does.
  if (p === last && state.path.length > 1) {
    const exact = movesOnPath().find((m) => m.path.length === state.path.length);
    if (exact) return play(exact.text);
  }
  const extended = [...state.path, p];
  const matching = legal.filter((m) => extended.every((q, i) => m.path[i] === q));
  if (!matching.length) {
    // Another piece of the side to move starts a new move; anything else clears.
    state.path = legal.some((m) => m.path[0] === p) ? [p] : [];
    draw();
    return;
  }
  state.path = extended;
  const exact = matching.find((m) => m.path.length === extended.length);
  if (exact && matching.length === 1) return play(exact.text);
  draw();
}

async function play(text) {
  const moves = [...state.moves.slice(0, state.cursor), text];
  state.opened = null;
  try {
    await loadLine(moves);
    await agentTurn();
  } catch (e) { showError(e); }
}

// ---------- the agent ----------

function sideToMove() {
  return state.line ? state.line.positions[state.cursor].side : null;
}

async function agentTurn() {
  const side = $("agent-side").value;
  if (!side || !state.line || state.line.outcome || state.cursor !== state.moves.length) return;
  if (sideToMove() !== side) return;
  await agentMove();
}

async function agentMove() {
  if (state.busy || !state.line) return;
  const spec = $("agent").value.trim();
  if (!spec) { showError("give an agent spec, e.g. alphabeta:ms=500"); return; }
  state.busy = true;
  $("play-status").textContent = `${spec} is thinking…`;
  try {
    const side = sideToMove();
    const answer = await api("POST", "/api/move", { line: request(state.moves.slice(0, state.cursor)), agent: spec });
    state.names[side] = spec;
    const value = answer.value === null ? "" : `, value ${answer.value.toFixed(2)}`;
    $("play-status").textContent = `${spec} played ${answer.move.text} in ${answer.seconds.toFixed(2)} s${value}`;
    await loadLine([...state.moves.slice(0, state.cursor), answer.move.text]);
  } catch (e) {
    $("play-status").textContent = "";
    showError(e);
  } finally {
    state.busy = false;
  }
}

async function undo() {
  if (!state.moves.length || state.busy) return;
  const side = $("agent-side").value;
  let moves = state.moves.slice(0, state.cursor);
  if (!moves.length) return;
  moves = moves.slice(0, -1);
  // Back to a position where it is the human's turn.
  if (side && moves.length) {
    const line = await api("POST", "/api/line", request(moves));
    if (line.positions[moves.length].side === side) moves = moves.slice(0, -1);
  }
  try { await loadLine(moves); } catch (e) { showError(e); }
}

async function save() {
  try {
    const body = { line: request(state.moves), foxes: state.names.foxes, geese: state.names.geese };
    const res = await fetch("/api/export", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error((await res.json()).error);
    const blob = await res.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "halatafl-game.csv";
    a.click();
    URL.revokeObjectURL(a.href);
    $("play-status").textContent = "saved as halatafl-game.csv";
  } catch (e) { showError(e); }
}

// ---------- analysis ----------

function pct(x) { return `${(100 * x).toFixed(1)}%`; }

function table(head, rows) {
  const t = document.createElement("table");
  const tr = document.createElement("tr");
  for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
  t.appendChild(tr);
  for (const r of rows) {
    const row = document.createElement("tr");
    for (const c of r) { const td = document.createElement("td"); td.textContent = c; row.appendChild(td); }
    t.appendChild(row);
  }
  return t;
}

function para(text) { const p = document.createElement("p"); p.textContent = text; return p; }

function valueText(v) {
  return `value ${v.q.toFixed(3)} for the side to move (win ${pct(v.win)}, draw ${pct(v.draw)}, loss ${pct(v.loss)})`;
}

async function analyse(kind) {
  if (!state.line) return;
  const out = $("analysis");
  const body = { line: request(state.moves.slice(0, state.cursor)), kind };
  const net = $("network").value;
  if (kind === "network") body.network = net;
  if (kind === "search") { body.sims = Number($("sims").value); body.network = $("search-net").checked ? net : "rollouts"; }
  if (kind === "alphabeta") body.ms = Number($("ab-ms").value);
  if (kind === "solver") body.nodes = Number($("nodes").value);
  out.replaceChildren(para(`${kind}: working…`));
  const at = state.cursor, moves = state.moves;
  try {
    const a = await api("POST", "/api/analyse", body);
    if (state.cursor !== at || state.moves !== moves) return;
    out.replaceChildren();
    if (kind === "network") {
      out.append(para(`${a.network}: ${valueText(a.value)}`),
        table(["move", "prior"], a.moves.map((m) => [m.text, pct(m.prior)])));
      setArrows(a.moves.map((m) => ({ path: m.path, weight: m.prior, label: pct(m.prior) })));
    } else if (kind === "search") {
      const proven = a.proven ? `, proven ${a.proven}` : "";
      out.append(para(`MCTS (${a.guide}), ${a.simulations} simulations in ${a.seconds.toFixed(2)} s${proven}: ${valueText(a.value)}`),
        para(`line: ${a.pv.map((m) => m.text).join(" ")}`),
        table(["move", "visits", "Q", "policy", "proven"], a.moves.map((m) => [m.text, m.visits, m.q.toFixed(3), pct(m.policy), m.proven || ""])));
      const total = a.moves.reduce((s, m) => s + m.visits, 0) || 1;
      setArrows(a.moves.map((m) => ({ path: m.path, weight: m.visits / total, label: String(m.visits) })));
    } else if (kind === "alphabeta") {
      const mate = a.mate_in === null ? `score ${a.score} centi-geese` : (a.mate_in > 0 ? `the side to move wins in ${a.mate_in} plies` : `the side to move loses in ${-a.mate_in} plies`);
      out.append(para(`alpha-beta depth ${a.depth}, ${a.nodes} nodes in ${a.seconds.toFixed(2)} s: ${a.best.text}, ${mate} (value ${a.value.toFixed(3)})`),
        para(`line: ${a.pv.map((m) => m.text).join(" ")}`));
      setArrows([{ path: a.best.path, weight: 1, label: "α-β" }]);
    } else if (kind === "solver") {
      if (a.value) {
        out.append(para(`proven: ${a.value === "draw" ? "a draw" : a.value + " win"}${a.best ? ", keeping move " + a.best.text : ""} (${a.nodes} nodes, ${a.seconds.toFixed(2)} s; from this position as if the game started here)`));
        if (a.best) setArrows([{ path: a.best.path, weight: 1, label: "proof" }]);
      } else {
        out.append(para(`not proven within ${a.budget} nodes (${a.seconds.toFixed(2)} s)`));
      }
    } else if (kind === "tables") {
      if (a.status === "solved") {
        out.append(para(`tables: ${a.value === "draw" ? "a draw" : a.value + " win"}`),
          table(["move", "value after it"], a.moves.map((m) => [m.text, m.value])));
        // The moves that keep the value.
        setArrows(a.moves.filter((m) => m.value === a.value).map((m) => ({ path: m.path, weight: 0.8, label: "" })));
      } else if (a.status === "building") {
        out.append(para(`tables: building (${a.layers_done} of ${a.of} layers); ask again in a while`));
      } else {
        out.append(para(`tables: ${a.why}`));
      }
    }
  } catch (e) {
    out.replaceChildren(para(`${kind}: ${e.message}`));
  }
}

function setArrows(list) {
  state.arrows = list.filter((a) => a.weight >= 0.02).slice(0, 8);
  draw();
}

// ---------- games ----------

function filterQuery() {
  const q = new URLSearchParams();
  for (const [id, key] of [["f-agent", "agent"], ["f-side", "side"], ["f-result", "result"], ["f-reason", "reason"], ["f-file", "file"]]) {
    const v = $(id).value.trim();
    if (v) q.set(key, v);
  }
  return q.toString();
}

function fillSelect(id, values, first) {
  const s = $(id), keep = s.value;
  s.replaceChildren(new Option(first, ""));
  for (const v of values) s.appendChild(new Option(v, v));
  if (values.includes(keep)) s.value = keep;
}

async function listGames() {
  try {
    const data = await api("GET", "/api/games?" + filterQuery());
    fillSelect("f-result", data.facets.results, "any result");
    fillSelect("f-reason", data.facets.reasons, "any end");
    fillSelect("f-file", data.facets.files, "any file");
    const seen = $("agents-seen");
    seen.replaceChildren(...data.facets.agents.map((a) => new Option(a)));
    $("games-count").textContent = `${data.matched} of ${data.total} games` + (data.matched > data.games.length ? ` (first ${data.games.length} shown)` : "");
    const body = $("games").querySelector("tbody");
    body.replaceChildren();
    for (const g of data.games) {
      const tr = document.createElement("tr");
      tr.dataset.id = String(g.id);
      const number = g.generation !== null ? `g${g.generation}·${g.game ?? g.id}` : String(g.game ?? g.id);
      for (const c of [number, g.foxes, g.geese, g.result, g.reason, g.plies]) {
        const td = document.createElement("td"); td.textContent = c; td.title = String(c); tr.appendChild(td);
      }
      tr.title = `${g.file}, line ${g.line}` + (g.opponent ? `, against ${g.opponent}` : "");
      tr.addEventListener("click", () => openGame(g.id));
      body.appendChild(tr);
    }
    const list = $("problems");
    list.replaceChildren(...data.problems.map((p) => {
      const li = document.createElement("li");
      li.textContent = `${p.file}${p.line ? ", line " + p.line : ""}: ${p.why}`;
      return li;
    }));
    const n = data.problems.length;
    $("problems-title").textContent = n
      ? `${n} ${n === 1 ? "line" : "lines"} could not be read` : "No problems reading the games";
    if (data.problems.length) $("problems-box").open = true;
  } catch (e) { showError(e); }
}

async function openGame(id) {
  try {
    const data = await api("GET", `/api/games/${id}`);
    state.variant = data.request.variant || "two-foxes";
    state.start = data.request.start;
    state.opened = data.summary;
    state.names = { foxes: data.summary.foxes, geese: data.summary.geese };
    state.moves = data.request.moves;
    state.line = data.line;
    state.cursor = 0;
    state.path = []; state.arrows = []; state.prefixLegal = null;
    await fetchPrefixLegal();
    for (const tr of $("games").querySelectorAll("tr.open")) tr.classList.remove("open");
    const row = $("games").querySelector(`tr[data-id="${id}"]`);
    if (row) row.classList.add("open");
    const s = data.summary;
    $("game-title").textContent = `${s.foxes} (foxes) – ${s.geese} (geese): ${s.result}, ${s.reason}, ${s.plies} plies · ${s.file}:${s.line}`;
    selectVariant();
    showError(null);
    render();
  } catch (e) { showError(e); }
}

function selectVariant() {
  const s = $("variant");
  if (![...s.options].some((o) => o.value === state.variant)) s.appendChild(new Option(state.variant));
  s.value = state.variant;
}

// ---------- start ----------

async function init() {
  const info = await api("GET", "/api/info");
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  $("summary").textContent = `${plural(info.games, "game")} from ${plural(info.files, "file")}` + (info.problems ? `, ${plural(info.problems, "line")} not read` : "");
  const runs = $("runs");
  for (const r of info.runs) {
    const a = document.createElement("a");
    a.href = `/runs/${r.id}/report`;
    a.textContent = `report: ${r.dir}`;
    runs.appendChild(a);
    runs.appendChild(document.createTextNode(" "));
  }
  $("network").replaceChildren(...info.networks.map((n) => new Option(n, n)));
  $("agents-offered").replaceChildren(...info.agents.map((a) => new Option(a)));
  $("agent").value = info.agents[0] || "alphabeta:ms=500";
  $("sims").max = String(info.limits.max_sims);
  $("ab-ms").max = String(info.limits.max_ms);
  $("nodes").max = String(info.limits.max_solver_nodes);
  $("an-tables").disabled = !info.tables;
  await loadLine([]);
  await listGames();
}

function wire() {
  $("first").addEventListener("click", () => goTo(0));
  $("prev").addEventListener("click", () => goTo(state.cursor - 1));
  $("next").addEventListener("click", () => goTo(state.cursor + 1));
  $("last").addEventListener("click", () => goTo(state.moves.length));
  $("slider").addEventListener("input", (e) => goTo(Number(e.target.value)));
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (e.key === "ArrowLeft") { goTo(state.cursor - 1); e.preventDefault(); }
    if (e.key === "ArrowRight") { goTo(state.cursor + 1); e.preventDefault(); }
    if (e.key === "Home") goTo(0);
    if (e.key === "End") goTo(state.moves.length);
    if (e.key === "Escape") { state.path = []; draw(); }
  });
  $("copy-fen").addEventListener("click", () => { $("fen").select(); navigator.clipboard?.writeText($("fen").value); });
  $("paste").addEventListener("submit", async (e) => {
    e.preventDefault();
    const variant = $("variant").value, fen = $("paste-fen").value.trim();
    const old = { variant: state.variant, start: state.start };
    state.variant = variant;
    state.start = fen || null;
    state.opened = null;
    state.names = { foxes: "human", geese: "human" };
    $("game-title").textContent = fen ? `from ${fen}` : `${variant}: a new game`;
    try { await loadLine([]); await agentTurn(); } catch (err) { Object.assign(state, old); showError(err); }
  });
  $("filters").addEventListener("input", () => listGames());
  $("filters").addEventListener("change", () => listGames());
  $("reload").addEventListener("click", async () => { try { await api("POST", "/api/reload"); await listGames(); } catch (e) { showError(e); } });
  for (const kind of ["network", "search", "alphabeta", "solver", "tables"]) {
    $(`an-${kind}`).addEventListener("click", () => analyse(kind));
  }
  $("agent-move").addEventListener("click", () => agentMove());
  $("agent-side").addEventListener("change", () => agentTurn());
  $("undo").addEventListener("click", () => undo());
  $("new-game").addEventListener("click", async () => {
    state.start = null; state.opened = null; state.names = { foxes: "human", geese: "human" };
    $("game-title").textContent = `${state.variant}: a new game`;
    try { await loadLine([]); await agentTurn(); } catch (e) { showError(e); }
  });
  $("save").addEventListener("click", () => save());
}

wire();
init().catch(showError);
