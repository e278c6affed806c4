"""Judge configurations: checked on every write; keys stay in the environment.

A judge's key comes only from a variable named with JUDGE_KEY_ENV_PREFIX, and its base URL
must be http(s) on a public address unless JUDGE_ALLOWED_HOSTS lists its host:port: checked
when a judge is saved and again when it is called (core.egress).
"""

from __future__ import annotations

import os
import re
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core import egress
from core.jobs import ACTIVE
from judging.models import Judge, JudgeJobChunk, JudgeJobJudge, JudgeKind, Verdict
from judging.prompts import PROMPTS

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_NAME_MESSAGE = gettext_lazy(
    "Give the name of an environment variable (letters, digits, _), never the key."
)
EDITABLE_FIELDS = (
    "kind",
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "timeout_s",
    "max_concurrency",
    "requests_per_minute",
    "max_tokens",
    "text_only",
    "family",
    "prompt_version",
    "max_attempts",
    "backoff_base_s",
    "backoff_max_s",
    "retry_after_max_s",
    "enabled",
)


def judge_key_prefix() -> str:
    """The prefix every key variable's name must start with (JUDGE_KEY_ENV_PREFIX)."""
    prefix = str(settings.JUDGE_KEY_ENV_PREFIX)
    if not prefix:
        raise ImproperlyConfigured("JUDGE_KEY_ENV_PREFIX cannot be empty.")
    return prefix


def judge_allowed_hosts() -> frozenset[str]:
    """The host:port entries judges may call although they are not public addresses."""
    try:
        return egress.parse_allowed_hosts(settings.JUDGE_ALLOWED_HOSTS)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


def _key_env_message(name: str, prefix: str) -> str:
    return _(
        "The key variable must be named with the prefix %(prefix)s (rename %(name)s to "
        "%(suggested)s in the workers' environment and here), so that the workers' own "
        "secrets can never be sent to a judge."
    ) % {"prefix": prefix, "name": name, "suggested": egress.suggested_key_env(name, prefix)}


def _reason_label(reason: str) -> str:
    labels = {
        "loopback": _("a loopback"),
        "private": _("a private"),
        "link-local": _("a link-local"),
        "cloud metadata": _("a cloud metadata"),
        "non-public": _("a non-public"),
    }
    return labels.get(reason, reason)


def _base_url_messages(url: str, *, resolve: bool) -> list[str]:
    """Why this base URL may not be called (empty when it may)."""
    try:
        refusal = egress.check_url(url, judge_allowed_hosts(), resolve=resolve)
    except egress.EndpointRefused:
        return [_("The base URL must start with http:// or https:// and name a host.")]
    if refusal is None:
        return []
    return [
        _(
            "%(host)s is %(reason)s address (%(address)s); judges call only public addresses "
            "unless the setting JUDGE_ALLOWED_HOSTS lists %(host)s."
        )
        % {
            "host": refusal.host_port,
            "reason": _reason_label(refusal.reason),
            "address": refusal.address,
        }
    ]


def judge_problems(judge: Judge) -> list[str]:
    """What stops a saved judge from being called under the current rules (no DNS look-up),
    for the judges page: e.g. a key variable from before the prefix rule."""
    problems = []
    prefix = judge_key_prefix()
    if not egress.key_env_allowed(judge.api_key_env, prefix):
        problems.append(_key_env_message(judge.api_key_env, prefix))
    if judge.kind == JudgeKind.OPENAI and judge.base_url:
        problems += _base_url_messages(judge.base_url, resolve=False)
    return problems


def _check(judge: Judge) -> None:
    errors: dict[str, list[str]] = {}

    def add(field: str, text: str) -> None:
        errors.setdefault(field, []).append(text)

    if not judge.name.strip():
        add("name", _("A judge needs a name."))
    elif "," in judge.name:
        add("name", _("A judge's name cannot contain a comma."))
    if judge.kind not in JudgeKind.values:
        add("kind", _("Unknown judge kind “%(kind)s”.") % {"kind": judge.kind})
    if judge.kind == JudgeKind.OPENAI:
        if not judge.base_url:
            add("base_url", _("An endpoint judge needs a base URL."))
        if not judge.model:
            add("model", _("An endpoint judge needs a model name."))
    if judge.api_key_env and not ENV_NAME.match(judge.api_key_env):
        add("api_key_env", str(ENV_NAME_MESSAGE))
    elif not egress.key_env_allowed(judge.api_key_env, judge_key_prefix()):
        add("api_key_env", _key_env_message(judge.api_key_env, judge_key_prefix()))
    if judge.base_url:
        for message in _base_url_messages(judge.base_url, resolve=True):
            add("base_url", message)
    if not 0 <= judge.temperature <= 2:
        add("temperature", _("The temperature must lie between 0 and 2."))
    if judge.timeout_s <= 0:
        add("timeout_s", _("The timeout must be positive."))
    if judge.max_concurrency < 1:
        add("max_concurrency", _("At least one concurrent call is needed."))
    if judge.requests_per_minute is not None and judge.requests_per_minute < 1:
        add("requests_per_minute", _("The rate limit must be at least one request per minute."))
    if judge.max_attempts < 1:
        add("max_attempts", _("At least one attempt is needed."))
    if min(judge.backoff_base_s, judge.backoff_max_s, judge.retry_after_max_s) < 0:
        add("backoff_base_s", _("Backoff times cannot be negative."))
    versions = {version for _task, version in PROMPTS}
    if judge.kind == JudgeKind.OPENAI and judge.prompt_version not in versions:
        add(
            "prompt_version",
            _("Unknown prompt version “%(version)s” (known: %(known)s).")
            % {"version": judge.prompt_version, "known": ", ".join(sorted(versions))},
        )
    if errors:
        raise ValidationError(errors)


def judge_validate(*, judge: Judge) -> None:
    """Check a judge's settings as every save does (for forms that build the row themselves,
    such as the admin's); ValidationError with a message per field."""
    _check(judge)


@transaction.atomic
def judge_create(*, name: str, **fields: Any) -> Judge:
    """Configure a judge; raises ValidationError with readable messages for bad settings."""
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"Not judge fields: {sorted(unknown)}")
    if Judge.objects.filter(name=name.strip()).exists():
        raise ValidationError(
            {"name": [_("A judge named “%(name)s” already exists.") % {"name": name}]}
        )
    judge = Judge(name=name.strip(), **fields)
    _check(judge)
    judge.save()
    return judge


@transaction.atomic
def judge_update(*, judge: Judge, changes: dict[str, Any]) -> Judge:
    """Change a judge's settings (never its name, which verdict imports refer to)."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"Not judge fields: {sorted(unknown)}")
    for key, value in changes.items():
        setattr(judge, key, value)
    _check(judge)
    judge.save()
    return judge


def judge_api_key(judge: Judge) -> str:
    """The judge's key from the environment; ValueError names the missing variable, or the
    variable the prefix rule refuses (a judge saved before the rule), which is never read."""
    if not judge.api_key_env:
        return "not-needed"
    prefix = judge_key_prefix()
    if not egress.key_env_allowed(judge.api_key_env, prefix):
        raise ValueError(_key_env_message(judge.api_key_env, prefix))
    value = os.environ.get(judge.api_key_env)
    if not value:
        raise ValueError(f"environment variable {judge.api_key_env} is not set in the worker")
    return value


def judge_base_url(judge: Judge) -> str:
    """The judge's base URL if it is http(s); ValueError (egress.EndpointRefused) otherwise.
    The address itself is checked on each connection (core.egress)."""
    egress.url_target(judge.base_url)
    return judge.base_url


def judge_get_or_create_external(*, name: str) -> tuple[Judge, bool]:
    """A judge for verdicts made elsewhere: created as "external" when the name is new."""
    judge = Judge.objects.filter(name=name).first()
    if judge is not None:
        return judge, False
    return judge_create(name=name, kind=JudgeKind.EXTERNAL), True


def judge_set_enabled(*, judge: Judge, enabled: bool) -> Judge:
    """Enable or disable a judge: a disabled one keeps its verdicts but starts no new job."""
    Judge.objects.filter(pk=judge.pk).update(enabled=enabled)
    judge.enabled = enabled
    return judge


@transaction.atomic
def judge_delete(*, judge: Judge) -> None:
    """Delete a judge that has no verdicts; one with verdicts can only be disabled.

    It leaves the ended jobs it was part of (the errors of its calls go with it); while a job
    that uses it is queued or running, it cannot be deleted.
    """
    locked = Judge.objects.select_for_update().get(pk=judge.pk)
    if locked.built_in:
        raise ValidationError(
            _("The built-in rule judge cannot be deleted; disable it instead."), code="built_in"
        )
    if Verdict.objects.filter(judge=locked, error_kind="").exists():
        raise ValidationError(
            _("Judge %(name)s has verdicts: disable it instead, so that they keep their judge.")
            % {"name": locked.name},
            code="has_verdicts",
        )
    active = (
        JudgeJobJudge.objects.filter(judge=locked, job__status__in=ACTIVE)
        .values_list("job_id", flat=True)
        .first()
    )
    if active is not None:
        raise ValidationError(
            _("Judge %(name)s is part of job #%(job)s, which has not ended.")
            % {"name": locked.name, "job": active},
            code="in_active_job",
        )
    Verdict.objects.filter(judge=locked).delete()
    JudgeJobChunk.objects.filter(judge=locked).delete()
    JudgeJobJudge.objects.filter(judge=locked).delete()
    locked.delete()
