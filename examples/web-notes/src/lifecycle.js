// Account flows that go through the user's mailbox, on the web SDK's Account service:
//
// - "Forgot password?": createRecovery mails a link back to this page; the page opens with
//   `flow=recovery&userId&secret` and a "choose a new password" form calls updateRecovery.
// - "Sign in with an email code": createEmailToken mails a 6-digit code; createSession turns
//   the user ID and that code into a session.
// - "Verify your email": a signed-in user whose address is unverified sends themselves a link
//   (createVerification); the page opens with `flow=verify&userId&secret` and calls
//   updateVerification.
import { ID } from 'appwrite';
import { returnUrl } from './links.js';
import { codeError, humanMessage, passwordRule } from './messages.js';
import { busy } from './ui.js';

const FORMS = `
  <p class="muted extras-links">
    <a href="#" id="forgot-link">Forgot password?</a>
    <a href="#" id="code-link">Sign in with an email code</a>
  </p>
  <form id="recovery-form" class="extras-form" hidden>
    <h3>Reset your password</h3>
    <label>Email <input id="recovery-email" type="email" required autocomplete="username" /></label>
    <button id="recovery-send" type="submit">Send reset link</button>
  </form>
  <form id="code-email-form" class="extras-form" hidden>
    <h3>Sign in with an email code</h3>
    <label>Email <input id="code-email" type="email" required autocomplete="username" /></label>
    <button id="code-send" type="submit">Send code</button>
  </form>
  <form id="code-form" class="extras-form" hidden>
    <label>6-digit code from the email
      <input id="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required />
    </label>
    <button id="code-submit" type="submit">Sign in</button>
  </form>
  <form id="new-password-form" class="extras-form" hidden>
    <h3>Choose a new password</h3>
    <label>New password
      <input id="new-password" type="password" minlength="8" required autocomplete="new-password" />
    </label>
    <p id="new-password-hint" class="hint"></p>
    <button id="new-password-save" type="submit">Save password</button>
    <p class="muted switch"><a href="#" id="new-password-back">Back to log in</a></p>
  </form>`;

const VERIFY_BANNER = `
  <div id="verify-banner" class="extras-banner" hidden>
    <span>Your email address is not verified.</span>
    <button id="verify-send" type="button">Verify your email</button>
  </div>`;

/**
 * Adds the mail flows to the page. `app`: { account, guard, notify, policy, signedIn }, where
 * `notify(text, kind)` shows a status line, `policy` is the password policy of config.js
 * (`{ minLength, dictionary, personalData }`) and `signedIn()` shows the notes of the new session.
 * Errors go through `guard`, which shows them as sentences for people (messages.js).
 * Returns { finish(ret), showBanner(user), hideBanner() }.
 */
export function setupLifecycle(app, authBox, accountBox) {
  const { account, guard, notify, policy } = app;
  authBox.insertAdjacentHTML('beforeend', FORMS);
  accountBox.insertAdjacentHTML('beforeend', VERIFY_BANNER);

  const $ = (id) => document.getElementById(id);
  const banner = $('verify-banner');
  const forms = ['recovery-form', 'code-email-form', 'code-form', 'new-password-form'];
  // A recovery link's page shows "Choose a new password" alone: no log-in form above it (CSS on
  // body[data-flow="recovery"]); "Back to log in" or a saved password brings the form back.
  const only = (id) => {
    forms.forEach((name) => { $(name).hidden = name !== id; });
    document.body.dataset.flow = id === 'new-password-form' ? 'recovery' : '';
  };
  $('new-password').minLength = policy.minLength;
  $('new-password-hint').textContent = passwordRule(policy);
  // Each form's button shows `label` and takes no second click while its request runs.
  const submit = (id, label, fn) => $(id).addEventListener('submit', (event) => {
    event.preventDefault();
    busy($(id).querySelector('button[type="submit"]'), label, () => guard(fn));
  });
  let pending = null; // { userId, secret } of a recovery link, or { userId } of a code sign-in

  $('forgot-link').addEventListener('click', (event) => {
    event.preventDefault();
    $('recovery-email').value = $('email').value;
    only('recovery-form');
  });
  $('new-password-back').addEventListener('click', (event) => {
    event.preventDefault();
    pending = null;
    only(null);
    $('email').focus();
  });
  $('code-link').addEventListener('click', (event) => {
    event.preventDefault();
    $('code-email').value = $('email').value;
    only('code-email-form');
  });

  submit('recovery-form', 'Sending…', async () => {
    const email = $('recovery-email').value.trim();
    await account.createRecovery({ email, url: returnUrl('recovery') });
    only(null);
    notify(`We sent a link to ${email}: open it to choose a new password.`);
  });

  submit('code-email-form', 'Sending…', async () => {
    const email = $('code-email').value.trim();
    // A new address gets an account; the token names the user either way.
    const token = await account.createEmailToken({ userId: ID.unique(), email });
    pending = { userId: token.userId };
    only('code-form');
    $('code').focus();
    notify(`We sent a 6-digit code to ${email}.`);
  });

  submit('code-form', 'Signing in…', async () => {
    await codeError(() => account.createSession({ userId: pending.userId, secret: $('code').value.trim() }));
    pending = null;
    $('code').value = '';
    only(null);
    notify('');
    await app.signedIn();
  });

  submit('new-password-form', 'Saving…', async () => {
    await account.updateRecovery({ userId: pending.userId, secret: pending.secret, password: $('new-password').value });
    pending = null;
    $('new-password').value = '';
    only(null);
    notify('Password changed. Log in with your new password.');
  });

  $('verify-send').addEventListener('click', () => busy($('verify-send'), 'Sending…', () => guard(async () => {
    await account.createVerification({ url: returnUrl('verify') });
    notify('We sent you a link: open it to verify your email address.');
  })));

  return {
    /** Finishes a mailed link the page was opened with; true when `ret` was one. */
    async finish(ret) {
      if (ret.flow === 'recovery' && ret.userId && ret.secret) {
        pending = { userId: ret.userId, secret: ret.secret };
        only('new-password-form');
        // Into the new-password field once the log-in view shows (after the session check).
        let frames = 120;
        const focus = () => {
          if (!$('auth').hidden) $('new-password').focus();
          else if (frames-- > 0) requestAnimationFrame(focus);
        };
        requestAnimationFrame(focus);
        return true;
      }
      if (ret.flow === 'verify' && ret.userId && ret.secret) {
        // A notice, not #error: the notes view, shown next for a signed-in user, clears #error.
        try {
          await account.updateVerification({ userId: ret.userId, secret: ret.secret });
          notify('Email verified.');
        } catch (err) {
          console.error(`web-notes: [${err.code} ${err.type}] ${err.message}`, err);
          // A link opened again fails (it works once), though the address is verified: say so.
          const user = await account.get().catch(() => null);
          if (user?.emailVerification && user.$id === ret.userId) notify('Your email address is already verified.');
          else if (user) notify(`Email not verified. ${humanMessage(err, policy)}`, 'error');
          else notify('This link was already used or has expired. Log in to see whether your address is verified, or to ask for a new link.', 'error');
        }
        return true;
      }
      return false;
    },
    showBanner(user) {
      banner.hidden = Boolean(user.emailVerification) || !user.email;
    },
    hideBanner() {
      banner.hidden = true;
    },
  };
}
