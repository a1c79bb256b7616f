// The race as everyone sees it: the track of the racers (places, cards on
// foundations, the gap to the leader), my place pinned above the board, and
// what their progress means for the event feed. Functions of the race page.

import { h, patch, clock, ordinal } from './dom.js';
import { t } from './i18n.js';

const STATUS_KEYS = {
  playing: 'status.playing',
  won: 'status.won',
  stuck: 'status.stuck',
  dead_end: 'status.dead_end',
  resigned: 'status.resigned',
};

// A player's status in words (an unknown one as it came).
export const statusText = (status) => (STATUS_KEYS[status] ? t(STATUS_KEYS[status]) : status);
const MILESTONES = [26, 39];

// My place and the gap to the leader, in words ("3rd of 8 · 4 behind Ann").
export function placeLine(page) {
  const order = page.ordered();
  const at = order.findIndex((p) => p.player_id === page.me);
  if (at < 0 || order.length < 2) return null;
  const mine = page.myCards();
  const leader = order[0];
  let gap;
  if (at === 0) {
    const second = order[1];
    const ahead = mine - second.foundation_cards;
    gap = leader.status === 'won' ? t('gap.first') : ahead > 0 ? t('gap.ahead', { count: ahead, name: second.name }) : t('gap.level', { name: second.name });
  } else if (leader.status === 'won') {
    gap = t('gap.leader_won', { name: leader.name, time: clock(leader.time_ms || 0) });
  } else {
    const behind = leader.foundation_cards - mine;
    gap = behind > 0 ? t('gap.behind', { count: behind, name: leader.name }) : t('gap.level', { name: leader.name });
  }
  return { place: t('gap.place', { place: ordinal(at + 1), count: order.length }), cards: `${mine}/52`, gap };
}

// My place, pinned above the board during a race: "3rd of 8 · 16/52 · 4 behind Ann",
// with a small track of everyone.
export function renderMeBar(page, el, phase) {
  const line = phase === 'running' && page.role === 'player' && !page.solo() ? page.placeLine() : null;
  el.hidden = !line;
  if (!line) return;
  const mine = page.myCards();
  patch(el,
    h('span', { class: 'my-place' }, line.place),
    h('span', { class: 'my-cards' }, line.cards),
    h('span', { class: 'gap' }, line.gap),
    h('span', { class: 'mini-track', 'aria-hidden': 'true' }, page.ordered().map((p) => {
      const cards = p.player_id === page.me ? mine : p.foundation_cards;
      return h('span', { class: `runner${p.player_id === page.me ? ' me' : ''}`, title: p.name, style: { left: `${(cards / 52) * 100}%` } }, p.name.slice(0, 1));
    })));
}

// A signed-in player's mark and rating.
export function accountTags(p) {
  return p.signed_in ? [h('span', { class: 'tag signed-in' }, '✓ ', t('tag.signed_in')), h('span', { class: 'rating' }, t('tag.rating', { rating: p.rating || 0 }))] : null;
}

export function renderStandings(page, el, phase) {
  const canWatch = page.role === 'spectator' || phase === 'finished' || page.done();
  // A fair race shows no board of a player still playing (docs/protocol.md, "Boards").
  const playingShown = page.mayWatchPlaying(phase);
  // My own line shows my game as I see it (moves still on their way included).
  const mine = page.role === 'player' && page.confirmed && page.predictions.length ? page.view() : null;
  const places = new Map(page.ordered().map((p, index) => [p.player_id, index + 1]));
  const list = h('ol', { class: 'players' }, heldOrder(page).map((standing) => {
    const p = mine && standing.player_id === page.me
      ? { ...standing, foundation_cards: mine.foundation_cards, score: mine.score }
      : standing;
    const pct = Math.round((p.foundation_cards / 52) * 100);
    const at = places.get(standing.player_id);
    const place = phase === 'lobby' ? null : h('span', { class: 'place', 'aria-label': t('standings.place', { place: at }) }, String(at));
    const status = phase === 'lobby' || phase === 'countdown' ? t('status.ready')
      : p.status === 'won' && p.rank ? `${ordinal(p.rank)} · ${clock(p.time_ms || 0)}` : statusText(p.status);
    return h('li', { class: `player status-${p.status}${p.player_id === page.me ? ' me' : ''}${p.player_id === page.watching ? ' watched' : ''}`, 'data-player': p.player_id },
      h('div', { class: 'line' },
        place,
        h('span', { class: 'name' }, p.name),
        accountTags(p),
        p.host && page.players.size > 1 ? h('span', { class: 'tag' }, t('tag.host')) : null,
        p.player_id === page.me && page.players.size > 1 ? h('span', { class: 'tag' }, t('tag.you')) : null,
        phase === 'lobby' ? null : h('span', { class: 'cards' }, `${p.foundation_cards}/52`)),
      // The status has a line of its own: a long one never cuts the name.
      h('div', { class: 'line' },
        phase === 'lobby' ? null : h('span', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 52, 'aria-valuenow': p.foundation_cards, 'aria-label': t('standings.bar', { name: p.name }) },
          h('span', { class: 'fill', style: { width: `${pct}%` } })),
        phase === 'lobby' ? null : h('span', { class: 'score' }, t('standings.points', { count: p.score })),
        h('span', { class: 'state' }, status)),
      !canWatch || p.player_id === page.me || phase === 'lobby' ? null
        : playingShown || finished(p)
          ? h('button', { type: 'button', class: 'watch', 'aria-pressed': String(p.player_id === page.watching), onclick: () => page.watch(p.player_id) }, p.player_id === page.watching ? t('standings.watching') : t('standings.watch'))
          : h('span', { class: 'board-hidden small' }, t('standings.hidden')));
  }));
  const feed = page.feed.length && !page.solo()
    ? h('div', { class: 'feed' }, h('h2', {}, t('standings.news')), h('ul', {}, page.feed.map((e) => h('li', {}, e.text))))
    : null;
  patch(el, h('h2', {}, phase === 'finished' ? t('standings.leaderboard') : phase === 'lobby' ? t('standings.players') : t('standings.race')), list, feed);
  holdWhilePressed(page, el);
}

// While a pointer is down on the standings, or a mouse rests on them, their
// order holds still (places, texts and bars go on changing): the row under a
// finger or a pointer never slides away before the press lands.
function heldOrder(page) {
  const order = page.ordered();
  if (!page.standingsHeld || !page.standingsOrder) {
    page.standingsOrder = order.map((p) => p.player_id);
    return order;
  }
  const kept = page.standingsOrder.filter((id) => page.players.has(id)).map((id) => page.players.get(id));
  return kept.concat(order.filter((p) => !page.standingsOrder.includes(p.player_id)));
}

function holdWhilePressed(page, el) {
  if (el._holds) return;
  el._holds = true;
  let over = false;
  let down = false;
  const update = () => {
    const held = over || down;
    if (held === Boolean(page.standingsHeld)) return;
    page.standingsHeld = held;
    if (!held) page.render(); // let go: the order catches up at once
  };
  // A mouse rests; a finger comes and goes (its enter and leave say nothing of the mouse).
  const hover = (e, now) => {
    if (e.pointerType !== 'mouse') return;
    over = now;
    update();
  };
  el.addEventListener('pointerenter', (e) => hover(e, true));
  el.addEventListener('pointerleave', (e) => hover(e, false));
  el.addEventListener('pointerdown', () => { down = true; update(); });
  const up = () => {
    if (!down) return;
    down = false;
    update();
  };
  el.addEventListener('pointerup', up);
  el.addEventListener('pointercancel', up);
  // Let go elsewhere: the list hears of it once, then no more.
  window.addEventListener('pointerup', up, true);
}

// What a rival's new standing means: a finish, a resign, a milestone.
export function progressEvent(page, before, after) {
  const me = after.player_id === page.me;
  const done = after.status === 'won' || after.status === 'resigned';
  if (me && done && !page.doneAt) page.doneAt = page.serverNow();
  if (!before || page.solo()) return;
  const time = clock(after.time_ms || 0);
  if (after.status === 'won' && before.status !== 'won') {
    const place = after.rank ? ordinal(after.rank) : null;
    const key = me ? (place ? 'feed.you_finished_place' : 'feed.you_finished') : place ? 'feed.finished_place' : 'feed.finished';
    page.event(t(key, { name: after.name, place, time }), !me);
  } else if (after.status === 'resigned' && before.status !== 'resigned') {
    page.event(t(me ? 'feed.you_resigned' : 'feed.resigned', { name: after.name, cards: after.foundation_cards }), !me);
  } else if (!me) {
    const mark = MILESTONES.find((m) => before.foundation_cards < m && after.foundation_cards >= m);
    if (mark) page.event(t('feed.milestone', { name: after.name, count: mark }));
  }
}

// Won or resigned: such a player's board may be watched.
export function finished(standing) {
  return standing.status === 'won' || standing.status === 'resigned';
}
