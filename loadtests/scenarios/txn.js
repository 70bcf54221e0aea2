// txn: a transaction per iteration with the VU's session: create it, stage 5 row creates through
// the row route (transactionId), commit (the 5 rows land in one SQL transaction).
import { txCreate, txStageRow, txCommit, ok, vuUser, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  const u = vuUser();
  const auth = { session: u.session };
  const tx = txCreate(auth, 60);
  if (!ok(tx, 201, 'transactions.create')) return;
  const id = tx.json('$id');
  for (let i = 0; i < 5; i++) {
    if (!ok(txStageRow(auth, id, { title: `txn ${i}`, owner: u.id, n: i }), 201, 'rows.create (staged)')) return;
  }
  ok(txCommit(auth, id), 200, 'transactions.commit');
}

export { handleSummary };
