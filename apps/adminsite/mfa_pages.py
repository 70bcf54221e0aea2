"""A user's MFA on an operator page (``users/<pk>/mfa/``), for a user who lost their device: the
user's factors and authenticators as the Users service answers them, and buttons that call it:

* *Remove* an authenticator -> ``DELETE /v1/users/{userId}/mfa/authenticators/{type}`` (``totp``);
* *Turn MFA off* (or on) -> ``PATCH /v1/users/{userId}/mfa``;
* *Regenerate recovery codes* -> ``PUT /v1/users/{userId}/mfa/recovery-codes`` (``PATCH`` when the
  user has none yet); the new codes are shown once, on the page that answers.
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from apps.adminsite.api_call import call
from apps.adminsite.pages import guarded, operator
from apps.core.errors import AppwriteError

# Authenticator types a user can remove (Appwrite's: TOTP only).
AUTHENTICATORS = {"totp": "Authenticator app (TOTP)"}
FACTORS = {"totp": "Authenticator app (TOTP)", "email": "Email code", "phone": "SMS code",
           "recoveryCode": "Recovery codes", "custom": "Custom factor"}


def user_mfa(request, site, pk: int):
    from apps.accounts.models import User

    user = get_object_or_404(User.objects.select_related("project"), pk=pk)
    who, base = operator(request), f"/users/{user.uid}/mfa"
    project = user.project.uid
    codes: list[str] = []
    error = ""
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "mfa-off" or action == "mfa-on":
                call(project, who, "PATCH", base, {"mfa": action == "mfa-on"})
                messages.success(request, f"MFA is {'on' if action == 'mfa-on' else 'off'} for {user.email or user.uid}.")
                return redirect("admin:operator_user_mfa", user.pk)
            if action.startswith("remove-") and action[7:] in AUTHENTICATORS:
                call(project, who, "DELETE", f"{base}/authenticators/{action[7:]}")
                messages.success(request, f"The {AUTHENTICATORS[action[7:]]} of {user.email or user.uid} was removed.")
                return redirect("admin:operator_user_mfa", user.pk)
            if action == "recovery-codes":
                factors = call(project, who, "GET", f"{base}/factors")
                codes = call(project, who, "PUT" if factors.get("recoveryCode") else "PATCH",
                             f"{base}/recovery-codes")["recoveryCodes"]
            else:
                error = "Unknown action."
        except AppwriteError as err:
            error = f"{err.message} ({err.type})"
    try:
        answer = call(project, who, "GET", f"/users/{user.uid}")
        factors = call(project, who, "GET", f"{base}/factors")
    except AppwriteError as err:  # the user was deleted meanwhile
        error, answer, factors = f"{err.message} ({err.type})", {"mfa": False}, {}
    return TemplateResponse(request, "adminsite/user_mfa.html", {
        **site.each_context(request), "title": f"MFA of {user.email or user.phone or user.uid}", "product_user": user,
        "back": reverse("admin:accounts_user_change", args=[user.pk]), "mfa": answer.get("mfa", False),
        "factors": [(FACTORS.get(name, name), bool(on)) for name, on in factors.items()],
        "authenticators": [(kind, label, bool(factors.get(kind))) for kind, label in AUTHENTICATORS.items()],
        "codes": codes, "error": error})


def urls(site) -> list:
    return [path("operator/users/<int:pk>/mfa/", guarded(site, user_mfa, "accounts.change_user"),
                 name="operator_user_mfa")]
