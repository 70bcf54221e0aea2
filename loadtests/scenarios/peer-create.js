// peer-create: a guest creates one row (a text and a number).
import { create, STATUS } from '../lib/peer.js';
import { ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(create(`created by VU ${__VU}`), STATUS.create, 'peer.create');
}

export { handleSummary };
