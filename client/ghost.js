// Ghosts: a recorded game of the same deal, raced in practice. The ghost is a
// rival whose progress follows its record's times (the frames of
// GET .../records/{id}/replay): at 1:30 into my game it shows what its player
// had done 1:30 into theirs. Loaded by the race page only for such a game;
// the links that start one are in dom.js (ghostLink, keepBest).

import { h, patch, clock, api, isRecordPath } from './dom.js';
import { t } from './i18n.js';

export class Ghost {
  constructor({ path, name }) {
    this.path = path;
    this.name = name || t('ghost.default_name');
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
    const where = gap > 0 ? t('ghost.ahead', { count: gap }) : gap < 0 ? t('ghost.behind', { count: -gap }) : t('ghost.level');
    let result = null;
    if (ghostDone) result = ghostWon ? t('gap.leader_won', { name: this.name, time: clock(last.t || 0) }) : t('ghost.stopped', { name: this.name, cards: last.foundation_cards });
    if (me && me.status === 'won') {
      result = ghostWon && (last.t || 0) < me.time_ms ? t('ghost.faster', { name: this.name, time: clock(me.time_ms - (last.t || 0)) }) : t('ghost.beaten', { name: this.name });
    }
    this.el.hidden = false;
    patch(this.el,
      h('span', { class: 'ghost-name' }, t('ghost.name', { name: this.name })),
      h('span', { class: 'ghost-cards' }, `${at.foundation_cards}/52`),
      h('span', { class: 'gap' }, started ? (result || where) : t('ghost.waiting')),
      h('span', { class: 'mini-track', 'aria-hidden': 'true' },
        h('span', { class: 'runner ghost', style: { left: `${(at.foundation_cards / 52) * 100}%` } }, this.name.slice(0, 1)),
        h('span', { class: 'runner me', style: { left: `${(mine / 52) * 100}%` } }, t('ghost.you'))));
  }

  destroy() {
    clearInterval(this.timer);
    this.timer = 0;
  }
}
