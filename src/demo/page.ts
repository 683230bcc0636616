import { escapeHtml, slackDateText } from './render.js';

/**
 * The demo page's shell, style and script, served by the demo itself (no CDN, nothing from the
 * network: the page's Content-Security-Policy allows only its own origin). The server renders
 * every message, the App Home and the side panel to HTML (src/demo/server.ts); the script only
 * fetches that, shows dates in the reader's time zone, and sends what the reader does.
 */

/** Suggestions under the message box: each fills the box with its text. */
export interface Suggestion {
  label: string;
  text: string;
}

export function pageHtml(suggestions: readonly Suggestion[]): string {
  const chips = suggestions
    .map(
      (s) =>
        `<button type="button" class="chip" data-fill="${escapeHtml(s.text)}" title="${escapeHtml(s.text)}">${escapeHtml(s.label)}</button>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crypto Payments — local demo</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/demo.css">
<script src="/demo.js" defer></script>
</head>
<body class="starting">
<aside class="sidebar">
  <div class="workspace">Demo workspace</div>
  <div class="sidebar-label">Channels</div>
  <button type="button" class="nav active" data-tab="channel"><span class="lock">🔒</span> payments</button>
  <div class="sidebar-label">Apps</div>
  <button type="button" class="nav" data-tab="home">Crypto Payments</button>
  <p class="sidebar-note">A local stand-in for Slack. Nothing here reaches Slack or a real payment service.</p>
</aside>
<main class="main">
  <div class="banner">Local demo: the real bot, answering a Slack stand-in, on the sandbox payment service. <span class="starting-note">The bot is starting…</span></div>
  <section id="channel" class="pane">
    <header class="pane-header"><strong>🔒 payments</strong><span class="muted">Private channel · you and Crypto Payments</span></header>
    <div id="feed" class="feed" aria-live="polite"></div>
    <form id="composer" class="composer" autocomplete="off">
      <input id="message" name="message" aria-label="Message #payments" placeholder="Message #payments — try /balance, /invoice &lt;id or link&gt;, or paste a payment link">
      <button type="submit">Send</button>
    </form>
    <div class="chips">${chips}</div>
  </section>
  <section id="home" class="pane" hidden>
    <header class="pane-header"><strong>Crypto Payments</strong><span class="muted">App Home</span></header>
    <div id="home-view" class="feed home-view" data-place="home"><p class="muted">Opening…</p></div>
  </section>
</main>
<div id="modal" class="modal-backdrop" hidden></div>
<aside class="panel">
  <h2>Play the other side</h2>
  <p class="muted">The customer and the merchant, on the sandbox payment service. Watches and the payments feed notice within seconds.</p>
  <div id="panel-body"></div>
</aside>
</body>
</html>
`;
}

export const PAGE_CSS = `
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { display: grid; grid-template-columns: 200px 1fr 320px; font: 15px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1d1c1d; background: #fff; }
button { font: inherit; cursor: pointer; }
.muted { color: #616061; font-size: 13px; }
.sidebar { background: #3f0e40; color: #cfc3cf; padding: 12px 8px; display: flex; flex-direction: column; gap: 2px; }
.workspace { color: #fff; font-weight: 700; font-size: 17px; padding: 4px 8px 12px; }
.sidebar-label { font-size: 13px; padding: 10px 8px 2px; }
.nav { background: none; border: 0; color: inherit; text-align: left; padding: 4px 8px; border-radius: 6px; }
.nav.active { background: #1164a3; color: #fff; }
.lock { font-size: 11px; }
.sidebar-note { font-size: 12px; padding: 12px 8px; margin-top: auto; }
.main { display: flex; flex-direction: column; min-width: 0; height: 100vh; }
.banner { background: #fff4d6; border-bottom: 1px solid #f2d58a; padding: 6px 16px; font-size: 13px; }
.starting-note { display: none; font-weight: 700; }
body.starting .starting-note { display: inline; }
.pane { display: flex; flex-direction: column; flex: 1; min-height: 0; }
.pane[hidden] { display: none; }
.pane-header { display: flex; gap: 12px; align-items: baseline; padding: 10px 16px; border-bottom: 1px solid #ddd; }
.feed { flex: 1; overflow-y: auto; padding: 8px 0; }
.home-view { padding: 16px 20px; }
.empty { padding: 0 16px; }
.msg { display: flex; gap: 8px; padding: 6px 16px; position: relative; }
.msg:hover { background: #f8f8f8; }
.avatar { width: 36px; height: 36px; border-radius: 6px; flex: none; display: grid; place-items: center; color: #fff; font-weight: 700; font-size: 13px; background: #2bac76; }
.avatar.bot { background: #1264a3; }
.avatar.slackbot { background: #e01e5a; }
.msg-body { min-width: 0; flex: 1; }
.msg-meta { display: flex; gap: 6px; align-items: baseline; flex-wrap: wrap; }
.msg-name { font-weight: 700; }
.app-tag { font-size: 10px; background: #e8e8e8; color: #616061; padding: 0 3px; border-radius: 2px; }
.msg-time, .edited { color: #616061; font-size: 12px; }
.only-you { color: #616061; font-size: 12px; font-style: italic; }
.msg.ephemeral > .msg-body { border-left: 3px solid #ccc; padding-left: 8px; }
.msg.command .msg-content { font-family: Menlo, Consolas, monospace; font-size: 13px; color: #616061; }
.msg-content, .bk-text, .bk-field, .bk-context-text { overflow-wrap: anywhere; }
.shortcut { position: absolute; top: 4px; right: 16px; opacity: 0; border: 1px solid #ddd; background: #fff; border-radius: 6px; font-size: 12px; padding: 2px 8px; }
.msg:hover > .msg-body > .shortcut, .shortcut:focus { opacity: 1; }
.unfurl { border-left: 4px solid #ddd; padding: 2px 10px; margin: 6px 0; }
.unfurl-url { font-size: 12px; color: #616061; overflow-wrap: anywhere; }
.thread { margin: 6px 0 0; padding-left: 10px; border-left: 2px solid #e3e3e3; }
.thread-count { color: #1264a3; font-size: 13px; font-weight: 700; }
.thread .msg { padding: 4px 0; }
.thread .msg .shortcut { right: 0; }
.composer { display: flex; gap: 8px; padding: 10px 16px 4px; }
.composer input { flex: 1; min-width: 0; padding: 10px 12px; border: 1px solid #bbb; border-radius: 8px; font: inherit; }
.composer button { border: 0; background: #007a5a; color: #fff; border-radius: 8px; padding: 0 16px; }
.chips { display: flex; gap: 6px; flex-wrap: wrap; padding: 4px 16px 12px; }
.chip { border: 1px solid #ddd; background: #f8f8f8; border-radius: 12px; font-size: 12px; padding: 2px 10px; max-width: 300px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.panel { border-left: 1px solid #ddd; padding: 12px 16px; overflow-y: auto; height: 100vh; background: #fbfbfb; }
.panel h2 { font-size: 16px; margin: 0 0 4px; }
.panel h3 { font-size: 14px; margin: 16px 0 6px; }
.invoice { border: 1px solid #e3e3e3; background: #fff; border-radius: 8px; padding: 8px; margin-bottom: 8px; }
.invoice-title { font-weight: 700; font-size: 14px; }
.invoice-state, .invoice-id { font-size: 12px; color: #616061; overflow-wrap: anywhere; }
.row { display: flex; gap: 4px; flex-wrap: wrap; margin-top: 6px; }
.row button, .balance button, .reset { border: 1px solid #bbb; background: #fff; border-radius: 6px; font-size: 12px; padding: 2px 8px; }
.balance { display: grid; grid-template-columns: 1fr 110px auto; gap: 4px; align-items: center; font-size: 13px; margin-bottom: 4px; }
.balance input { width: 100%; font: 12px Menlo, Consolas, monospace; padding: 2px 4px; }
.balance-error { grid-column: 1 / -1; color: #e01e5a; font-size: 12px; }
.balance-error:empty { display: none; }
.bk-header { font-weight: 700; font-size: 17px; margin: 4px 0; }
.bk-section { display: flex; gap: 12px; margin: 4px 0; }
.bk-section-main { flex: 1; min-width: 0; }
.bk-fields { display: grid; grid-template-columns: 1fr 1fr; gap: 6px 16px; margin-top: 4px; }
.bk-context { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; font-size: 12px; color: #616061; margin: 4px 0; }
.bk-context-image { width: 16px; height: 16px; }
.bk-divider { border: 0; border-top: 1px solid #ddd; margin: 10px 0; }
.bk-actions { display: flex; gap: 8px; flex-wrap: wrap; margin: 6px 0; }
.modal-backdrop { position: fixed; inset: 0; background: rgba(0,0,0,.45); display: flex; align-items: flex-start; justify-content: center; padding-top: 6vh; z-index: 10; }
.modal-backdrop[hidden] { display: none; }
.modal { background: #fff; border-radius: 8px; width: 520px; max-height: 86vh; display: flex; flex-direction: column; box-shadow: 0 18px 48px rgba(0,0,0,.35); }
.modal-title { font-weight: 700; font-size: 20px; padding: 18px 24px 10px; }
.modal-body { overflow-y: auto; padding: 4px 24px 12px; }
.modal-actions { display: flex; justify-content: flex-end; gap: 8px; padding: 14px 24px; border-top: 1px solid #ddd; }
.modal-actions button { border: 1px solid #bbb; background: #fff; border-radius: 6px; padding: 6px 14px; font-weight: 700; }
.modal-actions .bk-primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.bk-input { margin: 12px 0; }
.bk-label { display: block; font-weight: 700; margin-bottom: 6px; }
.bk-field-input { width: 100%; font: inherit; border: 1px solid #bbb; border-radius: 6px; padding: 6px 8px; }
.bk-radios { display: flex; flex-direction: column; gap: 4px; }
.bk-hint { color: #616061; font-size: 13px; margin-top: 4px; }
.bk-input-invalid .bk-field-input { border-color: #e01e5a; }
.bk-input-error { color: #e01e5a; font-size: 13px; margin-top: 4px; }
.bk-button { border: 1px solid #bbb; background: #fff; border-radius: 6px; padding: 3px 12px; font-weight: 700; font-size: 13px; }
.bk-button:hover { background: #f4f4f4; }
.bk-button:disabled { opacity: .5; cursor: progress; }
.bk-primary { background: #007a5a; border-color: #007a5a; color: #fff; }
.bk-danger { background: #e01e5a; border-color: #e01e5a; color: #fff; }
.bk-external { font-weight: 400; }
.bk-image img, .bk-image-img { max-width: 360px; max-height: 240px; border-radius: 6px; }
.bk-accessory-image { width: 64px; height: 64px; border-radius: 6px; }
.bk-unknown { border: 1px dashed #e01e5a; color: #e01e5a; padding: 4px 8px; font-size: 13px; margin: 4px 0; }
.bk-mention { background: #e8f5fa; color: #1264a3; border-radius: 3px; padding: 0 2px; }
.bk-quote { border-left: 4px solid #ddd; padding-left: 8px; display: inline-block; }
.bk-pre { background: #f8f8f8; border: 1px solid #e3e3e3; border-radius: 4px; padding: 8px; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
code { background: #f3f3f3; border: 1px solid #e3e3e3; border-radius: 3px; padding: 0 3px; color: #c01343; font: 12px Menlo, Consolas, monospace; }
a { color: #1264a3; }
/* A narrow window (a phone, half a laptop screen): one column. The sidebar becomes a bar on top,
   the channel fills the screen under it with the message box at its foot, and the side panel
   follows below instead of covering the channel (test/e2e/demo-browser.test.ts, at 480 pixels). */
@media (max-width: 820px) {
  body { display: block; }
  .sidebar { flex-direction: row; align-items: center; flex-wrap: nowrap; overflow-x: auto; height: 44px; padding: 4px 8px; }
  .workspace { padding: 4px 8px; font-size: 15px; white-space: nowrap; }
  .sidebar-label, .sidebar-note { display: none; }
  .nav { white-space: nowrap; }
  .main { height: calc(100vh - 44px); height: calc(100dvh - 44px); }
  .panel { height: auto; overflow-y: visible; border-left: 0; border-top: 1px solid #ddd; }
  .pane-header { flex-wrap: wrap; }
  .bk-fields { grid-template-columns: 1fr; }
  .bk-image img, .bk-image-img { max-width: 100%; }
}
`;

/**
 * The page's script; it carries `slackDateText` itself, so dates read as the tested function
 * writes them. Under tsx (npm run dev) esbuild keeps function names by wrapping them in
 * __name(): the page gets a no-op of its own so the embedded function runs there too.
 */
export const PAGE_SCRIPT = `'use strict';
const __name = (f) => f;
const slackDateText = ${slackDateText.toString()};
const byId = (id) => document.getElementById(id);
const shown = { version: -1, feed: null, home: null, panel: null, modal: null };
let loading = false;
let again = false;
let latestPanel = '';
const typingInPanel = () => {
  const active = document.activeElement;
  return Boolean(active && active.tagName === 'INPUT' && byId('panel-body').contains(active));
};

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body || {}),
  });
  return response.ok ? null : (await response.text()) || 'failed';
}

function formatDates(root) {
  for (const time of root.querySelectorAll('time.bk-date')) {
    time.textContent = slackDateText(Number(time.dataset.ts), time.dataset.format, Date.now());
    time.title = time.getAttribute('datetime');
  }
}

function replace(id, key, html) {
  if (shown[key] === html) return false;
  shown[key] = html;
  const element = byId(id);
  element.innerHTML = html;
  formatDates(element);
  return true;
}

function show(state) {
  const feed = byId('feed');
  const atBottom = feed.scrollHeight - feed.scrollTop - feed.clientHeight < 60;
  if (replace('feed', 'feed', state.feed) && atBottom) feed.scrollTop = feed.scrollHeight;
  if (state.home !== null) replace('home-view', 'home', state.home);
  byId('modal').hidden = state.modal === null;
  replace('modal', 'modal', state.modal || '');
  // Typing a balance is not interrupted: the panel waits until the field is left.
  latestPanel = state.panel;
  if (!typingInPanel()) replace('panel-body', 'panel', latestPanel);
  document.body.classList.toggle('starting', !state.ready);
}

async function refresh() {
  if (loading) {
    again = true;
    return;
  }
  loading = true;
  try {
    const state = await (await fetch('/demo/state', { cache: 'no-store' })).json();
    if (state.version !== shown.version) {
      shown.version = state.version;
      show(state);
    }
  } catch (error) {
    console.warn('could not read the demo state', error);
  } finally {
    loading = false;
    if (again) {
      again = false;
      refresh();
    }
  }
}

function openTab(tab) {
  for (const nav of document.querySelectorAll('.nav')) nav.classList.toggle('active', nav.dataset.tab === tab);
  byId('channel').hidden = tab !== 'channel';
  byId('home').hidden = tab !== 'home';
  if (tab === 'home') post('/demo/home');
}

document.addEventListener('click', async (event) => {
  const button = event.target.closest('button');
  if (!button) return;
  const data = button.dataset;
  if (data.panelAction) {
    await post('/demo/panel', { actionId: data.panelAction });
  } else if (data.entity) {
    await post('/demo/entity', { ts: data.entity, ref: data.ref, url: data.entityUrl });
  } else if (data.closePanel !== undefined) {
    await post('/demo/panel-close');
  } else if (button.classList.contains('bk-button')) {
    const place = button.closest('[data-place]');
    if (!place) return;
    if (data.url) window.open(data.url, '_blank', 'noopener');
    button.disabled = true;
    try {
      await post('/demo/click', { place: place.dataset.place, ts: place.dataset.ts, blockId: data.blockId, actionId: data.actionId });
    } finally {
      button.disabled = false;
    }
  } else if (data.modalClose !== undefined) {
    await post('/demo/close-modal');
  } else if (data.tab) {
    openTab(data.tab);
  } else if (data.shortcut) {
    await post('/demo/shortcut', { ts: data.shortcut });
  } else if (data.fill) {
    openTab('channel');
    byId('message').value = data.fill;
    byId('message').focus();
  } else if (data.invoice) {
    await post('/demo/invoice', { id: data.invoice, change: data.change });
  } else if (data.reset !== undefined) {
    await post('/demo/reset');
  } else if (data.digestNow !== undefined) {
    button.disabled = true;
    const problem = await post('/demo/digest');
    button.disabled = false;
    button.parentElement.querySelector('.digest-error').textContent = problem || '';
  }
});

/** What the person typed or picked in each of the modal's inputs, by block id. */
function modalValues(form) {
  const values = {};
  for (const input of form.querySelectorAll('[data-block-id]')) {
    const type = input.dataset.type;
    const field = input.querySelector(type === 'radio_buttons' ? 'input:checked' : 'textarea, select, input');
    values[input.dataset.blockId] = type === 'multi_static_select'
      ? { type, values: [...input.querySelector('select').selectedOptions].map((o) => o.value) }
      : { type, value: field ? field.value : null };
  }
  return values;
}

document.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  if (form.id === 'composer') {
    const input = byId('message');
    const text = input.value;
    if (text.trim() === '') return;
    input.value = '';
    await post('/demo/say', { text });
  } else if (form.id === 'modal-form') {
    await post('/demo/submit', { values: modalValues(form) });
  } else if (form.dataset.balance) {
    const problem = await post('/demo/balance', { id: form.dataset.balance, balance: form.elements.balance.value });
    form.querySelector('.balance-error').textContent = problem || '';
    if (!problem) form.elements.balance.blur();
  }
});

document.addEventListener('focusout', () => {
  setTimeout(() => {
    if (latestPanel && !typingInPanel()) replace('panel-body', 'panel', latestPanel);
  });
});

new EventSource('/demo/events').onmessage = refresh;
setInterval(() => formatDates(document), 30000);
refresh();
`;
