"""The Content-Security-Policy (django-csp): sent on every page with DEBUG off, with no
'unsafe-inline' or 'unsafe-eval', media allowed from the S3 origin when media live there;
and no template or script brings back inline code the policy would block."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "templates"
SCRIPTS = ROOT / "static" / "js"

# An HTML start tag; template tags inside it ({% if %}…{% endif %}) are kept whole.
_TAG = re.compile(r"<([a-zA-Z][\w-]*)((?:\{%.*?%\}|\{\{.*?\}\}|[^>])*)>", re.DOTALL)
_EVENT_HANDLER = re.compile(r"(?:^|[\s}])on[a-z]+\s*=", re.IGNORECASE)
_STYLE_ATTRIBUTE = re.compile(r"(?:^|[\s}])style\s*=", re.IGNORECASE)


def _directives(header: str) -> dict[str, list[str]]:
    parts = (part.split() for part in header.split(";") if part.strip())
    return {words[0]: words[1:] for words in parts}


def _policy_in_production(**env: str) -> dict[str, list[str]]:
    """The policy's directives built by the production settings with only `env` set."""
    code = (
        "import django; django.setup();"
        "from django.test import RequestFactory; from django.http import HttpResponse;"
        "from csp.middleware import CSPMiddleware;"
        "r = CSPMiddleware(lambda q: HttpResponse())(RequestFactory().get('/'));"
        "print(r['Content-Security-Policy'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={
            "PATH": os.environ.get("PATH", ""),
            "SECRET_KEY": "p" * 60,
            "DJANGO_SETTINGS_MODULE": "mmooc_site.settings.production",
            "DATABASE_URL": os.environ["DATABASE_URL"],
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return _directives(result.stdout.strip())


@pytest.mark.django_db
def test_every_page_sends_a_policy_without_unsafe_sources(settings: Any, lead: Any) -> None:
    """With DEBUG off, pages (signed in or not) carry the strict policy."""
    assert not settings.DEBUG
    client = Client()
    responses = [client.get(reverse("login"))]
    client.force_login(lead)
    responses.append(client.get(reverse("annotation:dataset_list")))
    for response in responses:
        assert response.status_code == 200
        header = response["Content-Security-Policy"]
        assert "unsafe-inline" not in header and "unsafe-eval" not in header
        policy = _directives(header)
        assert policy["default-src"] == ["'self'"]
        assert policy["script-src"] == ["'self'"]
        assert policy["style-src"] == ["'self'"]
        assert policy["img-src"] == ["'self'", "data:", "blob:"]
        assert policy["media-src"] == ["'self'", "blob:"]
        assert policy["connect-src"] == ["'self'"]
        assert policy["object-src"] == ["'none'"]
        assert policy["frame-ancestors"] == ["'none'"]
        assert policy["form-action"] == ["'self'"]
        assert policy["base-uri"] == ["'self'"]


def test_media_on_s3_are_allowed_from_the_storage_origin() -> None:
    """Media served by a redirect to a presigned S3 URL may load from the endpoint's origin,
    or from AWS's regional S3; CSP_MEDIA_ORIGINS names the origins outright."""
    endpoint = _policy_in_production(
        S3_BUCKET="media", S3_ENDPOINT_URL="https://objects.example.org:8333/base"
    )
    assert endpoint["img-src"][-1] == "https://objects.example.org:8333"
    assert endpoint["media-src"][-1] == "https://objects.example.org:8333"
    assert endpoint["script-src"] == ["'self'"]
    aws = _policy_in_production(S3_BUCKET="media", S3_REGION="eu-west-3")
    assert "https://s3.eu-west-3.amazonaws.com" in aws["img-src"]
    named = _policy_in_production(
        S3_BUCKET="media", CSP_MEDIA_ORIGINS="https://cdn.example.org,https://b.example.org"
    )
    assert named["media-src"] == [
        "'self'",
        "blob:",
        "https://cdn.example.org",
        "https://b.example.org",
    ]


def _inline_code(source: str) -> list[str]:
    """What in one template the policy would block: inline scripts and styles, handlers."""
    found = []
    for match in _TAG.finditer(source):
        name, attributes = match.group(1).lower(), match.group(2)
        if name == "script" and "src=" not in attributes and "application/json" not in attributes:
            found.append(match.group(0))
        if name == "style":
            found.append(match.group(0))
        if _EVENT_HANDLER.search(attributes) or _STYLE_ATTRIBUTE.search(attributes):
            found.append(match.group(0))
    return found


def test_the_lint_finds_each_kind_of_inline_code() -> None:
    """The template check below can fail: each blocked form is caught, allowed ones are not."""
    blocked = [
        "<script>alert(1)</script>",
        "<style>p { color: red }</style>",
        '<select onchange="this.form.submit()">',
        '<div class="x"\n     style="width: 1px">',
        '<div {% if a %}style="width: {{ w }}px"{% endif %}>',
        "<button type=button onClick='go()'>",
    ]
    for snippet in blocked:
        assert _inline_code(snippet), snippet
    allowed = [
        '<script src="/static/js/site.js" defer></script>',
        '<script id="config" type="application/json">{"a": 1}</script>',
        '<div data-onchange="x" data-style="y" class="done">',
        '<link rel="stylesheet" href="/static/css/site.css">',
    ]
    for snippet in allowed:
        assert not _inline_code(snippet), snippet


def test_no_template_has_inline_scripts_styles_or_handlers() -> None:
    """Scripts and styles come from static files; only JSON data blocks are inline."""
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in sorted(TEMPLATES.rglob("*.html"))
        if (found := _inline_code(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_no_script_writes_inline_handlers_or_style_attributes() -> None:
    """Scripts build elements, not HTML strings with handlers or style attributes (a style
    property set through the CSSOM, element.style.x, is allowed by the policy)."""
    html_sink = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write")
    attribute = re.compile(r"""setAttribute\(\s*["'](?:style|on[a-z]+)["']""", re.IGNORECASE)
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(SCRIPTS.glob("*.js"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if html_sink.search(line) or attribute.search(line) or "eval(" in line
    ]
    assert offenders == []
