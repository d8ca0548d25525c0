"""Sphinx extension of the book (listed in ``_config.yml``): MathJax served by the book itself,
and the book's few style rules.

Sphinx loads MathJax from a CDN by default, so the maths of a book opened offline, or checked in
CI without internet, stays raw LaTeX. This extension points ``mathjax_path`` at a copy of
MathJax 3 in the built book's ``_static/mathjax/``, taken from the ``django-static-mathjax``
package (MathJax's own distribution files, Apache 2.0; pinned in requirements/lock.txt).
"""

from __future__ import annotations

import shutil
from pathlib import Path

MATHJAX_FOLDER = "mathjax"  # under _static/
MATHJAX_ENTRY = "tex-mml-chtml.js"  # the combined component: TeX and MathML in, CommonHTML out
# What that component loads on demand: TeX extensions, fonts, the menu and its accessibility
# modules. The speech rule engine (sre/, most of the size) is left out: its speech output is off
# unless a reader switches it on in the menu.
MATHJAX_PARTS = (MATHJAX_ENTRY, "input", "output", "ui", "a11y", "adaptors")


def mathjax_source() -> Path:
    """The ``es5`` folder of the installed MathJax distribution."""
    try:
        import mathjax  # the django-static-mathjax package
    except ImportError as error:
        raise RuntimeError("the book needs MathJax from the django-static-mathjax package: run `make venv`") from error
    source = Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"
    if not (source / MATHJAX_ENTRY).is_file():
        raise RuntimeError(f"MathJax's {MATHJAX_ENTRY} is not in {source}; reinstall django-static-mathjax")
    return source


def copy_mathjax(destination: Path) -> Path:
    """Copy the MathJax parts the book needs into ``destination``; return it."""
    source = mathjax_source()
    destination.mkdir(parents=True, exist_ok=True)
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, destination / part, dirs_exist_ok=True)
        else:
            shutil.copy2(source / part, destination / part)
    return destination


# The book's own style rules. Every table fits the text column (about 688 px in a 1280-px
# window): none is clipped or scrolls sideways (tests/test_browser.py checks every page). Markdown
# tables (the claims ledger, the command tables) fill the column; every table's cells wrap long
# words, numbers with their intervals and commands rather than widen it; tables a cell prints
# (pandas, in outputs) are set a little smaller, since they have the most columns. The interactive
# tables (itables' DataTables, the leaderboard's) break between words only: they are laid out to fit.
BOOK_CSS = "ssa-book.css"
BOOK_CSS_TEXT = """\
.bd-article table { max-width: 100%; }
.bd-article table.table:not(.dataframe) { width: 100%; }
.bd-article table.dataframe, .bd-article .cell_output table { font-size: 0.8rem; }
.bd-article table td, .bd-article table th, .bd-article table td code, .bd-article table td code span { white-space: normal; overflow-wrap: anywhere; }
.bd-article table.dataTable td, .bd-article table.dataTable th { overflow-wrap: break-word; }
"""


def _add_book_css(app) -> None:
    app.add_css_file(BOOK_CSS)


def _use_local_mathjax(app, config) -> None:
    mathjax_source()  # fail at the start of the build, not with raw LaTeX at its end
    config.mathjax_path = f"{MATHJAX_FOLDER}/{MATHJAX_ENTRY}"  # relative: resolved under _static/


def _copy_into_build(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        copy_mathjax(Path(app.outdir) / "_static" / MATHJAX_FOLDER)
        (Path(app.outdir) / "_static" / BOOK_CSS).write_text(BOOK_CSS_TEXT, encoding="utf-8")


def _script_key(script) -> tuple:
    attributes = getattr(script, "attributes", {})
    return str(getattr(script, "filename", script) or ""), attributes.get("body"), attributes.get("src")


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """Keep each script once. sphinx-thebe 0.3.1 adds its inline configuration twice in a
    Jupyter Book build, and the second ``const THEBE_JS_URL`` is a JavaScript error on every page."""
    if "script_files" not in context:
        return
    unique = {}
    for script in context["script_files"]:
        unique.setdefault(_script_key(script), script)
    context["script_files"][:] = list(unique.values())


def setup(app):
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", _use_local_mathjax)
    app.connect("builder-inited", _add_book_css)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=100)  # emit_firstresult: run early
    app.connect("build-finished", _copy_into_build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
