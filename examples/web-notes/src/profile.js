// The signed-in user's profile: their initials avatar in the header (Avatars.getInitials, an
// image URL the SDK builds; avatars are public, so a plain <img> loads it on any origin) and a
// country picker fed by Locale.listCountries, saved in the user's preferences
// (account.updatePrefs, key `country`). Without a saved country the picker starts on the
// country Locale.get() finds for the client's IP address, when it knows one.
//
// The image sits inside the header's letter avatar (ui.js showUser) and is shown, over the
// letter, once it has loaded; when it cannot load, the letter stays.
import { Avatars, Locale } from 'appwrite';
import { busy } from './ui.js';

const PANEL = `
  <section id="profile" class="card" hidden>
    <form id="profile-form" class="extras-profile">
      <label>Country <select id="country" required><option value="">Loading…</option></select></label>
      <button id="country-save" type="submit">Save</button>
      <span id="profile-status" class="muted" role="status"></span>
    </form>
  </section>`;

export function setupProfile(app, accountBox) {
  const { account, client, guard } = app;
  const avatars = new Avatars(client);
  const locale = new Locale(client);
  const avatar = document.getElementById('avatar');
  accountBox.insertAdjacentHTML('beforeend', PANEL);
  const panel = document.getElementById('profile');
  const select = panel.querySelector('#country');
  const status = panel.querySelector('#profile-status');
  let user = null;
  let countries = null; // loaded once per page
  avatar.addEventListener('load', () => { avatar.hidden = !avatar.getAttribute('src'); });
  avatar.addEventListener('error', () => { avatar.hidden = true; });

  async function fillCountries() {
    if (!countries) {
      const list = await locale.listCountries();
      countries = [...list.countries].sort((a, b) => a.name.localeCompare(b.name));
    }
    const options = countries.map((c) => new Option(c.name, c.code));
    select.replaceChildren(new Option('Choose…', ''), ...options);
    let code = user.prefs?.country || '';
    if (!code) {
      const here = await locale.get();
      code = here.countryCode;
    }
    select.value = countries.some((c) => c.code === code) ? code : '';
    select.dataset.ready = 'true';
  }

  panel.querySelector('form').addEventListener('submit', (event) => {
    event.preventDefault();
    busy(panel.querySelector('#country-save'), 'Saving…', () => guard(async () => {
      status.textContent = '';
      const prefs = { ...(user.prefs || {}), country: select.value };
      user = await account.updatePrefs({ prefs });
      status.textContent = 'Saved';
    }));
  });

  return {
    show(signedIn) {
      user = signedIn;
      avatar.src = avatars.getInitials({ name: user.name || user.email || '', width: 64, height: 64 });
      panel.hidden = false;
      status.textContent = '';
      delete select.dataset.ready;
      // Not through guard(): that would clear an error the page is showing.
      fillCountries().catch(app.showError);
    },
    hide() {
      user = null;
      avatar.hidden = true;
      avatar.removeAttribute('src');
      panel.hidden = true;
    },
  };
}
