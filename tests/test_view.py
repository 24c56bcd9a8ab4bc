"""``mama view``: the page of a project's story, checked in a real browser (headless Chromium).

The demo story and a 10k-memory store are written as pages and opened by Debian's
``chromium`` (``--dump-dom`` after the scripts ran, ``--screenshot``); the assertions read the
DOM: the chain's order, its badges, a link's reason on its arrow, a filter applied, memory
text holding markup shown as text. Screenshots go to ``$MAMA_VIEW_SHOTS`` when it is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from benchmarks import browser
from benchmarks.view import build_store
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.demo import PROJECT as DEMO
from mama_plugin.demo import play
from mama_plugin.services.saving.memories import record_outcome, save_decision, save_insight
from mama_plugin.storage import NewMemory, Store, now_ms
from mama_plugin.view import gather, render_page, write_page
from mama_plugin.view.page import embedded_json

HOSTILE = (
    '</script><script>document.title="pwned"</script><img src=x onerror="document.title=1">'
    "<b>bold</b> & done"
)
needs_chromium = pytest.mark.skipif(
    browser.chromium() is None,
    reason="no chromium on PATH: install Debian's package (apt-get install chromium); "
    ".ci/run installs it",
)


class Dom(HTMLParser):
    """The dumped DOM as (tag, attributes, text inside) for each element, in document order."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[int] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in {"input", "img", "br", "meta", "link", "hr"}:  # HTML's void elements
            self._open.append(len(self.elements) - 1)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self._open) - 1, -1, -1):
            if self.elements[self._open[depth]][0] == tag:
                del self._open[depth:]
                return

    def handle_data(self, data: str) -> None:
        for i in self._open:
            self.elements[i][2].append(data)

    def find(self, tag: str = "", **attrs: str) -> list[tuple[str, dict[str, str], str]]:
        """Elements with ``tag`` (any when empty) whose attributes contain ``attrs``
        (``class_`` matches one class), with their text."""
        out = []
        for t, a, text in self.elements:
            if tag and t != tag:
                continue
            ok = True
            for key, want in attrs.items():
                if key == "class_":
                    ok = ok and want in a.get("class", "").split()
                else:
                    ok = ok and a.get(key.replace("_", "-")) == want
            if ok:
                out.append((t, a, "".join(text)))
        return out


def shot(url: str, folder: Path, name: str, size: tuple[int, int] = (1400, 2600)) -> Path:
    """A screenshot of ``url``, copied to ``$MAMA_VIEW_SHOTS`` when set (to be looked at)."""
    png = folder / f"{name}.png"
    browser.screenshot(url, png, size=size)
    keep = os.environ.get("MAMA_VIEW_SHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / png.name)
    return png


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """The demo story, with one decision whose text holds markup, written as a page."""
    home = tmp_path_factory.mktemp("demo-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MAMA_HOME", str(home))
        mp.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
        config = Config(home)
        with Store.open(config=config) as store:
            play(store, config)
            hostile = save_decision(
                store,
                DEMO,
                {
                    "topic": "markup<i>topic</i>",
                    "decision": HOSTILE,
                    "reasoning": "a memory's text is data: <script>alert(1)</script> stays text",
                },
            ).memory
            ids = {m.content: m.id for m in store.memories.iter(project=DEMO)}
            data = gather(store, DEMO, config.settings)
        page = write_page(data, home / "view" / "demo.html")
    ids["hostile"] = hostile.id
    yield page, ids


def test_the_chain_reads_oldest_to_current_with_reasons(demo_page: tuple[Path, dict]) -> None:
    page, _ = demo_page
    data = json.loads(_data_block(page.read_text()))
    (auth,) = [c for c in data["chains"] if c["topic"] == "auth_strategy"]
    contents = [next(m for m in data["memories"] if m["id"] == i)["content"] for i in auth["ids"]]
    assert contents[0].startswith("Use stateless JWT") and contents[1].startswith("Server-side")
    assert auth["steps"][0]["rel"] == "supersedes"
    assert auth["steps"][0]["reason"].startswith("JWT failed at 10K req/s")


def test_memory_text_cannot_end_the_data_block() -> None:
    text = embedded_json({"content": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["content"] == HOSTILE


def test_the_page_is_one_file_that_fetches_nothing(demo_page: tuple[Path, dict]) -> None:
    page, _ = demo_page
    html = page.read_text()
    assert "default-src 'none'" in html  # the page's own policy forbids any fetch
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert html.lower().count("</script>") == 2  # the data block and the script, no more
    assert stat.S_IMODE(page.stat().st_mode) == 0o600


@needs_chromium
def test_the_demo_story_in_a_browser(demo_page: tuple[Path, dict], tmp_path: Path) -> None:
    page, ids = demo_page
    dom = Dom(browser.dump_dom(page.as_uri()).out)
    assert "data-rendered-ms" in dom.find("body")[0][1]  # every script ran to its end
    jwt = ids["Use stateless JWT access tokens with refresh tokens for API auth"]
    sessions = ids["Server-side sessions in Redis for auth of the high-traffic API"]
    assert len(dom.find("article", data_topic="auth_strategy")) == 1
    steps = [a["data-id"] for _, a, _ in dom.find("li", class_="step")]
    assert steps.index(jwt) < steps.index(sessions)  # oldest → current
    cards = {a["data-id"]: text for _, a, text in dom.find("li", class_="step")}
    assert "FAILED" in cards[jwt] and "superseded" in cards[jwt]
    assert "failed: Token refresh hit Postgres" in cards[jwt]
    assert "learned: stateless tokens still need a revocation store" in cards[jwt]
    assert "PENDING" in cards[sessions] and "CURRENT" in cards[sessions]
    arrows = [text for _, _, text in dom.find("li", class_="arrow")]
    assert any("supersedes" in a and "JWT failed at 10K req/s" in a for a in arrows)
    # The graph: every memory drawn, the pending suggestion dashed, links by category.
    assert len(dom.find("g", class_="node")) == len(ids) - 1
    assert dom.find("line", class_="pending") and dom.find("line", class_="c-evolution")
    # The health figures mama stats prints.
    stats = {a: b for a, b in _rows(dom, "stats-table")}
    # Five links: supersedes, implements, learned from, the accepted suggestion and the
    # FAILED outcome's event (outcome_of), recorded as evolve_outcome records it.
    assert stats["decisions"] == "4" and stats["links"] == "5"
    # The graph's figures mama graph health prints, with the page's own data behind them.
    graph = {a: b for a, b in _rows(dom, "graph-table")}
    health = json.loads(_data_block(page.read_text()))["stats"]["graph"]
    assert graph["connected components"] == str(health["components"])
    assert graph["isolated (≤ 1 link)"] == f"{health['isolated']} of {health['memories']}"
    advice = [text for _, _, text in dom.find("li", class_="advice")]
    assert len(advice) == len(health["recommendations"]) and all(advice), advice
    shot(page.as_uri(), tmp_path, "view-demo", size=(1400, 3000))


@needs_chromium
def test_a_filter_in_the_address_is_applied(demo_page: tuple[Path, dict], tmp_path: Path) -> None:
    page, ids = demo_page
    url = page.as_uri() + "#graph&topic=auth_strategy&type=decision&status=current"
    dom = Dom(browser.dump_dom(url).out)
    drawn = {a["data-id"] for _, a, _ in dom.find("g", class_="node")}
    assert drawn == {
        ids["Server-side sessions in Redis for auth of the high-traffic API"],
        ids["Redis Sentinel with one replica for the session store"],
    }
    assert _text(dom, "graph-note").startswith("2 memories")
    searched = Dom(browser.dump_dom(page.as_uri() + "#graph&q=sentinel").out)
    found = {a["data-id"] for _, a, _ in searched.find("g", class_="node")}
    assert ids["Redis Sentinel with one replica for the session store"] in found
    assert len(found) < len(ids) - 1
    shown = (
        page.as_uri()
        + f"#graph&topic=auth_strategy&show={ids['Use stateless JWT access tokens with refresh tokens for API auth']}"
    )
    detail = Dom(browser.dump_dom(shown).out)
    layers = [a["data-layer"] for _, a, _ in detail.find("section", class_="layer")]
    assert {"Specifics", "Evidence", "Reasoning", "Tension", "Outcome", "Trust"} <= set(layers)
    assert "docs/auth-design.md:12-40" in _text(detail, "detail-body")
    # The demo's FAILED outcome moved the JWT decision's confidence: its history is in the panel.
    trust = next(
        t for _, a, t in detail.find("section", class_="layer") if a["data-layer"] == "Trust"
    )
    assert "confidence history" in trust and re.search(r"0\.\d\d → 0\.\d\d — ", trust), trust
    # The same without the jump to the section (a headless screenshot of a scrolled page is
    # offset), the window tall enough for the graph.
    shot(shown.replace("#graph&", "#&"), tmp_path, "view-demo-filtered-detail", size=(1400, 2000))


@needs_chromium
def test_markup_in_a_memory_is_shown_as_text(demo_page: tuple[Path, dict]) -> None:
    page, ids = demo_page
    html = browser.dump_dom(page.as_uri() + f"#chains&show={ids['hostile']}").out
    dom = Dom(html)
    assert dom.find("title")[0][2].startswith("MAMA")  # neither script ran
    assert not dom.find("img") and all(text != "bold" for _, _, text in dom.find("b"))
    (card,) = [
        text for _, a, text in dom.find("li", class_="step") if a["data-id"] == ids["hostile"]
    ]
    assert HOSTILE in card  # every character, as text
    assert HOSTILE in _text(dom, "detail-body")
    assert dom.find("article", data_topic="markup<i>topic</i>")
    assert "&lt;/script&gt;&lt;script&gt;" in html


@pytest.fixture(scope="module")
def big_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("big-home")
    config = Config(home)
    with Store.open(home / "mama.db", config=config) as store:
        build_store(store, 10_000, project="/bench/view")
        data = gather(store, "/bench/view", config.settings)
    assert len(data.memories) == 10_000
    return write_page(data, home / "big.html")


@needs_chromium
def test_ten_thousand_memories_open_clustered_and_paginated(big_page: Path, tmp_path: Path) -> None:
    run = browser.dump_dom(big_page.as_uri())
    dom = Dom(run.out)
    (_, body, _) = dom.find("body")[0]
    assert float(body["data-rendered-ms"]) < 10_000
    assert dom.find("svg", data_mode="topics")  # one node per topic
    topics = dom.find("g", class_="topic")
    assert 10 < len(topics) <= 150
    assert dom.find("svg", data_lanes="bins")  # the timeline as counts per time bin
    assert len(dom.find("article", class_="chain")) == 10  # a page of chains, not thousands
    assert "page 1 of" in _text(dom, "chain-pager")
    assert len(dom.find("li", class_="overdue")) == 15  # a page of the overdue ones
    for _, topic, _ in (topics[0], topics[-1]):  # the largest topic, and a small one
        narrowed = Dom(
            browser.dump_dom(f"{big_page.as_uri()}#graph&topic={topic['data-topic']}").out
        )
        assert narrowed.find("svg", data_mode="memories")
        assert 0 < len(narrowed.find("g", class_="node")) <= 300
    shot(big_page.as_uri(), tmp_path, "view-10k", size=(1400, 5200))
    shot(
        f"{big_page.as_uri()}#&topic={topics[-1][1]['data-topic']}",
        tmp_path,
        "view-10k-topic",
        size=(1400, 5200),
    )


def test_cli_writes_the_page_and_says_where(
    mama_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        d = save_decision(
            store, str(project), {"topic": "db", "decision": "Use SQLite", "reasoning": "one file"}
        ).memory
        record_outcome(store, {"memory_id": d.id, "outcome": "SUCCESS", "details": "held"})
    assert main(["view", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    path = mama_home / "views" / "proj.html"
    assert f"Wrote {path}" in out and path.as_uri() in out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    target = tmp_path / "out" / "page.html"
    assert main(["view", "--project", str(project), "--out", str(target), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["path"] == str(target) and said["memories"] == 1 and target.is_file()
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    assert main(["view", "--project", str(project), "--out", str(blocked / "x.html")]) == 1
    assert "cannot write the view to" in capsys.readouterr().err


def test_render_page_embeds_what_gather_read(store: Store, project: str) -> None:
    save_decision(store, project, {"topic": "t", "decision": "Use X", "reasoning": "because Y"})
    html = render_page(gather(store, project, Config(store.home).settings))
    data = json.loads(_data_block(html))
    assert [m["content"] for m in data["memories"]] == ["Use X"]
    assert data["followup_days"] == 14
    assert data["history"] == {} and data["staleness"] == {}  # fresh, never judged
    old = store.memories.insert(
        NewMemory(
            "decision",
            project,
            "p99 under 40 ms with Redis",
            topic="latency",
            reasoning={"primary": "measured under the load test"},
            tags=["decay:7"],
            created_at=now_ms() - 20 * 86_400_000,
        )
    )[0]
    aged = gather(store, project, Config(store.home).settings).staleness
    assert list(aged) == [old.id] and aged[old.id].startswith("expired (2.9): 20 days since saved")


def _health_story(store: Store, tmp_path: Path) -> tuple[str, str, str]:
    """A project whose decision cites a file that then changed, and a decision a month old
    with no outcome (past outcome_followup_days, 14) and past its own decay: (project, changed
    id, overdue id)."""
    root = tmp_path / "repo"
    (root / "infra").mkdir(parents=True)
    (root / "infra" / "redis.tf").write_text("sentinel = 1\n")
    project = str(root)
    d = save_decision(
        store,
        project,
        {
            "topic": "cache",
            "decision": "Redis Sentinel for the session store",
            "reasoning": "one replica fails over in 2 s",
            "evidence": ["infra/redis.tf:1"],
        },
    ).memory
    assert gather(store, project, Config(store.home).settings).flagged == {}
    (root / "infra" / "redis.tf").write_text("sentinel = 0  # replaced by a cluster\n")
    old = store.memories.insert(
        NewMemory(
            "decision",
            project,
            "Nightly backups to S3",
            topic="backups",
            reasoning={"primary": "the disk is not a backup"},
            tags=["decay:10"],  # its own decay: 30 days on, expired (3.0)
            created_at=now_ms() - 30 * 86_400_000,
        )
    )[0]
    return project, d.id, old.id


def test_health_holds_the_stats_figures_and_what_changed_since_decided(
    store: Store, tmp_path: Path
) -> None:
    from mama_plugin.services.hygiene.stats import project_stats

    project, changed, _ = _health_story(store, tmp_path)
    data = gather(store, project, Config(store.home).settings).as_data()
    assert data["flagged"] == {changed: ["infra/redis.tf changed since this was decided"]}
    assert data["stats"] == project_stats(store, project).as_dict()
    assert data["gc"]["folds"] == [] and data["gc"]["vacuum"] in (True, False)


@needs_chromium
def test_the_page_flags_changed_files_and_overdue_decisions(store: Store, tmp_path: Path) -> None:
    project, changed, overdue = _health_story(store, tmp_path)
    page = write_page(gather(store, project, Config(store.home).settings), tmp_path / "h.html")
    dom = Dom(browser.dump_dom(page.as_uri()).out)
    (flag,) = dom.find("li", class_="flagged")
    assert flag[1]["data-id"] == changed
    assert "infra/redis.tf changed since this was decided" in flag[2]
    assert f"mama verify {changed}" in flag[2] and f"mama forget {changed}" in flag[2]
    assert [a["data-id"] for _, a, _ in dom.find("li", class_="overdue")] == [overdue]
    assert [a["data-id"] for _, a, _ in dom.find("circle", class_="overdue")] == [overdue]
    assert "30 days, no outcome yet" in _text(dom, "overdue-list")
    (card,) = [t for _, a, t in dom.find("li", class_="step") if a["data-id"] == changed]
    assert "⚠ infra/redis.tf changed since this was decided" in card
    (stale,) = dom.find("li", class_="stale")
    assert stale[1]["data-id"] == overdue and "expired (3.0): 30 days since saved" in stale[2]


@needs_chromium
def test_an_empty_project_opens_and_says_so(store: Store, tmp_path: Path) -> None:
    page = write_page(
        gather(store, str(tmp_path), Config(store.home).settings), tmp_path / "e.html"
    )
    dom = Dom(browser.dump_dom(page.as_uri()).out)
    assert "data-rendered-ms" in dom.find("body")[0][1]  # every script ran to its end
    assert "No decisions in this project yet." in _text(dom, "chain-list")
    assert _text(dom, "graph-note") == "No memory matches these filters."


def test_open_asks_the_desktop_browser_for_the_file(
    mama_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import webbrowser

    asked: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: asked.append(url) or False)
    target = tmp_path / "v.html"
    assert main(["view", "--project", str(tmp_path), "--out", str(target), "--open"]) == 0
    assert asked == [target.as_uri()]
    assert (
        f"no browser could be started here: open {target.as_uri()} yourself"
        in capsys.readouterr().out
    )


def _data_block(html: str) -> str:
    return html.split('id="mama-data">', 1)[1].split("</script>", 1)[0]


def _text(dom: Dom, id_: str) -> str:
    return dom.find(id=id_)[0][2]


def _rows(dom: Dom, table: str) -> list[tuple[str, str]]:
    ths = [t for _, _, t in dom.find("th")]
    tds = [t for _, _, t in dom.find("td")]
    return list(zip(ths, tds, strict=False))


@needs_chromium
def test_hubs_are_the_memories_five_others_reference(store: Store, tmp_path: Path) -> None:
    project = str(tmp_path)
    base = save_decision(
        store, project, {"topic": "db", "decision": "Postgres for orders", "reasoning": "ACID"}
    ).memory
    for n in range(5):
        link = {"to_id": base.id, "relationship": "depends_on", "reason": f"reads orders {n}"}
        save_insight(store, project, {"content": f"report {n} reads orders", "links": [link]})
    data = gather(store, project, Config(store.home).settings)
    assert data.hubs == {base.id: 5}
    page = write_page(data, tmp_path / "hubs.html")
    dom = Dom(browser.dump_dom(page.as_uri() + "#graph").out)
    assert [a["data-id"] for _, a, _ in dom.find("g", class_="hub")] == [base.id]
