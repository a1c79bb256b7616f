// The race as everyone sees it: the track of the racers (places, cards on
// foundations, the gap to the leader), my place pinned above the board, and
// what their progress means for the event feed. Functions of the race page.

import { h, patch, clock, ordinal } from './dom.js';
import { t } from './i18n.js';
import { soundOn, setSound } from './feel.js';
import { overtakes, rivalFinished } from './moments.js';

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
// a mute toggle, and the track of everyone by name. The line of words is
// patched; the track and the toggle are kept and moved (never rebuilt).
export function renderMeBar(page, el, phase) {
  const line = phase === 'running' && page.role === 'player' && !page.solo() ? page.placeLine() : null;
  el.hidden = !line;
  if (!line) return;
  if (!el._parts) {
    el._parts = {
      line: h('div', { class: 'me-line', role: 'status' }),
      mute: h('button', { type: 'button', class: 'mute', onclick: () => setSound(!soundOn()) }, h('span', { class: 'note', 'aria-hidden': 'true' }, '♪')),
      track: h('div', { class: 'track', 'aria-hidden': 'true' }, h('div', { class: 'course' }, h('span', { class: 'lane' }))),
      moment: h('div', { class: 'moment', 'aria-hidden': 'true', hidden: true }),
    };
    el.replaceChildren(el._parts.line, el._parts.mute, el._parts.track, el._parts.moment);
    const heard = () => {
      if (el.isConnected) showMute(el._parts.mute);
      else window.removeEventListener('boulanger:sound', heard);
    };
    window.addEventListener('boulanger:sound', heard);
    // A new width (a turned phone, a resized window) lays the names out again.
    new ResizeObserver(() => {
      const track = el._parts.track;
      if (track._width === track.clientWidth) return;
      track._width = track.clientWidth;
      drawTrack(page, track);
    }).observe(el._parts.track);
  }
  patch(el._parts.line,
    h('span', { class: 'my-place' }, line.place),
    h('span', { class: 'my-cards' }, line.cards),
    h('span', { class: 'gap' }, line.gap));
  showMute(el._parts.mute);
  drawTrack(page, el._parts.track);
  overtakes(page);
}

function showMute(button) {
  const muted = !soundOn();
  const label = t('race.mute');
  if (button.getAttribute('aria-pressed') !== String(muted)) button.setAttribute('aria-pressed', String(muted));
  if (button.getAttribute('aria-label') !== label) {
    button.setAttribute('aria-label', label);
    button.title = label;
  }
}

const ROW = 23; // px: a row of names
const GAP = 4; // px between two names in a row
const EDGE = 7; // px: the course's ends, so that a dot at 0 or 52 shows whole

// Every racer by name on one course, my lane marked. Names never overlap:
// rows enough for all of them to stand at one spot (fixed for the names and
// the width, so the board below never moves), neighbours on the course in
// different rows (every rows-th one in each), and each row spread apart
// where names would touch.
function drawTrack(page, track) {
  const width = track._width || (track._width = track.clientWidth);
  const runners = track._runners || (track._runners = new Map());
  const order = page.ordered();
  const mine = page.myCards();
  const seen = new Set();
  let measure = false;
  for (const p of order) {
    seen.add(p.player_id);
    let r = runners.get(p.player_id);
    if (!r) {
      r = { stem: h('span', { class: 'stem' }), dot: h('span', { class: 'dot' }), label: h('span', { class: 'runner', 'data-player': p.player_id }) };
      track.append(r.stem, r.dot, r.label);
      runners.set(p.player_id, r);
    }
    if (r.label.textContent !== p.name) {
      r.label.textContent = p.name;
      r.label.title = p.name;
      r.width = 0;
    }
    if (!r.width) measure = true;
    const me = p.player_id === page.me;
    const kind = `${me ? ' me' : ''}${p.status === 'won' ? ' won' : p.status === 'resigned' ? ' resigned' : ''}`;
    if (r.kind !== kind) {
      r.kind = kind;
      r.width = 0; // a finisher's name has a mark: measured again
      measure = true;
      for (const part of ['stem', 'dot', 'runner']) (part === 'runner' ? r.label : r[part]).className = part + kind;
    }
    r.cards = me ? mine : p.foundation_cards;
  }
  for (const [id, r] of runners) {
    if (seen.has(id)) continue;
    r.stem.remove();
    r.dot.remove();
    r.label.remove();
    runners.delete(id);
  }
  if (!width) return;
  if (measure) for (const r of runners.values()) r.width = r.width || r.label.offsetWidth;
  const placed = order.map((p) => runners.get(p.player_id));
  const span = width - 2 * EDGE;
  // The widest names first: a row holds at most every rows-th racer along the course.
  const widths = placed.map((r) => Math.min(span, r.width) + GAP).sort((a, b) => b - a);
  let rows = 1;
  while (rows < placed.length && widths.slice(0, Math.ceil(placed.length / rows)).reduce((a, b) => a + b, 0) > width + GAP) rows += 1;
  // Along the course, behind first; the leaderboard's order among equals.
  const along = placed.map((r, i) => ({ r, i, x: EDGE + (r.cards / 52) * span })).sort((a, b) => a.x - b.x || b.i - a.i);
  const byRow = Array.from({ length: rows }, () => []);
  along.forEach((item, k) => byRow[k % rows].push(item));
  byRow.forEach((items) => spread(items, width));
  const course = rows * ROW + 6;
  track.style.height = `${course + 8}px`;
  track.style.setProperty('--course', `${course}px`);
  const lane = track.firstChild.firstChild;
  lane.style.width = `${(Math.min(52, mine) / 52) * span + EDGE}px`;
  // Drawn in place the first time; moved (a transition) from then on.
  if (!track._placed) {
    track._placed = true;
    requestAnimationFrame(() => track.classList.add('placed'));
  }
  byRow.forEach((items, row) => {
    for (const { r, x, left } of items) {
      const top = row * ROW;
      move(r.label, `translate(${Math.round(left)}px, ${top}px)`);
      move(r.dot, `translate(${Math.round(x)}px, ${course}px)`);
      move(r.stem, `translate(${Math.round(x)}px, ${top + ROW - 3}px) scaleY(${course - top - ROW + 3})`);
    }
  });
}

function move(el, transform) {
  if (el._at !== transform) {
    el._at = transform;
    el.style.transform = transform;
  }
}

// Names in one row, each as near its racer as may be, none touching: pushed
// right past the one before, then back left from the row's end.
function spread(items, width) {
  let right = -GAP;
  for (const item of items) {
    item.left = Math.max(item.x - item.r.width / 2, 0, right + GAP);
    right = item.left + item.r.width;
  }
  let left = width + GAP;
  for (let k = items.length - 1; k >= 0; k--) {
    const item = items[k];
    item.left = Math.max(0, Math.min(item.left, width - item.r.width, left - GAP - item.r.width));
    left = item.left;
  }
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
    page.event(t(key, { name: after.name, place, time }), !me, null);
    if (!me) rivalFinished(page, after);
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
