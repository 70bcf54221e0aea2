// ping: GET /v1/ping with the project header: the pipeline's floor cost.
import { call, ok, loadOptions, handleSummary } from '../lib/appwrite.js';

export const options = loadOptions();

export default function () {
  ok(call('GET', '/ping', null, {}, 'GET /ping'), 200, 'ping');
}

export { handleSummary };
