// Shared by the node_*.mjs checks: the official Node.js server SDK (npm node-appwrite 26, the
// Appwrite 1.9 line) with an API key. Every check takes <endpoint> <projectId> <apiKey> first,
// then its own arguments, and prints one JSON line of what it saw.
import { Client, AppwriteException } from 'node-appwrite';

export const [endpoint, projectId, apiKey, ...extra] = process.argv.slice(2);

export function serverClient() {
  return new Client().setEndpoint(endpoint).setProject(projectId).setKey(apiKey);
}

// "<code> <type>" of the AppwriteException a call ends with ("no error" when it succeeds).
export async function errorOf(call) {
  try {
    await call;
    return 'no error';
  } catch (err) {
    return err instanceof AppwriteException ? `${err.code} ${err.type}` : String(err);
  }
}

// Print the summary and exit; a check that hangs is stopped after 60 s with what it had seen.
export function guard(out) {
  setTimeout(() => { console.error('timeout', JSON.stringify(out)); process.exit(1); }, 60000).unref();
}

export function report(out) {
  console.log(JSON.stringify(out));
}
