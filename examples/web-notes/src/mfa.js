// Two-step sign-in (Appwrite MFA) on the web SDK's Account service:
//
// - Signing in: a user with MFA on gets a session that needs a second factor; every other call
//   answers 401 `user_more_factors_required`. The page then asks for one: listMFAFactors()
//   says which the user has (totp: an authenticator app, email: a mailed code, recoveryCode),
//   createMFAChallenge({ factor }) starts one (an email challenge mails the code) and
//   updateMFAChallenge({ challengeId, otp }) completes it.
// - The account panel turns it on: createMFAAuthenticator({ type: 'totp' }) gives a secret and
//   its otpauth:// URI for the app, updateMFAAuthenticator({ type, otp }) proves it with a code,
//   createMFARecoveryCodes() makes the single-use recovery codes (shown this once), and
//   updateMFA({ mfa: true }) turns the second step on. Turning it off is updateMFA({ mfa: false });
//   the authenticator stays set up, so turning it on again needs no new code.
import { AppwriteException, AuthenticationFactor, AuthenticatorType } from 'appwrite';
import { codeError } from './messages.js';
import { busy } from './ui.js';

const FACTORS = [
  ['totp', AuthenticationFactor.Totp, 'Authenticator app', '6-digit code from your authenticator app'],
  ['email', AuthenticationFactor.Email, 'Code by email', '6-digit code from the email'],
  ['recoveryCode', AuthenticationFactor.Recoverycode, 'Recovery code', 'One of your recovery codes'],
];

const STEP = `
  <form id="mfa-form" class="extras-form" hidden>
    <h2>Two-step sign-in</h2>
    <p class="muted">Your password was right. Now prove it’s you with your second step.</p>
    <label>Second step <select id="mfa-factor"></select></label>
    <label><span id="mfa-code-label">Code</span>
      <input id="mfa-code" autocomplete="one-time-code" required />
    </label>
    <button id="mfa-submit" type="submit">Verify</button>
    <p class="muted"><a href="#" id="mfa-cancel">Use another account</a></p>
  </form>`;

const PANEL = `
  <section id="security" class="card" aria-labelledby="security-title" hidden>
    <h2 id="security-title" class="panel-title">Two-step sign-in</h2>
    <p id="mfa-status" class="muted"></p>
    <button id="mfa-enable" type="button">Turn on two-step sign-in</button>
    <button id="mfa-disable" type="button" hidden>Turn off two-step sign-in</button>
    <form id="mfa-setup" class="extras-form" hidden>
      <p>Add this account to your authenticator app: open <a id="mfa-uri" href="#">this link</a> on
        your phone, or type the key <code id="mfa-secret"></code>. Then enter the code it shows.</p>
      <label>6-digit code from your app
        <input id="mfa-setup-code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required />
      </label>
      <button id="mfa-setup-verify" type="submit">Verify and turn on</button>
    </form>
    <div id="mfa-codes" class="extras-form" hidden>
      <p><strong>Save your recovery codes.</strong> Each one signs you in once if you lose your
        phone. They are shown only now.</p>
      <ul id="mfa-code-list" class="codes"></ul>
      <button id="mfa-codes-done" type="button">I saved them</button>
    </div>
  </section>`;

const isType = (err, type) => err instanceof AppwriteException && err.type === type;

export const needsSecondStep = (err) => isType(err, 'user_more_factors_required');

/**
 * `app`: { account, guard, notify, signedIn, signedOut } where `signedIn()` shows the notes of the
 * now complete session and `signedOut()` shows the log-in form. Returns
 * { challenge(), show(user), hide() }.
 */
export function setupMfa(app, authBox, accountBox) {
  const { account, guard, notify } = app;
  authBox.insertAdjacentHTML('afterbegin', STEP);
  accountBox.insertAdjacentHTML('beforeend', PANEL);
  const $ = (id) => document.getElementById(id);
  let challengeId = null;
  let user = null;

  // ---- the second step of a sign-in --------------------------------------------------------

  // The challenge being created (a promise), so that a code submitted before it exists waits
  // for it instead of starting another one and losing what was typed.
  let starting = null;

  function start(factor) {
    challengeId = null;
    const [, sdkFactor, , label] = FACTORS.find(([key]) => key === factor);
    $('mfa-code-label').textContent = label;
    const code = $('mfa-code');
    code.value = '';
    code.inputMode = factor === 'recoveryCode' ? 'text' : 'numeric';
    code.maxLength = factor === 'recoveryCode' ? 64 : 6;
    const made = account.createMFAChallenge({ factor: sdkFactor }).then((challenge) => {
      if (starting !== made) return; // another factor was picked meanwhile
      challengeId = challenge.$id;
      if (factor === 'email') notify('We sent a 6-digit code to your email address.');
    });
    starting = made;
    return made;
  }

  /** The current challenge's ID: the one being created, or (if that failed) a new one. */
  async function currentChallenge() {
    if (!challengeId && starting) await starting.catch(() => {});
    if (!challengeId) {
      const typed = $('mfa-code').value;
      await start($('mfa-factor').value);
      $('mfa-code').value = typed;
    }
    return challengeId;
  }

  /** Show the second step (after a sign-in answered `user_more_factors_required`). */
  async function challenge() {
    document.body.dataset.step = 'mfa';
    $('auth-form').hidden = true;
    $('mfa-form').hidden = false;
    const factors = await account.listMFAFactors();
    const offered = FACTORS.filter(([key]) => factors[key]);
    $('mfa-factor').replaceChildren(...offered.map(([key, , name]) => new Option(name, key)));
    if (offered.length) await start(offered[0][0]);
    $('mfa-code').focus();
  }

  function leave() {
    delete document.body.dataset.step;
    challengeId = null;
    starting = null;
    $('mfa-form').hidden = true;
    $('auth-form').hidden = false;
  }

  $('mfa-factor').addEventListener('change', () => guard(() => start($('mfa-factor').value)));

  $('mfa-form').addEventListener('submit', (event) => {
    event.preventDefault();
    busy($('mfa-submit'), 'Verifying…', () => guard(async () => {
      const id = await currentChallenge();
      await codeError(() => account.updateMFAChallenge({ challengeId: id, otp: $('mfa-code').value.trim() }));
      leave();
      notify('');
      await app.signedIn();
    }));
  });

  $('mfa-cancel').addEventListener('click', (event) => {
    event.preventDefault();
    guard(async () => {
      await account.deleteSession({ sessionId: 'current' }).catch(() => {});
      leave();
      app.signedOut();
    });
  });

  // ---- the account panel ---------------------------------------------------------------------

  function render() {
    const on = Boolean(user?.mfa);
    $('mfa-status').textContent = on
      ? 'On: signing in asks for a code from your authenticator app (or a recovery code) after your password.'
      : 'Off: your password alone signs you in.';
    $('mfa-enable').hidden = on || !$('mfa-setup').hidden;
    $('mfa-disable').hidden = !on;
  }

  async function turnOn() {
    user = await account.updateMFA({ mfa: true });
    render();
  }

  $('mfa-enable').addEventListener('click', () => busy($('mfa-enable'), 'Starting…', () => guard(async () => {
    const factors = await account.listMFAFactors();
    if (factors.totp) {
      await turnOn();
      $('mfa-disable').focus();
      return;
    }
    const made = await account.createMFAAuthenticator({ type: AuthenticatorType.Totp });
    $('mfa-secret').textContent = made.secret;
    $('mfa-uri').href = made.uri;
    $('mfa-setup').hidden = false;
    render();
    $('mfa-setup-code').focus();
  })));

  $('mfa-setup').addEventListener('submit', (event) => {
    event.preventDefault();
    busy($('mfa-setup-verify'), 'Verifying…', () => guard(async () => {
      await codeError(() => account.updateMFAAuthenticator({ type: AuthenticatorType.Totp, otp: $('mfa-setup-code').value.trim() }));
      let codes = [];
      try {
        codes = (await account.createMFARecoveryCodes()).recoveryCodes;
      } catch (err) {
        if (!isType(err, 'user_recovery_codes_already_exists')) throw err;
      }
      $('mfa-setup-code').value = '';
      $('mfa-setup').hidden = true;
      await turnOn();
      if (codes.length) {
        $('mfa-code-list').replaceChildren(...codes.map((code) => {
          const li = document.createElement('li');
          li.textContent = code;
          return li;
        }));
        $('mfa-codes').hidden = false;
        $('mfa-codes-done').focus();
      }
    }));
  });

  $('mfa-codes-done').addEventListener('click', () => {
    $('mfa-codes').hidden = true;
    $('mfa-code-list').replaceChildren();
    $('mfa-disable').focus();
  });

  $('mfa-disable').addEventListener('click', () => busy($('mfa-disable'), 'Turning off…', () => guard(async () => {
    user = await account.updateMFA({ mfa: false });
    render();
    $('mfa-enable').focus();
  })));

  return {
    challenge,
    leave,
    show(signedIn) {
      user = signedIn;
      $('security').hidden = false;
      $('mfa-setup').hidden = true;
      $('mfa-codes').hidden = true;
      render();
    },
    hide() {
      user = null;
      $('security').hidden = true;
      $('mfa-code-list').replaceChildren();
    },
  };
}
