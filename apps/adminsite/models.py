"""Django's staff accounts under a name nobody confuses with the product's users."""

from django.contrib.auth.models import User


class Administrator(User):
    """A Django staff account (``auth.User``): who may sign in to this admin. The product's own
    users (``apps.accounts.models.User``, the API's ``/v1/users``) are a different table."""

    class Meta:
        proxy = True
        verbose_name = "administrator (staff)"
        verbose_name_plural = "administrators (staff)"
