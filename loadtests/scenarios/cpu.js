// cpu: GET /v1/bench/cpu, fib(20) in pure Python per request (loadtests/benchapp, BENCH_APP=1).
import { call, ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(call('GET', '/bench/cpu', null, {}, 'GET /bench/cpu'), 200, 'bench.cpu');
}

export { handleSummary };
