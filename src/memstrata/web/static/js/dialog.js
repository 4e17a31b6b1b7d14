// Modal dialogs on the native <dialog> element: shown with showModal(), so the rest of the
// page is inert while it is open; Tab and Shift+Tab stay inside it, Escape closes it, and
// focus goes back to where it was when it opened.
//
//   const dialog = openDialog({title, content, actions: [{label, onClick, primary}], onClose});
//   dialog.close();
//
// `content` is a node or an array of nodes (built with dom.js h()); an action's onClick gets
// the dialog and closes it unless it returns false (or a promise of false).

import { h } from './dom.js';
import { t } from './i18n.js';

let counter = 0;

function focusable(root) {
  return [...root.querySelectorAll(
    'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), '
    + 'textarea:not([disabled]), [tabindex]:not([tabindex="-1"])',
  )].filter((el) => !el.hidden && el.getClientRects().length > 0);
}

export function openDialog({ title, content = [], actions = [], onClose = null, className = null }) {
  const opener = document.activeElement;
  const titleId = `dialog-title-${++counter}`;
  const buttons = actions.map((action) => h('button', {
    type: 'button', class: action.primary ? 'primary' : (action.danger ? 'danger' : null),
    onclick: async () => {
      const keep = action.onClick ? await action.onClick(handle) : true;
      if (keep !== false) handle.close();
    },
  }, action.label));
  const closeButton = h('button', { type: 'button', class: 'dialog-close', onclick: () => handle.close() },
    t('common.close'));
  const dialog = h('dialog', { class: ['dialog', className], 'aria-labelledby': titleId },
    h('h2', { id: titleId }, title),
    h('div', { class: 'dialog-body' }, content),
    h('div', { class: 'dialog-actions' }, buttons, closeButton));
  let closed = false;
  const handle = {
    element: dialog,
    close() {
      if (closed) return;
      closed = true;
      if (dialog.open) dialog.close();
      dialog.remove();
      if (opener && typeof opener.focus === 'function' && document.contains(opener)) opener.focus();
      if (onClose) onClose();
    },
  };
  dialog.addEventListener('cancel', (event) => { // Escape
    event.preventDefault();
    handle.close();
  });
  dialog.addEventListener('keydown', (event) => {
    if (event.key !== 'Tab') return;
    const items = focusable(dialog);
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  });
  document.body.appendChild(dialog);
  dialog.showModal();
  const target = buttons.find((b) => b.classList.contains('primary')) || focusable(dialog)[0];
  if (target) target.focus();
  return handle;
}
