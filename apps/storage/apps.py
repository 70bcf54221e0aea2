from django.apps import AppConfig


class StorageConfig(AppConfig):
    name = "apps.storage"
    label = "storage"
    verbose_name = "Storage"

    def ready(self) -> None:
        from apps.storage import formats

        formats.register()
