// "Sign in with OpenID": the project's OAuth2 provider named by the config's `oauth2` (setup.py
// writes it when it configures the provider; `?oauth2=oidc` on the URL does too). The browser
// leaves for the provider's sign-in page and comes back here, to `flow=oauth2` or, when the
// sign-in failed or was cancelled, to `flow=oauth2-failed&error={"message","type","code"}`.
//
// Same origin as the API: createOAuth2Session, the page comes back with the session cookie.
// Cross origin: that cookie would belong to the API's site, which this page's requests do not
// carry, so the page asks for createOAuth2Token instead and turns the `userId` + `secret` it
// comes back with into a session (createSession), kept like any other cross-origin session.
import { AppwriteException } from 'appwrite';
import { returnUrl } from './links.js';
import { busy } from './ui.js';

export function setupOpenId(app, authBox) {
  const { account, cfg, guard } = app;
  const provider = cfg.oauth2;
  if (provider) {
    const row = document.createElement('p');
    row.className = 'extras-oauth';
    row.innerHTML = '<button id="signin-openid" type="button">Sign in with OpenID</button>';
    authBox.prepend(row);
    const button = row.querySelector('button');
    button.addEventListener('click', () => busy(button, 'Opening sign-in…', () => guard(async () => {
      const urls = { provider, success: returnUrl('oauth2'), failure: returnUrl('oauth2-failed') };
      // Both navigate away from the page (the SDK sets window.location).
      if (cfg.crossOrigin) await account.createOAuth2Token(urls);
      else await account.createOAuth2Session(urls);
    })));
  }

  return {
    /** Finishes an OAuth2 return the page was opened with; true when `ret` was one. */
    async finish(ret) {
      if (ret.flow === 'oauth2') {
        if (ret.userId && ret.secret) {
          await guard(() => account.createSession({ userId: ret.userId, secret: ret.secret }));
        }
        return true;
      }
      if (ret.flow === 'oauth2-failed') {
        let error = {};
        try {
          error = JSON.parse(ret.error || '{}');
        } catch {
          error = { message: ret.error };
        }
        // The banner says it in words (messages.js); the server's reason goes to the console.
        app.showError(new AppwriteException(`Sign-in with OpenID failed: ${error.message || 'no reason given'}`,
          error.code || 0, error.type || 'user_oauth2_provider_error'));
        return true;
      }
      return false;
    },
  };
}
