// The board: cells, foundations and 8 columns, drawn from a wire-format
// board, and the ways to move: drag (pointer events: mouse, touch, pen),
// tap / double tap, and the keyboard (1-8 columns, a-d cells, f foundation).

import { h, clear } from './dom.js';
import * as R from './rules.js';

const DRAG_THRESHOLD = 6; // px before a press becomes a drag
const DOUBLE_TAP_MS = 350;
const KEY_CELLS = 'abcd';

export function cardElement(card, extra = '') {
  const suit = R.suitOf(card);
  const symbol = R.SUIT_SYMBOLS[suit];
  return h('div', {
    class: `card suit-${suit} ${extra}`.trim(),
    'data-card': card,
    role: 'img',
    'aria-label': R.cardName(card),
  },
  h('span', { class: 'corner', 'aria-hidden': 'true' }, h('span', { class: 'rank' }, R.rankLabel(card)), h('span', { class: 'suit' }, symbol)),
  h('span', { class: 'pip', 'aria-hidden': 'true' }, symbol));
}

export class BoardView {
  // actions: move(src, dst, count), tap(card), doubleTap(card), undo(), hint(), illegal(reason)
  constructor(actions) {
    this.actions = actions;
    this.board = null;
    this.interactive = false;
    this.selection = null; // keyboard: {place, count|null}
    this.highlight = null; // hint: {src, dst}
    this.press = null; // pointer down, maybe dragging
    this.lastClick = null;
    this.renderLater = false;
    this.el = h('div', { class: 'board', role: 'group', 'aria-label': 'Board' });
    this.el.addEventListener('pointerdown', (e) => this.pointerDown(e));
    this.el.addEventListener('pointermove', (e) => this.pointerMove(e));
    this.el.addEventListener('pointerup', (e) => this.pointerUp(e));
    this.el.addEventListener('pointercancel', (e) => this.pointerCancel(e));
    this.el.addEventListener('keydown', (e) => this.placeKey(e));
    this.el.addEventListener('dragstart', (e) => e.preventDefault());
    this.onResize = () => this.layout();
    window.addEventListener('resize', this.onResize);
  }

  destroy() {
    window.removeEventListener('resize', this.onResize);
  }

  update(board, { interactive = this.interactive, highlight = this.highlight } = {}) {
    this.board = board;
    this.interactive = interactive;
    this.highlight = highlight;
    if (!interactive) this.selection = null;
    if (this.press && this.press.dragging) {
      this.renderLater = true; // never pull cards from under a finger
      return;
    }
    this.render();
  }

  // -- drawing ---------------------------------------------------------

  render() {
    this.renderLater = false;
    const board = this.board;
    if (!board) {
      clear(this.el);
      return;
    }
    const focused = this.el.contains(document.activeElement) ? document.activeElement.dataset.place : null;
    const sel = this.selection;
    const selCount = sel ? (sel.count || 1) : 0;
    const hint = this.highlight;
    const mark = (place) => [
      sel && sel.place === place ? 'selected' : '',
      hint && hint.src === place ? 'hint-src' : '',
      hint && hint.dst === place ? 'hint-dst' : '',
    ].join(' ');

    const cells = board.cells.map((card, i) => {
      const place = `cell${i + 1}`;
      const label = `Cell ${i + 1} (key ${KEY_CELLS[i]}): ${card ? R.cardName(card) : 'empty'}`;
      return h('div', { class: `slot cell ${mark(place)}`, 'data-place': place, tabindex: 0, role: 'button', 'aria-label': label },
        h('span', { class: 'key', 'aria-hidden': 'true' }, KEY_CELLS[i]),
        card ? cardElement(card, sel && sel.place === place ? 'picked' : '') : null);
    });
    const foundationSlots = R.SUITS.map((suit) => {
      const rank = board.foundations[suit] || 0;
      return h('div', { class: `slot foundation-slot suit-${suit}`, 'data-suit': suit },
        rank ? cardElement(R.cardOf(rank, suit)) : h('span', { class: 'ghost', 'aria-hidden': 'true' }, R.SUIT_SYMBOLS[suit]));
    });
    const foundationLabel = 'Foundations (key f): ' + R.SUITS.map((suit) => {
      const rank = board.foundations[suit] || 0;
      return rank ? `${R.cardName(R.cardOf(rank, suit))}` : `no ${R.SUIT_NAMES[suit]}`;
    }).join(', ');

    const columns = board.columns.map((col, i) => {
      const place = `col${i + 1}`;
      const top = col.length ? R.cardName(col[col.length - 1]) : 'empty';
      const picked = sel && sel.place === place ? col.length - selCount : col.length;
      return h('div', {
        class: `column ${mark(place)}`, 'data-place': place, tabindex: 0, role: 'button',
        'aria-label': `Column ${i + 1} (key ${i + 1}): ${col.length} cards, top ${top}`,
      },
      h('span', { class: 'key', 'aria-hidden': 'true' }, String(i + 1)),
      col.map((card, j) => {
        const el = cardElement(card, j >= picked ? 'picked' : '');
        el.style.setProperty('--i', j);
        return el;
      }));
    });

    clear(this.el,
      h('div', { class: 'top-row', style: { '--cells': board.cells.length } },
        h('div', { class: 'cells' }, cells),
        h('div', { class: `foundations ${mark('foundation')}`, 'data-place': 'foundation', tabindex: 0, role: 'button', 'aria-label': foundationLabel },
          h('span', { class: 'key', 'aria-hidden': 'true' }, 'f'), foundationSlots)),
      h('div', { class: 'tableau' }, columns));
    this.layout();
    if (focused) {
      const again = this.el.querySelector(`[data-place="${focused}"]`);
      if (again) again.focus({ preventScroll: true });
    }
  }

  // Squeeze long columns so the board fits the window, keeping every
  // covered card's corner readable.
  layout() {
    const tableau = this.el.querySelector('.tableau');
    const anyCard = this.el.querySelector('.card');
    if (!tableau || !anyCard) return;
    const cardHeight = anyCard.getBoundingClientRect().height || 80;
    const top = tableau.getBoundingClientRect().top + window.scrollY;
    const room = Math.max(window.innerHeight - top - 16, cardHeight * 3);
    const most = Math.max(cardHeight * 0.28, 12);
    const least = Math.max(Math.min(cardHeight * 0.2, most), 15);
    for (const column of tableau.children) {
      const n = column.querySelectorAll('.card').length;
      const offset = n > 1 ? Math.max(least, Math.min(most, (room - cardHeight) / (n - 1))) : most;
      column.style.setProperty('--offset', `${offset.toFixed(1)}px`);
      column.style.setProperty('--count', Math.max(n, 1));
    }
  }

  // -- pointer: drag, tap, double tap ------------------------------------

  pointerDown(e) {
    if (!this.interactive || !this.board || (e.pointerType === 'mouse' && e.button !== 0)) return;
    const cardEl = e.target.closest('.card');
    const placeEl = cardEl && cardEl.closest('[data-place]');
    if (!placeEl || placeEl.dataset.place === 'foundation') return;
    const card = cardEl.dataset.card;
    const where = R.locate(this.board, card);
    if (!where) return;
    const place = where.place;
    let els = [cardEl];
    let movable = true;
    if (place.startsWith('col')) {
      const col = this.board.columns[R.parsePlace(place).index];
      movable = where.depth <= R.movableRun(col);
      els = [...placeEl.querySelectorAll('.card')].slice(col.length - where.depth);
    }
    e.preventDefault();
    this.press = { card, place, count: where.depth, movable, els, x: e.clientX, y: e.clientY, id: e.pointerId, dragging: false, target: null };
    try {
      this.el.setPointerCapture(e.pointerId);
    } catch {
      // The pointer is gone already; pointerup will not come either.
    }
  }

  pointerMove(e) {
    const press = this.press;
    if (!press || e.pointerId !== press.id) return;
    const dx = e.clientX - press.x;
    const dy = e.clientY - press.y;
    if (!press.dragging) {
      if (!press.movable || Math.hypot(dx, dy) < DRAG_THRESHOLD) return;
      press.dragging = true;
      this.selection = null;
      for (const el of press.els) el.classList.add('lifted');
      this.el.classList.add('dragging');
      this.markTargets(press);
    }
    for (const el of press.els) el.style.transform = `translate(${dx}px, ${dy}px)`;
    const target = this.dropTarget(e.clientX, e.clientY);
    if (target !== press.target) {
      this.el.querySelector('.over')?.classList.remove('over');
      if (target) this.placeElement(target)?.classList.add('over');
      press.target = target;
    }
  }

  pointerUp(e) {
    const press = this.press;
    if (!press || e.pointerId !== press.id) return;
    this.press = null;
    if (!press.dragging) {
      this.click(press.card, press.place, press.count, press.x, press.y);
      return;
    }
    const target = this.dropTarget(e.clientX, e.clientY);
    if (!target || target === press.place) {
      this.snapBack(press);
      return;
    }
    const why = R.whyIllegal(this.board, press.place, target, press.count);
    if (why) {
      this.snapBack(press);
      this.actions.illegal(why);
      return;
    }
    this.endDrag();
    this.actions.move(press.place, target, press.count);
    if (this.renderLater) this.render();
  }

  pointerCancel(e) {
    const press = this.press;
    if (!press || e.pointerId !== press.id) return;
    this.press = null;
    if (press.dragging) this.snapBack(press);
  }

  endDrag() {
    this.el.classList.remove('dragging');
    for (const el of this.el.querySelectorAll('.droppable, .over')) el.classList.remove('droppable', 'over');
  }

  snapBack(press) {
    this.endDrag();
    for (const el of press.els) {
      el.classList.add('snapping');
      el.style.transform = '';
    }
    setTimeout(() => {
      for (const el of press.els) el.classList.remove('lifted', 'snapping');
      if (this.renderLater && !this.press) this.render();
    }, 200);
  }

  markTargets(press) {
    for (const el of this.el.querySelectorAll('[data-place]')) {
      const place = el.dataset.place;
      if (place !== press.place && R.isLegal(this.board, press.place, place, press.count)) el.classList.add('droppable');
    }
  }

  placeElement(place) {
    return this.el.querySelector(`[data-place="${place}"]`);
  }

  // The place under a point: a cell, the foundations, or the column below
  // (a column owns the whole strip under its top, gaps included).
  dropTarget(x, y) {
    for (const el of this.el.querySelectorAll('.top-row [data-place]')) {
      const r = el.getBoundingClientRect();
      if (x >= r.left - 4 && x <= r.right + 4 && y >= r.top - 4 && y <= r.bottom + 4) return el.dataset.place;
    }
    const tableau = this.el.querySelector('.tableau');
    const area = tableau.getBoundingClientRect();
    if (y < area.top - 8) return null;
    let best = null;
    let bestDistance = Infinity;
    for (const el of tableau.children) {
      const r = el.getBoundingClientRect();
      const distance = x < r.left ? r.left - x : x > r.right ? x - r.right : 0;
      if (distance < bestDistance) {
        bestDistance = distance;
        best = el.dataset.place;
      }
    }
    return bestDistance <= 24 ? best : null;
  }

  // A tap sends the card to its foundation at once when it can go there;
  // a second tap on the same card soon after is a double tap.
  click(card, place, depth, x, y) {
    const now = performance.now();
    const last = this.lastClick;
    this.lastClick = null;
    if (last && now - last.t < DOUBLE_TAP_MS && Math.hypot(x - last.x, y - last.y) < 24) {
      // The second half of a double tap on a card that already went to its
      // foundation would hit the card under it: ignore it.
      if (last.sent) return;
      if (last.card === card) {
        this.actions.doubleTap(card);
        return;
      }
    }
    if (depth === 1 && R.tapMove(this.board, card)) {
      this.lastClick = { card, t: now, sent: true, x, y };
      this.actions.tap(card);
      return;
    }
    this.lastClick = { card, t: now, sent: false, x, y };
  }

  // -- keyboard ------------------------------------------------------------

  // Keys for the whole page while this board is playable; returns true when used.
  key(e) {
    if (!this.interactive || !this.board || e.ctrlKey || e.metaKey || e.altKey) return false;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (key >= '1' && key <= '8') return this.choose(`col${key}`);
    const cell = KEY_CELLS.indexOf(key);
    if (cell >= 0 && key.length === 1) {
      if (cell >= this.board.cells.length) return false;
      return this.choose(`cell${cell + 1}`);
    }
    if (key === 'f') return this.choose('foundation');
    if (key === 'Escape' && this.selection) {
      this.selection = null;
      this.render();
      return true;
    }
    if ((key === 'ArrowUp' || key === 'ArrowDown') && this.selection && this.selection.place.startsWith('col')) {
      const col = this.board.columns[R.parsePlace(this.selection.place).index];
      const run = R.movableRun(col);
      const now = this.selection.count || 1;
      this.selection.count = Math.max(1, Math.min(run, now + (key === 'ArrowUp' ? 1 : -1)));
      this.render();
      return true;
    }
    if (key === 'u') {
      this.selection = null;
      this.actions.undo();
      return true;
    }
    if (key === 'h') {
      this.actions.hint();
      return true;
    }
    return false;
  }

  // Enter or Space on a focused column, cell or the foundations picks it.
  placeKey(e) {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    const place = e.target.dataset && e.target.dataset.place;
    if (!place || !this.interactive) return;
    e.preventDefault();
    e.stopPropagation();
    this.choose(place);
  }

  // Pick a source, then a destination; the same source twice is a double tap.
  choose(place) {
    const board = this.board;
    const sel = this.selection;
    if (!sel) {
      const p = R.parsePlace(place);
      const empty = p.kind === 'foundation'
        || (p.kind === 'col' && !board.columns[p.index].length)
        || (p.kind === 'cell' && !board.cells[p.index]);
      if (empty) return true;
      this.selection = { place, count: null };
      this.render();
      return true;
    }
    this.selection = null;
    if (place === sel.place) {
      const p = R.parsePlace(place);
      const card = p.kind === 'cell'
        ? board.cells[p.index]
        : board.columns[p.index][board.columns[p.index].length - (sel.count || 1)];
      this.render();
      this.actions.doubleTap(card);
      return true;
    }
    const count = sel.count || R.autoCount(board, sel.place, place);
    const why = R.whyIllegal(board, sel.place, place, count);
    if (why) {
      this.render();
      this.actions.illegal(why);
      return true;
    }
    this.actions.move(sel.place, place, count);
    return true;
  }
}
