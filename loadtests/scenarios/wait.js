// wait: GET /v1/bench/wait, 100 ms of I/O wait per request (loadtests/benchapp, BENCH_APP=1).
// Measures how many concurrent waits a deployment overlaps: the case ASGI exists for.
import { call, ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(call('GET', '/bench/wait', null, {}, 'GET /bench/wait'), 200, 'bench.wait');
}

export { handleSummary };
