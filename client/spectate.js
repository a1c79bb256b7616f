// A spectator's screen of a fair race (boards hidden while their players
// play): a large track of every racer, each one's time and gap to the
// leader, the race's news, and each finished player's final board as they
// finish. Boards of players still playing are never asked for (the server
// would refuse them: docs/protocol.md, "Boards"). Every part is patched in
// place: a rival's progress changes texts and widths, not elements.

import { h, patch, clock } from './dom.js';
import { BoardView } from './board.js';
import { statusText, finished } from './track.js';
import { t } from './i18n.js';

const REF = 'final:'; // the ref of a `watch` that fetches a finished board

export class SpectateView {
  constructor(page) {
    this.page = page;
    this.boards = new Map(); // player_id -> {game, view} once fetched
    this.asked = null; // the player_id whose final board is on its way
    this.refused = new Set();
    this.area = null;
    this.ticker = setInterval(() => this.tick(), 500);
  }

  destroy() {
    clearInterval(this.ticker);
    for (const { view } of this.boards.values()) if (view) view.destroy();
    this.boards.clear();
    if (this.area) this.area.remove();
  }

  // The answers to our own `watch`es (their ref says so); true when taken.
  handle(msg) {
    if (msg.type === 'welcome') {
      this.asked = null; // a new connection: ask again what was on its way
      return false;
    }
    const ref = typeof msg.ref === 'string' && msg.ref.startsWith(REF) ? msg.ref.slice(REF.length) : null;
    if (ref === null) return false;
    if (msg.type === 'board' && msg.player_id === ref) {
      this.boards.set(ref, { game: msg.game, view: null });
    } else if (msg.type === 'error') {
      this.refused.add(ref);
    } else {
      return false;
    }
    this.asked = null;
    this.restoreWatch();
    this.page.render();
    return true;
  }

  // Our `watch` replaced the page's own (one board per connection): put it back.
  restoreWatch() {
    const page = this.page;
    page.conn.send({ type: 'watch', player_id: page.watching || null });
  }

  // The next finished player whose board we do not have yet: ask for it.
  fetchNext(order) {
    if (this.asked) return;
    const next = order.find((p) => finished(p) && !this.boards.has(p.player_id) && !this.refused.has(p.player_id));
    if (!next) return;
    if (this.page.conn.send({ type: 'watch', player_id: next.player_id, ref: REF + next.player_id })) this.asked = next.player_id;
  }

  render(pageEl, wanted) {
    if (!wanted) {
      if (this.area) this.area.hidden = true;
      return;
    }
    if (!this.area || !this.area.isConnected) {
      this.area = h('div', { class: 'spectate-area' });
      const board = pageEl.querySelector('.board-area');
      board.parentElement.insertBefore(this.area, board);
    }
    this.area.hidden = false;
    const page = this.page;
    const order = page.ordered();
    this.fetchNext(order);
    const phase = page.phase();
    patch(this.area,
      h('section', { class: 'spectate-track', 'aria-label': t('spectate.track'), 'data-key': 'track' },
        h('div', { class: 'spectate-head' },
          h('h2', {}, t('spectate.track')),
          h('span', { class: 'race-clock', 'data-race-clock': '' }, this.raceClock())),
        h('ol', { class: 'lanes' }, order.map((p, at) => this.lane(p, at, order, phase)))),
      h('section', { class: 'spectate-feed', 'aria-label': t('standings.news'), 'data-key': 'feed' },
        h('h2', {}, t('standings.news')),
        page.feed.length
          ? h('ul', {}, page.feed.map((e) => h('li', {}, e.text)))
          : h('p', { class: 'small' }, t('spectate.no_news'))),
      h('section', { class: 'spectate-boards', 'aria-label': t('spectate.boards'), 'data-key': 'boards' },
        h('h2', {}, t('spectate.boards')),
        h('p', { class: 'small' }, t('spectate.boards_about')),
        h('div', { class: 'finished-boards' }, order.filter(finished).map((p) => this.finishedBoard(p)))));
    this.placeBoards();
  }

  lane(p, at, order, phase) {
    const pct = `${(p.foundation_cards / 52) * 100}%`;
    const started = phase !== 'countdown';
    return h('li', { class: `lane status-${p.status}`, 'data-player': p.player_id },
      h('span', { class: 'place' }, started ? String(at + 1) : ''),
      h('span', { class: 'name' }, p.name),
      h('span', { class: 'lane-track', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 52, 'aria-valuenow': p.foundation_cards, 'aria-label': t('standings.bar', { name: p.name }) },
        h('span', { class: 'lane-fill', style: { width: pct } }),
        h('span', { class: 'runner', style: { left: pct }, 'aria-hidden': 'true' }, p.name.slice(0, 1))),
      h('span', { class: 'cards' }, `${p.foundation_cards}/52`),
      h('span', { class: 'time', 'data-time': p.player_id }, this.timeOf(p)),
      h('span', { class: 'gap' }, started ? gapText(p, at, order) : statusText('playing')));
  }

  // A winner's time; a resigned player's time when they stopped; the race's
  // clock for everyone still playing.
  timeOf(p) {
    if (p.status === 'won' && Number.isFinite(p.time_ms)) return clock(p.time_ms);
    if (p.status === 'resigned') return clock(p.elapsed_ms || 0);
    return this.raceClock();
  }

  raceClock() {
    const race = this.page.race;
    return clock(Number.isFinite(race.start_at) ? this.page.serverNow() - race.start_at : 0);
  }

  finishedBoard(p) {
    const got = this.boards.get(p.player_id);
    const caption = p.status === 'won'
      ? t('spectate.board_won', { name: p.name, time: clock(p.time_ms || 0) })
      : t('spectate.board_resigned', { name: p.name, cards: p.foundation_cards });
    return h('figure', { class: 'finished-board', 'data-player': p.player_id },
      h('figcaption', {}, caption),
      got ? h('div', { class: 'board-slot' }) : h('p', { class: 'small' }, this.refused.has(p.player_id) ? t('standings.hidden') : t('loading.any')));
  }

  // The boards themselves are made once and moved into their slots (patch()
  // keeps the slots; a board is never drawn again).
  placeBoards() {
    for (const [id, got] of this.boards) {
      const slot = this.area.querySelector(`.finished-board[data-player="${CSS.escape(id)}"] .board-slot`);
      if (!slot) continue;
      if (!got.view) {
        got.view = new BoardView({});
        got.view.el.classList.add('mini');
      }
      if (got.view.el.parentElement !== slot) {
        slot.replaceChildren(got.view.el);
        got.view.update(got.game.board, { interactive: false, highlight: null });
      }
    }
  }

  tick() {
    if (!this.area || this.area.hidden || this.page.phase() !== 'running') return;
    const now = this.raceClock();
    const clockEl = this.area.querySelector('[data-race-clock]');
    if (clockEl) clockEl.textContent = now;
    for (const el of this.area.querySelectorAll('[data-time]')) {
      const p = this.page.players.get(el.dataset.time);
      if (p) el.textContent = this.timeOf(p);
    }
  }
}

// The gap to the leader: a winner's time behind the first; cards behind for
// the others.
function gapText(p, at, order) {
  if (at === 0) return t('spectate.leader');
  const leader = order[0];
  if (p.status === 'won' && leader.status === 'won') return `+${clock((p.time_ms || 0) - (leader.time_ms || 0))}`;
  const behind = leader.foundation_cards - p.foundation_cards;
  return behind > 0 ? t('spectate.cards_behind', { count: behind }) : t('spectate.level');
}
