"""Warehouses for the HTML tests (the demo; hostile text; no audit; empty) and a real browser.

The browser is Debian's chromium driven by selenium through /usr/bin/chromedriver, headless,
with every host name resolving to nothing and a dead proxy, so a page that tried the network
would fail loudly; tests read its console and performance logs. Without chromium the browser
tests are skipped, except under CI (`CI` set), where that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner

from tests.backends import TEMPLATES
from warehouse.cli.main import main

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

# Text that would run if any page pasted it in as markup, or broke out of a script element.
SCRIPT_TAG = "<script>window.__pwned = 1; document.title = 'pwned';</script>"
IMG_ONERROR = '"><img src=x onerror="window.__pwned = 2; document.title = \'pwned\'">'
SCRIPT_BREAKOUT = "</script><script>window.__pwned = 3</script><!--"
HOSTILE = (SCRIPT_TAG, IMG_ONERROR, SCRIPT_BREAKOUT)


def cli(db: Path, *args: Any) -> str:
    """Run `tame-wh --db DB ARGS…` in-process; fail the test on a non-zero exit."""
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)])
    assert result.exit_code == 0, (args, result.output)
    return result.stdout


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo warehouse (three runs, one audit). Tests copy it before changing anything."""
    db = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    TEMPLATES.copy_demo_file(db)
    return db


@pytest.fixture
def demo_copy(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo warehouse."""
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)
    return db


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse whose text is hostile markup: in a test set's name, its sources, a training
    target (shown as a TM neighbour) and a run's hypotheses; plus a second test set with a run
    but no audit."""
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "hostile.duckdb"
    sources = ["The river is wide.", f"Say {SCRIPT_TAG}", "The market opens early.", IMG_ONERROR]
    refs = ["El río es ancho.", "Di hola.", "El mercado abre temprano.", "Una imagen."]
    train_src = ["The river is wide today.", f"Say {SCRIPT_TAG} now", "A market opens."]
    train_tgt = ["El río es ancho hoy.", SCRIPT_BREAKOUT, "Un mercado abre."]
    hyps = ["El río es ancho.", SCRIPT_TAG, IMG_ONERROR, SCRIPT_BREAKOUT]
    cli(
        db,
        "corpus",
        "add",
        "train",
        "--src",
        _lines(folder / "train.en", train_src),
        "--tgt",
        _lines(folder / "train.es", train_tgt),
    )
    cli(
        db,
        "testset",
        "add",
        "evil<i>set",
        "--src",
        _lines(folder / "test.en", sources),
        "--ref",
        _lines(folder / "test.es", refs),
    )
    cli(
        db,
        "ingest",
        "--testset",
        "evil<i>set",
        "--hyp",
        _lines(folder / "evil.hyp", hyps),
        "--model-slug",
        "evil-model",
        "--condition",
        "x<b>y",
    )
    cli(db, "audit", "--train", "train", "--testset", "evil<i>set")
    cli(
        db,
        "testset",
        "add",
        "plain",
        "--src",
        _lines(folder / "plain.en", ["one", "two", "three"]),
        "--ref",
        _lines(folder / "plain.es", ["uno", "dos", "tres"]),
    )
    cli(
        db,
        "ingest",
        "--testset",
        "plain",
        "--hyp",
        _lines(folder / "plain.hyp", ["uno", "dos", "cuatro"]),
        "--model-slug",
        "plain-model",
    )
    return db


def run_ids(db: Path) -> dict[str, str]:
    """Run id by `model/condition` (or model alone when the run has no condition)."""
    rows = json.loads(cli(db, "runs", "list", "--json"))
    return {
        f"{r['model_slug']}/{r['condition']}" if r["condition"] else r["model_slug"]: r["run_id"]
        for r in rows
    }


# --- the browser ----------------------------------------------------------------------------


@dataclass
class PageLoad:
    """What loading one page produced: console messages and the addresses requested."""

    url: str
    console: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


class Browser:
    """A headless chromium that loads local pages and reports their console and requests."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def load(self, path: Path) -> PageLoad:
        """Open a page from the file system and wait until its charts are drawn."""
        self.driver.get_log("browser")  # drop what earlier pages left
        self.driver.get_log("performance")
        url = path.resolve().as_uri()
        self.driver.get(url)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = self.js("return document.body && document.body.getAttribute('data-charts')")
            if state in ("ready", "failed"):
                break
            time.sleep(0.05)
        load = PageLoad(url)
        load.console = [
            e for e in self.driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")
        ]
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                load.requests.append(message["params"]["request"]["url"])
        return load

    def js(self, script: str, *args: Any) -> Any:
        """Run JavaScript in the page and return its result."""
        return self.driver.execute_script(script, *args)

    def screenshot(self, path: Path, width: int = 1280, height: int | None = None) -> Path:
        """A PNG of the page (its full height, or `height` pixels)."""
        full = height or int(self.js("return document.documentElement.scrollHeight"))
        self.driver.set_window_size(width, min(full, 16000))
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(1280, 1000)
        return path


def missing_browser(paths: tuple[Path, ...] = (CHROMIUM, CHROMEDRIVER)) -> str | None:
    """What is missing to drive a real browser, or None."""
    missing = [str(p) for p in paths if not p.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    if not missing:
        return None
    return f"{', '.join(missing)} missing (apt-get install chromium chromium-driver)"


def no_browser(why: str) -> NoReturn:
    """Skip a browser test, or fail it under CI (`CI` set), where the browser must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless chromium through chromedriver; every network name resolves to nothing."""
    why = missing_browser()
    if why is not None:
        no_browser(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1000",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=http://127.0.0.1:9",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-sync",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield Browser(driver)
    finally:
        driver.quit()


@pytest.fixture
def load_ok(browser: Browser) -> Callable[[Path], PageLoad]:
    """Load a page and assert it logged no error or warning and requested nothing but files."""

    def load(path: Path) -> PageLoad:
        page = browser.load(path)
        assert page.console == [], (path, page.console)
        assert page.requests, path  # the performance log works: the page itself is a request
        assert all(url.startswith("file://") for url in page.requests), page.requests
        return page

    return load
