// The replay viewer: one to four recorded games of a deal played back at their
// real pace, side by side on one clock (the times since the race's start),
// with play/pause, 1x/2x/4x, step back and forward and a scrubber; and the
// solver's review of the first game, its key move drawn on the board as an
// arrow and said in words. On a phone the games are one swipe apart, with a
// tab for each (its name and cards). The server sends every frame
// (GET .../records/{id}/replay, docs/protocol.md "Replays").

import { h, clear, clock, api, ghostLink } from './dom.js';
import { BoardView } from './board.js';
import { t, tn, num } from './i18n.js';
import { moveText, moveWords } from './rules.js';

export const MAX_GAMES = 4;
const SPEEDS = [1, 2, 4];

// The frame shown at `now` ms: the last one whose time has come.
export function frameAt(frames, now) {
  let lo = 0;
  let hi = frames.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((frames[mid].t || 0) <= now) lo = mid;
    else hi = mid - 1;
  }
  return frames[lo];
}

// Where each source of games lives: a race's players, or a day's entries.
export function raceSource(raceId) {
  const base = `/api/races/${encodeURIComponent(raceId)}/records`;
  return {
    kind: 'race',
    base: (id) => `${base}/${encodeURIComponent(id)}`,
    page: (id, others) => `/race/${encodeURIComponent(raceId)}/replay/${encodeURIComponent(id)}${others.length ? `?with=${others.map(encodeURIComponent).join(',')}` : ''}`,
    async people() {
      const race = await api('GET', `/api/races/${encodeURIComponent(raceId)}`);
      return { code: race.code, back: `/race/${encodeURIComponent(raceId)}`, list: race.players.map((p) => ({ id: p.player_id, name: p.name, status: p.status, time_ms: p.time_ms })) };
    },
  };
}

export function dailySource(date) {
  const base = `/api/daily/${encodeURIComponent(date)}/records`;
  return {
    kind: 'daily',
    base: (id) => `${base}/${encodeURIComponent(id)}`,
    page: (id, others) => `/daily/${encodeURIComponent(date)}/replay/${encodeURIComponent(id)}${others.length ? `?with=${others.map(encodeURIComponent).join(',')}` : ''}`,
    async people() {
      const [day, board] = await Promise.all([
        api('GET', `/api/daily/${encodeURIComponent(date)}`),
        api('GET', `/api/daily/${encodeURIComponent(date)}/leaderboard?limit=100`),
      ]);
      return { code: day.code, back: `/daily/${encodeURIComponent(date)}`, list: board.entries.map((e) => ({ id: String(e.entry_id), name: e.name, status: e.result, time_ms: e.time_ms, rank: e.rank })) };
    },
  };
}

// The review desk's records: a moderator's, today's daily entries included.
export function deskSource(kind, key) {
  const base = kind === 'race'
    ? `/api/desk/races/${encodeURIComponent(key)}/records`
    : `/api/desk/daily/${encodeURIComponent(key)}/records`;
  const pages = kind === 'race' ? `/desk/race/${encodeURIComponent(key)}` : `/desk/daily/${encodeURIComponent(key)}`;
  return {
    kind: 'desk',
    base: (id) => `${base}/${encodeURIComponent(id)}`,
    page: (id, others) => `${pages}/replay/${encodeURIComponent(id)}${others.length ? `?with=${others.map(encodeURIComponent).join(',')}` : ''}`,
    async people() {
      return { code: null, back: '/desk', list: [] };
    },
  };
}

export class ReplayPage {
  constructor(main, source, ids, navigate) {
    this.main = main;
    this.source = source;
    this.ids = ids.slice(0, MAX_GAMES);
    this.navigate = navigate;
    this.games = []; // {id, name, frames, view, el}
    this.now = 0;
    this.end = 0;
    this.speed = 1;
    this.playing = false;
    this.frame = 0;
    this.last = 0;
    this.people = null;
    // After a step: how many actions of all games are shown (two may share a
    // millisecond, so a time alone cannot say); null while the clock decides.
    this.cursor = null;
    // The review's key move: {frame, moves} on the first game's board, drawn
    // as arrows whenever that frame is shown once asked for (shown: true).
    this.key = null;
  }

  async mount() {
    clear(this.main, h('p', { class: 'loading' }, t('loading.replay')));
    let people;
    let replays;
    try {
      people = await this.source.people().catch(() => ({ code: null, back: '/', list: [] }));
      replays = await Promise.all(this.ids.map((id) => api('GET', `${this.source.base(id)}/replay`)));
    } catch (error) {
      clear(this.main, h('div', { class: 'panel' },
        h('h1', {}, t('replay.none')),
        h('p', {}, error.code === 'race_running' || error.code === 'not_yet' ? t('replay.not_yet', { reason: error.message }) : t('replay.cannot', { reason: error.message })),
        h('p', {}, h('a', { href: '/', class: 'button', 'data-link': '' }, t('common.home')))));
      return;
    }
    if (this.destroyed) return;
    this.people = people;
    const named = new Map(people.list.map((p) => [p.id, p]));
    this.games = replays.map((replay, i) => {
      const id = this.ids[i];
      const view = new BoardView({ move() {}, tap() {}, doubleTap() {}, undo() {}, hint() {}, illegal() {} });
      const who = named.get(id);
      const game = { id, name: who ? who.name : t('replay.entry', { id }), frames: replay.frames, code: replay.code, view };
      game.stats = h('p', { class: 'replay-stats' });
      game.line = h('p', { class: 'replay-line', 'aria-live': 'off' });
      game.el = h('section', { class: 'replay-game', 'aria-label': t('replay.game_of', { name: game.name }) },
        h('h2', {}, game.name),
        game.stats,
        h('div', { class: 'board-area' }, view.el),
        game.line,
        h('p', { class: 'downloads small' },
          h('a', { href: this.source.base(id), download: `${id}.json` }, t('replay.record')), ' · ',
          h('a', { href: `${this.source.base(id)}/text`, download: `${id}.txt` }, t('replay.moves_text')), ' · ',
          h('a', { href: ghostLink(this.source.base(id), game.name), class: 'race-ghost', 'data-link': '' }, t('replay.race_ghost'))));
      return game;
    });
    this.end = Math.max(0, ...this.games.map((g) => g.frames[g.frames.length - 1].t || 0));
    this.render();
    this.show();
    this.loadReview();
    // Space plays and pauses, the arrows step (not while a control has the keys).
    this.onKey = (e) => {
      if (e.target && ['INPUT', 'BUTTON', 'A', 'TEXTAREA'].includes(e.target.tagName)) return;
      if (e.key === ' ') this.toggle();
      else if (e.key === 'ArrowRight') this.step(1);
      else if (e.key === 'ArrowLeft') this.step(-1);
      else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', this.onKey);
  }

  render() {
    const code = this.games[0].code;
    this.playButton = h('button', { type: 'button', class: 'primary play', onclick: () => this.toggle() }, t('replay.play'));
    this.speedButtons = SPEEDS.map((s) => h('button', { type: 'button', class: 'speed', 'aria-pressed': String(s === this.speed), onclick: () => this.setSpeed(s) }, `${s}x`));
    // Its last step reaches the end even when the end is not a whole step.
    this.scrubber = h('input', { type: 'range', class: 'scrubber', min: 0, max: String(Math.ceil(this.end / 100) * 100), step: 100, value: '0', 'aria-label': t('replay.time_label'), oninput: (e) => this.seek(Number(e.target.value)) });
    this.clockEl = h('span', { class: 'replay-clock', 'aria-live': 'off' });
    this.reviewEl = h('div', { class: 'panel review', hidden: true });
    const shown = new Set(this.ids);
    const others = this.people.list.filter((p) => !shown.has(p.id));
    const add = this.ids.length < MAX_GAMES && others.length
      ? h('p', { class: 'replay-add small' }, t('replay.side_by_side'), ' ', others.map((p, i) => [i ? ' · ' : '', h('a', { href: this.source.page(this.ids[0], [...this.ids.slice(1), p.id]), 'data-link': '' }, `+ ${p.name}`)]))
      : null;
    clear(this.main, h('div', { class: 'replay-page' },
      h('div', { class: 'replay-head' },
        h('h1', {}, t('title.replay'), code ? h('span', { class: 'small' }, ` ${code}`) : null),
        h('a', { href: this.people.back, 'data-link': '' }, this.source.kind === 'daily' ? t('standings.leaderboard') : this.source.kind === 'desk' ? t('desk.title') : t('standings.race'))),
      h('div', { class: 'replay-controls', role: 'group', 'aria-label': t('replay.controls') },
        h('button', { type: 'button', class: 'step back', 'aria-label': t('replay.back'), title: t('replay.back'), onclick: () => this.step(-1) }, '◀'),
        this.playButton,
        h('button', { type: 'button', class: 'step forward', 'aria-label': t('replay.forward'), title: t('replay.forward'), onclick: () => this.step(1) }, '▶'),
        h('span', { class: 'speeds', role: 'group', 'aria-label': t('replay.speed') }, this.speedButtons),
        this.clockEl),
      this.scrubber,
      add,
      this.tabs(),
      this.gamesEl,
      this.reviewEl));
  }

  // On a phone the games are one swipe apart: a tab for each says whose game
  // is in sight and how far it has come, and brings it into sight.
  tabs() {
    this.gamesEl = h('div', { class: `replay-games games-${this.games.length}` }, this.games.map((g) => g.el));
    if (this.games.length < 2) return null;
    this.games.forEach((game, i) => {
      game.tabCards = h('span', { class: 'tab-cards' });
      game.tab = h('button', { type: 'button', class: 'replay-tab', 'aria-pressed': String(i === 0), onclick: () => this.showGame(i) },
        h('span', { class: 'tab-name' }, game.name), ' ', game.tabCards);
    });
    this.gamesEl.addEventListener('scroll', () => this.inSight(), { passive: true });
    return h('div', { class: 'replay-tabs', role: 'group', 'aria-label': t('replay.games_label') }, this.games.map((g) => g.tab));
  }

  // The game whose left edge is nearest the strip's: the one in sight.
  inSight() {
    const left = this.gamesEl.getBoundingClientRect().left;
    let best = 0;
    this.games.forEach((game, i) => {
      if (Math.abs(game.el.getBoundingClientRect().left - left) < Math.abs(this.games[best].el.getBoundingClientRect().left - left)) best = i;
    });
    this.games.forEach((game, i) => {
      if (game.tab && game.tab.getAttribute('aria-pressed') !== String(i === best)) game.tab.setAttribute('aria-pressed', String(i === best));
    });
    return best;
  }

  showGame(i) {
    const strip = this.gamesEl;
    const left = strip.scrollLeft + this.games[i].el.getBoundingClientRect().left - strip.getBoundingClientRect().left;
    strip.scrollTo({ left, behavior: 'auto' });
    this.inSight();
  }

  // Draw every game at `now`.
  show() {
    const counts = this.cursor === null ? null : this.shownCounts(this.cursor);
    this.games.forEach((game, i) => {
      const frame = counts ? game.frames[counts[i]] : frameAt(game.frames, this.now);
      if (game.shown !== frame) {
        game.shown = frame;
        game.view.arrowMoves = null;
        game.view.update(frame.board, { interactive: false });
        const last = game.frames[game.frames.length - 1];
        const done = frame === last && last.foundation_cards === 52;
        clear(game.stats,
          h('span', { class: 'stat' }, h('b', {}, t('table.cards')), ` ${frame.foundation_cards}/52`),
          h('span', { class: 'stat' }, h('b', {}, t('table.score')), ` ${frame.score}`),
          h('span', { class: 'stat' }, h('b', {}, t('table.moves')), ` ${frame.action}`),
          done ? h('span', { class: 'stat won' }, t('results.won_in', { time: clock(last.t || 0) })) : null);
        game.line.textContent = frame.line ? moveText(frame.line) : t('replay.deal');
        if (game.tabCards) game.tabCards.textContent = `${frame.foundation_cards}/52`;
        // The review's key move, on the first game's board at its position.
        const key = i === 0 && this.key && this.key.shown && frame === game.frames[this.key.frame] ? this.key.moves : [];
        game.view.showArrows(key);
      }
    });
    this.clockEl.textContent = `${clock(this.now)} / ${clock(this.end)}`;
    if (Number(this.scrubber.value) !== Math.round(this.now)) this.scrubber.value = String(Math.round(this.now));
    this.playButton.textContent = this.playing ? t('replay.pause') : t('replay.play');
    this.playButton.setAttribute('aria-pressed', String(this.playing));
  }

  toggle() {
    if (this.playing) this.pause();
    else this.play();
  }

  play() {
    this.cursor = null;
    if (this.now >= this.end) this.now = 0;
    this.playing = true;
    this.last = performance.now();
    const tick = (at) => {
      if (!this.playing || this.destroyed) return;
      this.now = Math.min(this.end, this.now + (at - this.last) * this.speed);
      this.last = at;
      if (this.now >= this.end) this.playing = false;
      this.show();
      if (this.playing) this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
    this.show();
  }

  pause() {
    this.playing = false;
    cancelAnimationFrame(this.frame);
    this.show();
  }

  setSpeed(speed) {
    this.speed = speed;
    this.speedButtons.forEach((b, i) => b.setAttribute('aria-pressed', String(SPEEDS[i] === speed)));
  }

  seek(ms) {
    this.cursor = null;
    this.now = Math.max(0, Math.min(this.end, ms));
    this.show();
  }

  // Every action of every game shown, in the order they happened (by time,
  // then game): each step of the controls is one of them.
  actions() {
    if (!this.order) {
      this.order = this.games.flatMap((g, game) => g.frames.slice(1).map((f, i) => ({ t: f.t || 0, game, frame: i + 1 })));
      this.order.sort((a, b) => a.t - b.t || a.game - b.game || a.frame - b.frame);
    }
    return this.order;
  }

  // Each game's frame once the first `count` actions of all of them are made.
  shownCounts(count) {
    const counts = this.games.map(() => 0);
    for (const action of this.actions().slice(0, count)) counts[action.game] = action.frame;
    return counts;
  }

  // To `count` actions of all games made, the clock at the last of them.
  showActions(count) {
    const order = this.actions();
    this.cursor = Math.max(0, Math.min(order.length, count));
    this.now = this.cursor ? order[this.cursor - 1].t : 0;
    this.show();
  }

  // To the next (or previous) action of any game shown: one action a step,
  // even when two were made in the same millisecond.
  step(direction) {
    this.pause();
    const done = this.cursor ?? this.actions().filter((a) => a.t <= this.now).length;
    this.showActions(done + direction);
  }

  // The first game at its frame `frame`, the others as they were then.
  jumpTo(frame) {
    this.pause();
    const order = this.actions();
    const at = order.findIndex((a) => a.game === 0 && a.frame === Math.max(1, frame));
    this.showActions(frame > 0 ? at + 1 : at);
  }

  // The review's key move on the board: the first game at its position, in
  // sight, with arrows from the cards moved to where they went (or would go).
  showKey() {
    if (!this.key) return;
    this.key.shown = true;
    this.games[0].shown = null; // drawn again, with the arrows
    this.jumpTo(this.key.frame);
    if (this.games.length > 1) this.showGame(0);
    this.games[0].el.scrollIntoView({ block: 'start', inline: 'nearest' });
  }

  // The key move of a review: the losing move (and the first move of a win
  // from the position before it), or the first move of a win from the end.
  keyMove(review) {
    const game = this.games[0];
    const better = (review.continuation || [])[0];
    const losing = review.losing_move;
    if (review.finding === 'losing_move' && losing && losing.move && !('undo' in losing.move)) {
      const frame = losing.action - 1;
      const moves = [{ ...losing.move, kind: 'played' }];
      if (better && review.last_winnable === frame) moves.push({ ...better, kind: 'better' });
      return game.frames[frame] ? { frame, moves, board: game.frames[frame].board } : null;
    }
    if (review.finding === 'winnable_at_end' && better) {
      const frame = game.frames.length - 1;
      return { frame, moves: [{ ...better, kind: 'better' }], board: game.frames[frame].board };
    }
    return null;
  }

  // The solver's review of the first game: the move that lost it, or par and the longest detour.
  async loadReview() {
    const game = this.games[0];
    clear(this.reviewEl, h('h2', {}, t('review.title')), h('p', { class: 'loading' }, t('review.loading')));
    this.reviewEl.hidden = false;
    let review;
    try {
      review = await api('GET', `${this.source.base(game.id)}/review`);
    } catch (error) {
      clear(this.reviewEl, h('h2', {}, t('review.title')), h('p', {}, t('review.none', { reason: error.message })));
      return;
    }
    if (this.destroyed) return;
    const jump = (action, label) => h('button', { type: 'button', class: 'link-button', onclick: () => this.jumpTo(action) }, label);
    this.key = this.keyMove(review);
    const key = this.key;
    const showKey = key ? h('button', { type: 'button', class: 'link-button show-key', onclick: () => this.showKey() }, t('review.show_key')) : null;
    const words = (kind) => {
      const move = key && key.moves.find((m) => m.kind === kind);
      return move ? moveWords(key.board, move) : null;
    };
    const betterWords = words('better');
    const detour = review.detour
      ? h('p', {}, review.detour.ms !== null
        ? t('review.detour_time', { from: review.detour.from, to: review.detour.to, count: review.detour.actions, seconds: num(Math.round(review.detour.ms / 100) / 10) })
        : t('review.detour', { from: review.detour.from, to: review.detour.to, count: review.detour.actions }), ' ', jump(review.detour.from - 1, t('review.see_it')))
      : null;
    const line = (review.continuation_lines || []).map((text) => moveText(text));
    const shortLine = line.slice(0, 12).join(' · ') + (line.length > 12 ? ` · … ${t('review.in_all', { count: line.length })}` : '');
    const body = {
      won: () => [h('p', { class: 'finding' }, review.par
        ? t('review.won_par', { name: game.name, count: review.actions, par: review.par })
        : t('review.won', { name: game.name, count: review.actions })), detour],
      losing_move: () => [
        h('p', { class: 'finding' }, tn('review.losing', {
          move: review.losing_move.action,
          line: h('strong', { class: 'losing-line' }, words('played') || moveText(review.losing_move.line)),
          count: review.proved_lost,
        }), ' ', showKey || jump(review.last_winnable, t('review.see_before'))),
        betterWords ? h('p', { class: 'key-better' }, tn('review.key_better', { move: h('strong', {}, betterWords) })) : null,
        h('p', {}, h('b', {}, t('review.line_there')), ' ', h('span', { class: 'continuation' }, shortLine)),
        detour],
      winnable_at_end: () => [h('p', { class: 'finding' }, t('review.winnable_at_end'), ' ', showKey),
        betterWords ? h('p', { class: 'key-better' }, tn('review.key_end', { move: h('strong', {}, betterWords) })) : null,
        h('p', {}, h('b', {}, t('review.line_end')), ' ', h('span', { class: 'continuation' }, shortLine)), detour],
      never_winnable: () => [h('p', { class: 'finding' }, t('review.never_winnable')), detour],
      unknown: () => [h('p', { class: 'finding' }, t('review.unknown')), detour],
    }[review.finding];
    clear(this.reviewEl, h('h2', {}, t('review.title_of', { name: game.name })), body ? body() : h('p', {}, review.finding));
  }

  destroy() {
    this.destroyed = true;
    this.playing = false;
    if (this.onKey) document.removeEventListener('keydown', this.onKey);
    cancelAnimationFrame(this.frame);
    for (const game of this.games) game.view.destroy();
  }
}
