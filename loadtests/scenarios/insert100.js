// insert100: bulk-create 100 rows in one request (POST rows with a `rows` array).
// Bulk writes are a server-side (API key) operation in Appwrite, so this scenario uses the key.
import { rowsCreateBulk, uniqueId, ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const rows = [];
  for (let i = 0; i < 100; i++) {
    rows.push({ $id: uniqueId(), title: `bulk ${i}`, owner: 'bulk', n: i });
  }
  ok(rowsCreateBulk({ key: true }, rows), 201, 'rows.createBulk');
}

export { handleSummary };
