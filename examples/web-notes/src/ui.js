// Page-level pieces that know nothing about notes: the error banner, busy buttons, the undo
// toast, the live pill, the signed-in user, timestamps.
import { humanMessage } from './messages.js';

export const $ = (id) => document.getElementById(id);

// ---- error banner (floats over the page; dismissible; the details go to the console) --------

export function showError(err, policy) {
  if (!err) {
    $('error').hidden = true;
    $('error-text').textContent = '';
    return;
  }
  $('error-text').textContent = humanMessage(err, policy);
  // Below the header as it is now (it is taller when its contents wrap on a narrow screen).
  const header = document.querySelector('header.bar');
  if (header) document.documentElement.style.setProperty('--header-bottom', `${Math.ceil(header.getBoundingClientRect().bottom)}px`);
  $('error').hidden = false;
  const detail = err.type ? ` [${err.code} ${err.type}] ${err.message}` : '';
  console.error(`web-notes:${detail}`, err);
}

$('error-close').addEventListener('click', () => showError(null));
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !$('error').hidden) showError(null);
});

// ---- busy: a control shows progress and takes no second click while its request runs --------

/** Run ``fn`` with ``button`` disabled and labelled ``label`` (and ``fieldset`` disabled). */
export async function busy(button, label, fn, fieldset = null) {
  const text = button.textContent;
  button.disabled = true;
  button.classList.add('busy');
  button.setAttribute('aria-busy', 'true');
  button.textContent = label;
  if (fieldset) fieldset.disabled = true;
  try {
    return await fn();
  } finally {
    button.disabled = false;
    button.classList.remove('busy');
    button.removeAttribute('aria-busy');
    if (button.textContent === label) button.textContent = text;
    if (fieldset) fieldset.disabled = false;
  }
}

// ---- toast with Undo --------------------------------------------------------------------------

let toastTimer = null;
let toastDone = null;

/** Show ``text`` with an Undo button for ``ms``. Resolves to true when undone, false when the
 * time ran out, it was dismissed, or another toast replaced it. */
export function undoToast(text, ms = 6000) {
  finishToast(false);
  $('toast-text').textContent = text;
  $('toast').hidden = false;
  return new Promise((resolve) => {
    toastDone = resolve;
    toastTimer = setTimeout(() => finishToast(false), ms);
  });
}

export function finishToast(undone) {
  clearTimeout(toastTimer);
  $('toast').hidden = true;
  const done = toastDone;
  toastDone = null;
  if (done) done(undone);
}

$('toast-undo').addEventListener('click', () => finishToast(true));
$('toast-close').addEventListener('click', () => finishToast(false));

// ---- header ---------------------------------------------------------------------------------

const LIVE = { off: 'Offline', connecting: 'Connecting…', on: 'Live', reconnecting: 'Reconnecting…', unavailable: 'No live updates' };

export function setLive(value) {
  const pill = $('live');
  pill.dataset.state = value;
  pill.querySelector('.pill-text').textContent = LIVE[value] || value;
  pill.title = value === 'on' ? 'Changes from your other tabs and devices appear here at once' : LIVE[value];
}

export function showUser(user) {
  const who = $('who');
  who.hidden = !user;
  $('live').hidden = !user;
  if (!user) return;
  const name = (user.name || '').trim();
  who.querySelector('.avatar-letter').textContent = (name || user.email || '?').charAt(0).toUpperCase();
  who.querySelector('.who-name').textContent = name || user.email;
  who.querySelector('.who-email').textContent = name ? user.email : '';
  who.title = name ? `${name} (${user.email})` : user.email;
}

// ---- timestamps -------------------------------------------------------------------------------

const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

function when(iso) {
  const date = new Date(iso);
  const seconds = (date.getTime() - Date.now()) / 1000;
  if (seconds > -60) return 'just now';
  if (seconds > -3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (seconds > -86400) return relative.format(Math.round(seconds / 3600), 'hour');
  return full.format(date);
}

function stamp(label, iso) {
  const time = document.createElement('time');
  time.dateTime = iso;
  time.title = full.format(new Date(iso));
  time.dataset.label = label;
  time.textContent = `${label} ${when(iso)}`;
  return time;
}

// "just now" becomes "2 minutes ago" without re-rendering the list (which would take the focus
// from an open editor).
setInterval(() => {
  for (const time of document.querySelectorAll('#list time[data-label]')) {
    time.textContent = `${time.dataset.label} ${when(time.dateTime)}`;
  }
}, 30_000);

/** "Created 5 minutes ago", and " · Edited just now" when the note changed after that. */
export function noteTimes(note) {
  const parts = [stamp('Created', note.$createdAt)];
  if (new Date(note.$updatedAt) - new Date(note.$createdAt) > 1000) {
    parts.push(document.createTextNode(' · '), stamp('Edited', note.$updatedAt));
  }
  return parts;
}
