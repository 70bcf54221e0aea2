"""Fixtures of the account tests live in the root ``conftest.py`` (mail flows: ``app_project``,
``mail_api``, ``ORIGIN``), shared with the teams and web-demo tests; the impersonation tests'
``pair`` is here."""

import pytest

from conftest import Api


@pytest.fixture
def pair(api: Api):
    """``(operator, operator's session, target, target's session)``; the operator is an
    impersonator (the impersonation tests)."""
    from apps.accounts.tests.test_impersonation import _flag, _user

    operator, op_session = _user(api)
    target, target_session = _user(api, phone=True)
    _flag(api, operator["$id"], True)
    return operator, op_session, target, target_session
