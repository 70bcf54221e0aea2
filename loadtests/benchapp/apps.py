from django.apps import AppConfig


class BenchAppConfig(AppConfig):
    name = "loadtests.benchapp"
    label = "benchapp"
    verbose_name = "Load-test benchmark endpoints"
