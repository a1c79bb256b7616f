// The home page's live parts: the quick race's figures, today's daily with
// its countdown and the player's streak, and a picture of the table.

import { h, clear, clock, api, playerKey } from './dom.js';
import { t, day } from './i18n.js';

const FIGURES_MS = 5000; // how often the quick race's figures are asked again

// Repeats `run` every `ms` while `el` is on the page (and at once).
function whileShown(el, ms, run) {
  run();
  const timer = setInterval(() => {
    if (!el.isConnected) clearInterval(timer);
    else if (!document.hidden) run();
  }, ms);
}

// "2 waiting · 5 racing now", from GET /api/quick; nothing when it does not answer.
export function quickFigures() {
  const el = h('span', { class: 'figures' });
  whileShown(el, FIGURES_MS, async () => {
    try {
      const { waiting, racing } = await api('GET', '/api/quick');
      el.textContent = `${t('home.waiting', { count: waiting })} · ${t('home.racing', { count: racing })}`;
      el.dataset.waiting = String(waiting);
      el.dataset.racing = String(racing);
    } catch {
      el.textContent = '';
    }
  });
  return el;
}

// Today's daily: its day, the time to the next one, and the player's streak.
export function dailyCard() {
  const date = h('p', { class: 'daily-date' });
  const next = h('p', { class: 'daily-next small' });
  const streak = h('p', { class: 'daily-streak' });
  const card = h('section', { class: 'panel daily-card', 'aria-labelledby': 'home-daily' },
    h('h2', { id: 'home-daily' }, t('home.daily')),
    date, next, streak,
    h('p', {}, h('a', { href: '/daily', class: 'button primary', 'data-link': '' }, t('home.daily_play'))));
  (async () => {
    let today = null;
    try {
      today = await api('GET', '/api/daily');
    } catch {
      clear(date, t('home.daily_about'));
      return;
    }
    date.textContent = day(today.date);
    const nextAt = Number(today.next_at);
    whileShown(next, 1000, () => {
      next.textContent = t('daily.next', { time: clock(nextAt - Date.now()) });
    });
    try {
      const me = await api('GET', `/api/daily/${today.date}/me`, undefined, { 'X-Player-Key': playerKey() });
      const days = me.streak || 0;
      streak.dataset.streak = String(days);
      const played = me.entry ? t('home.daily_played') : '';
      streak.textContent = days > 0 ? `🔥 ${t('daily.streak', { count: days })} ${played}`.trim() : played || t('home.streak_none');
    } catch {
      streak.textContent = t('home.streak_none');
    }
  })();
  return card;
}

// A small drawn table: the foundations, the free cells and eight columns of
// cards, face up as Baker's Game deals them.
const SUITS = { S: ['♠', '#1b1b1b'], H: ['♥', '#c62828'], D: ['♦', '#c62828'], C: ['♣', '#1b1b1b'] };
const COLUMNS = [
  ['KS', '9H', '4D', '7C'], ['2H', 'QC', '8S', 'JD'], ['5C', 'TH', 'AS', '6D'], ['3S', '8D', 'KH', 'QS'],
  ['9C', 'JS', '2D', '5H'], ['7H', '4C', '9S', 'TD'], ['6S', 'KD', '3C', '8H'], ['QH', '5D', 'JC', '7S'],
];
const W = 34; // a card's width in the picture
const CARD_H = 48;
const STEP = 13; // how far each card of a column sits below the one under it

function card(x, y, code) {
  const [suit, colour] = SUITS[code[1]];
  const rank = code[0] === 'T' ? '10' : code[0];
  return `<g transform="translate(${x} ${y})"><rect width="${W}" height="${CARD_H}" rx="3" fill="#fff" stroke="#0003"/>`
    + `<text x="3" y="10" font-size="9" font-weight="700" fill="${colour}">${rank}${suit}</text>`
    + `<text x="${W / 2}" y="35" font-size="18" text-anchor="middle" fill="${colour}">${suit}</text></g>`;
}

export function tablePicture() {
  const parts = [];
  for (let i = 0; i < 4; i++) parts.push(`<rect x="${8 + i * 38}" y="8" width="${W}" height="${CARD_H}" rx="3" fill="none" stroke="#fff6" stroke-dasharray="3 2"/>`);
  ['AS', '2H', 'AD', 'AC'].forEach((code, i) => parts.push(card(170 + i * 38, 8, code)));
  COLUMNS.forEach((column, c) => column.forEach((code, r) => parts.push(card(8 + c * 40, 66 + r * STEP, code))));
  const picture = h('div', { class: 'table-picture', role: 'img', 'aria-label': t('home.table_label') });
  picture.innerHTML = `<svg viewBox="0 0 330 160" xmlns="http://www.w3.org/2000/svg" aria-hidden="true" focusable="false">`
    + `<rect width="330" height="160" rx="10" fill="#1d5c3f"/>${parts.join('')}</svg>`;
  return picture;
}
