import {
  Account, AppwriteException, Channel, Client, ID, Permission, Query, Realtime, Role, Storage, TablesDB,
} from 'appwrite';
import { loadConfig } from './config.js';
import { setupExtras } from './extras.js';
import './style.css';

const cfg = loadConfig();
const client = new Client().setEndpoint(cfg.endpoint).setProject(cfg.project);
const account = new Account(client);
const tables = new TablesDB(client);
const storage = new Storage(client);

const $ = (id) => document.getElementById(id);
// uploads: note ID -> { value, events, done }, so a re-render keeps showing an upload's progress.
const state = { user: null, notes: new Map(), uploads: new Map(), realtime: null, signup: false, search: '' };
const IMAGE = /\.(png|jpe?g|gif|webp)$/i;

// ---- helpers -------------------------------------------------------------------------------

function showError(err) {
  const box = $('error');
  if (!err) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  let text;
  if (err instanceof AppwriteException) {
    text = `${err.message}${err.type ? ` (${err.type})` : ''}`;
  } else if (err instanceof TypeError) {
    // fetch() rejects with a TypeError when CORS refuses the response or the server is down.
    text = `Network error: the server refused this origin or is unreachable (${err.message})`;
  } else {
    text = String(err?.message || err);
  }
  box.textContent = text;
  box.hidden = false;
  console.error('web-notes:', err);
}

async function guard(fn) {
  showError(null);
  try {
    return await fn();
  } catch (err) {
    showError(err);
    return undefined;
  }
}

function ownerPermissions() {
  const me = Role.user(state.user.$id);
  return [Permission.read(me), Permission.update(me), Permission.delete(me)];
}

// Cross-origin pages carry the session in localStorage (X-Fallback-Cookies), not in cookies,
// so file bytes are fetched with that header and shown from a blob URL. Same-origin pages use
// the SDK's URLs directly: the session cookie goes along.
async function fileUrl(url) {
  if (!cfg.crossOrigin) return url;
  const headers = {};
  const fallback = window.localStorage.getItem('cookieFallback');
  if (fallback) headers['X-Fallback-Cookies'] = fallback;
  const response = await fetch(url, { credentials: 'include', headers });
  if (!response.ok) throw new Error(`file request failed: HTTP ${response.status}`);
  return URL.createObjectURL(await response.blob());
}

// Preview blobs by SDK URL, so re-renders (every edit, every realtime event) reuse them.
const previews = new Map();

function previewUrl(url) {
  if (!previews.has(url)) {
    previews.set(url, fileUrl(url).catch((err) => {
      previews.delete(url);
      throw err;
    }));
  }
  return previews.get(url);
}

function dropPreviews() {
  for (const pending of previews.values()) {
    pending.then((url) => url.startsWith('blob:') && URL.revokeObjectURL(url), () => {});
  }
  previews.clear();
}

function setLive(value) {
  const pill = $('live');
  pill.dataset.state = value;
  pill.textContent = `live: ${value}`;
}

// ---- views ---------------------------------------------------------------------------------

function showAuth() {
  document.body.dataset.view = 'auth';
  $('auth').hidden = false;
  $('notes').hidden = true;
  $('logout').hidden = true;
  $('who').textContent = '';
  extras.signedOut();
  renderAuthMode();
}

function renderAuthMode() {
  $('auth-title').textContent = state.signup ? 'Create an account' : 'Log in';
  $('auth-submit').textContent = state.signup ? 'Sign up' : 'Log in';
  $('auth-toggle').textContent = state.signup ? 'Have an account? Log in' : 'No account? Sign up';
  $('name-row').hidden = !state.signup;
  $('password').autocomplete = state.signup ? 'new-password' : 'current-password';
}

async function showNotes(user) {
  state.user = user;
  document.body.dataset.view = 'notes';
  $('auth').hidden = true;
  $('notes').hidden = false;
  $('logout').hidden = false;
  $('who').textContent = user.name ? `${user.name} <${user.email}>` : user.email;
  extras.signedIn(user);
  await loadNotes();
  subscribe();
}

function sortedNotes() {
  return [...state.notes.values()].sort((a, b) => (a.$createdAt < b.$createdAt ? 1 : -1));
}

function render() {
  const list = $('list');
  list.replaceChildren(...sortedNotes().map(renderNote));
  $('count').textContent = `${state.notes.size} note${state.notes.size === 1 ? '' : 's'}`;
}

function renderNote(note) {
  const li = $('note-template').content.firstElementChild.cloneNode(true);
  li.dataset.id = note.$id;
  li.querySelector('.title').textContent = note.title;
  li.querySelector('.body').textContent = note.body || '';
  li.querySelector('.meta').textContent = new Date(note.$updatedAt).toLocaleString();
  if (note.fileId) renderAttachment(li, note);
  const upload = state.uploads.get(note.$id);
  if (upload) showProgress(li, upload);

  const view = li.querySelector('.view');
  const editor = li.querySelector('.editor');
  li.querySelector('.edit').addEventListener('click', () => {
    editor.querySelector('.edit-title').value = note.title;
    editor.querySelector('.edit-body').value = note.body || '';
    view.hidden = true;
    editor.hidden = false;
    editor.querySelector('.edit-title').focus();
  });
  editor.querySelector('.cancel').addEventListener('click', () => {
    editor.hidden = true;
    view.hidden = false;
  });
  editor.addEventListener('submit', (event) => {
    event.preventDefault();
    guard(async () => {
      const row = await tables.updateRow({
        databaseId: cfg.database, tableId: cfg.table, rowId: note.$id,
        data: { title: editor.querySelector('.edit-title').value, body: editor.querySelector('.edit-body').value },
      });
      state.notes.set(row.$id, row);
      render();
    });
  });
  li.querySelector('.delete').addEventListener('click', () => guard(async () => {
    await tables.deleteRow({ databaseId: cfg.database, tableId: cfg.table, rowId: note.$id });
    state.notes.delete(note.$id);
    render();
    if (note.fileId) {
      storage.deleteFile({ bucketId: cfg.bucket, fileId: note.fileId }).catch((err) => console.warn(err));
    }
  }));
  li.querySelector('.file').addEventListener('change', (event) => {
    const file = event.target.files[0];
    if (file) guard(() => attach(li, note, file));
  });
  return li;
}

function renderAttachment(li, note) {
  const box = li.querySelector('.attachment');
  box.hidden = false;
  const link = li.querySelector('.download');
  const download = storage.getFileDownload({ bucketId: cfg.bucket, fileId: note.fileId });
  link.textContent = `⬇ ${note.fileName || 'attachment'}`;
  link.download = note.fileName || 'attachment';
  if (cfg.crossOrigin) {
    link.href = '#';
    link.addEventListener('click', (event) => {
      event.preventDefault();
      guard(async () => {
        const a = document.createElement('a');
        a.href = await fileUrl(download);
        a.download = link.download;
        document.body.append(a);
        a.click();
        a.remove();
      });
    });
  } else {
    link.href = download;
  }
  if (IMAGE.test(note.fileName || '')) {
    const img = li.querySelector('.preview');
    img.alt = note.fileName;
    previewUrl(storage.getFilePreview({ bucketId: cfg.bucket, fileId: note.fileId, width: 480 }))
      .then((url) => { img.src = url; img.hidden = false; })
      .catch((err) => console.warn('preview:', err));
  }
}

function showProgress(li, upload) {
  const bar = li.querySelector('.progress');
  bar.hidden = false;
  bar.value = upload.value;
  bar.dataset.events = String(upload.events);
  bar.dataset.done = String(upload.done);
}

async function attach(li, note, file) {
  const upload = { value: 0, events: 0, done: false };
  state.uploads.set(note.$id, upload);
  const update = () => {
    const current = document.querySelector(`#list li[data-id="${note.$id}"]`);
    if (current) showProgress(current, upload);
  };
  update();
  // The SDK reports progress per 5 MiB chunk; a small file goes in one request without any.
  let uploaded;
  try {
    uploaded = await storage.createFile({
      bucketId: cfg.bucket,
      fileId: ID.unique(),
      file,
      permissions: ownerPermissions(),
      onProgress: (progress) => {
        upload.value = progress.progress;
        upload.events += 1;
        update();
      },
    });
  } catch (err) {
    state.uploads.delete(note.$id);
    li.querySelector('.progress').hidden = true;
    throw err;
  }
  Object.assign(upload, { value: 100, done: true });
  update();
  const row = await tables.updateRow({
    databaseId: cfg.database, tableId: cfg.table, rowId: note.$id,
    data: { fileId: uploaded.$id, fileName: file.name },
  });
  if (note.fileId) {
    storage.deleteFile({ bucketId: cfg.bucket, fileId: note.fileId }).catch((err) => console.warn(err));
  }
  state.notes.set(row.$id, row);
  render();
}

// ---- data ----------------------------------------------------------------------------------

function listQueries() {
  const queries = [Query.equal('owner', state.user.$id), Query.orderDesc('$createdAt'), Query.limit(100)];
  if (state.search) queries.push(Query.contains('title', state.search));
  return queries;
}

async function loadNotes() {
  await guard(async () => {
    const result = await tables.listRows({ databaseId: cfg.database, tableId: cfg.table, queries: listQueries() });
    state.notes = new Map(result.rows.map((row) => [row.$id, row]));
  });
  render();
}

function matchesView(row) {
  return row.owner === state.user?.$id && (!state.search || (row.title || '').includes(state.search));
}

function onRealtimeEvent(event) {
  const row = event.payload;
  if (!row || !row.$id) return;
  if (event.events.some((name) => name.endsWith('.delete'))) {
    state.notes.delete(row.$id);
  } else if (matchesView(row)) {
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
const extras = setupExtras({ client, account, cfg, guard, showError, signedIn: async () => showNotes(await account.get()) });

$('auth-toggle').addEventListener('click', (event) => {
  event.preventDefault();
  state.signup = !state.signup;
  renderAuthMode();
});

$('auth-form').addEventListener('submit', (event) => {
  event.preventDefault();
  guard(async () => {
    const email = $('email').value.trim();
    const password = $('password').value;
    if (state.signup) {
      await account.create({ userId: ID.unique(), email, password, name: $('name').value.trim() || undefined });
    }
    await account.createEmailPasswordSession({ email, password });
    $('password').value = '';
    await showNotes(await account.get());
  });
});

$('logout').addEventListener('click', () => guard(async () => {
  await unsubscribe();
  await account.deleteSession({ sessionId: 'current' });
  state.user = null;
  state.notes.clear();
  state.uploads.clear();
  dropPreviews();
  render();
  showAuth();
}));

$('note-form').addEventListener('submit', (event) => {
  event.preventDefault();
  guard(async () => {
    const row = await tables.createRow({
      databaseId: cfg.database,
      tableId: cfg.table,
      rowId: ID.unique(),
      data: { title: $('note-title').value, body: $('note-body').value, owner: state.user.$id },
      permissions: ownerPermissions(),
    });
    $('note-title').value = '';
    $('note-body').value = '';
    if (matchesView(row)) state.notes.set(row.$id, row);
    render();
  });
});

let searchTimer;
$('search').addEventListener('input', (event) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    state.search = event.target.value.trim();
    loadNotes();
  }, 200);
});

async function start() {
  if (!cfg.project) {
    showError(new Error('No project configured: run setup.py or add ?project=<id> to the URL.'));
    showAuth();
  } else {
    await extras.beforeStart();
    try {
      await showNotes(await account.get());
    } catch (err) {
      if (!(err instanceof AppwriteException && err.code === 401)) showError(err);
      showAuth();
    }
  }
  // Tests wait for this: the session is restored and the list is loaded.
  document.body.dataset.ready = 'true';
}

start();
