"""Pages that change one judge (lead only): edit, enable or disable, delete, test."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from core.roles import acting_user, is_lead
from judging import services
from judging.forms import JudgeEditForm
from judging.models import Judge
from judging.services import checks as check_services


def _judge(request: HttpRequest, judge_id: int) -> Judge:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may change judges."))
    judge = Judge.objects.filter(pk=judge_id).first()
    if judge is None:
        raise Http404(_("No such judge."))
    return judge


def _to_list(judge: Judge | None = None) -> HttpResponse:
    anchor = f"#judge-{judge.pk}" if judge is not None else ""
    return redirect(reverse("judging:judge_list") + anchor)


@require_http_methods(["GET", "POST"])
def judge_edit(request: HttpRequest, judge_id: int) -> HttpResponse:
    judge = _judge(request, judge_id)
    form = JudgeEditForm(request.POST or None, instance=judge)
    if request.method == "POST" and form.is_valid():
        try:
            services.judge_update(judge=Judge.objects.get(pk=judge.pk), changes=form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Judge %(name)s saved.") % {"name": judge.name})
            return _to_list(judge)
    status = 400 if request.method == "POST" else 200
    return render(request, "judging/judge_edit.html", {"judge": judge, "form": form}, status=status)


@require_POST
def judge_enable(request: HttpRequest, judge_id: int) -> HttpResponse:
    """Disable an enabled judge, or enable a disabled one."""
    judge = _judge(request, judge_id)
    services.judge_set_enabled(judge=judge, enabled=not judge.enabled)
    if judge.enabled:
        messages.success(request, _("Judge %(name)s is enabled.") % {"name": judge.name})
    else:
        messages.success(
            request,
            _("Judge %(name)s is disabled: it keeps its verdicts and starts no new job.")
            % {"name": judge.name},
        )
    return _to_list(judge)


@require_POST
def judge_delete(request: HttpRequest, judge_id: int) -> HttpResponse:
    judge = _judge(request, judge_id)
    try:
        services.judge_delete(judge=judge)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _to_list(judge)
    messages.success(request, _("Judge %(name)s deleted.") % {"name": judge.name})
    return _to_list()


@require_POST
def judge_test(request: HttpRequest, judge_id: int) -> HttpResponse:
    """Queue one small call to the judge; the judges page shows its outcome when it ends."""
    judge = _judge(request, judge_id)
    try:
        check_services.judge_check_create(judge=judge, by=acting_user(request.user))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return _to_list(judge)
