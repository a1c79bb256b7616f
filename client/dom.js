// Small DOM and formatting helpers. User data only ever goes in as text:
// h() sets strings with textContent (through text nodes), never innerHTML.

import { t, tn, has, ordinal as placeWord, decimalSign } from './i18n.js';

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  el._made = true;
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      listen(el, key.slice(2), value);
    } else if (key === 'class') {
      el.className = value;
    } else if (key === 'text') {
      el.textContent = value;
    } else if (key === 'style' && typeof value === 'object') {
      for (const [prop, v] of Object.entries(value)) el.style.setProperty(prop, v);
    } else if (key in el && typeof value !== 'string') {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// Handlers given to h() are kept on the element, behind one listener per
// event type, so that patch() can hand a kept element its new handlers.
function listen(el, type, handler) {
  if (!el._on) el._on = {};
  if (!(type in el._on)) el.addEventListener(type, dispatch);
  el._on[type] = handler;
}

function dispatch(e) {
  const handler = this._on && this._on[e.type];
  if (handler) return handler.call(this, e);
  return undefined;
}

// Like clear(), but the elements already there stay where the new ones are
// of the same kind: same tag and key (data-key, data-player or id), given the
// new attributes, text and handlers. A button under a pressed mouse or a
// finger is never swapped for another between down and up, so no press is
// lost however often a live page redraws (elements of other modules, with
// listeners of their own, are only ever appended: see sameKind).
export function patch(el, ...children) {
  const fresh = document.createDocumentFragment();
  append(fresh, children);
  patchChildren(el, fresh);
  return el;
}

function keyOf(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  return node.getAttribute('data-key') ?? node.getAttribute('data-player') ?? (node.id || null);
}

// Only elements made by h() are patched (their handlers are known); text too.
function sameKind(old, node) {
  if (old.nodeType !== node.nodeType) return false;
  if (node.nodeType === Node.TEXT_NODE) return true;
  return node.nodeType === Node.ELEMENT_NODE && old.tagName === node.tagName
    && old._made === true && node._made === true && keyOf(old) === keyOf(node);
}

function patchChildren(el, fresh) {
  let at = el.firstChild;
  for (const node of [...fresh.childNodes]) {
    const key = keyOf(node);
    let match = null;
    if (key !== null) {
      for (let c = at; c; c = c.nextSibling) {
        if (keyOf(c) === key) {
          if (sameKind(c, node)) match = c;
          break;
        }
      }
    } else if (at && keyOf(at) === null && sameKind(at, node)) {
      match = at;
    }
    if (!match) {
      el.insertBefore(node, at);
    } else {
      if (match === at) at = at.nextSibling;
      else el.insertBefore(match, at); // moved: the same element, under the pointer too
      patchNode(match, node);
    }
  }
  while (at) {
    const next = at.nextSibling;
    at.remove();
    at = next;
  }
}

function patchNode(old, node) {
  if (node.nodeType === Node.TEXT_NODE) {
    if (old.data !== node.data) old.data = node.data;
    return;
  }
  for (const { name, value } of [...node.attributes]) {
    if (old.getAttribute(name) === value) continue;
    // Styles through the CSSOM: the page's policy refuses inline style attributes.
    if (name === 'style') old.style.cssText = node.style.cssText;
    else old.setAttribute(name, value);
  }
  for (const { name } of [...old.attributes]) {
    if (!node.hasAttribute(name)) old.removeAttribute(name);
  }
  for (const [type, handler] of Object.entries(node._on || {})) listen(old, type, handler);
  for (const type of Object.keys(old._on || {})) {
    if (!node._on || !(type in node._on)) old._on[type] = null;
  }
  patchChildren(old, node);
}

// "m:ss" or "h:mm:ss" for a duration in milliseconds.
export function clock(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

// Why a result is held for review, in the player's language: the server
// writes each limit passed in English with its figures (race/review.py),
// joined by "; "; each is read back and said again. Words it does not know
// stay as the server wrote them.
const HELD = [
  [/^median time between actions (\d+) ms \(a human needs (\d+) ms\)$/, (m) => t('held.median', { ms: Number(m[1]), limit: Number(m[2]) })],
  [/^(\d+) of (\d+) actions under (\d+) ms after the previous one \(at most (\d+)%\)$/, (m) => t('held.fast', { fast: Number(m[1]), count: Number(m[2]), limit: Number(m[3]), share: `${m[4]} %` })],
  [/^won in (\S+): par (\d+) takes a human at least (\S+)$/, (m) => t('held.par', { time: m[1], par: Number(m[2]), least: m[3] })],
  [/^line of play under review$/, () => t('held.line')],
];

export function heldText(reason) {
  return String(reason || '').split('; ').map((part) => {
    for (const [pattern, say] of HELD) {
      const match = pattern.exec(part);
      if (match) return say(match);
    }
    return part;
  }).join('; ');
}

// "m:ss.t": a result's time to the tenth, with the language's decimal sign.
export function clockTenths(ms) {
  const whole = clock(ms);
  const tenth = Math.floor(Math.max(0, ms) / 100) % 10;
  return `${whole}${decimalSign()}${tenth}`;
}

export const ordinal = (n) => placeWord(n);

// What a refusal means, in the player's language: the server's code is
// stable, its English reason the fallback for a code the catalog lacks.
export function errorText(code, reason) {
  if (code && has(`error.${code}`)) return t(`error.${code}`);
  return reason || code || t('error.refused');
}

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API refused (no permission, insecure origin): select-and-copy.
    const area = h('textarea', { readonly: true, class: 'offscreen' }, text);
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

// A "Copy" button that copies what getText() returns and says so.
export function copyButton(getText, label = t('common.copy')) {
  // The button clicked, not the one made here: patch() may keep an older one.
  return h('button', { type: 'button', class: 'copy', onclick: async (e) => {
    const button = e.currentTarget;
    const ok = await copyText(getText());
    button.textContent = ok ? t('common.copied') : t('common.copy_manually');
    setTimeout(() => { button.textContent = label; }, 1500);
  } }, label);
}

let toastTimer = 0;

// A short message at the bottom of the screen (also read by screen readers).
export function toast(message, kind = 'info', ms = 3500) {
  const el = document.getElementById('toast');
  if (!el) return;
  el.textContent = message;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, ms);
}

// Say something to screen readers (the page's polite live region).
export function say(text) {
  const live = document.getElementById('live');
  if (!live) return;
  // The same words twice in a row are read again only if the text changes.
  live.textContent = live.textContent === text ? `${text}.` : text;
}

// A toast belongs to the page that showed it.
export function hideToast() {
  clearTimeout(toastTimer);
  const el = document.getElementById('toast');
  if (el) el.hidden = true;
}

// JSON over fetch; throws an Error carrying the server's reason and status.
export async function api(method, path, body, headers = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    const error = new Error(t('error.unreachable'));
    error.status = 0;
    throw error;
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const code = data && data.error && data.error.code;
    const reason = data && data.error && data.error.reason;
    const error = new Error(code ? errorText(code, reason) : t('error.status', { status: response.status }));
    error.status = response.status;
    error.code = code;
    error.reason = reason; // the server's own words (English), for logs
    throw error;
  }
  return data;
}

// Where the player was before the account's pages: signing up or in leads back there.
let place = null;

export function notePlace(path) {
  if (!/^\/account(\/|$|\?)/.test(path)) place = path;
}

export function placeBefore() {
  if (place) return place;
  // A first page load at /account: the page that linked here, if it is this site's.
  try {
    const from = new URL(document.referrer);
    if (from.origin === location.origin && !from.pathname.startsWith('/account')) return from.pathname + from.search;
  } catch {
    // No referrer.
  }
  return '/';
}

let mine; // a promise of the signed-in account (or null), asked once per page load

export function whoAmI(fresh = false) {
  if (fresh || !mine) mine = api('GET', '/api/me').then((answer) => answer.account, () => null);
  return mine;
}

let signedInListener = null;

// Who wants to know when an account signs in (the app: its language follows).
export function onSignIn(listener) {
  signedInListener = listener;
}

// After signing in or out: remember who, and show it in the header.
export function setMe(account) {
  mine = Promise.resolve(account);
  showAccountLink();
  if (account && signedInListener) signedInListener(account);
}

// The header's link: "Sign in", or the account's name.
export async function showAccountLink() {
  const link = document.getElementById('account-link');
  // The page's own English waits for no answer: the player's words at once.
  if (link && !link.dataset.shown) link.textContent = t('nav.sign_in');
  const me = await whoAmI();
  if (!link) return;
  link.dataset.shown = 'yes';
  link.textContent = me ? me.name : t('nav.sign_in');
  link.href = me ? me.url : '/account';
  // The review desk's link, for moderators only (the desk's routes refuse anyone else).
  const desk = document.getElementById('desk-link');
  if (desk) desk.hidden = !(me && me.moderator);
}

// A signed-in player plays as their account: its name instead of a name field.
export function playingAs(me) {
  return h('span', { class: 'playing-as' }, tn('name.playing_as', { name: h('strong', {}, me.name) }));
}

// Saved state: the display name and, per race, the host key and token.
const NAME_KEY = 'boulanger.name';

export function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || '';
  } catch {
    return '';
  }
}

export function saveName(name) {
  try {
    localStorage.setItem(NAME_KEY, name);
  } catch {
    // Private mode: the name is simply not remembered.
  }
}

export function raceCreds(raceId) {
  try {
    return JSON.parse(localStorage.getItem(`boulanger.race.${raceId}`)) || {};
  } catch {
    return {};
  }
}

export function saveRaceCreds(raceId, changes) {
  const creds = { ...raceCreds(raceId), ...changes, at: Date.now() };
  for (const key of Object.keys(creds)) if (creds[key] === null) delete creds[key];
  try {
    localStorage.setItem(`boulanger.race.${raceId}`, JSON.stringify(creds));
  } catch {
    // Without storage a reload joins as a new player; the live page still works.
  }
  return creds;
}

const PLAYER_KEY = 'boulanger.player_key';

// This browser's secret player key (the server keeps only its hash).
export function playerKey() {
  let key = null;
  try {
    key = localStorage.getItem(PLAYER_KEY);
  } catch {
    key = null;
  }
  if (key && /^[A-Za-z0-9._~-]{16,128}$/.test(key)) return key;
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  key = btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  try {
    localStorage.setItem(PLAYER_KEY, key);
  } catch {
    // Without storage the key lasts as long as the page.
  }
  return key;
}

// -- ghosts: records raced again in practice (ghost.js draws them) --------------

// Only records of this server: a race player's or a daily entry's.
const RECORD = /^\/api\/(races\/[A-Za-z0-9_-]{1,64}\/records\/[A-Za-z0-9_-]{1,64}|daily\/\d{4}-\d{2}-\d{2}\/records\/\d{1,12})$/;
const BEST_PREFIX = 'boulanger.best.';

export const isRecordPath = (path) => typeof path === 'string' && RECORD.test(path);

// The practice page that races a record's ghost.
export function ghostLink(path, name) {
  return `/practice?ghost=${encodeURIComponent(path)}&name=${encodeURIComponent(name || t('ghost.default_name'))}`;
}

// Better: a win beats no win, a faster win a slower one, more cards fewer.
function better(a, b) {
  if (!b) return true;
  if (a.won !== b.won) return a.won;
  if (a.won) return a.time_ms < b.time_ms;
  return a.cards > b.cards;
}

// Remember a finished game of mine if it is my best of its deal; answer the best.
export function keepBest(code, game) {
  if (!code) return null;
  let best = null;
  try {
    best = JSON.parse(localStorage.getItem(BEST_PREFIX + code));
  } catch {
    best = null;
  }
  if (game && (best === null || best.path === game.path || better(game, best))) {
    best = game;
    try {
      localStorage.setItem(BEST_PREFIX + code, JSON.stringify(best));
    } catch {
      // Without storage there is no best to race later.
    }
  }
  return best;
}
