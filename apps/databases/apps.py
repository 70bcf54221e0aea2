from django.apps import AppConfig


class DatabasesConfig(AppConfig):
    name = "apps.databases"
    label = "databases"
    verbose_name = "Databases, tables, columns, indexes and rows"

    def ready(self) -> None:
        from apps.databases import formats

        formats.register()
