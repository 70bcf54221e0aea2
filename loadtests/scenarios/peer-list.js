// peer-list: a guest lists the 10 rows with lo <= n < lo + 10 (indexed number column, no total).
import { check } from 'k6';
import { list, listedCount, ROWS, STATUS } from '../lib/peer.js';
import { ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const res = list(Math.floor(Math.random() * (ROWS - 10)));
  if (ok(res, STATUS.list, 'peer.list')) check(res, { 'peer.list 10 rows': (r) => listedCount(r) === 10 });
}

export { handleSummary };
