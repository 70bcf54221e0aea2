"""Passwords: hashers, imported hashes, the project policy, and user-export importers."""
