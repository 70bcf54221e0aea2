// crud: a guest creates a row, reads it, updates it and deletes it; no think time (4 requests
// per iteration).
import { create, createdId, read, update, remove, STATUS } from '../lib/peer.js';
import { ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const made = create(`crud VU ${__VU}`);
  if (!ok(made, STATUS.create, 'crud.create')) return;
  const id = createdId(made);
  ok(read(id), STATUS.read, 'crud.read');
  ok(update(id, `crud VU ${__VU} updated`), STATUS.update, 'crud.update');
  ok(remove(id), STATUS.remove, 'crud.delete');
}

export { handleSummary };
