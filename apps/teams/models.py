"""Teams and their memberships (Appwrite's Teams service).

A confirmed membership gives its user the roles ``team:<teamId>``, ``team:<teamId>/<role>`` for
each of its ``roles`` and ``member:<membershipId>`` (``apps.core.http.auth.user_roles``). An
unconfirmed one is an invitation: ``secret_hash`` is the SHA-256 of the secret mailed to the
invitee, and it gives no role until accepted.
"""

from __future__ import annotations

from django.db import models

from apps.accounts.models import User
from apps.projects.models import Project


class Team(models.Model):
    """A team of a project; ``uid`` is the public team ID, ``prefs`` a JSON object. A team's
    member count (Appwrite's ``total``) is counted from its confirmed memberships on read."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="teams")
    uid = models.CharField("team ID", max_length=36)
    name = models.CharField(max_length=128)
    prefs = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "teams_team"
        constraints = [models.UniqueConstraint(fields=["project", "uid"], name="team_unique_uid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.uid})"


class Membership(models.Model):
    """A user's membership of a team, or an invitation to it (``confirm`` false).

    ``roles`` is a list of role names (``owner`` manages the team); ``invited`` is when the last
    invitation was made, ``joined`` when it was accepted (``None`` until then).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    uid = models.CharField("membership ID", max_length=36)
    roles = models.JSONField(default=list, blank=True)
    confirm = models.BooleanField(default=False)
    secret_hash = models.CharField(max_length=64, blank=True, default="")
    invited = models.DateTimeField()
    joined = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        db_table = "teams_membership"
        constraints = [
            models.UniqueConstraint(fields=["project", "uid"], name="membership_unique_uid"),
            models.UniqueConstraint(fields=["team", "user"], name="membership_unique_member"),
        ]
        indexes = [models.Index(fields=["user", "confirm"], name="membership_user_idx")]

    def __str__(self) -> str:
        return self.uid
