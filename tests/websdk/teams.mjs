// The official web SDK 27 Teams service under Node, against a live server.
// Usage: node teams.mjs <endpoint> <projectId> <ownerSession> <outsiderSession>
// The owner creates a team, renames it, sets prefs, reads and updates its membership, tries an
// invitation (queued as mail; the membership waits unconfirmed) and deletes the team; the outsider
// may not see it. Prints one JSON line of what the SDK returned; exits 1 on an unexpected error.
globalThis.window = globalThis;
globalThis.localStorage = { getItem: () => null, setItem: () => {}, removeItem: () => {} };

const { Client, Teams, ID, Query, AppwriteException } = await import('appwrite');
const [endpoint, project, ownerSession, memberSession] = process.argv.slice(2);
const owner = new Teams(new Client().setEndpoint(endpoint).setProject(project).setSession(ownerSession));
const member = new Teams(new Client().setEndpoint(endpoint).setProject(project).setSession(memberSession));
const out = {};
try {
  const team = await owner.create({ teamId: ID.unique(), name: 'Web crew', roles: ['lead'] });
  out.created = { id: team.$id, total: team.total, name: team.name };
  out.listed = (await owner.list({ queries: [Query.equal('name', ['Web crew'])] })).teams.map((t) => t.$id);
  out.renamed = (await owner.updateName({ teamId: team.$id, name: 'Web crew 2' })).name;
  out.prefs = await owner.updatePrefs({ teamId: team.$id, prefs: { color: 'blue' } });
  out.gotPrefs = await owner.getPrefs({ teamId: team.$id });
  const list = await owner.listMemberships({ teamId: team.$id });
  out.memberships = list.memberships.map((m) => ({ roles: m.roles, confirm: m.confirm }));
  const mine = list.memberships[0];
  out.got = (await owner.getMembership({ teamId: team.$id, membershipId: mine.$id })).$id === mine.$id;
  out.updated = (await owner.updateMembership({ teamId: team.$id, membershipId: mine.$id, roles: ['owner', 'x'] })).roles;
  try {
    const invited = await owner.createMembership({ teamId: team.$id, roles: [], email: `w${Date.now()}@example.com`,
      url: new URL(endpoint).origin + '/join' });
    out.invite = invited.confirm ? 'confirmed' : 'invited';
  } catch (e) {
    out.invite = e instanceof AppwriteException ? `${e.code} ${e.type}` : String(e);
  }
  try {
    await member.get({ teamId: team.$id });
    out.outsider = 'visible';
  } catch (e) {
    out.outsider = `${e.code} ${e.type}`;
  }
  out.deleted = await owner.delete({ teamId: team.$id });
  out.after = (await owner.list()).total;
  console.log(JSON.stringify(out));
} catch (e) {
  console.error('unexpected', e?.code, e?.type, e?.message, JSON.stringify(out));
  process.exit(1);
}
