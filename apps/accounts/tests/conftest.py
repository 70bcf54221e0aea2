"""Fixtures of the account tests live in the root ``conftest.py`` (mail flows: ``app_project``,
``mail_api``, ``ORIGIN``), shared with the teams and web-demo tests."""
