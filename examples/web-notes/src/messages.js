// What the page tells people when something goes wrong: Appwrite error types mapped to plain
// sentences. The raw message, code and type go to the console only (see showError in ui.js).
import { AppwriteException } from 'appwrite';

const BY_TYPE = {
  user_invalid_credentials: 'That email and password don’t match. Check them and try again.',
  user_already_exists: 'There is already an account with this email. Log in instead?',
  user_email_already_exists: 'There is already an account with this email. Log in instead?',
  user_blocked: 'This account has been blocked. Contact the site’s owner.',
  user_session_already_exists: 'You are already logged in. Reload the page.',
  user_unauthorized: 'Your session has ended. Log in again.',
  general_unauthorized_scope: 'Your session has ended. Log in again.',
  password_personal_data: 'Your password can’t contain your name or email. Choose another one.',
  password_recently_used: 'You used this password recently. Choose another one.',
  general_rate_limit_exceeded: 'Too many attempts. Wait a minute and try again.',
  general_unknown_origin: 'This page isn’t allowed to talk to the server. Ask its owner to add this site.',
  user_count_exceeded: 'This site isn’t accepting new accounts right now.',
  row_not_found: 'This note no longer exists. It may have been deleted in another tab.',
  storage_file_not_found: 'The attached file no longer exists.',
  storage_file_too_large: 'This file is too large to attach.',
  storage_file_empty: 'This file is empty. Choose another one.',
  storage_file_type_unsupported: 'This kind of file can’t be attached.',
  general_server_error: 'Something went wrong on the server. Try again in a moment.',
  // The account extras: mailed links and codes, OpenID sign-in.
  // A link's token: Appwrite answers user_invalid_token for a link used or expired. A typed code
  // gets CODE_WRONG instead (see codeError): the likeliest reason there is a typo.
  user_invalid_token: 'This link has expired or was already used. Ask for a new one.',
  user_more_factors_required: 'Finish signing in with your second step.',
  user_challenge_required: 'For your security, sign in again before changing this.',
  user_authenticator_already_verified: 'Your authenticator app is already set up.',
  user_not_found: 'There is no account with this email.',
  user_email_already_verified: 'Your email address is already verified.',
  general_smtp_disabled: 'This site can’t send email right now. Log in with your password instead.',
  user_oauth2_provider_error: 'Sign-in with OpenID didn’t finish: it was cancelled, or the provider refused it. Try again.',
  user_oauth2_bad_request: 'Sign-in with OpenID failed. Try again, or log in with your email.',
  user_oauth2_unauthorized: 'Sign-in with OpenID failed. Try again, or log in with your email.',
  project_provider_disabled: 'Sign-in with OpenID is turned off for this site.',
};

// general_argument_invalid names the parameter; the reason decides the sentence.
function argumentMessage(err, policy) {
  const text = err.message || '';
  if (/`password`/.test(text)) {
    if (/commonly used/i.test(text)) return 'This password is too common. Choose one that’s harder to guess.';
    const min = /between (\d+) and/.exec(text);
    return `Your password needs at least ${min ? min[1] : policy.minLength} characters.`;
  }
  if (/`email`/.test(text)) return 'Enter a valid email address.';
  if (/`name`/.test(text)) return 'That name is too long.';
  if (/`title`|`body`|`data`/.test(text)) return 'This note is too long or has an invalid title.';
  if (/`secret`/.test(text)) return 'That code isn’t right. Check the email and try again.';
  if (/`url`|`success`|`failure`/.test(text)) {
    return 'This page’s address isn’t registered with the server, so links can’t lead back here. Ask the site’s owner to add it.';
  }
  return null;
}

export const CODE_WRONG = 'That code isn’t right. Check it and try again, or ask for a new one.';

/** ``fn()``, with a wrong typed code (401 ``user_invalid_token``) reported as CODE_WRONG: the
 * error keeps the server's type and message for the console. */
export async function codeError(fn) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppwriteException && err.type === 'user_invalid_token') {
      throw Object.assign(new Error(CODE_WRONG), { code: err.code, type: err.type, serverMessage: err.message, human: CODE_WRONG });
    }
    throw err;
  }
}

// Set by checkOrigin() when the server answers but not to this page's origin.
let refusedOrigin = null;

/**
 * Tell apart "the server is down" from "the server refuses this page's origin": both reach the
 * page as the same fetch TypeError. A plain cross-origin GET that fails while the same request
 * in ``no-cors`` mode (whose answer the page may not read, but which does arrive) succeeds means
 * the server is up and gave this origin no CORS grant. Resolves to true in that case.
 */
export async function checkOrigin(config, origin = window.location.origin) {
  if (!config.crossOrigin) return false;
  const url = `${config.endpoint}/account?project=${encodeURIComponent(config.project)}`;
  try {
    await fetch(url, { credentials: 'omit' });
    return false; // any answer the page can read: the origin is registered
  } catch (err) {
    if (!(err instanceof TypeError)) return false;
  }
  try {
    await fetch(url, { mode: 'no-cors', credentials: 'omit' });
  } catch {
    return false; // the server is not reachable at all
  }
  refusedOrigin = { origin, project: config.project };
  return true;
}

/** A sentence for people about ``err`` (an AppwriteException, a fetch TypeError, or anything). */
export function humanMessage(err, policy = { minLength: 8 }) {
  if (err?.human) return err.human;
  if (err instanceof AppwriteException) {
    if (err.type === 'general_argument_invalid') {
      const sentence = argumentMessage(err, policy);
      if (sentence) return sentence;
    }
    if (BY_TYPE[err.type]) return BY_TYPE[err.type];
    if (err.code === 401) return BY_TYPE.user_unauthorized;
    if (err.code >= 500) return BY_TYPE.general_server_error;
    return 'That didn’t work. Try again, or reload the page.';
  }
  // fetch() rejects with a TypeError when the server is down, the network is gone, or the
  // browser refuses a response the server did not allow for this page's origin.
  if (err instanceof TypeError && refusedOrigin) {
    return `The server refuses this page’s address, ${refusedOrigin.origin}: it is not registered on project `
      + `“${refusedOrigin.project}”. Register it with: manage.py createproject ${refusedOrigin.project} `
      + `--origin ${refusedOrigin.origin} --exists-ok`;
  }
  if (err instanceof TypeError) return 'Can’t reach the server. Check your connection and try again.';
  return String(err?.message || err);
}

/** The password rule of the project (config.js ``passwordPolicy``, written by setup.py), in words. */
export function passwordRule(policy) {
  const parts = [`At least ${policy.minLength || 8} characters.`];
  if (policy.dictionary) parts.push('Not a common password.');
  if (policy.personalData) parts.push('Not your name or email.');
  return parts.join(' ');
}
