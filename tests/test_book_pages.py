"""The book as a reader meets it: one install cell everywhere, commands that match the README and
the CI workflow, no number typed into the front matter's prose, and a page check
(``ssa_book.page_check``) that refuses stderr, tracebacks and local paths on a built page."""

import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from ssa_book import book, page_check

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
REPOSITORY_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
WORKFLOW = (ROOT / ".github" / "workflows" / "book.yml").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _install_cell(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_every_notebook_starts_with_the_same_install_cell_from_the_configured_repository():
    cells = {path.name: _install_cell(path) for path in NOTEBOOKS}
    assert len(set(cells.values())) == 1, f"install cells differ: {cells}"
    install = next(iter(cells.values()))
    command = f'%pip install -q "ssa-book[book] @ git+{REPOSITORY_URL}"'
    assert command in install
    assert command.removeprefix("%pip install -q ") in README, "the README must document the install cell's command"


def test_the_workflow_runs_the_make_targets_the_readme_documents():
    steps = [step["run"] for job in yaml.safe_load(WORKFLOW)["jobs"].values() for step in job["steps"] if "run" in step]
    make_commands = [command for command in steps if command.startswith("make ")]
    assert any(command.startswith("make test") for command in make_commands)
    assert any(command.startswith("make book") for command in make_commands)
    assert "make book TORCH=cuda DEVICE=cuda PROFILE=paper" in make_commands
    for command in ("make test", "make book", "make book TORCH=cuda DEVICE=cuda PROFILE=paper"):
        assert command in README, f"the README does not document `{command}`"


NAMES = {"GPT-2", "SHA-256"}  # names with a digit in them, not numbers


def _prose(markdown: str) -> str:
    """Markdown without what may hold digits legitimately: code, maths, roles, directives."""
    markdown = re.sub(r"(?ms)^(```|~~~).*?^\1", "", markdown)  # fenced blocks
    markdown = re.sub(r"\$\$.*?\$\$", "", markdown, flags=re.S)
    markdown = re.sub(r"\$[^$]*\$", "", markdown)
    markdown = re.sub(r"\{[\w:.-]+\}`[^`]*`", "", markdown)  # roles, e.g. {glue:text}`claims`
    return re.sub(r"`[^`]*`", "", markdown)


def test_front_matter_prose_types_no_numbers():
    for name in ("intro", "reproducing"):
        notebook = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type == "markdown":
                # Tables of fixed vocabulary (the profiles) hold no numbers either.
                digits = [
                    word
                    for word in re.findall(r"[^\s]*\d[^\s]*", _prose(cell.source))
                    if word.strip(".,;:()*") not in NAMES
                ]
                assert not digits, f"notebooks/{name}.ipynb cell {index} types numbers: {digits}; glue them"


# ssa_book.page_check: what no built page may show. `python -m ssa_book book run` applies it to every page
# after the HTML build, and the browser check to the pages as Chromium renders them.
STDERR_CELL = (
    '<div class="cell_output docutils container"><div class="output stderr highlight-myst-ansi notranslate">'
    '<div class="highlight"><pre><span></span>{text}</pre></div></div></div>'
)
TRACEBACK_CELL = (
    '<div class="output traceback highlight-ipythontb notranslate"><div class="highlight"><pre><span></span>'
    '<span class="gt">Traceback (most recent call last)</span>\nValueError: boom</pre></div></div>'
)
STDOUT_CELL = '<div class="output stream highlight-myst-ansi notranslate"><div class="highlight"><pre><span></span>{text}</pre></div></div>'


def _page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><title>page</title><script>var x = 1;</script></head><body><main>{body}</main></body></html>"


def test_page_check_reports_a_stderr_cell_even_without_a_path():
    problems = page_check.page_problems(_page(STDERR_CELL.format(text="a message on stderr")))
    assert problems == ["stderr output: 'a message on stderr'"]


def test_page_check_reports_the_tqdm_warning_the_decoder_chapter_showed():
    warning = "/work/main/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found."
    problems = page_check.page_problems(_page(STDERR_CELL.format(text=warning)))
    assert problems[0].startswith("stderr output: '/work/main/.venv")
    assert any(problem.startswith("local path in the text: ") and "/work/main" in problem for problem in problems)


def test_page_check_reports_a_traceback_output_and_traceback_text_in_stdout():
    assert page_check.page_problems(_page(TRACEBACK_CELL))[0].startswith(
        "error output: 'Traceback (most recent call last)"
    )
    printed = STDOUT_CELL.format(text="Traceback (most recent call last):\n  ValueError")
    assert page_check.page_problems(_page(printed)) == ["the page shows a Python traceback"]


def test_page_check_reports_a_warning_printed_to_stdout():
    problems = page_check.page_problems(_page(STDOUT_CELL.format(text="x.py:3: <span>FutureWarning</span>: old")))
    assert problems == ["a warning in an output: 'FutureWarning: old'"]


def test_page_check_reports_a_widget_output():
    widget = '<script type="application/vnd.jupyter.widget-view+json">{"model_id": "1a2b", "version_major": 2}</script>'
    assert page_check.page_problems(_page(f'<div class="cell_output docutils container">{widget}</div>')) == [
        "a widget output (a progress bar?), which a static page shows frozen or not at all"
    ]


def test_page_check_reports_a_table_pandas_cut_short():
    import pandas as pd

    frame = pd.DataFrame({"question": ["At the authors' learning rate, trained 10 x longer?" * 2] * 80, "n": range(80)})
    with pd.option_context("display.max_rows", 10, "display.max_colwidth", 50):
        cut = frame._repr_html_()
    problems = page_check.page_problems(_page(f'<div class="cell_output docutils container">{cut}</div>'))
    assert any(problem.startswith("a table cut short: a cell reads") for problem in problems)
    assert "a table cut short: '80 rows × 2 columns' under it" in problems
    with pd.option_context("display.max_rows", None, "display.max_colwidth", None):
        whole = frame._repr_html_()
    assert page_check.page_problems(_page(f'<div class="cell_output docutils container">{whole}</div>')) == []
    # prose may say "..." and a table that is not pandas' may hold it
    assert page_check.page_problems(_page("<p>and so on ...</p><table><tr><td>a ...</td></tr></table>")) == []


def test_page_check_reports_a_verdict_word_outside_the_vocabulary():
    assert page_check.page_problems(_page("<p>The claim is <strong>reproduced</strong>.</p>")) == [
        "a verdict word outside the vocabulary: 'reproduced' in 'reproduced'"
    ]
    assert page_check.page_problems(_page("<table><tr><td>SSA vs softmax</td><td>opposite</td></tr></table>"))
    assert page_check.page_problems(_page("<p>every claim is inconclusive at best</p>"))
    assert page_check.page_problems(_page("<p>it shows no effect at this scale</p>"))
    # a negation standing in for "undecided" or "exploratory", across a line break too
    assert page_check.page_problems(_page("<p>set size not decided (exploratory on 2 of 2)</p>"))
    assert page_check.page_problems(_page("<p>the difference is not\nestablished (exploratory)</p>"))
    # prose may use the words in their plain sense, and a history page may quote the old verdicts
    assert page_check.page_problems(_page("<p>every figure can be reproduced; the opposite sign</p>")) == []
    assert page_check.page_problems(_page("<p><strong>SSA worse</strong>, <strong>holds in part</strong></p>")) == []
    assert page_check.page_problems(_page("<td>inconclusive</td>"), history=True) == []


@pytest.mark.parametrize(
    "html",
    [
        "<p>saved to /tmp/run/model.pt</p>",
        "<p>see <code>/root/.cache/torch_extensions</code></p>",
        '<div class="highlight"><pre><span class="n">path</span> <span class="o">=</span> <span class="s2">"/home/me/data"</span></pre></div>',
        "<p>C:\\Users\\me\\ssa</p>",
        "<p>lib/python3.11/site-packages/ssa</p>",
        '<p><a href="file:///work/main/results/cpu">results</a></p>',
        '<p><img src="/home/me/figure.png" alt="a figure"></p>',
        '<p><abbr title="built in /work/main">here</abbr></p>',
        "<table><tr><td>a</td><td>/tmp/x</td></tr></table>",
    ],
)
def test_page_check_reports_a_local_path_the_reader_sees(html):
    assert page_check.page_problems(_page(html)), f"no problem found in {html!r}"


@pytest.mark.parametrize(
    "html",
    [
        # what the book legitimately shows: relative and home-relative paths, web addresses
        "<p>cached in <code>results/cpu/decoder/</code>, by default <code>~/.cache/torch_extensions</code></p>",
        '<p><a href="https://example.org/home/tmp/work/">https://example.org/home/tmp/work/</a></p>',
        "<p>input/output and/or the tmp folder; a workshop, the homework</p>",
        '<div class="output stream"><pre>loss 2.31</pre></div>',
        # not seen by a reader: scripts, styles, an embedded image's base64
        '<script>const where = "/work/main/.venv/lib/python3.11/site-packages";</script>',
        "<style>.x { background: url(/tmp/a.png); }</style>",
        '<img src="data:image/png;base64,iVBORw0KGgo/work/AAAA/tmp/Bsite-packages" alt="a figure">',
        '<a href="../_static/tmp/file.js" title="scripts">static</a>',
    ],
)
def test_page_check_passes_what_is_no_local_path(html):
    assert page_check.page_problems(_page(html)) == []


# Every figure is numbered: an image in a cell's output or in the article sits in a <figure> whose
# caption Sphinx numbered ("Fig. N"), as a {glue:figure} with a caption writes it, with alt text in
# words. Below, the HTML Jupyter Book 1.x (myst-nb, sphinx-book-theme) writes for each case.
HASHED_IMAGE = "../_images/dbbbbf6db49a314de2b9da34c8b0bc6940a5fcac94d81792e3e6b74e30de8a3a.png"
OUTPUT_IMAGE = f'<div class="cell_output docutils container"><img alt="{HASHED_IMAGE}" src="{HASHED_IMAGE}" /></div>'
ALT = "A line chart of the prompt error against sigma, one line per scorer"


def _figure(
    alt: str = ALT, number: str | None = "Fig. 3 ", caption: str = "SSA's error grows from 0.01 to 0.97."
) -> str:
    numbered = f'<span class="caption-number">{number}</span>' if number is not None else ""
    return (
        f'<figure class="align-default" id="fig-shift"><img alt="{alt}" src="{HASHED_IMAGE}" />'
        f'<figcaption><p>{numbered}<span class="caption-text">{caption}</span>'
        '<a class="headerlink" href="#fig-shift" title="Link to this image">#</a></p></figcaption></figure>'
    )


def _article(body: str) -> str:
    return f'<article class="bd-article"><section id="a-chapter"><h1>A chapter</h1>{body}</section></article>'


def test_page_check_reports_an_image_in_a_cell_output_outside_a_figure():
    # what myst-nb writes for a figure a code cell displays: no number, its file name as alt text
    problems = page_check.page_problems(_page(_article(f'<div class="cell docutils container">{OUTPUT_IMAGE}</div>')))
    assert problems == [f"an unnumbered figure (an image outside a numbered figure; alt text {HASHED_IMAGE[:80]!r})"]
    # in a cell's output even where the page has no article element (as the browser check's pages)
    assert page_check.page_problems(_page(OUTPUT_IMAGE))[0].startswith("an unnumbered figure")


def test_page_check_passes_a_numbered_figure_with_alt_text_in_words():
    assert page_check.page_problems(_page(_article(_figure()))) == []
    # a glue:figure of a cell's output keeps the output's container inside the figure
    inside = _figure().replace(
        f'<img alt="{ALT}" src="{HASHED_IMAGE}" />',
        f'<div class="cell_output docutils container"><img alt="{ALT}" src="{HASHED_IMAGE}" /></div>',
    )
    assert page_check.page_problems(_page(_article(inside))) == []


def test_page_check_reports_a_figure_without_a_number_or_without_alt_text_in_words():
    # a figure with no caption (Sphinx numbers only captioned figures) or numbered as something else
    for unnumbered in (_figure(number=None), _figure(number="Table 2 ")):
        assert page_check.page_problems(_page(_article(unnumbered))) == [
            f"an unnumbered figure (a figure without a numbered caption; alt text {ALT!r})"
        ]
    # an image in the article outside any figure (a figure pasted with {glue} rather than {glue:figure})
    assert page_check.page_problems(_page(_article(f'<p><img alt="{ALT}" src="{HASHED_IMAGE}" /></p>')))[0].startswith(
        "an unnumbered figure"
    )
    for alt in (HASHED_IMAGE, ""):
        assert page_check.page_problems(_page(_article(_figure(alt=alt)))) == [
            f"a figure without alt text in words (alt text {alt!r})"
        ]


def test_page_check_passes_the_themes_images():
    header = (
        '<div class="navbar-brand logo"><img src="../_static/logo.png" class="logo__image only-light" alt="SSA book - Home"/></div>'
        '<div class="article-header-buttons"><a href="https://colab.research.google.com/x" class="btn">'
        '<img alt="Colab logo" src="../_static/images/logo_colab.png"></a></div>'
    )
    assert page_check.page_problems(_page(header + _article(_figure()))) == []


def test_the_runner_refuses_a_build_whose_page_shows_stderr(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: notebooks/chapter\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.md").write_text("# intro\n")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "chapter.ipynb").write_text("{}")
    html = tmp_path / "_build" / "html"
    (html / "notebooks").mkdir(parents=True)
    (html / "book").mkdir()
    (html / "book" / "intro.html").write_text(_page("<p>fine</p>"))
    (html / "notebooks" / "chapter.html").write_text(_page(STDERR_CELL.format(text="oops")))
    with pytest.raises(book.BookBuildFailed, match=r"notebooks/chapter.html: stderr output: 'oops'"):
        book.check_built_pages(tmp_path, html)
    (html / "notebooks" / "chapter.html").write_text(_page(STDOUT_CELL.format(text="fine")))
    book.check_built_pages(tmp_path, html)


ACL_ANTHOLOGY_ID = "2026.acl-long.1385"  # the paper's peer-reviewed version, ACL 2026
ACL_PAGES = (30033, 30051)


def test_the_paper_is_cited_as_its_acl_version_everywhere():
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    entry = re.search(r"@inproceedings\{naim2026ssa,(.*?)\n\}", bib, re.S)
    assert entry, "book/references.bib has no @inproceedings{naim2026ssa, ...} entry"
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?$", entry.group(1), re.M))
    assert "64th Annual Meeting of the Association for Computational Linguistics" in fields["booktitle"]
    assert fields["pages"] == f"{ACL_PAGES[0]}--{ACL_PAGES[1]}" and fields["year"] == "2026"
    assert ACL_ANTHOLOGY_ID in fields["url"] and fields["eprint"] == "2508.14685"
    for path in NOTEBOOKS:
        assert "naim2025ssa" not in path.read_text(encoding="utf-8"), f"{path.name} cites the old key"
    assert ACL_ANTHOLOGY_ID in README[:1000] and "2508.14685" in README[:1000]

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["repository-code"] == REPOSITORY_URL
    (paper,) = [reference for reference in citation["references"] if reference["type"] == "conference-paper"]
    assert (paper["start"], paper["end"], paper["year"]) == (*ACL_PAGES, 2026)
    assert ACL_ANTHOLOGY_ID in paper["url"]
    assert [author["family-names"] for author in paper["authors"]] == ["Naim", "Bhar", "Bolte", "Asher"]


def test_the_front_page_cites_the_book_as_citation_cff_does():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    intro = (ROOT / "notebooks" / "intro.ipynb").read_text(encoding="utf-8")
    bibtex = re.search(r"```bibtex(.*?)```", "".join(json.loads(intro)["cells"][-1]["source"]), re.S).group(1)
    title = citation["title"].removesuffix(" (the SSA book)")
    assert f"title = {{{title}}}" in bibtex and f"version = {{{citation['version']}}}" in bibtex
    assert f"url = {{{citation['url']}}}" in bibtex
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["title"] == title and f"# {title}" in intro


def test_plumbing_finds_commits_modules_and_constants_but_not_numbers():
    text = "commit e67011b, ssa_book.verdicts.no_effect_pairs and BABYBERTA_ZORRO_ACCURACY; 2.220446e-16, seed 100, GPT-2, cafe"
    assert page_check.plumbing(text) == ["e67011b", "ssa_book.verdicts.no_effect_pairs", "BABYBERTA_ZORRO_ACCURACY"]
    assert page_check.page_problems(_page("<p>see ssa_book.verdicts</p>"))[0].startswith("plumbing in the argument")
    assert page_check.page_problems(_page("<p>see ssa_book.verdicts</p>"), plumbing_allowed=True) == []


def test_plumbing_spares_the_public_names_a_reader_is_told_to_call():
    assert page_check.PUBLIC_NAMES == ("ssa.hf.use_scorer",)
    text = "call ssa.hf.use_scorer('topk') before loading; ssa.hf.scoring is internal"
    assert page_check.plumbing(text) == ["ssa.hf.scoring"]
    assert page_check.page_problems(_page("<p>call ssa.hf.use_scorer</p>")) == []


def test_plumbing_is_looked_for_in_the_argument_not_in_a_code_cells_code():
    code = '<div class="cell_input docutils container"><pre>experiment.CLAIM_LABELS, ssa_book.lm.train</pre></div>'
    assert page_check.page_problems(_page(code)) == []
    output = '<div class="cell_output docutils container"><pre>ssa_book.lm.train</pre></div>'
    assert page_check.page_problems(_page(code + output)) == [
        "plumbing in the argument (a commit, module or constant name): 'ssa_book.lm.train'"
    ]


def test_check_pages_enforces_plumbing_outside_the_plumbing_pages(tmp_path):
    # the library's own pages (its scorers, its kernels) say it in words too: only the reproducing
    # page and the history of the analysis name modules, tests and scripts
    for page in ("intro.html", "reproducing.html", "scorers.html", "performance.html", "analysis_changes.html"):
        (tmp_path / page).write_text(_page("<p>see ssa_book.verdicts at e67011b</p>"), encoding="utf-8")
    found = page_check.check_pages(
        tmp_path, ["intro.html", "reproducing.html", "scorers.html", "performance.html", "analysis_changes.html"]
    )
    assert list(found) == ["intro.html", "scorers.html", "performance.html"]


def test_a_reader_page_names_no_test_or_script_and_shows_no_literal_backtick():
    text = (
        "tested offline (tests/test_lm.py); scripts/gpu_check.sh runs them; see test_hf.py; "
        "runs `python -m ssa_book regenerate encoder` plans"
    )
    assert page_check.repository_files(text) == ["tests/test_lm.py", "scripts/gpu_check.sh", "test_hf.py"]
    assert len(page_check.literal_backticks(text)) == 2
    problems = page_check.page_problems(_page(f"<p>{text}</p>"))
    assert [problem.split(":")[0] for problem in problems] == [
        "plumbing in the argument (a test or script of the repository)"
    ] * 3 + ["a literal backtick in the argument (Markdown shown unrendered)"] * 2
    assert page_check.page_problems(_page(f"<p>{text}</p>"), plumbing_allowed=True) == []
    # code, rendered as code, is no literal backtick; a relative path of results or a web address is no test file
    clean = (
        "<p>run <code>python -m ssa_book regenerate encoder</code>; results in <code>results/cpu/</code>; "
        "see https://example.org/tests/test_x.py</p>"
    )
    assert page_check.page_problems(_page(clean)) == []
    # a code cell's code may name anything
    assert page_check.page_problems(_page('<div class="cell_input"><pre>import tests.test_lm  # `x`</pre></div>')) == []


def test_page_check_reports_a_paragraph_printed_twice_but_not_a_short_or_tabled_repeat():
    long = "The decoder's verdicts: " + "SSA against softmax on perplexity in distribution, exploratory. " * 3
    assert page_check.page_problems(_page(f"<p>{long}</p><div><p>{long}</p></div>"))[0].startswith(
        "a paragraph printed 2 times"
    )
    short = "Step 2. sympy: the limit taken directly."
    assert page_check.page_problems(_page(f"<p>{short}</p><p>{short}</p>")) == []
    assert (
        page_check.page_problems(
            _page(f"<table><tr><td><p>{long}</p></td></tr><tr><td><p>{long}</p></td></tr></table>")
        )
        == []
    )


# One vocabulary on every page: a verdict phrase the glossary does not define fails the build
# (ssa_book.page_check.vocabulary_problems, verdict_problems), in running text, in a verdict's cell
# and in the cells of a CSV the site offers.
VOCABULARY_PROBLEM = "a verdict word outside the vocabulary"
SIGMA_PROBLEM = "sigma outside the book's notation"


@pytest.mark.parametrize(
    "html, kind",
    [
        (html, VOCABULARY_PROBLEM)
        for html in (
            "<p>the study shows no effect at lr 1e-4</p>",
            "<p>SSA and softmax: no difference on some</p>",
            "<td>pending</td>",
            "<p>a null result here is weak evidence</p>",
            "<p>read it as fragile: its margin is small</p>",
            "<p>the front page is not complete yet</p>",
            "<td>premise absent</td>",
            "<td>20 of 80 runs cached</td>",
            "<p>some: not tested yet, 20 of 80 runs cached</p>",
            "<td>not run yet: 3 of 10 seeds</td>",
            "<td>not run</td>",
            "<td>worse</td>",
            "<td>0.751 [0.738, 0.764] better</td>",
            "<p><strong>is not better than softmax</strong></p>",
            "<p>of the ten scorers, 6 worse than softmax</p>",
        )
    ]
    + [
        (html, SIGMA_PROBLEM)
        for html in (
            # one notation for sigma: "σ = 10" in text and tables ("σ of x = 10" where two quantities are
            # shifted), \(\sigma\) in formulas; the word spelled out or a code name fails
            "<p>the error at sigma 10</p>",
            "<td>mean error, sigma 2-29</td>",
            "<p>from the smallest to the largest sigma</p>",
            "<td>sigma_x = 10</td>",
            "<p>test prompts per Sigma</p>",
            "<figcaption><p>error at sigma = 10</p></figcaption>",
        )
    ],
)
def test_the_page_check_fails_a_phrase_outside_the_glossary_or_the_sigma_notation(html, kind):
    problems = page_check.page_problems(_page(html))
    assert problems and all(problem.startswith(kind) for problem in problems), problems


@pytest.mark.parametrize(
    "html",
    [
        "<p>no difference that matters on every, and SSA worse on some</p>",
        "<td>no difference that matters; SSA slightly worse -0.06 [-0.10, -0.02]</td>",
        "<td>sigmoid better</td><td>1.5-entmax slightly better</td><td>SSA worse than softmax</td>",
        "<td>no difference that matters; SSA (n = 2) slightly better than softmax</td><td>sparsemax is not better</td>",
        "<p>no difference\nthat matters, a phrase the HTML breaks across lines</p>",
        "<td>not run yet: 34 of 80 runs done</td>",
        "<td>not tested</td><td>exploratory (10 pairs)</td><td>premise not shown</td>",
        # a mention, in quotes, and the plain sense of the words in running text
        "<td>“X better” means the interval excludes zero</td>",
        "<p>SSA's error is worse than softmax's at σ = 10; a larger model does better</p>",
        "<p>each verdict the amendment changed, or has not decided yet</p>",
    ],
)
def test_the_vocabulary_check_passes_the_glossarys_words(html):
    assert page_check.page_problems(_page(html)) == []


def test_the_vocabulary_check_spares_the_history_page_and_code():
    assert page_check.page_problems(_page("<td>no effect at this scale</td><td>pending</td>"), history=True) == []
    assert page_check.page_problems(_page('<div class="cell_input"><pre>pending = [] # no effect</pre></div>')) == []


def test_check_pages_reads_the_csv_files_the_site_offers(tmp_path):
    (tmp_path / "page.html").write_text(_page("<p>fine</p>"), encoding="utf-8")
    (tmp_path / "board.csv").write_text(
        "scorer,outcome\nsigmoid,sigmoid better than softmax\nssa,worse\n", encoding="utf-8"
    )
    found = page_check.check_pages(tmp_path, ["page.html"])
    assert list(found) == ["board.csv"]
    assert found["board.csv"] == [
        "a verdict word outside the vocabulary: line 3: a direction word without its subject in 'worse'"
    ]
    (tmp_path / "board.csv").write_text(
        "scorer,outcome\nssa,SSA worse than softmax\nx,not run yet: 3 of 10 runs done\n", encoding="utf-8"
    )
    assert page_check.check_pages(tmp_path, ["page.html"]) == {}


def test_a_state_has_one_wording():
    from ssa_book.verdicts.words import NOT_RUN_YET, not_run_yet
    from ssa_book.verdicts.glossary import glossary_frame

    assert not_run_yet(34, 80) == "not run yet: 34 of 80 runs done"
    assert not_run_yet(0, 1) == "not run yet: 0 of 1 run done"
    assert NOT_RUN_YET in set(glossary_frame()["word"])
    for cached, planned in ((-1, 80), (81, 80), (0, 0), (1.5, 80), (True, 2)):
        with pytest.raises(ValueError, match="cached|planned"):
            not_run_yet(cached, planned)
    assert page_check.page_problems(_page(f"<td>{not_run_yet(34, 80)}</td>")) == []


def test_the_sigma_check_passes_the_books_notation_and_code():
    html = (
        "<p>the error at σ = 10, over σ = 2-29, σ of x = 10, σ of a, b = 10 and "
        '<span class="math notranslate nohighlight">\\(\\sigma = 10\\)</span>, '
        '<span class="math">\\(x \\sim N(0, \\sigma_x^2)\\)</span></p>'
        '<div class="cell_input"><pre>run.sweep("sigma_x").sigmas</pre></div>'
    )
    assert page_check.page_problems(_page(html)) == []
