// The end of a race: the results (a table, or a result card for a game of
// one), the share text and the buttons that lead on.

import { h, clock, ordinal, copyButton, ghostLink, keepBest } from './dom.js';
import { STATUS_TEXT, accountTags } from './track.js';
import { reviewTag, reviewNote } from './review.js';

const RESULT_COLUMNS = ['#', 'Player', 'Time', 'Cards', 'Score', 'Moves', 'Result'];

export function resultsPanel(page) {
  const order = page.ordered();
  const mine = page.players.get(page.me);
  const text = shareText(page, mine, order.length);
  const solo = page.solo();
  const reason = solo ? null : { time_limit: 'The time limit is over.', all_done: 'Every player has finished.' }[page.raceOverReason] || 'The race is over.';
  if (page.daily()) page.loadDailyPlace();
  const place = page.dailyPlace;
  return h('div', { class: 'panel results' },
    h('h2', {}, solo ? 'Your result' : 'Results'),
    reason ? h('p', {}, reason, page.race.open_boards ? ' This race had open boards: spectators watched every board live.' : '') : null,
    mine && mine.review ? h('div', { class: `held review-${mine.review.status}`, role: 'status' }, reviewNote(mine.review).map((line) => h('p', {}, line))) : null,
    place ? h('p', { class: 'my-place' }, `#${place.rank} of ${place.total} today`) : null,
    solo && mine ? resultCard(mine) : h('table', { class: 'results-table' },
      h('thead', {}, h('tr', {}, RESULT_COLUMNS.map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, order.map((p, i) => h('tr', { class: p.player_id === page.me ? 'me' : '' },
        h('td', { 'data-label': '#' }, p.rank ? String(p.rank) : String(i + 1)),
        h('td', { 'data-label': 'Player', class: 'who' }, p.name, p.player_id === page.me ? ' (you)' : '', ' ', accountTags(p)),
        h('td', { 'data-label': 'Time' }, Number.isFinite(p.time_ms) ? clock(p.time_ms) : '—'),
        h('td', { 'data-label': 'Cards' }, `${p.foundation_cards}/52`),
        h('td', { 'data-label': 'Score' }, String(p.score)),
        h('td', { 'data-label': 'Moves' }, String(p.actions)),
        h('td', { 'data-label': 'Result' }, STATUS_TEXT[p.status] || p.status,
          ' ', reviewTag(p.review)))))),
    h('div', { class: 'share' },
      h('label', { for: 'share-text' }, 'Share'),
      h('div', { class: 'row' }, h('textarea', { id: 'share-text', readonly: true, rows: 3 }, text), copyButton(() => text, 'Copy'), shareButton(text))),
    h('p', { class: 'row' },
      page.isHost() && !page.race.rematch && !page.daily()
        ? h('button', { type: 'button', class: 'primary rematch-button', disabled: page.rematchSent, onclick: () => page.rematch() }, page.rematchSent ? 'Opening…' : page.race.practice ? 'New deal' : 'Rematch')
        : null,
      page.daily() ? h('a', { href: `/daily/${page.daily()}`, class: 'button primary', 'data-link': '' }, 'Daily leaderboard') : null,
      replayLinks(page, mine, order),
      page.creds.quick ? h('button', { type: 'button', class: 'primary', onclick: () => page.anotherQuickRace() }, 'Another quick race') : null,
      h('a', { href: '/', class: 'button', 'data-link': '' }, 'Home')));
}

export function shareText(page, mine, total) {
  const place = mine && mine.rank && !page.solo() ? ` (${ordinal(mine.rank)} of ${total})` : '';
  const result = !mine ? null : mine.status === 'won'
    ? `won${place} in ${clock(mine.time_ms || 0)}`
    : `got ${mine.foundation_cards}/52 cards to the foundations`;
  // A daily's deal is secret until the day ends: no code, no link to the attempt.
  const day = page.daily();
  if (day) return result ? `Baker's Game daily ${day}: I ${result}, score ${mine.score}.` : `Baker's Game daily ${day}.`;
  const url = `${location.origin}/race/${page.raceId}`;
  const deal = page.race.code ? ` ${page.race.code}` : '';
  if (!result) return `Baker's Game race${deal}: ${url}`;
  return `Baker's Game${deal}: I ${result}, score ${mine.score}. ${url}`;
}

// One player's result as a few plain lines (a race of one has no table).
function resultCard(p) {
  const won = p.status === 'won';
  return h('dl', { class: 'result-card' },
    h('div', {}, h('dt', {}, 'Result'), h('dd', {}, won ? `won in ${clock(p.time_ms || 0)}` : STATUS_TEXT[p.status] || p.status,
      ' ', reviewTag(p.review))),
    h('div', {}, h('dt', {}, 'Cards on foundations'), h('dd', {}, `${p.foundation_cards}/52`)),
    h('div', {}, h('dt', {}, 'Score'), h('dd', {}, String(p.score))),
    h('div', {}, h('dt', {}, 'Moves'), h('dd', {}, String(p.actions))));
}

// The system's share sheet, where the browser has one (phones, mostly).
function shareButton(text) {
  if (typeof navigator.share !== 'function') return null;
  return h('button', { type: 'button', class: 'share-native', onclick: () => navigator.share({ text }).catch(() => {}) }, 'Share…');
}

// Replays and ghosts of a finished race (a daily attempt's record stays
// secret until its day ends): watch the games side by side, race my best.
function replayLinks(page, mine, order) {
  if (page.daily() || !page.race.code || !order.length) return null;
  const records = `/api/races/${encodeURIComponent(page.raceId)}/records`;
  const first = mine || order[0];
  const others = order.filter((p) => p !== first).slice(0, 3).map((p) => encodeURIComponent(p.player_id));
  const watch = `/race/${encodeURIComponent(page.raceId)}/replay/${encodeURIComponent(first.player_id)}${others.length ? `?with=${others.join(',')}` : ''}`;
  const best = mine ? keepBest(page.race.code, {
    path: `${records}/${encodeURIComponent(mine.player_id)}`,
    won: mine.status === 'won',
    time_ms: mine.time_ms || 0,
    cards: mine.foundation_cards,
  }) : null;
  return [
    h('a', { href: watch, class: 'button watch-replays', 'data-link': '' }, order.length > 1 ? 'Watch the replays' : 'Watch the replay'),
    best ? h('a', { href: ghostLink(best.path, 'Your best'), class: 'button race-ghost', 'data-link': '' }, best.won ? `Race your best (${clock(best.time_ms)})` : 'Race your best') : null,
  ];
}
