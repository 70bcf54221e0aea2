from django import forms
from django.contrib import admin

from apps.accounts.models import Identity, OAuthProvider
from apps.accounts.oauth2.config import TEXT_FIELDS, URL_FIELDS, ConfigError, validate


class OAuthProviderForm(forms.ModelForm):
    """The client secret is write-only: it is never shown again, an empty field keeps the stored
    one, and "clear secret" removes it. It is stored encrypted."""

    new_client_secret = forms.CharField(
        label="Client secret", required=False, strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off"}),
        help_text="Write-only; empty keeps the stored secret. Apple: the contents of the .p8 key file.",
    )
    clear_client_secret = forms.BooleanField(label="Clear the stored secret", required=False)

    class Meta:
        model = OAuthProvider
        fields = ("project", "provider", "enabled", "client_id", *URL_FIELDS, *TEXT_FIELDS[1:])

    def clean(self):
        data = super().clean()
        new, clear = data.get("new_client_secret"), data.get("clear_client_secret")
        has_secret = bool(new) or (bool(self.instance.client_secret) and not clear)
        values = {name: data.get(name, "") for name in ("enabled", *TEXT_FIELDS, *URL_FIELDS)}
        if data.get("provider"):
            try:
                validate(data["provider"], values, has_secret)
            except ConfigError as exc:
                raise forms.ValidationError(str(exc)) from None
        return data

    def save(self, commit=True):
        row = super().save(commit=False)
        if self.cleaned_data.get("clear_client_secret"):
            row.set_client_secret("")
        if self.cleaned_data.get("new_client_secret"):
            row.set_client_secret(self.cleaned_data["new_client_secret"])
        if commit:
            row.save()
        return row


@admin.register(OAuthProvider)
class OAuthProviderAdmin(admin.ModelAdmin):
    form = OAuthProviderForm
    list_display = ("provider", "project", "enabled", "client_id", "has_secret", "updated_at")
    list_filter = ("provider", "enabled")
    search_fields = ("project__uid", "client_id")

    @admin.display(boolean=True, description="secret set")
    def has_secret(self, obj: OAuthProvider) -> bool:
        return bool(obj.client_secret)


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    """Linked provider accounts; read-only (they are made by sign-ins) but deletable."""

    list_display = ("uid", "provider", "provider_uid", "provider_email", "user", "project", "created_at")
    list_filter = ("provider",)
    search_fields = ("uid", "provider_uid", "provider_email", "user__uid", "user__email")
    fields = ("uid", "project", "user", "provider", "provider_uid", "provider_email",
              "provider_access_token_expiry", "created_at", "updated_at")
    readonly_fields = fields

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
