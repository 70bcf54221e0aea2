// account: GET /v1/account with the VU's session. The interim authenticated read used in place
// of `read` while the TablesDB routes are missing (session lookup + user load, no row).
import { accountGet, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(accountGet(vuUser().session), 200, 'account.get');
}

export { handleSummary };
