// Ghosts: a recorded game of the same deal, raced in practice. The ghost is a
// rival whose progress follows its record's times (the frames of
// GET .../records/{id}/replay): at 1:30 into my game it shows what its player
// had done 1:30 into theirs. Also the links that start such a game, and the
// best game of each deal this browser played (to race it again).

import { h, clear, clock, api } from './dom.js';

// Only records of this server: a race player's or a daily entry's.
const RECORD = /^\/api\/(races\/[A-Za-z0-9_-]{1,64}\/records\/[A-Za-z0-9_-]{1,64}|daily\/\d{4}-\d{2}-\d{2}\/records\/\d{1,12})$/;
const BEST_PREFIX = 'boulanger.best.';

export const isRecordPath = (path) => typeof path === 'string' && RECORD.test(path);

// The practice page that races a record's ghost.
export function ghostLink(path, name) {
  return `/practice?ghost=${encodeURIComponent(path)}&name=${encodeURIComponent(name || 'Ghost')}`;
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

export class Ghost {
  constructor({ path, name }) {
    this.path = path;
    this.name = name || 'Ghost';
    this.frames = null;
    this.el = h('div', { class: 'ghost-bar', role: 'status', hidden: true });
    this.timer = 0;
    this.page = null;
  }

  async load() {
    if (!isRecordPath(this.path)) return;
    try {
      this.frames = (await api('GET', `${this.path}/replay`)).frames;
    } catch {
      this.frames = null;
    }
    this.draw();
  }

  // Called by the race page on each render: the bar sits under my place.
  attach(page, root) {
    this.page = page;
    if (!this.el.isConnected) {
      const bar = root.querySelector('.me-bar');
      if (bar) bar.after(this.el);
    }
    if (!this.timer) this.timer = setInterval(() => this.draw(), 250);
    if (this.frames === null && !this.loading) {
      this.loading = true;
      this.load();
    }
    this.draw();
  }

  draw() {
    const page = this.page;
    if (!page || !this.frames || !page.race) {
      this.el.hidden = true;
      return;
    }
    const race = page.race;
    const started = Number.isFinite(race.start_at) && (race.state === 'running' || race.state === 'finished' || page.running());
    const me = page.players.get(page.me);
    // My game's time: now while I play, my last action once I am done.
    let now = 0;
    if (started) {
      now = page.serverNow() - race.start_at;
      if (me && Number.isFinite(me.time_ms)) now = me.time_ms;
      else if (me && (me.status === 'resigned' || race.state === 'finished')) now = me.elapsed_ms || 0;
    }
    let at = this.frames[0];
    for (const frame of this.frames) {
      if ((frame.t || 0) > now) break;
      at = frame;
    }
    const last = this.frames[this.frames.length - 1];
    const ghostWon = last.foundation_cards === 52;
    const ghostDone = at === last;
    const mine = page.myCards();
    const gap = mine - at.foundation_cards;
    const where = gap > 0 ? `you are ${gap} ahead` : gap < 0 ? `you are ${-gap} behind` : 'level';
    let result = null;
    if (ghostDone) result = ghostWon ? `${this.name} won in ${clock(last.t || 0)}` : `${this.name} stopped at ${last.foundation_cards}/52`;
    if (me && me.status === 'won') {
      result = ghostWon && (last.t || 0) < me.time_ms ? `${this.name} was faster by ${clock(me.time_ms - (last.t || 0))}` : `You beat ${this.name}!`;
    }
    this.el.hidden = false;
    clear(this.el,
      h('span', { class: 'ghost-name' }, `Ghost: ${this.name}`),
      h('span', { class: 'ghost-cards' }, `${at.foundation_cards}/52`),
      h('span', { class: 'gap' }, started ? (result || where) : 'starts with you'),
      h('span', { class: 'mini-track', 'aria-hidden': 'true' },
        h('span', { class: 'runner ghost', style: { left: `${(at.foundation_cards / 52) * 100}%` } }, this.name.slice(0, 1)),
        h('span', { class: 'runner me', style: { left: `${(mine / 52) * 100}%` } }, 'You')));
  }

  destroy() {
    clearInterval(this.timer);
    this.timer = 0;
  }
}
