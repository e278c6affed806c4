"""The parsed-HTML helpers that keep page tests independent of the templates' layout."""

from __future__ import annotations

import pytest

from tests.support.html import attribute, element, elements, has, text

ONE_LINE = '<form id="f" method="post"><input type="radio" name="a" value="1" required>'
ONE_LINE += '<label for="n">Note <kbd>n</kbd></label><dd data-testid="q">Why?</dd></form>'
SPREAD = """
<form id="f"
      method="post">
  <input type="radio"
         name="a"
         value="1"
         required>
  <label for="n">
    Note
    <kbd>n</kbd>
  </label>
  <dd data-testid="q">
    Why?
  </dd>
</form>
"""


@pytest.mark.parametrize("page", [ONE_LINE, SPREAD])
def test_an_element_is_found_by_its_attributes_however_the_template_is_laid_out(
    page: str,
) -> None:
    """Attributes on one line or spread over lines, text on the tag's line or its own: the same
    elements, attributes and text."""
    form = element(page, "form", id="f", method="post")
    assert element(form, "input", type="radio", name="a", value="1", required=True)
    assert text(element(page, "label", for_="n")) == "Note n"
    assert text(element(page, "dd", data_testid="q")) == "Why?"
    assert attribute(form, "method") == "post"


def test_an_attribute_that_differs_or_is_missing_finds_nothing() -> None:
    """A wrong value, a missing boolean attribute or another tag name matches no element."""
    page = '<input name="a" value="1"><p hidden>x</p>'
    assert not elements(page, "input", value="2")
    assert not elements(page, "input", required=True)
    assert not elements(page, "p", name="a")
    assert has(element(page, "p"), "hidden") and not has(element(page, "input"), "hidden")


def test_element_and_attribute_fail_on_what_is_not_there() -> None:
    """None or several matching elements fail, so a check cannot pass on the wrong one; so
    does reading an attribute the element does not carry."""
    page = "<p>a</p><p>b</p>"
    with pytest.raises(AssertionError):
        element(page, "p")
    with pytest.raises(AssertionError):
        element(page, "span")
    with pytest.raises(AssertionError):
        attribute(element("<p>a</p>", "p"), "id")
