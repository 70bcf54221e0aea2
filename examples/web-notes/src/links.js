// Links that bring the browser back to this page: mailed links (password recovery, email
// verification) and the OAuth2 success/failure pages. Each carries `flow=<name>` so the page
// knows what to finish; the server adds `userId` and `secret` (or `error`). The page's own query
// (endpoint, project... on a cross-origin page) is kept, so the link opens the same set-up.
// The server accepts such a URL only on an origin registered as a web platform of the project,
// or on the API's own host.
const RETURN_KEYS = ['flow', 'userId', 'secret', 'expire', 'error'];

function withoutReturnKeys(href) {
  const url = new URL(href);
  for (const key of RETURN_KEYS) url.searchParams.delete(key);
  url.hash = '';
  return url;
}

/** This page's URL with `flow` set: where a mail link or an OAuth2 sign-in comes back to. */
export function returnUrl(flow) {
  const url = withoutReturnKeys(window.location.href);
  url.searchParams.set('flow', flow);
  return url.toString();
}

/**
 * What the page was opened with: `{ flow, userId, secret, error }` when the URL carries `flow`,
 * else null. The parameters are removed from the address bar (a reload does not replay them,
 * and the secret does not stay in the history).
 */
export function takeReturn(location = window.location) {
  const params = new URLSearchParams(location.search);
  const flow = params.get('flow');
  if (!flow) return null;
  window.history.replaceState(null, '', withoutReturnKeys(location.href).toString());
  return { flow, userId: params.get('userId'), secret: params.get('secret'), error: params.get('error') };
}
