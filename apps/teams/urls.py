"""The Teams service routes, and ``GET /users/{userId}/memberships`` of the Users service."""

from apps.core.http.endpoint import Endpoint
from apps.teams.api import inputs as i
from apps.teams.api import memberships as m
from apps.teams.api import teams as t

T = "/teams/{teamId}"
M = T + "/memberships/{membershipId}"
R, W = "teams.read", "teams.write"

endpoints = [
    Endpoint("GET", "/teams", t.teams_list, "teams.list", scope=R, input=i.TeamsList, response="teamList"),
    Endpoint("POST", "/teams", t.team_create, "teams.create", scope=W, input=i.TeamCreate, status=201,
             response="team"),
    Endpoint("GET", T, t.team_get, "teams.get", scope=R, input=i.TeamRef, response="team"),
    Endpoint("PUT", T, t.team_update_name, "teams.updateName", scope=W, input=i.TeamUpdate, response="team"),
    Endpoint("DELETE", T, t.team_delete, "teams.delete", scope=W, input=i.TeamRef, status=204),
    Endpoint("GET", T + "/prefs", t.team_get_prefs, "teams.getPrefs", scope=R, input=i.TeamRef,
             response="preferences"),
    Endpoint("PUT", T + "/prefs", t.team_update_prefs, "teams.updatePrefs", scope=W, input=i.TeamPrefsUpdate,
             response="preferences"),
    Endpoint("GET", T + "/memberships", m.memberships_list, "teams.listMemberships", scope=R,
             input=i.MembershipsList, response="membershipList"),
    Endpoint("POST", T + "/memberships", m.membership_create, "teams.createMembership", scope=W,
             input=i.MembershipCreate, abuse="teams.membership.create", status=201, response="membership"),
    Endpoint("GET", M, m.membership_get, "teams.getMembership", scope=R, input=i.MembershipRef,
             response="membership"),
    Endpoint("PATCH", M, m.membership_update, "teams.updateMembership", scope=W, input=i.MembershipUpdate,
             response="membership"),
    Endpoint("DELETE", M, m.membership_delete, "teams.deleteMembership", scope=W, input=i.MembershipRef,
             status=204),
    Endpoint("PATCH", M + "/status", m.membership_update_status, "teams.updateMembershipStatus", scope="public",
             input=i.MembershipStatusUpdate, response="membership"),
    Endpoint("GET", "/users/{userId}/memberships", m.user_memberships_list, "users.listMemberships",
             scope="users.read", input=i.UserMembershipsList, response="membershipList"),
]
