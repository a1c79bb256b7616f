// The end of a race: the results (a table, or a result card for a game of
// one), the share text and the buttons that lead on.

import { h, clock, ghostLink, keepBest } from './dom.js';
import { statusText, accountTags } from './track.js';
import { t } from './i18n.js';
import { reviewTag, reviewNote } from './review.js';
import { shareText, sharePanel } from './share.js';

const RESULT_COLUMNS = ['#', 'table.player', 'table.time', 'table.cards', 'table.score', 'table.moves', 'table.result'];
const column = (key) => (key === '#' ? '#' : t(key));

export function resultsPanel(page) {
  const order = page.ordered();
  const mine = page.players.get(page.me);
  const text = shareText(shareOf(page, mine, order.length));
  const solo = page.solo();
  const reason = solo ? null : t({ time_limit: 'results.time_limit', all_done: 'results.all_done' }[page.raceOverReason] || 'results.over');
  if (page.daily()) page.loadDailyPlace();
  const place = page.dailyPlace;
  return h('div', { class: 'panel results' },
    h('h2', {}, solo ? t('results.yours') : t('results.title')),
    reason ? h('p', {}, reason, page.race.open_boards ? [' ', t('results.open_boards')] : '') : null,
    mine && mine.review ? h('div', { class: `held review-${mine.review.status}`, role: 'status' }, reviewNote(mine.review).map((line) => h('p', {}, line))) : null,
    place ? h('p', { class: 'my-place' }, t('results.daily_place', { rank: place.rank, count: place.total })) : null,
    solo && mine ? resultCard(mine) : h('table', { class: 'results-table' },
      h('thead', {}, h('tr', {}, RESULT_COLUMNS.map((key) => h('th', { scope: 'col' }, column(key))))),
      h('tbody', {}, order.map((p, i) => h('tr', { class: p.player_id === page.me ? 'me' : '' },
        h('td', { 'data-label': '#' }, p.rank ? String(p.rank) : String(i + 1)),
        h('td', { 'data-label': t('table.player'), class: 'who' }, p.name, p.player_id === page.me ? ` ${t('results.you')}` : '', ' ', accountTags(p)),
        h('td', { 'data-label': t('table.time') }, Number.isFinite(p.time_ms) ? clock(p.time_ms) : '—'),
        h('td', { 'data-label': t('table.cards') }, `${p.foundation_cards}/52`),
        h('td', { 'data-label': t('table.score') }, String(p.score)),
        h('td', { 'data-label': t('table.moves') }, String(p.actions)),
        h('td', { 'data-label': t('table.result') }, statusText(p.status),
          ' ', reviewTag(p.review)))))),
    sharePanel(text, 'share-text', t('daily.share')),
    h('p', { class: 'row' },
      page.isHost() && !page.race.rematch && !page.daily()
        ? h('button', { type: 'button', class: 'primary rematch-button', disabled: page.rematchSent, onclick: () => page.rematch() }, page.rematchSent ? t('results.opening') : page.race.practice ? t('results.new_deal') : t('results.rematch'))
        : null,
      page.daily() ? h('a', { href: `/daily/${page.daily()}`, class: 'button primary', 'data-link': '' }, t('results.daily_leaderboard')) : null,
      replayLinks(page, mine, order),
      page.creds.quick ? h('button', { type: 'button', class: 'primary', onclick: () => page.anotherQuickRace() }, t('results.another_quick')) : null,
      h('a', { href: '/', class: 'button', 'data-link': '' }, t('common.home'))));
}

// What the share says of my result (share.js writes it): a daily's place is
// the day's (asked of the server), a race's this race's.
export function shareOf(page, mine, total) {
  const date = page.daily();
  const review = mine && mine.review && mine.review.status !== 'confirmed' ? mine.review.status : null;
  const daily = date ? page.dailyPlace : null;
  return {
    date,
    won: Boolean(mine && mine.status === 'won'),
    place: date ? daily && daily.rank : mine && mine.rank,
    total: date ? daily && daily.total : total,
    review: review === 'held' || review === 'disqualified' ? review : null,
    time_ms: mine ? mine.time_ms : 0,
    cards: mine ? mine.foundation_cards : 0,
    moves: mine ? mine.actions : 0,
    par: page.race.par || null,
    streak: daily ? daily.streak : 0,
    origin: location.origin,
  };
}

// One player's result as a few plain lines (a race of one has no table).
function resultCard(p) {
  const won = p.status === 'won';
  return h('dl', { class: 'result-card' },
    h('div', {}, h('dt', {}, t('table.result')), h('dd', {}, won ? t('results.won_in', { time: clock(p.time_ms || 0) }) : statusText(p.status),
      ' ', reviewTag(p.review))),
    h('div', {}, h('dt', {}, t('results.cards')), h('dd', {}, `${p.foundation_cards}/52`)),
    h('div', {}, h('dt', {}, t('table.score')), h('dd', {}, String(p.score))),
    h('div', {}, h('dt', {}, t('table.moves')), h('dd', {}, String(p.actions))));
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
    h('a', { href: watch, class: 'button watch-replays', 'data-link': '' }, order.length > 1 ? t('results.watch_replays') : t('results.watch_replay')),
    best ? h('a', { href: ghostLink(best.path, t('results.your_best')), class: 'button race-ghost', 'data-link': '' }, best.won ? t('results.race_best_time', { time: clock(best.time_ms) }) : t('results.race_best')) : null,
  ];
}
