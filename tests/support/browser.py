"""Headless Chromium for browser tests: a browser, and a context signed in as a user without
going through the login form."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.test import Client

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium, driven by Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def chromium_page(**context_options: Any) -> Iterator[Any]:
    """A page of a fresh context (1400 x 1000 unless ``viewport`` says otherwise)."""
    with chromium() as browser:
        context = browser.new_context(
            **{"viewport": {"width": 1400, "height": 1000}, **context_options}
        )
        try:
            yield context.new_page()
        finally:
            context.close()


def log_in(page: Any, base: str, user: Any) -> None:
    """Log ``user`` in through the login form of the live server at ``base``."""
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("form [type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def choose_in_menu(page: Any, menu: str, value: str) -> None:
    """Choose ``value`` in a menu that submits itself (language, theme) and wait for the page it
    loads. The menu submits through the deferred site script, so a choice made before the page
    has run it (a login's redirect still loading) would change nothing: wait for that first."""
    page.wait_for_load_state("domcontentloaded")
    with page.expect_navigation():
        page.select_option(menu, value)
    page.wait_for_load_state()


def sign_in(context: Any, base: str, user: Any) -> None:
    """Give a browser context the session of `user` on the live server at `base`."""
    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
