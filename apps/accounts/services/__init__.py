"""Writes of the accounts app: users and sessions, tokens, MFA rules, linked identities, mails, redirect links."""
