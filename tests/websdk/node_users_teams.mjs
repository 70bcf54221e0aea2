// Users and Teams through node-appwrite 26 with an API key: a user created, listed with queries,
// read, renamed, labelled, given preferences, blocked and deleted; a team created, listed,
// renamed, given preferences and a member (added at once: a key adds members directly), deleted.
// Usage: node node_users_teams.mjs <endpoint> <projectId> <apiKey>
import { Users, Teams, ID, Query } from 'node-appwrite';
import { serverClient, errorOf, guard, report } from './node_sdk.mjs';

const client = serverClient();
const users = new Users(client);
const teams = new Teams(client);
const out = {};
guard(out);

const email = `node-${Date.now()}@example.com`;
const user = await users.create({ userId: ID.unique(), email, password: 'password123', name: 'Node User' });
out.user = { email: user.email, name: user.name, status: user.status, labels: user.labels,
  emailVerification: user.emailVerification, hasPassword: Boolean(user.password) };
const userId = user.$id;
const found = await users.list({ queries: [Query.equal('email', [email])] });
out.listed = { total: found.total, ids: found.users.map((u) => u.$id === userId) };
out.searched = (await users.list({ search: 'Node User' })).users.some((u) => u.$id === userId);
out.got = (await users.get({ userId })).email;
out.renamed = (await users.updateName({ userId, name: 'Renamed' })).name;
out.labels = (await users.updateLabels({ userId, labels: ['vip', 'beta'] })).labels;
out.prefs = await users.updatePrefs({ userId, prefs: { theme: 'dark' } });
out.prefsRead = await users.getPrefs({ userId });
out.blocked = (await users.updateStatus({ userId, status: false })).status;
out.duplicate = await errorOf(users.create({ userId: ID.unique(), email, password: 'password123' }));

const team = await teams.create({ teamId: ID.unique(), name: 'Crew', roles: ['owner'] });
out.team = { name: team.name, total: team.total };
const teamId = team.$id;
out.teamsListed = (await teams.list({ queries: [Query.equal('name', ['Crew'])] })).teams.map((t) => t.$id === teamId);
out.teamRenamed = (await teams.updateName({ teamId, name: 'Crew 2' })).name;
out.teamPrefs = await teams.updatePrefs({ teamId, prefs: { plan: 'pro' } });
out.teamPrefsRead = await teams.getPrefs({ teamId });
const member = await teams.createMembership({ teamId, roles: ['editor'], userId });
out.membership = { userId: member.userId === userId, roles: member.roles, confirm: member.confirm,
  teamName: member.teamName };
out.memberships = (await teams.listMemberships({ teamId })).memberships.map((m) => m.roles);
out.memberTeams = (await users.listMemberships({ userId })).memberships.map((m) => m.teamId === teamId);
out.roleChanged = (await teams.updateMembership({ teamId, membershipId: member.$id, roles: ['admin'] })).roles;
out.teamGot = (await teams.get({ teamId })).total;
await teams.deleteMembership({ teamId, membershipId: member.$id });
out.membersAfterDelete = (await teams.listMemberships({ teamId })).total;
await teams.delete({ teamId });
out.deletedTeam = await errorOf(teams.get({ teamId }));

await users.delete({ userId });
out.deletedUser = await errorOf(users.get({ userId }));
report(out);
