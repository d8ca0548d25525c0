"""A hand-made built book for the tests of the build's page checks: a table of contents naming
the pages, an empty notebook for each, and each page's HTML as the build would leave it."""

from pathlib import Path

PAGE = "<html><body><main>{}</main></body></html>"


def built_book(root: Path, bodies: dict[str, str]) -> Path:
    """Write a book whose chapters are ``bodies``' keys (the first the root page), each page's main
    content its value, under ``root``; return the HTML root the build would have written."""
    names = list(bodies)
    chapters = "".join(f"  - file: notebooks/{name}\n" for name in names[1:])
    (root / "_toc.yml").write_text(f"format: jb-book\nroot: notebooks/{names[0]}\nchapters:\n{chapters}")
    (root / "notebooks").mkdir()
    html = root / "_build" / "html"
    (html / "notebooks").mkdir(parents=True)
    for name, body in bodies.items():
        (root / "notebooks" / f"{name}.ipynb").write_text("{}")
        write_page(html, name, body)
    return html


def write_page(html: Path, name: str, body: str) -> None:
    (html / "notebooks" / f"{name}.html").write_text(PAGE.format(body))
