// The start of a race: "3 · 2 · 1 · Go!" in large over the page, the board
// already laid out face down under it (race.js), a beep on each count and a
// higher one at Go, a buzz on phones. Every count is read from the server's
// clock (the race's start_at and the page's clock skew), so that every player
// and spectator sees the same number at the same moment. The overlay never
// takes a press: the page under it is playable the moment the race starts.

import { h, say } from './dom.js';
import { play, reducedMotion, touchedYet } from './feel.js';
import { t } from './i18n.js';

const GO_MS = 700; // "Go!" stays this long after the start

export class StartOverlay {
  constructor(page) {
    this.page = page;
    this.el = null;
    this.timer = 0;
    this.shown = null; // the text on the overlay now
    this.seen = []; // every text shown, in order (for the curious and the tests)
    this.startAt = null; // the start this overlay counts down to
    this.fresh = false; // whether this page saw that start coming
  }

  destroy() {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.el) this.el.remove();
    this.el = null;
  }

  // Called on every render of the race page: shows, moves on or takes away.
  update(pageEl) {
    const race = this.page.race;
    const startAt = race && Number.isFinite(race.start_at) ? race.start_at : null;
    const live = startAt !== null && race.state !== 'lobby' && race.state !== 'finished';
    if (!live || this.page.serverNow() >= startAt + GO_MS) {
      this.hide();
      return;
    }
    // A countdown seen from its start, or joined during it; one whose start
    // had passed when this page first heard of it (a reload) is not shown.
    if (this.startAt !== startAt) {
      this.startAt = startAt;
      this.fresh = this.page.serverNow() < startAt;
      this.seen = [];
    }
    if (!this.fresh) return;
    if (!this.el || !this.el.isConnected) {
      this.el = h('div', { class: 'start-overlay', 'aria-hidden': 'true' },
        h('p', { class: 'start-label' }, t('countdown.starts_in')),
        h('span', { class: 'start-count' }));
      this.shown = null;
      pageEl.appendChild(this.el);
    }
    this.step();
  }

  // The count at this moment of the server's clock, and the next change.
  step() {
    clearTimeout(this.timer);
    this.timer = 0;
    if (!this.el || this.startAt === null) return;
    const left = this.startAt - this.page.serverNow();
    if (left <= -GO_MS) {
      this.hide();
      return;
    }
    const go = left <= 0;
    const text = go ? t('countdown.go') : String(Math.ceil(left / 1000));
    if (text !== this.shown) this.show(text, go);
    // Wake up at the next whole second before the start (or at Go's end).
    const wait = go ? left + GO_MS : left - (Math.ceil(left / 1000) - 1) * 1000;
    this.timer = setTimeout(() => this.step(), Math.max(1, Math.ceil(wait)) + 1);
  }

  show(text, go) {
    this.shown = text;
    this.seen.push(text);
    const count = this.el.querySelector('.start-count');
    count.textContent = text;
    this.el.classList.toggle('go', go);
    this.el.dataset.count = go ? '0' : text;
    if (!reducedMotion()) {
      count.animate(go
        ? [{ transform: 'scale(.6)', opacity: 0.4 }, { transform: 'scale(1.15)', opacity: 1, offset: 0.5 }, { transform: 'scale(1)' }]
        : [{ transform: 'scale(1.5)', opacity: 0 }, { transform: 'scale(1)', opacity: 1 }],
      { duration: go ? 380 : 300, easing: 'cubic-bezier(.2,.7,.3,1)' });
    }
    // Said to screen readers too: the first count in words, then the numbers.
    say(go || this.seen.length > 1 ? text : t('start.said', { n: text }));
    // Sound (and its buzz) only once the player has touched the page.
    if (touchedYet()) play(go ? 'go' : 'count');
  }

  hide() {
    clearTimeout(this.timer);
    this.timer = 0;
    if (this.el) this.el.remove();
    this.el = null;
    this.shown = null;
  }
}

// The cards turn up at Go, column by column (not under reduced motion). Only
// a transform: the board keeps its place and size.
export function turnUp(board) {
  if (reducedMotion()) return;
  for (const card of board.querySelectorAll('.card')) {
    const column = card.closest('.column');
    const index = column ? [...column.parentElement.children].indexOf(column) : 0;
    card.animate([{ transform: 'scaleX(0)' }, { transform: 'none' }], { duration: 220, delay: index * 25, easing: 'ease-out', fill: 'backwards' });
  }
}
