"""Password hashing through Django's hasher framework."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.hashers import Argon2PasswordHasher


class AppwriteArgon2Hasher(Argon2PasswordHasher):
    """argon2id with parameters from settings (default: Appwrite's t=4, m=2 MiB, p=3).

    Appwrite source: ``src/Appwrite/Auth/Hash/Argon2.php``. Cost per check on the reference
    machine is in the README ("Password hashing"); rerun ``python manage.py hashcost``.
    """

    algorithm = "argon2"

    @property
    def time_cost(self):
        return settings.ARGON2_TIME_COST

    @property
    def memory_cost(self):
        return settings.ARGON2_MEMORY_COST_KIB

    @property
    def parallelism(self):
        return settings.ARGON2_PARALLELISM
