from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "apps.projects"
    label = "projects"
    verbose_name = "Projects and API keys"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from apps.projects.models import ApiKey

        post_save.connect(_key_changed, sender=ApiKey, dispatch_uid="projects.key_saved")
        post_delete.connect(_key_changed, sender=ApiKey, dispatch_uid="projects.key_deleted")


def _key_changed(sender, instance, **kwargs) -> None:
    """A key saved or deleted through the ORM (admin, services, a cascading project delete):
    every process drops its cached copy once the change commits (apps.core.drivers.cache)."""
    from django.db import transaction

    from apps.core.drivers import cache
    from apps.projects.selectors import key_tag

    tag = key_tag(instance.pk)
    transaction.on_commit(lambda: cache.invalidate_sync(tag), using=kwargs.get("using"))
