// functions: one synchronous execution per iteration (POST /v1/functions/{id}/executions,
// async=false) of the seeded Python function (`return context.res.text("ok")`), with the API key.
// Runs as `fn-warm` (containers kept warm) and as `fn-cold` (the servers run with
// FUNCTIONS_WARM_SECONDS=0: every execution starts a new container); the runner picks the mode
// through the server's settings, the script is the same.
//
// fn_duration_ms: the execution's own `duration` (the server's clock: container start when cold,
// the call into the runtime, the function); fn_failed: executions that answered 201 but ended
// `failed` (a runtime that did not start, a crash).
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { call, ok, loadOptions, handleSummary, SEED } from '../lib/appwrite.js';

export const options = loadOptions();

const FUNCTION_ID = __ENV.FUNCTION_ID || SEED.functionId || 'benchfn';
const fnDuration = new Trend('fn_duration_ms', true);
const fnFailed = new Counter('fn_failed');

export default function () {
  const res = call('POST', `/functions/${FUNCTION_ID}/executions`, { body: 'ping', async: false },
    { key: true }, 'POST functions/{id}/executions');
  if (!ok(res, 201, 'executions.create')) return;
  const x = res.json();
  const done = check(x, {
    'execution completed': (e) => e.status === 'completed',
    'function answered ok': (e) => e.responseStatusCode === 200 && e.responseBody === 'ok',
  });
  if (!done) fnFailed.add(1);
  if (typeof x.duration === 'number') fnDuration.add(x.duration * 1000);
}

export { handleSummary };
