"""Reads of the accounts app: users and sessions (accounts), the Users service list (users)."""
