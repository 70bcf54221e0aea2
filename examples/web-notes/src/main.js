import {
  Account, AppwriteException, Channel, Client, ID, Permission, Query, Realtime, Role, TablesDB, Storage,
} from 'appwrite';
import { loadConfig } from './config.js';
import { setupExtras } from './extras.js';
import { attachments } from './files.js';
import { needsSecondStep } from './mfa.js';
import { checkOrigin, humanMessage, passwordRule } from './messages.js';
import { matchesSearch, searchQueries, searchText } from './search.js';
import { $, busy, finishToast, noteTimes, setLive, showError as showErrorWith, showUser, undoToast } from './ui.js';
import './style.css';

const cfg = loadConfig();
// Learn at once whether the server refuses this page's origin, so an error can say so.
checkOrigin(cfg);
const policy = { minLength: 8, ...(cfg.passwordPolicy || {}) };
const client = new Client().setEndpoint(cfg.endpoint).setProject(cfg.project);
const account = new Account(client);
const tables = new TablesDB(client);
const files = attachments({ cfg, storage: new Storage(client), userId: () => state.user.$id });
// Notes per request of the list; "Load more" asks for the next page after the last one loaded
// (a cursor, so notes added meanwhile do not shift it). ?pageSize= overrides it (tests).
const PAGE_SIZE = Math.min(Math.max(Number(new URLSearchParams(window.location.search).get('pageSize')) || 50, 1), 100);

const state = {
  user: null,
  notes: new Map(),
  loading: false,
  signup: false,
  search: '',
  uploads: new Map(), // note ID -> { value, events, name } while its upload runs
  uploadEvents: new Map(), // note ID -> progress callbacks of its last finished upload
  replacing: new Map(), // note ID -> File waiting for "Replace"
  editing: new Map(), // note ID -> { title, body, base } draft while its editor is open (base: the $updatedAt it started from)
  more: false, // the last page was full: there may be more notes on the server
  cursor: null, // ID of the last note of the last page loaded
  loadingMore: false,
  deleting: new Map(), // note ID -> promise of the delete that runs once its Undo expires
  realtime: null,
};

const showError = (err) => showErrorWith(err, policy);

async function guard(fn) {
  showError(null);
  try {
    return await fn();
  } catch (err) {
    if (!sessionGone(err)) showError(err);
    return undefined;
  }
}

// A signed-in page whose session ended elsewhere (signed out everywhere, a password recovery,
// the account blocked) gets 401 on its next call: it goes back to the log-in form with one
// notice, instead of leaving the notes up with a banner over "Log out".
function sessionGone(err) {
  if (!state.user || !(err instanceof AppwriteException) || err.code !== 401) return false;
  console.warn(`web-notes: session ended [${err.code} ${err.type}] ${err.message}`);
  const why = err.type === 'user_blocked' ? humanMessage(err, policy)
    : 'Your session has ended: you were signed out, here or on another device. Log in again.';
  signedOut().then(() => extras.notify(why, 'error'));
  return true;
}

function ownerPermissions() {
  const me = Role.user(state.user.$id);
  return [Permission.read(me), Permission.update(me), Permission.delete(me)];
}

// ---- views ---------------------------------------------------------------------------------

function showView(view) {
  document.body.dataset.view = view;
  $('boot').hidden = view !== 'loading';
  $('auth').hidden = view !== 'auth';
  $('notes').hidden = view !== 'notes';
  $('logout').hidden = view !== 'notes';
}

function showAuth() {
  showView('auth');
  showUser(null);
  extras.signedOut();
  renderAuthMode();
}

function renderAuthMode() {
  $('auth-title').textContent = state.signup ? 'Create an account' : 'Log in';
  $('auth-submit').textContent = state.signup ? 'Create account' : 'Log in';
  $('auth-switch-text').textContent = state.signup ? 'Have an account?' : 'No account?';
  $('auth-toggle').textContent = state.signup ? 'Log in' : 'Sign up';
  $('name-row').hidden = !state.signup;
  $('password').autocomplete = state.signup ? 'new-password' : 'current-password';
  $('password').minLength = policy.minLength;
  $('password-hint').textContent = passwordRule(policy);
  $('password-hint').hidden = !state.signup;
}

// Read the account and show the notes; a session that still needs its second step (MFA) shows
// that step instead (src/mfa.js).
async function enter() {
  let user;
  try {
    user = await account.get();
  } catch (err) {
    if (!needsSecondStep(err)) throw err;
    showAuth();
    await extras.secondStep();
    return;
  }
  await showNotes(user);
}

async function showNotes(user) {
  state.user = user;
  showView('notes');
  showUser(user);
  extras.signedIn(user);
  await loadNotes();
  subscribe();
}

// ---- list ----------------------------------------------------------------------------------

function matchesView(row) {
  return row.owner === state.user?.$id && matchesSearch(row, state.search);
}

function visibleNotes() {
  return [...state.notes.values()]
    .filter((note) => !state.deleting.has(note.$id))
    .sort((a, b) => (a.$createdAt < b.$createdAt ? 1 : -1));
}

function render() {
  const shown = visibleNotes();
  $('list').replaceChildren(...shown.map(renderNote));
  $('list').setAttribute('aria-busy', String(state.loading));
  document.body.dataset.pendingDeletes = String(state.deleting.size);
  const status = $('list-status');
  status.hidden = false;
  status.classList.toggle('loading', state.loading);
  if (state.loading && !shown.length) {
    status.textContent = state.search ? 'Searching…' : 'Loading your notes…';
  } else if (shown.length) {
    status.hidden = true;
  } else if (state.search) {
    status.textContent = `No notes match “${state.search}”.`;
  } else {
    status.textContent = 'No notes yet. Write your first one above.';
  }
  $('more').hidden = !state.more || state.loading;
  const n = shown.length;
  const plus = state.more ? '+' : '';
  $('count').textContent = state.loading ? '' : `${n}${plus} ${state.search ? 'found' : `note${n === 1 && !plus ? '' : 's'}`}`;
}

function renderNote(note) {
  const li = $('note-template').content.firstElementChild.cloneNode(true);
  li.dataset.id = note.$id;
  li.querySelector('.title').textContent = note.title;
  li.querySelector('.body').textContent = note.body || '';
  li.querySelector('.meta').replaceChildren(...noteTimes(note));
  li.querySelector('.attach-text').textContent = note.fileId ? 'Replace file' : 'Attach file';
  if (note.fileId) files.renderAttachment(li, note, guard);
  if (state.uploads.has(note.$id)) showProgress(li, state.uploads.get(note.$id));
  if (state.uploadEvents.has(note.$id)) li.dataset.uploadEvents = String(state.uploadEvents.get(note.$id));
  if (state.replacing.has(note.$id)) askReplace(li, note, state.replacing.get(note.$id));
  wireEditor(li, note);
  li.querySelector('.delete').addEventListener('click', () => removeNote(note));
  li.querySelector('.file').addEventListener('change', (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    if (note.fileId) {
      state.replacing.set(note.$id, file);
      askReplace(li, note, file);
    } else {
      guard(() => attach(note, file));
    }
  });
  return li;
}

function wireEditor(li, note) {
  const view = li.querySelector('.view');
  const editor = li.querySelector('.editor');
  const title = editor.querySelector('.edit-title');
  const body = editor.querySelector('.edit-body');
  const open = (draft) => {
    title.value = draft.title;
    body.value = draft.body;
    view.hidden = true;
    editor.hidden = false;
    showConflict(editor, note, draft);
  };
  if (state.editing.has(note.$id)) open(state.editing.get(note.$id));
  li.querySelector('.edit').addEventListener('click', () => {
    state.editing.set(note.$id, { title: note.title, body: note.body || '', base: note.$updatedAt });
    open(state.editing.get(note.$id));
    title.focus();
  });
  editor.addEventListener('input', () => {
    const draft = state.editing.get(note.$id);
    state.editing.set(note.$id, { ...draft, title: title.value, body: body.value });
  });
  editor.querySelector('.cancel').addEventListener('click', () => {
    state.editing.delete(note.$id);
    editor.hidden = true;
    view.hidden = false;
    li.querySelector('.edit').focus();
  });
  const save = (force) => busy(editor.querySelector('.save'), 'Saving…', () => guard(async () => {
    const draft = state.editing.get(note.$id);
    // Another window (or device) may have saved this note since the editor opened: compare its
    // $updatedAt with the one the draft started from, and let the user choose.
    if (!force) {
      const current = await tables.getRow({ databaseId: cfg.database, tableId: cfg.table, rowId: note.$id });
      if (current.$updatedAt !== draft.base) {
        state.notes.set(current.$id, current);
        render();
        document.querySelector(`#list li[data-id="${note.$id}"] .keep-mine`)?.focus();
        return;
      }
    }
    const row = await tables.updateRow({
      databaseId: cfg.database, tableId: cfg.table, rowId: note.$id,
      data: { title: title.value, body: body.value, searchText: searchText(title.value, body.value) },
    });
    state.editing.delete(note.$id);
    state.notes.set(row.$id, row);
    render();
    focusNote(row.$id);
  }));
  editor.addEventListener('submit', (event) => {
    event.preventDefault();
    save(false);
  });
  editor.querySelector('.keep-mine').addEventListener('click', () => save(true));
  editor.querySelector('.take-theirs').addEventListener('click', () => {
    state.editing.delete(note.$id);
    render();
    focusNote(note.$id);
  });
}

/** The conflict box of an open editor: shown when the note on record (``note``, kept current by
 * realtime and by the check before saving) is not the version the draft started from. */
function showConflict(editor, note, draft) {
  const box = editor.querySelector('.conflict');
  box.hidden = !draft.base || note.$updatedAt === draft.base;
  editor.querySelector('.save').hidden = !box.hidden; // the choice is "Keep mine" or "Take theirs" (or Cancel)
  if (box.hidden) return;
  const when = new Date(note.$updatedAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  box.querySelector('.conflict-text').textContent = `This note was changed in another window at ${when} while you were editing it.`;
  box.querySelector('.conflict-theirs').textContent = `Their version: “${note.title}”${note.body ? ` — ${note.body}` : ''}`;
}

function askReplace(li, note, file) {
  const box = li.querySelector('.replace');
  box.hidden = false;
  box.querySelector('.replace-text').textContent = `Replace “${note.fileName || 'the attachment'}” with “${file.name}”?`;
  box.querySelector('.replace-yes').addEventListener('click', () => {
    state.replacing.delete(note.$id);
    box.hidden = true;
    guard(() => attach(note, file));
  });
  box.querySelector('.replace-no').addEventListener('click', () => {
    state.replacing.delete(note.$id);
    box.hidden = true;
  });
}

function showProgress(li, upload) {
  li.querySelector('.upload').hidden = false;
  li.querySelector('.attach').classList.add('disabled');
  li.querySelector('.file').disabled = true;
  const bar = li.querySelector('.progress');
  if (upload.events) bar.value = upload.value;
  else bar.removeAttribute('value'); // no report yet (a small file never gets one): indeterminate
  const what = upload.saving ? 'Saving…' : `Uploading ${upload.name}${upload.events ? ` — ${Math.round(upload.value)}%` : '…'}`;
  li.querySelector('.upload-text').textContent = what;
}

async function attach(note, file) {
  const upload = { value: 0, events: 0, name: file.name, saving: false };
  state.uploads.set(note.$id, upload);
  const update = () => {
    const li = document.querySelector(`#list li[data-id="${note.$id}"]`);
    if (li) showProgress(li, upload);
  };
  update();
  try {
    const uploaded = await files.upload(file, (percent) => {
      upload.value = percent;
      upload.events += 1;
      update();
    });
    upload.saving = true;
    update();
    const row = await tables.updateRow({
      databaseId: cfg.database, tableId: cfg.table, rowId: note.$id,
      data: { fileId: uploaded.$id, fileName: file.name },
    });
    if (note.fileId) files.remove(note.fileId);
    state.notes.set(row.$id, row);
    state.uploadEvents.set(note.$id, upload.events);
  } finally {
    state.uploads.delete(note.$id);
    render();
  }
}

// Delete at once on screen; on the server when the Undo toast expires or is dismissed (or the
// page is hidden, or the user logs out).
async function removeNote(note) {
  showError(null);
  let settle;
  const shown = visibleNotes().map((n) => n.$id);
  const at = shown.indexOf(note.$id);
  const neighbour = shown[at + 1] || shown[at - 1];
  state.deleting.set(note.$id, new Promise((resolve) => { settle = resolve; }));
  render();
  // The focused button went with its note: keep the keyboard user in the list.
  focusNote(neighbour) || $('note-title').focus();
  const undone = await undoToast(`Deleted “${note.title}”`);
  if (undone) {
    state.deleting.delete(note.$id);
    render();
    focusNote(note.$id);
    settle();
    return;
  }
  try {
    await tables.deleteRow({ databaseId: cfg.database, tableId: cfg.table, rowId: note.$id });
    state.notes.delete(note.$id);
    if (note.fileId) files.remove(note.fileId);
  } catch (err) {
    // Signed out meanwhile (the session ended): nothing to report on the log-in form.
    if (state.user && !(err instanceof AppwriteException && err.code === 404) && !sessionGone(err)) showError(err);
  } finally {
    state.deleting.delete(note.$id);
    if (state.user) render();
    settle();
  }
}

/** Focus the Edit button of note ``id``; false when it is not on screen. */
function focusNote(id) {
  const button = id && document.querySelector(`#list li[data-id="${id}"] button.edit`);
  if (button) button.focus();
  return Boolean(button);
}

async function flushDeletes() {
  finishToast(false);
  await Promise.all(state.deleting.values());
}

// ---- data ----------------------------------------------------------------------------------

function listQueries(after = null) {
  return [Query.equal('owner', state.user.$id), Query.orderDesc('$createdAt'), Query.limit(PAGE_SIZE),
    ...(after ? [Query.cursorAfter(after)] : []), ...searchQueries(state.search)];
}

let loadSeq = 0;

/** Load the first page of the list (a new search starts here too). */
async function loadNotes() {
  const seq = ++loadSeq;
  state.loading = true;
  render();
  try {
    const result = await tables.listRows({ databaseId: cfg.database, tableId: cfg.table, queries: listQueries() });
    if (seq === loadSeq) {
      state.notes = new Map(result.rows.map((row) => [row.$id, row]));
      pageLoaded(result.rows);
    }
  } catch (err) {
    if (seq === loadSeq && !sessionGone(err)) showError(err);
  } finally {
    if (seq === loadSeq) {
      state.loading = false;
      render();
    }
  }
}

function pageLoaded(rows) {
  state.more = rows.length === PAGE_SIZE;
  if (rows.length) state.cursor = rows[rows.length - 1].$id;
}

/** "Load more": the page after the last note loaded; focus goes to the first new note. */
async function loadMore() {
  const seq = loadSeq;
  const result = await tables.listRows({ databaseId: cfg.database, tableId: cfg.table, queries: listQueries(state.cursor) });
  if (seq !== loadSeq) return; // a new search or list started meanwhile
  const fresh = result.rows.filter((row) => !state.notes.has(row.$id));
  for (const row of result.rows) state.notes.set(row.$id, row);
  pageLoaded(result.rows);
  render();
  if (!focusNote(fresh[0]?.$id) && !$('more').hidden) $('more').focus();
}

function onRealtimeEvent(event) {
  const row = event.payload;
  if (!row || !row.$id || !state.user) return;
  if (event.events.some((name) => name.endsWith('.delete')) || !matchesView(row)) {
    state.notes.delete(row.$id);
  } else {
    state.notes.set(row.$id, row);
  }
  render();
}

async function subscribe() {
  await unsubscribe();
  const realtime = new Realtime(client);
  state.realtime = realtime;
  realtime.onOpen(() => setLive('on'));
  realtime.onClose(() => {
    if ($('live').dataset.state === 'on') setLive('reconnecting');
  });
  setLive('connecting');
  try {
    await realtime.subscribe(Channel.tablesdb(cfg.database).table(cfg.table).row(), onRealtimeEvent);
    if (state.realtime === realtime) setLive('on');
  } catch (err) {
    console.warn('realtime unavailable:', err);
    if (state.realtime === realtime) setLive('unavailable');
  }
}

async function unsubscribe() {
  const realtime = state.realtime;
  state.realtime = null;
  if (realtime) await realtime.disconnect();
  setLive('off');
}

// ---- wiring --------------------------------------------------------------------------------

// Mail flows, OpenID sign-in, avatar and country (src/extras.js).
const extras = setupExtras({
  client, account, cfg, policy, guard, showError, signedIn: enter, signedOut: () => showAuth(),
});

$('auth-toggle').addEventListener('click', (event) => {
  event.preventDefault();
  if ($('auth-fields').disabled) return;
  state.signup = !state.signup;
  showError(null);
  renderAuthMode();
});

$('auth-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const label = state.signup ? 'Creating account…' : 'Logging in…';
  extras.notify('');
  busy($('auth-submit'), label, () => guard(async () => {
    const email = $('email').value.trim();
    const password = $('password').value;
    if (state.signup) {
      await account.create({ userId: ID.unique(), email, password, name: $('name').value.trim() || undefined });
    }
    await account.createEmailPasswordSession({ email, password });
    $('password').value = '';
    await enter();
  }), $('auth-fields'));
});

$('logout').addEventListener('click', () => busy($('logout'), 'Logging out…', () => guard(async () => {
  await flushDeletes();
  await account.deleteSession({ sessionId: 'current' });
  await signedOut();
})));

/** Forget the signed-in user and show an empty log-in form. */
async function signedOut() {
  state.user = null;
  finishToast(false);
  showError(null);
  await unsubscribe();
  for (const key of ['notes', 'uploads', 'uploadEvents', 'replacing', 'editing', 'deleting']) state[key].clear();
  state.more = false;
  state.cursor = null;
  files.dropPreviews();
  state.signup = false;
  state.search = '';
  $('search').value = '';
  $('note-form').reset();
  $('auth-form').reset();
  $('list').replaceChildren();
  showAuth();
}

$('note-form').addEventListener('submit', (event) => {
  event.preventDefault();
  busy($('note-add'), 'Adding…', () => guard(async () => {
    const row = await tables.createRow({
      databaseId: cfg.database,
      tableId: cfg.table,
      rowId: ID.unique(),
      data: {
        title: $('note-title').value.trim(), body: $('note-body').value, owner: state.user.$id,
        searchText: searchText($('note-title').value.trim(), $('note-body').value),
      },
      permissions: ownerPermissions(),
    });
    $('note-form').reset();
    if (matchesView(row)) state.notes.set(row.$id, row);
    render();
  }), $('note-fields')).then(() => {
    // After busy() enabled the form again (a disabled field cannot take the focus): ready for
    // the next note.
    if (state.user) $('note-title').focus();
  });
});

$('more').addEventListener('click', () => busy($('more'), 'Loading…', () => guard(loadMore)));

let searchTimer;
$('search').addEventListener('input', (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.search = event.target.value.trim();
    loadNotes();
  }, 200);
});

// A hidden page may never come back: run the deletes still waiting for their Undo now.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden') finishToast(false);
  // Back on the page: a session ended meanwhile shows the log-in form now, not on the next click.
  else if (state.user) account.get().catch((err) => sessionGone(err));
});

async function start() {
  if (!cfg.project) {
    showAuth();
    showError(new Error('This page has no project configured: run setup.py, or add ?project=<id> to the URL.'));
  } else {
    await extras.beforeStart();
    try {
      await enter();
    } catch (err) {
      if (!(err instanceof AppwriteException && err.code === 401)) showError(err);
      showAuth();
    }
  }
  // Tests wait for this: the session is restored and the list is loaded.
  document.body.dataset.ready = 'true';
}

start();
