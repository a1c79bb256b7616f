// Languages: every word the client shows comes from the catalog of the
// player's language, one plain file per language (lang/<code>.json), and
// only the chosen one is fetched. Placeholders are named ("{name}"); a
// value that is an object holds plural forms, picked by Intl.PluralRules
// with the `count` placeholder. Numbers, dates, relative times and lists are
// formatted by Intl. Adding a language: its file, and one line in LANGUAGES
// (docs/translating.md).

export const LANGUAGES = [
  ['en', 'English'],
  ['da', 'Dansk'],
  ['sv', 'Svenska'],
  ['pl', 'Polski'],
  ['ro', 'Română'],
  ['ru', 'Русский'],
];
export const DEFAULT_LANGUAGE = 'en';

const KEY = 'boulanger.lang';
export const known = (code) => LANGUAGES.some(([c]) => c === code);

// One state per page, even if a module is loaded twice under two URLs (a
// versioned and a plain /static/ one): the words are the page's.
const state = globalThis.boulangerLanguage || (globalThis.boulangerLanguage = {
  lang: DEFAULT_LANGUAGE,
  strings: {},
  plurals: new Intl.PluralRules(DEFAULT_LANGUAGE),
  ordinals: new Intl.PluralRules(DEFAULT_LANGUAGE, { type: 'ordinal' }),
  numbers: new Intl.NumberFormat(DEFAULT_LANGUAGE, { useGrouping: 'min2' }),
});

export const language = () => state.lang;

function kept() {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

// The player's own choice, remembered in this browser.
export function keepLanguage(code) {
  try {
    localStorage.setItem(KEY, code);
  } catch {
    // Private mode: the choice lasts as long as the page.
  }
}

// A link's ?lang=xx, else the choice kept here, else the browser's languages
// in their order, else English.
export function pickLanguage() {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked && known(asked.toLowerCase())) {
    keepLanguage(asked.toLowerCase());
    return asked.toLowerCase();
  }
  const mine = kept();
  if (known(mine)) return mine;
  for (const tag of navigator.languages || [navigator.language]) {
    const base = String(tag || '').toLowerCase().split('-')[0];
    if (known(base)) return base;
  }
  return DEFAULT_LANGUAGE;
}

// Fetch a language's catalog and make it the page's; the page's own static
// words (index.html's data-i18n) are put right at once.
export async function useLanguage(code) {
  if (!known(code)) code = DEFAULT_LANGUAGE;
  let catalog = null;
  try {
    const response = await fetch(new URL(`./lang/${code}.json`, import.meta.url));
    if (response.ok) catalog = await response.json();
  } catch {
    catalog = null;
  }
  if (!catalog && code !== DEFAULT_LANGUAGE) return useLanguage(DEFAULT_LANGUAGE);
  Object.assign(state, {
    lang: code,
    strings: catalog || {},
    plurals: new Intl.PluralRules(code),
    ordinals: new Intl.PluralRules(code, { type: 'ordinal' }),
    numbers: new Intl.NumberFormat(code, { useGrouping: 'min2' }),
  });
  document.documentElement.lang = code;
  translatePage(document);
  return code;
}

function value(key, count) {
  const found = state.strings[key];
  if (found === undefined) return key;
  if (typeof found === 'string') return found;
  return found[state.plurals.select(Number(count) || 0)] ?? found.other ?? key;
}

const PLACEHOLDER = /\{(\w+)\}/g;

// A message with its placeholders filled: t('lobby.count', {count: 3}).
export function t(key, params = {}) {
  return value(key, params.count).replace(PLACEHOLDER, (whole, name) => (name in params ? show(params[name]) : whole));
}

// The same, for a message with elements in it (a link, a bold name): an
// array of strings and nodes to hand to h().
export function tn(key, params = {}) {
  const parts = [];
  const text = value(key, params.count);
  let at = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > at) parts.push(text.slice(at, match.index));
    const param = params[match[1]];
    parts.push(match[1] in params ? (param instanceof Node || Array.isArray(param) ? param : show(param)) : match[0]);
    at = match.index + match[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

// Whether the catalog has a key (server error codes: a new one falls back to the server's words).
export const has = (key) => Object.prototype.hasOwnProperty.call(state.strings, key);

function show(param) {
  return typeof param === 'number' ? num(param) : String(param ?? '');
}

export const num = (n) => state.numbers.format(n);

// A number with `digits` decimals: 12.4, 12,4.
export const decimal = (n, digits) => new Intl.NumberFormat(state.lang, { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false }).format(n);

// The language's decimal sign: "." or ",".
export const decimalSign = () => new Intl.NumberFormat(state.lang).formatToParts(1.5).find((part) => part.type === 'decimal').value;

// A place: "3rd" in English, "3." in Danish (the catalog's `place.ordinal`, by the
// language's ordinal rules).
export function ordinal(n) {
  const forms = state.strings['place.ordinal'];
  const text = forms && typeof forms === 'object' ? forms[state.ordinals.select(n)] ?? forms.other : forms;
  return String(text || '{n}').replace('{n}', num(n));
}

// A day of the daily challenge ("2026-12-03") as people of the language write it.
export function day(date, style = 'long') {
  const at = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(at.getTime())) return String(date);
  return new Intl.DateTimeFormat(state.lang, { dateStyle: style, timeZone: 'UTC' }).format(at);
}

// "3 days ago", "yesterday", "in 2 hours".
export function relative(amount, unit) {
  return new Intl.RelativeTimeFormat(state.lang, { numeric: 'auto' }).format(amount, unit);
}

// "Ann, Bo and Cy".
export function list(items, type = 'conjunction') {
  return new Intl.ListFormat(state.lang, { style: 'long', type }).format(items.map(String));
}

// index.html's words: data-i18n (text), data-i18n-label (aria-label),
// data-i18n-title (title), data-i18n-content (a meta's content).
export function translatePage(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-label]')) el.setAttribute('aria-label', t(el.dataset.i18nLabel));
  for (const el of root.querySelectorAll('[data-i18n-title]')) el.setAttribute('title', t(el.dataset.i18nTitle));
  for (const el of root.querySelectorAll('[data-i18n-content]')) el.setAttribute('content', t(el.dataset.i18nContent));
}
