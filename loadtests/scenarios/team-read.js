// team-read: an authenticated row get by id where the row is readable only through the team
// role team:<id> (seeded: every user is a member). Measures the session lookup carrying team
// roles (one query, cached per process) and the permission check against them.
import { SEED, rowGet, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  ok(rowGet({ session: u.session }, SEED.teamRowId), 200, 'rows.get (team)');
}

export { handleSummary };
