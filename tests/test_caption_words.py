"""The caption check over built pages (issue 53: figure captions of at most about 50 words)."""

import pytest

from built_book import built_book, write_page
from ssa_book import book, page_check


def figure(number: str, caption: str) -> str:
    """A numbered figure as Sphinx writes it for a {glue:figure}: number, caption, permalink mark."""
    return (
        f"<figure class='align-default' id='fig-{number}'><div class='cell_output'><img alt='a chart' src='x.png'/></div>"
        f"<figcaption><p><span class='caption-number'>Fig. {number} </span><span class='caption-text'>{caption}</span>"
        f"<a class='headerlink' href='#fig-{number}' title='Link to this image'>#</a></p></figcaption></figure>"
    )


def words(count: int) -> str:
    return " ".join(f"w{index}" for index in range(count))


def test_figure_captions_reads_each_numbered_caption_without_its_number_and_mark_a_formula_one_word():
    html = (
        "<article>"
        + figure(
            "3",
            "SSA keeps <span class='pasted-text'>0.10</span> at "
            "<span class='math notranslate nohighlight'>\\(t = 20\\)</span>; seeds 0-2.",
        )
        + "<figure><img alt='a logo' src='logo.png'/><figcaption><p>an unnumbered caption</p></figcaption></figure></article>"
    )
    assert page_check.figure_captions(html) == [("Fig. 3", "SSA keeps 0.10 at \\(t=20\\); seeds 0-2.")]


def test_long_captions_lists_each_caption_over_the_limit_by_page_and_figure(tmp_path):
    (tmp_path / "short.html").write_text(figure("1", words(page_check.CAPTION_WORDS)))
    (tmp_path / "long.html").write_text(
        figure("2", words(page_check.CAPTION_WORDS))
        + figure("3", words(page_check.CAPTION_WORDS - 1) + " <span class='math'>\\(a + b\\)</span> over")
    )
    found = page_check.long_captions(tmp_path, ["short.html", "long.html"])
    assert list(found) == ["long.html"]
    assert len(found["long.html"]) == 1 and found["long.html"][0].startswith(
        f"Fig. 3: {page_check.CAPTION_WORDS + 1} words"
    )
    with pytest.raises(ValueError, match="limit must be a positive number"):
        page_check.long_captions(tmp_path, ["short.html"], limit=0)


def test_the_build_refuses_a_page_with_a_caption_over_the_limit(tmp_path):
    html = built_book(
        tmp_path,
        {
            "intro": figure("1", words(page_check.CAPTION_WORDS)),
            "chapter": figure("2", words(page_check.CAPTION_WORDS + 1)),
        },
    )
    with pytest.raises(
        book.BookBuildFailed,
        match=rf"notebooks/chapter.html: a figure caption over {page_check.CAPTION_WORDS} words: "
        rf"Fig. 2: {page_check.CAPTION_WORDS + 1} words",
    ):
        book.check_built_pages(tmp_path, html)
    write_page(html, "chapter", figure("2", words(page_check.CAPTION_WORDS)))
    book.check_built_pages(tmp_path, html)
