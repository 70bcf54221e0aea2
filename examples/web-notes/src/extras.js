// The account extras of the demo, kept apart from the notes app (main.js calls three hooks):
// mail flows (lifecycle.js), "Sign in with OpenID" (openid.js), avatar and country (profile.js).
import { setupLifecycle } from './lifecycle.js';
import { setupMfa } from './mfa.js';
import { takeReturn } from './links.js';
import { setupOpenId } from './openid.js';
import { setupProfile } from './profile.js';
import './extras.css';

/**
 * `app`: { client, account, cfg, policy, guard, showError, signedIn, signedOut } from main.js, where
 * `guard(fn)` and `showError(err)` show errors as sentences for people (messages.js), `policy` is
 * the password policy and `signedIn()` reads the account and shows the notes. Returns the hooks:
 * beforeStart() (finish a mail link or OAuth2 return, before the session is read),
 * signedIn(user), signedOut(), secondStep() (ask for the second factor of a sign-in) and
 * notify(text, kind) (the status line under the header).
 */
export function setupExtras(app) {
  const notice = document.createElement('p');
  notice.id = 'notice';
  notice.className = 'extras-notice';
  notice.setAttribute('role', 'status');
  notice.hidden = true;
  document.getElementById('error').after(notice);
  // A status line; unlike #error it stays when the notes view loads (which clears #error).
  const notify = (text, kind = 'ok') => {
    notice.textContent = text;
    notice.dataset.kind = kind;
    notice.hidden = !text;
  };
  const ctx = { ...app, notify };
  const authBox = document.getElementById('auth-extras');
  // Above the notes only what asks for action (verify your email); the settings go below them.
  const accountBox = document.getElementById('account-extras');
  const panels = document.getElementById('account-panels');
  const lifecycle = setupLifecycle(ctx, authBox, accountBox);
  const openid = setupOpenId(ctx, authBox);
  const profile = setupProfile(ctx, panels);
  const mfa = setupMfa(ctx, authBox, panels);

  return {
    async beforeStart() {
      const ret = takeReturn();
      if (ret && !(await openid.finish(ret)) && !(await lifecycle.finish(ret))) {
        console.warn('web-notes: unknown return flow', ret.flow);
      }
    },
    signedIn(user) {
      lifecycle.showBanner(user);
      profile.show(user);
      mfa.leave();
      mfa.show(user);
    },
    signedOut() {
      lifecycle.hideBanner();
      profile.hide();
      mfa.leave();
      mfa.hide();
    },
    /** The second step of a sign-in (MFA), for a session that needs it. */
    secondStep: () => mfa.challenge(),
    notify,
  };
}
