// read: an authenticated row get by id. Each VU reads the row its seeded user owns
// (created with the user's session, so row-level permissions are checked on every read).
import { SEED, rowGet, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  ok(rowGet({ session: u.session }, u.rowId || SEED.rowIds[0]), 200, 'rows.get');
}

export { handleSummary };
