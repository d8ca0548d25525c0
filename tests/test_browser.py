"""The built book, opened in a real browser (headless Chromium driven by Playwright).

Run by ``make browser`` (which ``make test`` calls after building the HTML) with
``SSA_BOOK_HTML=_build/html``; skipped in the plain unit-test run, where no fresh build exists.
For every page of ``_toc.yml`` (plus the search and general-index pages; index.html must redirect to the root page): the page loads
with no JavaScript error and no failed or off-machine request, every image has loaded, MathJax
has typeset every formula (no raw ``$$`` or ``\\(`` left in the text, no MathJax error), the
page as rendered shows no stderr output, no error or traceback and no path of the machine that
built it (the rules of ``ssa_book.page_check``, applied to the live DOM; a hand-made page shows that
they fail), no table is wider than the text column at a 1280-px window (dropdowns opened), and every
local link points to an existing file and anchor. A screenshot of the front
page is kept in ``_build/artifacts/front-page.png``.

Chromium is Debian's ``chromium`` package (``make browser`` installs it when missing); the book
is served from ``127.0.0.1`` and MathJax comes from the book's own ``_static/`` (see
``ssa_book.sphinx_assets``), so nothing here needs the internet.
"""

import functools
import http.server
import os
import posixpath
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

from ssa_book import book, page_check

HTML_ENV = "SSA_BOOK_HTML"
ARTIFACTS_ENV = "SSA_BOOK_ARTIFACTS"
CHROMIUM = Path(os.environ.get("SSA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ROOT = Path(__file__).resolve().parent.parent
PAGE_TIMEOUT_MS = 60_000  # the machine may be busy; a page that takes longer has a real problem
MATHJAX_TIMEOUT_MS = 180_000  # the theory page typesets hundreds of formulas
POLL_MS = 250  # poll by timer: animation frames may be throttled in a headless page

if not os.environ.get(HTML_ENV):
    pytest.skip(
        f"the browser check runs with {HTML_ENV} set, after the HTML build (make browser)", allow_module_level=True
    )

playwright_api = pytest.importorskip("playwright.sync_api")

HTML = Path(os.environ[HTML_ENV]).resolve()
ARTIFACTS = Path(os.environ.get(ARTIFACTS_ENV, HTML.parent / "artifacts")).resolve()


def book_pages() -> list[str]:
    """The HTML pages of this build, relative to HTML: one per _toc.yml entry, plus the index,
    search and general-index pages (older builds may have left other files behind)."""
    return [*book.toc_pages(ROOT), "genindex.html", "search.html"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a page closed mid-transfer is no failure
        pass


@pytest.fixture(scope="module")
def server():
    assert (HTML / "index.html").is_file(), f"{HTML}/index.html does not exist: build the book first"
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium (apt-get install -y chromium)")
    with playwright_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh --user-data-dir
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


# Runs in the page: everything the checks need, in one round trip.
_INSPECT = """({localPath, tableCut}) => {
  const skip = new Set(['SCRIPT', 'STYLE', 'PRE', 'CODE', 'TEXTAREA', 'NOSCRIPT']);
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let parent = node.parentElement, skipped = false;
    for (let e = parent; e; e = e.parentElement) {
      if (skip.has(e.tagName) || e.tagName.startsWith('MJX-') || e.classList.contains('highlight')) { skipped = true; break; }
    }
    const text = node.textContent;
    if (!skipped && (text.includes('$$') || text.includes('\\\\(') || text.includes('\\\\['))) raw.push(text.trim().slice(0, 120));
  }
  const maths = [...document.querySelectorAll('.math')];
  return {
    images: [...document.images].map(img => ({src: img.currentSrc || img.src, complete: img.complete, width: img.naturalWidth})),
    maths: maths.length,
    untypeset: maths.filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.trim().slice(0, 120)),
    mathErrors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent.slice(0, 120)),
    raw: raw,
    errorOutputs: [...document.querySelectorAll('.output.stderr, .output.traceback, .output.error, .output_stderr, .output_error, .nb-error')]
      .map(e => e.textContent.trim().slice(0, 200)),
    tracebackText: document.body.innerText.includes('Traceback (most recent call last)'),
    // What the reader sees, as laid out (innerText leaves out hidden elements); page_check reads
    // the whole DOM as well.
    localPaths: (document.body.innerText.match(new RegExp(localPath, 'g')) || []),
    // A table pandas cut short, as laid out: its "N rows x M columns" line, or a cell of a
    // DataFrame's table ending in an ellipsis.
    cutTables: [...(document.body.innerText.match(new RegExp(tableCut, 'g')) || []),
      ...[...document.querySelectorAll('table.dataframe td, table.dataframe th')]
        .map(cell => cell.innerText.trim()).filter(text => text.endsWith('...') || text.endsWith('\u2026'))],
    overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    ids: [...document.querySelectorAll('[id], a[name]')].map(e => e.id || e.getAttribute('name')),
  };
}"""


# Runs in the page after _INSPECT: every table of the article, dropdowns opened, against the text
# column's content box (about 688 px in a 1280-px window): a table wider than the column is clipped
# or scrolls sideways inside its output, which the page's own width does not show.
_WIDE_TABLES = """() => {
  const article = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
  const closed = [...document.querySelectorAll('details:not([open])')];
  closed.forEach(d => { d.open = true; });
  const style = getComputedStyle(article);
  const left = article.getBoundingClientRect().left + parseFloat(style.paddingLeft);
  const column = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const wide = [...article.querySelectorAll('table')].filter(t => t.getBoundingClientRect().width > 0).map(t => {
    const box = t.getBoundingClientRect();
    return {width: Math.round(box.width), right: Math.round(box.right - left), column: Math.round(column),
            head: [...t.querySelectorAll('th')].slice(0, 4).map(th => th.innerText.trim().slice(0, 30)).join(' | ')};
  }).filter(t => t.width > t.column + 1 || t.right > t.column + 1);
  closed.forEach(d => { d.open = false; });
  return wide;
}"""


def _inspect(page) -> dict:
    """What _INSPECT finds in the page, plus ssa_book.page_check's findings on its live DOM."""
    found = page.evaluate(
        _INSPECT, {"localPath": page_check.LOCAL_PATH_JS, "tableCut": page_check.TABLE_CUT_LINE.pattern}
    )
    found["wideTables"] = page.evaluate(_WIDE_TABLES)
    found["readerProblems"] = page_check.page_problems(
        page.content(),
        history=page.url.endswith(page_check.HISTORY_PAGES),
        plumbing_allowed=page.url.endswith(page_check.PLUMBING_PAGES),
    )
    return found


def _visit(context, url: str) -> tuple[dict, list[str], str]:
    """Load ``url``; return (what _INSPECT found, problems seen while loading, final URL)."""
    page = context.new_page()
    problems: list[str] = []
    origin = urlparse(url).netloc
    page.on("pageerror", lambda error: problems.append(f"JavaScript error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url} ({request.failure})"))
    page.on(
        "response",
        lambda response: response.status >= 400 and problems.append(f"HTTP {response.status}: {response.url}"),
    )
    page.on(
        "request",
        lambda request: (
            urlparse(request.url).scheme in ("http", "https")
            and urlparse(request.url).netloc != origin
            and problems.append(f"off-machine request: {request.url}")
        ),
    )
    try:
        response = page.goto(url, wait_until="load", timeout=PAGE_TIMEOUT_MS)
        if response is None or not response.ok:
            problems.append(f"page did not load: {url} ({response.status if response else 'no response'})")
        # Not "networkidle": after other pages it can wait forever on the theory page. The page's
        # own resources have loaded with "load"; MathJax's fonts and images are awaited below.
        has_mathjax = page.evaluate(
            "() => Boolean(window.MathJax && window.MathJax.startup && window.MathJax.startup.promise)"
        )
        if page.locator(".math").count():
            if not has_mathjax:
                problems.append("the page has maths but MathJax did not start")
            else:
                page.evaluate("() => window.MathJax.startup.promise")
                page.wait_for_function(
                    "() => !document.querySelector('.math:not(:has(mjx-container))')",
                    timeout=MATHJAX_TIMEOUT_MS,
                    polling=POLL_MS,
                )
        # Images below the fold may load lazily: scroll through the page, then wait for them.
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        page.wait_for_function(
            "() => [...document.images].every(img => img.complete)", timeout=PAGE_TIMEOUT_MS, polling=POLL_MS
        )
        return _inspect(page), problems, page.url
    except playwright_api.Error as error:
        return {}, [*problems, f"{type(error).__name__}: {str(error).splitlines()[0]}"], url
    finally:
        page.close()


@pytest.fixture(scope="module")
def visited(server, browser_context):
    """{page: (inspection, problems)} for every page of the book."""
    results = {}
    for page in book_pages():
        found, problems, final_url = _visit(browser_context, urljoin(server, page))
        results[page] = (found, problems, final_url)
    return results


def _page_problems(found: dict) -> list[str]:
    problems = []
    problems += [
        f"image did not load: {image['src']}"
        for image in found.get("images", [])
        if not image["complete"] or image["width"] == 0
    ]
    problems += [f"maths not typeset: {text}" for text in found.get("untypeset", [])]
    problems += [f"MathJax error: {text}" for text in found.get("mathErrors", [])]
    problems += [f"raw LaTeX delimiters in the text: {text!r}" for text in found.get("raw", [])]
    problems += [f"stderr or error output as rendered: {text}" for text in found.get("errorOutputs", [])]
    if found.get("overflow", 0) > 1:
        problems.append(f"the page is {found['overflow']} px wider than the window (it scrolls sideways)")
    if found.get("tracebackText"):
        problems.append("the page shows a Python traceback")
    problems += [f"local path in the text as laid out: {path!r}" for path in found.get("localPaths", [])]
    problems += [f"a table cut short as laid out: {text!r}" for text in found.get("cutTables", [])]
    problems += [
        f"a table wider than the text column ({table['width']} px, its right edge at {table['right']} px, in a "
        f"{table['column']}-px column; clipped or scrolled sideways): {table['head']!r}"
        for table in found.get("wideTables", [])
    ]
    problems += found.get("readerProblems", [])
    return problems


@pytest.mark.parametrize("page", book_pages())
def test_page_loads_and_renders(visited, page):
    found, problems, _ = visited[page]
    problems = problems + _page_problems(found)
    assert found, f"{page} could not be inspected: {problems}"
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


# A page with what the checks must catch, as myst-nb writes it: a stderr cell (the warning the
# decoder chapter once showed), a traceback and a local path in a stdout cell; and a clean page
# with what they must let through (a relative path, a web address, a path inside a script).
BAD_PAGE = """<!DOCTYPE html><html><head><title>bad</title></head><body><main>
<div class="cell_output docutils container">
<div class="output stderr highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>/opt/venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found</pre></div></div>
<div class="output traceback highlight-ipythontb notranslate"><div class="highlight"><pre><span></span><span class="gt">Traceback (most recent call last)</span>
ValueError: boom</pre></div></div>
<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>cached in /home/someone/ssa-book/results</pre></div></div>
<div class="output text_html"><table class="dataframe"><tr><td>SSA vs softmax, lr 1e-4, 10 x st...</td></tr></table>
<p>74 rows × 5 columns</p></div>
<table style="width: 2000px"><tr><th>a table too wide for its column</th></tr></table>
</div></main></body></html>"""
CLEAN_PAGE = """<!DOCTYPE html><html><head><title>clean</title></head><body><main>
<p>Results live in <code>results/cpu/</code>; see <a href="https://example.org/home/tmp/">the site</a>.</p>
<script>const where = "/work/main/.venv/lib/python3.11/site-packages";</script>
<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre>ok</pre></div></div></div>
</main></body></html>"""


def test_the_checks_fail_on_a_hand_made_bad_page_and_pass_a_clean_one(browser_context):
    page = browser_context.new_page()
    try:
        page.set_content(BAD_PAGE)
        bad = _page_problems(_inspect(page))
        page.set_content(CLEAN_PAGE)
        clean = _page_problems(_inspect(page))
    finally:
        page.close()
    expected = [  # (how a problem starts, what it quotes)
        ("stderr or error output as rendered: ", "TqdmWarning"),
        ("stderr or error output as rendered: ", "Traceback"),
        ("stderr output: ", "TqdmWarning"),
        ("error output: ", "Traceback"),
        ("the page shows a Python traceback", ""),
        ("local path in the text as laid out: ", "/home/"),
        ("local path in the text: ", "/home/someone"),
        ("local path in the text: ", "site-packages"),
        ("a table cut short as laid out: ", "74 rows × 5 columns"),
        ("a table cut short as laid out: ", "10 x st..."),
        ("a table wider than the text column (2000 px", "a table too wide"),
    ]
    for start, quoted in expected:
        assert any(problem.startswith(start) and quoted in problem for problem in bad), (
            f"no {start!r} quoting {quoted!r}: {bad}"
        )
    assert clean == [], clean


def test_pages_with_maths_have_mathjax_output(visited):
    with_maths = [page for page, (found, _, _) in visited.items() if found.get("maths")]
    assert with_maths, "no page has maths: the MathJax check checked nothing"


def test_internal_links_resolve(visited, server):
    ids = {urlparse(final_url).path: set(found.get("ids", [])) for found, _, final_url in visited.values()}
    broken = []
    for page, (found, _, final_url) in visited.items():
        for href in found.get("links", []):
            target = urlparse(urljoin(final_url, href))
            if target.scheme not in ("http", "https") or target.netloc != urlparse(server).netloc:
                continue  # mailto:, the launch buttons' and the repository's external links
            path = unquote(target.path)
            file = HTML / posixpath.normpath(path.lstrip("/"))
            if path.endswith("/"):
                file = file / "index.html"
            if not file.is_file():
                broken.append(
                    f"{page}: {href} -> missing file {file.relative_to(HTML) if file.is_relative_to(HTML) else file}"
                )
            elif target.fragment and target.path in ids and unquote(target.fragment) not in ids[target.path]:
                broken.append(f"{page}: {href} -> no anchor #{target.fragment}")
    assert not broken, "broken internal links:\n  " + "\n  ".join(broken)


def test_index_redirects_to_the_root_page():
    root = book.resolve_document(ROOT, book.toc_documents(ROOT / "_toc.yml")[0]).with_suffix(".html").as_posix()
    index = (HTML / "index.html").read_text(encoding="utf-8")
    assert f'url={root}"' in index, f"index.html does not redirect to the root page {root}: {index!r}"


def test_front_page_screenshot(server, browser_context):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser_context.new_page()
    try:
        page.goto(urljoin(server, book_pages()[0]), wait_until="load", timeout=PAGE_TIMEOUT_MS)
        if page.locator(".math").count():
            page.evaluate("() => window.MathJax.startup.promise")
        path = ARTIFACTS / "front-page.png"
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.close()
    assert path.stat().st_size > 10_000, "the screenshot is suspiciously small"


def _page_text(name: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((HTML / "notebooks" / f"{name}.html").read_text(encoding="utf-8"), "html.parser")
    return " ".join((soup.find("main") or soup).get_text(" ").split())


def test_the_front_pages_error_rate_is_the_largest_in_the_reproducing_pages_table():
    import re

    from bs4 import BeautifulSoup

    quoted = re.search(r"names a direction that is not there at most (\d+\.\d)% of the time", _page_text("intro"))
    assert quoted, "the front page must quote the rule's largest false direction rate"
    soup = BeautifulSoup((HTML / "notebooks" / "reproducing.html").read_text(encoding="utf-8"), "html.parser")
    table = next(
        table
        for table in soup.find_all("table")
        if "at the pairs used" in [th.get_text(strip=True) for th in table.find_all("th")]
    )
    header = [th.get_text(strip=True) for th in table.find_all("th")]
    column = header.index("at the pairs used")
    rates = [
        float(row.find_all("td")[column].get_text(strip=True).rstrip("%"))
        for row in table.find_all("tr")
        if row.find_all("td")
    ]
    assert rates and float(quoted.group(1)) == max(rates)
    # every chapter's false direction rate at the pairs it uses is at most the limit (issue 52's bar)
    from ssa_book import error_rates

    assert max(rates) <= 100 * error_rates.LIMIT


def test_an_attribution_is_said_only_with_the_decided_comparisons_it_rests_on():
    """ "goes with X, not Y" comes only from ssa_book.verdicts.readings.slope_sentence's two decided readings,
    each with the comparison that decides it; an open one reads "do not separate"."""
    import re

    for name in book.toc_pages(ROOT):
        if not name.startswith("notebooks/"):
            continue
        text = _page_text(Path(name).stem)
        for sentence in re.findall(r"[^.]*goes with its [^,.]*, not its [^.]*\.", text):
            assert (
                "not its form: a softmax with that slope does the same" in sentence
                or "not its starting slope: a softmax with that slope shows no difference that matters from softmax"
                in sentence
            ), (name, sentence)


def test_reader_pages_name_no_module_test_or_script_and_show_no_literal_backtick():
    """Module paths, tests and scripts of the repository, and Markdown shown unrendered (a literal
    backtick) stay on the pages that may show plumbing (reproducing the book, the analysis changes);
    the reproducing page names them, so the check finds them where it looks."""

    def plumbing_problems(page: str, allowed: bool = False) -> list[str]:
        html = (HTML / page).read_text(encoding="utf-8")
        return [
            problem
            for problem in page_check.page_problems(html, history=True, plumbing_allowed=allowed)
            if problem.startswith(("plumbing in the argument", "a literal backtick"))
        ]

    found = {
        page: problems
        for page in book.toc_pages(ROOT)
        if not page.endswith(page_check.PLUMBING_PAGES) and (problems := plumbing_problems(page))
    }
    assert not found, "\n".join(f"{page}: {problem}" for page, problems in found.items() for problem in problems)
    reproducing = next(page for page in book.toc_pages(ROOT) if page.endswith("reproducing.html"))
    shown = " ".join(plumbing_problems(reproducing))
    assert "ssa.kernels.flex" in shown and "scripts/gpu_check.sh" in shown and "tests/test_lm.py" in shown


FRONT_PAGE_WORDS = 1000  # at most, visible on the front page with every dropdown closed (issue 53)


def test_no_chapter_shows_more_than_about_3000_words_with_its_dropdowns_closed():
    """Each chapter says its argument in at most :data:`ssa_book.page_check.CHAPTER_WORDS` visible
    words; plans, settings and long tables go behind dropdowns or to the appendix pages."""
    long = page_check.long_pages(HTML, book.toc_pages(ROOT))
    assert not long, "\n".join(
        f"{page}: {count:,} visible words (at most {page_check.CHAPTER_WORDS:,})" for page, count in long.items()
    )


def test_the_front_page_reads_in_a_minute_and_opens_with_the_scorecard():
    """At most 1,000 words with the dropdowns closed, and the scorecard figure before the first
    section heading, under the abstract."""
    from bs4 import BeautifulSoup

    html = (HTML / "notebooks" / "intro.html").read_text(encoding="utf-8")
    assert page_check.visible_words(html) <= FRONT_PAGE_WORDS, (
        f"{page_check.visible_words(html)} visible words on the front page"
    )
    soup = BeautifulSoup(html, "html.parser")
    elements = list((soup.find("article") or soup).descendants)
    scorecard = soup.find(id="fig-scorecard")
    assert scorecard is not None, "the front page has no scorecard figure (fig-scorecard)"
    first_section = next(element for element in elements if getattr(element, "name", None) == "h2")
    assert elements.index(scorecard) < elements.index(first_section), "the scorecard must come before the first section"
    assert "In short." in soup.get_text(" ")
