// The one share text of a result, for a race's results and the daily's page
// alike, and the button that shares it. Spoiler-free, as fair play asks: no
// deal, no card, no move, and a link to the site or the day's page only.

import { h, clockTenths, copyText, toast } from './dom.js';
import { t, ordinal } from './i18n.js';

export const FIRST_DAY = '2026-01-01';
const DAY_MS = 86400000;

// Day 1 is the first daily; each day after it one more (like Wordle's numbers).
export function dayNumber(date) {
  return Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${FIRST_DAY}T00:00:00Z`)) / DAY_MS) + 1;
}

// One square per rank the four foundations reached together (13 in all): a
// full square for a rank all four suits passed, a half one for a rank some
// did, an empty one for the rest. It says how far, never which card.
export const SQUARES = 13;
export function squares(cards) {
  const n = Math.max(0, Math.min(52, Number(cards) || 0));
  let line = '';
  for (let i = 0; i < SQUARES; i += 1) line += n >= 4 * (i + 1) ? '🟩' : n > 4 * i ? '🟨' : '⬜';
  return line;
}

// The text, from a result alone (a pure function of its argument and the
// page's language):
//   date      a daily's day ('2026-12-03'), or null for a race
//   won       solved the deal
//   place     rank (null when not ranked), total: of how many
//   review    'held' or 'disqualified' (no place then), or null
//   time_ms, cards, moves, par (null: no par), streak (days in a row)
//   origin    the site ('https://example.org')
export function shareText(r) {
  const lines = [];
  lines.push(r.date ? t('share.title_daily', { number: dayNumber(r.date) }) : t('share.title_race'));
  const result = r.won ? t('share.won', { time: clockTenths(r.time_ms || 0) }) : t('share.lost', { cards: r.cards || 0 });
  let standing = null;
  if (r.review === 'disqualified') standing = t('verdict.disqualified_tag');
  else if (r.review === 'held') standing = t('results.held_tag');
  else if (r.place && r.total && (r.date || r.total > 1)) standing = t('share.place', { place: ordinal(r.place), count: r.total });
  lines.push(standing ? `${result} · ${standing}` : result);
  const moves = t('share.moves', { count: r.moves || 0 });
  lines.push(Number.isFinite(r.par) && r.par > 0 ? `${moves} · ${t('share.par', { par: r.par })}` : moves);
  lines.push(r.streak > 1 ? `${squares(r.cards)} ${t('share.streak', { count: r.streak })}` : squares(r.cards));
  lines.push(r.date ? `${r.origin}/daily/${r.date}` : `${r.origin}/`);
  return lines.join('\n');
}

// The text shown (to read before sharing) and one button: the system's share
// sheet where there is one (phones, mostly), else a copy, said "Copied".
export function sharePanel(text, id, label) {
  const button = h('button', { type: 'button', class: 'copy share-button', onclick: (e) => shareNow(e.currentTarget, text) }, t('share.button'));
  return h('div', { class: 'share' },
    h('label', { for: id }, label),
    h('textarea', { id, readonly: true, rows: 6, class: 'share-text' }, text),
    h('div', { class: 'row' }, button));
}

async function shareNow(button, text) {
  if (typeof navigator.share === 'function') {
    try {
      await navigator.share({ text });
      return;
    } catch (error) {
      if (error && error.name === 'AbortError') return; // the player closed the sheet
    }
  }
  const ok = await copyText(text);
  button.textContent = ok ? t('common.copied') : t('common.copy_manually');
  button.classList.toggle('done', ok);
  if (ok) toast(t('share.copied'));
  setTimeout(() => {
    button.textContent = t('share.button');
    button.classList.remove('done');
  }, 2000);
}
