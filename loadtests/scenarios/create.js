// create: POST one row with the VU's session: a rate-limited route (rows.create),
// used for the abuse-overhead comparison (abuse checks on vs ABUSE_ENABLED=false).
import { rowCreate, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  ok(rowCreate({ session: u.session }, { title: 'abuse overhead', owner: u.id, n: 1 }), 201, 'rows.create');
}

export { handleSummary };
