// login: email/password sessions alone. Dominated by argon2id verification
// (Appwrite's parameters, ~4 ms of CPU each), so it is reported separately.
// Each VU logs in as its own seeded user, as a client would (no API key, abuse checks apply).
import { login, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  ok(login(u.email, u.password), 201, 'account.createEmailPasswordSession');
}

export { handleSummary };
