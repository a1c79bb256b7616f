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

// Put exactly these card elements, in order, as a place's cards (other children stay).
function placeCards(place, wanted) {
  const current = [];
  for (const child of place.children) if (child.classList.contains('card')) current.push(child);
  if (current.length === wanted.length && current.every((el, i) => el === wanted[i])) return;
  for (const el of current) if (!wanted.includes(el)) el.remove();
  for (const el of wanted) place.appendChild(el);
}

function setLabel(el, label) {
  if (el.getAttribute('aria-label') !== label) el.setAttribute('aria-label', label);
}

export class BoardView {
  // actions: move(src, dst, count), tap(card), doubleTap(card), undo(), hint(),
  // illegal(reason), flush() (optional: bring the board up to date now)
  constructor(actions) {
    this.actions = actions;
    this.board = null;
    this.interactive = false;
    this.selection = null; // keyboard: {place, count|null}
    this.highlight = null; // hint: {src, dst}
    this.press = null; // pointer down, maybe dragging
    this.lastClick = null;
    this.renderLater = false;
    this.cards = new Map(); // card -> its element, made once
    this.places = null;
    this.metrics = null;
    this.measureFrame = 0;
    this.el = h('div', { class: 'board', role: 'group', 'aria-label': 'Board' });
    this.el.addEventListener('pointerdown', (e) => this.pointerDown(e));
    this.el.addEventListener('pointermove', (e) => this.pointerMove(e));
    this.el.addEventListener('pointerup', (e) => this.pointerUp(e));
    this.el.addEventListener('pointercancel', (e) => this.pointerCancel(e));
    this.el.addEventListener('keydown', (e) => this.placeKey(e));
    this.el.addEventListener('dragstart', (e) => e.preventDefault());
    // A press never focuses a column or a cell: focus rings are for the
    // keyboard (a double click used to leave one on the column behind a card).
    this.el.addEventListener('mousedown', (e) => e.preventDefault());
    this.onResize = () => this.layout(true);
    window.addEventListener('resize', this.onResize);
  }

  destroy() {
    cancelAnimationFrame(this.measureFrame);
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
  //
  // The skeleton (cells, foundations, columns) and the 52 card elements are
  // made once and moved between places: a move touches only what changed,
  // which keeps a render cheap on a phone, and a card being dragged stays the
  // same element whatever arrives from the server meanwhile.

  card(card) {
    let el = this.cards.get(card);
    if (!el) {
      el = cardElement(card);
      this.cards.set(card, el);
    }
    return el;
  }

  skeleton(cellCount) {
    if (this.places && this.places.cellCount === cellCount) return this.places;
    const slot = (place, key, extra = '') => h('div', { class: `slot ${extra}`, 'data-place': place, tabindex: 0, role: 'button' },
      h('span', { class: 'key', 'aria-hidden': 'true' }, key));
    const cells = Array.from({ length: cellCount }, (_, i) => slot(`cell${i + 1}`, KEY_CELLS[i], 'cell'));
    const foundationSlots = R.SUITS.map((suit) => h('div', { class: `slot foundation-slot suit-${suit}`, 'data-suit': suit },
      h('span', { class: 'ghost', 'aria-hidden': 'true' }, R.SUIT_SYMBOLS[suit])));
    const foundations = h('div', { class: 'foundations', 'data-place': 'foundation', tabindex: 0, role: 'button' },
      h('span', { class: 'key', 'aria-hidden': 'true' }, 'f'), foundationSlots);
    const columns = Array.from({ length: 8 }, (_, i) => h('div', { class: 'column', 'data-place': `col${i + 1}`, tabindex: 0, role: 'button' },
      h('span', { class: 'key', 'aria-hidden': 'true' }, String(i + 1))));
    const tableau = h('div', { class: 'tableau' }, columns);
    clear(this.el,
      h('div', { class: 'top-row' }, h('div', { class: 'cells' }, cells), foundations),
      tableau);
    this.places = { cellCount, cells, foundations, foundationSlots, columns, tableau };
    this.metrics = null;
    return this.places;
  }

  render() {
    this.renderLater = false;
    const board = this.board;
    if (!board) {
      clear(this.el);
      this.places = null;
      return;
    }
    const places = this.skeleton(board.cells.length);
    const sel = this.selection;
    const hint = this.highlight;
    const mark = (el, base, place) => {
      const name = [base,
        sel && sel.place === place ? 'selected' : '',
        hint && hint.src === place ? 'hint-src' : '',
        hint && hint.dst === place ? 'hint-dst' : '',
      ].join(' ').trim();
      if (el.className !== name) el.className = name;
    };
    const picked = (el, on) => {
      if (el.classList.contains('picked') !== on) el.classList.toggle('picked', on);
    };

    board.cells.forEach((card, i) => {
      const place = `cell${i + 1}`;
      const el = places.cells[i];
      mark(el, 'slot cell', place);
      setLabel(el, `Cell ${i + 1} (key ${KEY_CELLS[i]}): ${card ? R.cardName(card) : 'empty'}`);
      const cardEl = card ? this.card(card) : null;
      if (cardEl) {
        cardEl.style.removeProperty('--i');
        picked(cardEl, Boolean(sel && sel.place === place));
      }
      placeCards(el, cardEl ? [cardEl] : []);
    });

    mark(places.foundations, 'foundations', 'foundation');
    const shown = [];
    R.SUITS.forEach((suit, i) => {
      const rank = board.foundations[suit] || 0;
      const cardEl = rank ? this.card(R.cardOf(rank, suit)) : null;
      if (cardEl) {
        cardEl.style.removeProperty('--i');
        picked(cardEl, false);
        shown.push(R.cardName(R.cardOf(rank, suit)));
      } else {
        shown.push(`no ${R.SUIT_NAMES[suit]}`);
      }
      placeCards(places.foundationSlots[i], cardEl ? [cardEl] : []);
    });
    setLabel(places.foundations, `Foundations (key f): ${shown.join(', ')}`);

    const selCount = sel ? (sel.count || 1) : 0;
    board.columns.forEach((col, i) => {
      const place = `col${i + 1}`;
      const el = places.columns[i];
      mark(el, 'column', place);
      const top = col.length ? R.cardName(col[col.length - 1]) : 'empty';
      setLabel(el, `Column ${i + 1} (key ${i + 1}): ${col.length} cards, top ${top}`);
      const from = sel && sel.place === place ? col.length - selCount : col.length;
      placeCards(el, col.map((card, j) => {
        const cardEl = this.card(card);
        if (cardEl.style.getPropertyValue('--i') !== String(j)) cardEl.style.setProperty('--i', j);
        picked(cardEl, j >= from);
        return cardEl;
      }));
    });
    this.layout();
  }

  // Squeeze long columns so the board fits the window, keeping every
  // covered card's corner readable. Measures only when asked (resize, new
  // skeleton) or once per frame after a render, never inside the render.
  layout(measure = false) {
    const places = this.places;
    if (!places) return;
    if (measure || !this.metrics) {
      const slot = places.columns[0].getBoundingClientRect();
      const cardHeight = places.cells.length ? places.cells[0].getBoundingClientRect().height : slot.width * 1.4;
      const top = places.tableau.getBoundingClientRect().top + window.scrollY;
      if (!cardHeight) {
        this.metrics = null; // hidden: measure again once shown
        return;
      }
      this.metrics = { cardHeight, room: Math.max(window.innerHeight - top - 16, cardHeight * 3) };
    } else if (!this.measureFrame) {
      this.measureFrame = requestAnimationFrame(() => {
        this.measureFrame = 0;
        if (this.places && !this.el.hidden) this.layout(true);
      });
    }
    const { cardHeight, room } = this.metrics;
    const most = Math.max(cardHeight * 0.28, 12);
    const least = Math.max(Math.min(cardHeight * 0.2, most), 15);
    places.columns.forEach((column, i) => {
      const n = this.board.columns[i].length;
      const offset = n > 1 ? Math.max(least, Math.min(most, (room - cardHeight) / (n - 1))) : most;
      const value = `${offset.toFixed(1)}px`;
      if (column.style.getPropertyValue('--offset') !== value) column.style.setProperty('--offset', value);
      const count = String(Math.max(n, 1));
      if (column.style.getPropertyValue('--count') !== count) column.style.setProperty('--count', count);
    });
  }

  // -- pointer: drag, tap, double tap ------------------------------------

  pointerDown(e) {
    if (this.actions.flush) this.actions.flush(); // draw what is pending first
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
    for (const el of press.els) {
      el.classList.remove('lifted');
      el.style.transform = '';
    }
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
