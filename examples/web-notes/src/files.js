// A note's attachment: upload with progress, download link, image preview.
import { ID, Permission, Role } from 'appwrite';

export const IMAGE = /\.(png|jpe?g|gif|webp)$/i;

/** Files of ``cfg.bucket`` through ``storage``, for the signed-in ``userId()``. */
export function attachments({ cfg, storage, userId }) {
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

  /** Fill ``li``'s attachment box for ``note`` (``guard`` reports a failed download). */
  function renderAttachment(li, note, guard) {
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

  /** Upload ``file``, calling ``onProgress(percent, events)`` per chunk the SDK reports (5 MiB;
   * a small file goes in one request without any). Resolves to the created file. */
  function upload(file, onProgress) {
    const me = Role.user(userId());
    return storage.createFile({
      bucketId: cfg.bucket,
      fileId: ID.unique(),
      file,
      permissions: [Permission.read(me), Permission.update(me), Permission.delete(me)],
      onProgress: (progress) => onProgress(progress.progress),
    });
  }

  function remove(fileId) {
    storage.deleteFile({ bucketId: cfg.bucket, fileId }).catch((err) => console.warn('file delete:', err));
  }

  return { renderAttachment, dropPreviews, upload, remove };
}
