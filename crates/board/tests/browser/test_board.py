"""The analysis board in a real browser: headless Chromium from Debian's
packages, driven over WebDriver (chromium-driver) by Selenium.

scripts/check-board.sh runs it with HALATAFL_BIN (the command) and
HALATAFL_ARTIFACTS (where the screenshot goes). Every position the page
draws is compared with the rules engine's, as `halatafl replay` prints it.
"""

import json
import os
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

BIN = os.environ.get("HALATAFL_BIN", "target/release/halatafl")
ARTIFACTS = Path(os.environ.get("HALATAFL_ARTIFACTS", "target/board-artifacts"))
ROW_FILES = {7: "cde", 6: "cde", 5: "abcdefg", 4: "abcdefg", 3: "abcdefg", 2: "cde", 1: "cde"}


def pieces_of(fen):
    """{point: 'fox'|'goose'} of a position string (docs/rules.md)."""
    placement = fen.split()[0]
    board = {}
    for row, text in zip(range(7, 0, -1), placement.split("/")):
        for file, ch in zip(ROW_FILES[row], text):
            if ch == "F":
                board[f"{file}{row}"] = "fox"
            elif ch == "G":
                board[f"{file}{row}"] = "goose"
    return board


def replay(moves, variant_args=()):
    """The positions the rules engine reaches: start, then one per move."""
    out = subprocess.run([BIN, "replay", *variant_args, " ".join(moves)],
                         check=True, capture_output=True, text=True).stdout
    fens = []
    for line in out.splitlines():
        if line.startswith("start: "):
            fens.append(line[len("start: "):])
        elif re.match(r"\s*\d+\. ", line):
            fens.append(line.split(None, 2)[2].strip())
    assert len(fens) == len(moves) + 1
    return fens


@pytest.fixture(scope="module")
def games_csv():
    work = Path(tempfile.mkdtemp(prefix="halatafl-board-test-"))
    csv = work / "games.csv"
    subprocess.run([BIN, "match", "alphabeta:depth=1", "random", "--games", "2", "--seed", "7",
                    "--threads", "1", "--csv", str(csv)], check=True, capture_output=True)
    lines = csv.read_text().splitlines()
    # A row whose second move is illegal: reported on the page, not fatal.
    fields = lines[1].split(",")
    moves = fields[8].split()
    fields[8] = " ".join(moves[:1] + ["a3-a2"] + moves[2:])
    lines.append(",".join(fields))
    csv.write_text("\n".join(lines) + "\n")
    return csv


@pytest.fixture(scope="module")
def run_dir(games_csv):
    """A small training run (configs/ci.toml, seconds): its evaluation and
    self-play games, its checkpoints and its report."""
    run = games_csv.parent / "run"
    subprocess.run([BIN, "train", "--config", "configs/ci.toml", "--run", str(run)],
                   check=True, capture_output=True)
    return run


@pytest.fixture(scope="module")
def server(games_csv, run_dir):
    proc = subprocess.Popen([BIN, "serve", "--games", str(games_csv), "--run", str(run_dir),
                             "--port", "0", "--max-ms", "5000"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    assert match, f"the server did not start: {line}"
    yield match.group(1)
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1500,900", f"--user-data-dir={tempfile.mkdtemp(prefix='halatafl-chromium-')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    yield driver
    driver.quit()


def board_pieces(driver):
    return {e.get_attribute("data-point"): e.get_attribute("data-piece")
            for e in driver.find_elements(By.CSS_SELECTOR, "#board [data-piece]")}


def wait_for(driver, what, timeout=20):
    return WebDriverWait(driver, timeout).until(lambda d: what(d))


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_game_from_a_csv_steps_through_as_the_rules_play_it(server, browser, games_csv):
    browser.get(server)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f'#f-file option[value="{games_csv}"]'))
    browser.find_element(By.CSS_SELECTOR, f'#f-file option[value="{games_csv}"]').click()
    wait_for(browser, lambda d: d.find_element(By.ID, "games-count").text.startswith("2 of "))
    rows = browser.find_elements(By.CSS_SELECTOR, "#games tbody tr")
    assert len(rows) == 2
    # The bad line is reported with its file and line.
    problems = browser.find_element(By.ID, "problems").text
    assert "line 4" in problems and "a3-a2" in problems, problems
    rows[0].click()
    moves = games_csv.read_text().splitlines()[1].split(",")[8].split()
    fens = replay(moves)
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text == f"ply 0 / {len(moves)}")
    body = browser.find_element(By.TAG_NAME, "body")
    for ply, fen in enumerate(fens):
        if ply > 0:
            body.send_keys(Keys.ARROW_RIGHT)
            wait_for(browser, lambda d: d.find_element(By.ID, "ply").text.startswith(f"ply {ply} /"))
        assert board_pieces(browser) == pieces_of(fen), f"ply {ply}"
        assert browser.find_element(By.ID, "fen").get_attribute("value") == fen
    assert browser.find_element(By.ID, "status").text.endswith(")"), "the result is shown at the end"


def test_a_move_played_by_clicks_gets_the_agents_answer(server, browser):
    browser.get(server)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-piece]"))
    agent = browser.find_element(By.ID, "agent")
    agent.clear()
    agent.send_keys("alphabeta:depth=2")
    browser.find_element(By.CSS_SELECTOR, "#agent-side option[value=geese]").click()
    browser.find_element(By.CSS_SELECTOR, '#board [data-point="c7"]').click()
    browser.find_element(By.CSS_SELECTOR, '#board [data-target="c6"]').click()
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text == "ply 2 / 2")
    moves = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#moves span")]
    assert moves[0] == "1. c7-c6"
    played = ["c7-c6", moves[1]]
    assert board_pieces(browser) == pieces_of(replay(played)[-1])
    assert "alphabeta:depth=2 played" in browser.find_element(By.ID, "play-status").text
    # The network's view of the position, as arrows and a table.
    browser.find_element(By.ID, "an-network").click()
    wait_for(browser, lambda d: "best:" in d.find_element(By.ID, "analysis").text)
    assert browser.find_elements(By.CSS_SELECTOR, "#board .arrow")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "board.png"))
    # Undo goes back to the human's turn.
    browser.find_element(By.ID, "undo").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text == "ply 0 / 0")


def test_bad_input_gets_a_clear_error_on_the_page_and_from_the_api(server, browser):
    browser.get(server)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-piece]"))
    paste = browser.find_element(By.ID, "paste-fen")
    paste.send_keys("F.F/.../nonsense f 0")
    browser.find_element(By.ID, "set-position").click()
    error = wait_for(browser, lambda d: d.find_element(By.ID, "error").text)
    assert error.startswith("start `F.F/.../nonsense f 0`"), error
    status, body = post(server + "api/line", {"moves": ["c7-c6", "d4-d6"]})
    assert status == 400 and body["error"].startswith("move 2 `d4-d6`")
    status, body = post(server + "api/move", {"line": {}, "agent": "net:ckpt=/etc/passwd"})
    assert status == 400 and "only the checkpoints it was given" in body["error"]
    status, body = post(server + "api/analyse", {"line": {}, "kind": "alphabeta", "ms": 999999})
    assert status == 400 and "--max-ms" in body["error"]
    for path in ["runs/5/report", "runs/0/config.toml", "runs/0/..%2F..%2Fetc%2Fpasswd", "..%2F..%2Fetc%2Fpasswd"]:
        try:
            urllib.request.urlopen(server + path)
            raise AssertionError(f"{path} was served")
        except urllib.error.HTTPError as e:
            assert e.code == 404


def test_a_runs_selfplay_games_and_report_are_shown(server, browser, run_dir):
    browser.get(server)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#games tbody tr"))
    games = run_dir / "shards" / "gen_0001" / "games.csv"
    option = f'#f-file option[value="{games}"]'
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, option))
    browser.find_element(By.CSS_SELECTOR, option).click()
    wait_for(browser, lambda d: d.find_element(By.ID, "games-count").text.split()[0] != "0"
             and "selfplay" in d.find_element(By.CSS_SELECTOR, "#games tbody tr").text)
    browser.find_element(By.CSS_SELECTOR, "#games tbody tr").click()
    first = games.read_text().splitlines()[1].split(",")
    moves = first[7].split()
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text == f"ply 0 / {len(moves)}")
    browser.find_element(By.ID, "last").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text.startswith(f"ply {len(moves)} /"))
    assert board_pieces(browser) == pieces_of(replay(moves)[-1])
    # The report page: its plots load, its tables are there.
    browser.get(server + "runs/0/report")
    wait_for(browser, lambda d: d.find_elements(By.TAG_NAME, "img"))
    images = browser.find_elements(By.TAG_NAME, "img")
    assert len(images) >= 3
    wait_for(browser, lambda d: all(d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", i)
                                    for i in d.find_elements(By.TAG_NAME, "img")))
    assert browser.find_elements(By.CSS_SELECTOR, "table")


def test_a_jump_chain_is_entered_as_its_path_of_landings(server, browser):
    browser.get(server)
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#board [data-piece]"))
    fen = ".../.../..FG..G/....G.G/F.....G/GGG/GGG f 0"
    browser.find_element(By.ID, "paste-fen").send_keys(fen)
    browser.find_element(By.ID, "set-position").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "fen").get_attribute("value") == fen)
    assert board_pieces(browser) == pieces_of(fen)
    browser.find_element(By.CSS_SELECTOR, '#board [data-point="c5"]').click()
    browser.find_element(By.CSS_SELECTOR, '#board [data-target="e5"]').click()
    # Half-way the chain is not played yet: its next landing is shown.
    assert browser.find_element(By.ID, "ply").text == "ply 0 / 0"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#board .hint")) == 1
    browser.find_element(By.CSS_SELECTOR, '#board [data-target="e3"]').click()
    wait_for(browser, lambda d: d.find_element(By.ID, "ply").text == "ply 1 / 1")
    assert browser.find_element(By.CSS_SELECTOR, "#moves span").text == "1. c5xe5xe3"
    after = subprocess.run([BIN, "replay", "--fen", fen, "c5xe5xe3"], check=True,
                           capture_output=True, text=True).stdout.splitlines()[1].split(None, 2)[2]
    assert board_pieces(browser) == pieces_of(after)
