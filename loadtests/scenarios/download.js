// download: the seeded 20 MB file streamed to many clients at once, with the VU's
// session. Bodies are read and discarded; data_received / duration gives the byte rate.
import { SEED, fileDownload, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions({ discardResponseBodies: true });

export default function () {
  const res = fileDownload({ session: vuUser().session }, SEED.bigFileId, 'GET big file download');
  ok(res, 200, 'files.download');
}

export { handleSummary };
