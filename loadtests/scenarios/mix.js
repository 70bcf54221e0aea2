// mix: an Appwrite-style workload through the real API with sessions and abuse checks on.
// Per iteration: get account, create a row, list rows with queries, get it, update it, and (when
// storage is there) upload a 1 KiB file and download it. Sessions come from the seed (each VU
// logged in once, before the run), so hashing is not part of this number.
import {
  SEED, Query, accountGet, rowCreate, rowsList, rowGet, rowUpdate, fileUpload, fileDownload,
  uniqueId, ok, vuUser, loadOptions, handleSummary,
} from '../lib/appwrite.js';

export const options = loadOptions();

const SMALL_FILE = 'x'.repeat(1024);

export default function () {
  const u = vuUser();
  const auth = { session: u.session };
  ok(accountGet(u.session), 200, 'account.get');
  const rowId = uniqueId();
  if (!ok(rowCreate(auth, { title: `mix ${rowId}`, owner: u.id, n: 1 }, rowId), 201, 'rows.create')) return;
  ok(rowsList(auth, [Query.equal('owner', u.id), Query.limit(10)]), 200, 'rows.list');
  ok(rowGet(auth, rowId), 200, 'rows.get');
  ok(rowUpdate(auth, rowId, { n: 2 }), 200, 'rows.update');
  if (SEED.features && SEED.features.files) {
    const f = fileUpload(auth, 'small.txt', SMALL_FILE);
    if (ok(f, 201, 'files.create')) ok(fileDownload(auth, f.json('$id')), 200, 'files.download');
  }
}

export { handleSummary };
