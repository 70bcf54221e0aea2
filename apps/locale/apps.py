from django.apps import AppConfig


class LocaleConfig(AppConfig):
    name = "apps.locale"
    label = "locale"
