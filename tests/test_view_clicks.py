"""``mama view``'s page used as a person uses it: clicks, typing and choices in headless Chromium.

The page is driven over the DevTools protocol on a pipe (:class:`benchmarks.browser.Page`):
the controls' own events (``change``, ``input``, ``click``) run the page's own handlers, and
the assertions read the DOM they leave. The pages are test_view's (the demo story, 10k
memories).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_view import big_page, demo_page, needs_chromium  # noqa: F401 (fixtures)

from benchmarks.browser import Page

pytestmark = needs_chromium
READY = "document.body && document.body.dataset.renderedMs"
NODES = "document.querySelectorAll('#graph-canvas g.node').length"


@pytest.fixture(scope="module")
def browser_page() -> Iterator[Page]:
    with Page() as page:
        yield page


def choose(page: Page, control: str, value: str) -> None:
    """Set a select or an input to ``value`` and send the event a person's choice sends."""
    page.js(
        f"(() => {{ const c = document.getElementById({control!r}); c.value = {value!r};"
        " c.dispatchEvent(new Event(c.tagName === 'SELECT' ? 'change' : 'input')); })()"
    )


def click(page: Page, selector: str) -> None:
    page.js(
        f"document.querySelector({selector!r}).dispatchEvent(new MouseEvent('click', {{bubbles: true}}))"
    )


def test_the_demo_page_answers_choices_typing_and_clicks(
    demo_page: tuple[Path, dict[str, str]],  # noqa: F811
    browser_page: Page,
) -> None:
    path, ids = demo_page
    page = browser_page
    page.open(path.as_uri(), ready=READY)
    everything = page.js(NODES)
    assert everything == len(ids) - 1
    choose(page, "f-topic", "auth_strategy")
    auth = page.js(NODES)
    assert 0 < auth < everything
    click(page, "#f-type-decision")  # a checkbox's click sends its change
    assert page.js("document.getElementById('f-type-decision').checked") is False
    assert page.js(NODES) < auth
    assert page.js(
        "[...document.querySelectorAll('#graph-canvas g.node')].every(g => !g.classList.contains('t-decision'))"
    )
    click(page, "#f-type-decision")
    choose(page, "f-search", "sentinel")  # typing: drawn once the typing pauses
    page.wait(f"{NODES} === 1")
    sentinel = ids["Redis Sentinel with one replica for the session store"]
    assert page.js("document.querySelector('#graph-canvas g.node').dataset.id") == sentinel
    click(page, "#graph-canvas g.node")
    assert page.js("document.getElementById('detail').hidden") is False
    assert page.js("document.getElementById('detail-body').dataset.id") == sentinel
    click(page, "#detail-close")
    assert page.js("document.getElementById('detail').hidden") is True
    click(page, "#f-reset")
    assert page.js(NODES) == everything
    choose(page, "chain-search", "JWT")
    assert page.js("[...document.querySelectorAll('article.chain')].map(a => a.dataset.topic)") == [
        "auth_strategy"
    ]
    click(page, "li.step[data-id]")  # a chain's card opens its story
    assert page.js(
        "document.getElementById('detail-body').querySelector('h3').textContent"
    ).startswith("Use stateless JWT")


def test_ten_thousand_memories_stay_interactive(big_page: Path, browser_page: Page) -> None:  # noqa: F811
    page = browser_page
    page.open(big_page.as_uri(), ready=READY)
    assert page.js("document.querySelector('#graph-canvas svg').dataset.mode") == "topics"
    first = page.js("[...document.querySelectorAll('article.chain')].map(a => a.dataset.topic)")
    click(page, "#chain-pager button:last-of-type")  # older ›
    second = page.js("[...document.querySelectorAll('article.chain')].map(a => a.dataset.topic)")
    assert len(second) == 10 and not set(first) & set(second)
    assert "page 2 of" in page.js("document.getElementById('chain-pager').textContent")
    # A long chain opens in full on its button.
    long = page.js(
        "(() => { const b = document.querySelector('li.folded button'); const a = b.closest('article'); b.click(); return a.dataset.topic; })()"
    )
    shown = page.js(
        f"document.querySelector('article.chain[data-topic=\"{long}\"]').querySelectorAll('li.step').length"
    )
    total = page.js(f"MAMA.DATA.chains.find(c => c.topic === {long!r}).ids.length")
    assert shown == total > 6
    # A topic node narrows the graph to its memories; timed as a person waits for it.
    ms = page.js(
        "(() => { const t0 = performance.now(); const g = [...document.querySelectorAll('#graph-canvas g.topic')].pop();"
        " g.dispatchEvent(new MouseEvent('click', {bubbles: true})); return performance.now() - t0; })()"
    )
    assert page.js("document.querySelector('#graph-canvas svg').dataset.mode") == "memories"
    assert page.js("document.getElementById('f-topic').value") != ""
    assert ms < 5_000
    ms = page.js(
        "(() => { const t0 = performance.now(); document.getElementById('f-reset').click(); return performance.now() - t0; })()"
    )
    assert page.js("document.querySelector('#graph-canvas svg').dataset.mode") == "topics"
    print(f"10k: a topic chosen and the filters reset, each drawn in under {ms:.0f} ms")
