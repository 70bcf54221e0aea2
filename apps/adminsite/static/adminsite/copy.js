// "Copy" buttons: <button data-copy-target="ID"> copies the text of the element with that ID.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-copy-target]');
  if (!button) return;
  const text = document.getElementById(button.dataset.copyTarget).textContent.trim();
  const status = document.getElementById('copy-status');
  try {
    await navigator.clipboard.writeText(text);
    if (status) status.textContent = 'Copied.';
  } catch (err) {
    // No clipboard access (an http:// page on another host): select the text for Ctrl+C.
    const range = document.createRange();
    range.selectNodeContents(document.getElementById(button.dataset.copyTarget));
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    if (status) status.textContent = 'Selected: press Ctrl+C to copy.';
  }
});
