// related: GET one author row with its 10 related book rows through select (["*", "books.*"]),
// as the VU's user (the related rows are permission-checked). Authors a0..a9 come from the seed.
import { relatedGet, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  const res = relatedGet({ session: u.session }, `a${__VU % 10}`);
  ok(res, 200, 'rows.get (related)');
}

export { handleSummary };
