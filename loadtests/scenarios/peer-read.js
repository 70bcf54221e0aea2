// peer-read: a guest reads one seeded row by id (PocketBase or ours, lib/peer.js).
import { read, peerId, randomRow, STATUS } from '../lib/peer.js';
import { ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(read(peerId(randomRow())), STATUS.read, 'peer.read');
}

export { handleSummary };
