// The board: cells, foundations and 8 columns, drawn from a wire-format
// board, and the ways to move: drag (pointer events: mouse, touch, pen),
// tap / double tap, and the keyboard (1-8 columns, a-d cells, f foundation).

import { h, clear } from './dom.js';
import * as R from './rules.js';
import { slide, shake, play } from './feel.js';
import { t, list } from './i18n.js';

const DRAG_THRESHOLD = 6; // px before a press becomes a drag
const DOUBLE_TAP_MS = 350;
const KEY_CELLS = 'abcd';
const NOTE_MS = 2600;
const LIFT = 0.55; // a dragged card rides this many card heights above a finger

export function cardElement(card, extra = '') {
  const suit = R.suitOf(card);
  const symbol = R.SUIT_SYMBOLS[suit];
  return h('div', {
    class: `card suit-${suit} ${extra}`.trim(),
    'data-card': card,
    role: 'img',
    'aria-label': R.cardName(card),
    title: R.cardText(card),
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
    this.where = new Map(); // card -> "place:index" as drawn last
    this.dropRects = null; // where dropped cards were let go (they fly from there)
    this.tapTimer = 0;
    this.noteEl = null;
    this.el = h('div', { class: 'board', role: 'group', 'aria-label': t('board.label') });
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
    clearTimeout(this.tapTimer);
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
      h('span', { class: 'ghost', 'aria-hidden': 'true' }, `A${R.SUIT_SYMBOLS[suit]}`)));
    const foundations = h('div', { class: 'foundations', 'data-place': 'foundation', tabindex: 0, role: 'button' }, foundationSlots);
    const columns = Array.from({ length: 8 }, (_, i) => h('div', { class: 'column', 'data-place': `col${i + 1}`, tabindex: 0, role: 'button' },
      h('span', { class: 'key', 'aria-hidden': 'true' }, String(i + 1))));
    const tableau = h('div', { class: 'tableau' }, columns);
    clear(this.el,
      h('div', { class: 'top-row' },
        h('div', { class: 'cells' }, h('span', { class: 'caption', 'aria-hidden': 'true' }, t('board.cells', { count: cellCount })), cells),
        // The foundations' key (f) is told by their caption, as a key cap:
        // over the four slots a lone letter read as a stray one.
        h('span', { class: 'caption foundations-caption', 'aria-hidden': 'true', 'data-key': 'f' }, t('board.foundations')),
        foundations),
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
      this.where.clear();
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

    // Where every card goes now; the ones that move slide there from where
    // they were drawn (measured before anything changes).
    const where = new Map();
    board.cells.forEach((card, i) => { if (card) where.set(card, `cell${i + 1}:0`); });
    R.SUITS.forEach((suit) => {
      const rank = board.foundations[suit] || 0;
      if (rank) where.set(R.cardOf(rank, suit), 'foundation:0');
    });
    board.columns.forEach((col, i) => col.forEach((card, j) => where.set(card, `col${i + 1}:${j}`)));
    const first = new Map();
    const landed = new Set();
    if (this.where.size) {
      for (const [card, at] of where) {
        const before = this.where.get(card);
        const el = this.cards.get(card);
        if (before === at || !el) continue;
        const rect = (this.dropRects && this.dropRects.get(el)) || (el.isConnected ? el.getBoundingClientRect() : null);
        if (rect) first.set(el, rect);
        if (at === 'foundation:0') landed.add(el);
      }
    }
    this.dropRects = null;
    this.where = where;

    board.cells.forEach((card, i) => {
      const place = `cell${i + 1}`;
      const el = places.cells[i];
      mark(el, 'slot cell', place);
      setLabel(el, t('board.cell_label', { n: i + 1, key: KEY_CELLS[i], card: card ? R.cardName(card) : t('board.empty') }));
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
        shown.push(t('board.foundation_top', { suit: R.suitName(suit), card: R.cardName(R.cardOf(rank, suit)) }));
      } else {
        shown.push(t('board.foundation_none', { suit: R.suitName(suit) }));
      }
      placeCards(places.foundationSlots[i], cardEl ? [cardEl] : []);
    });
    setLabel(places.foundations, t('board.foundations_label', { key: 'f', cards: list(shown, 'unit') }));

    const selCount = sel ? (sel.count || 1) : 0;
    board.columns.forEach((col, i) => {
      const place = `col${i + 1}`;
      const el = places.columns[i];
      mark(el, 'column', place);
      // Every card of the column, for a screen reader: the top one last.
      const cards = col.length ? t('board.column_cards', { count: col.length, cards: col.map(R.cardName).join(', ') }) : t('board.empty');
      setLabel(el, t('board.column_label', { n: i + 1, key: i + 1, cards }));
      const from = sel && sel.place === place ? col.length - selCount : col.length;
      placeCards(el, col.map((card, j) => {
        const cardEl = this.card(card);
        if (cardEl.style.getPropertyValue('--i') !== String(j)) cardEl.style.setProperty('--i', j);
        picked(cardEl, j >= from);
        return cardEl;
      }));
    });
    this.layout();
    if (first.size) {
      slide(first, landed);
      play(landed.size ? 'up' : 'place');
    }
  }

  // A one-line note next to a place or a card (an error, a hint), instead of
  // far away over the board; it goes by itself. It sits under the card when
  // there is room in the window, else above it, and never outside the window
  // (a board fitted to the window's height has its last cards at the edge).
  note(target, text) {
    if (!text) return;
    const anchor = (target && this.cards.get(target)) || (target && this.placeElement(target)) || this.el;
    const area = this.el.parentElement || this.el;
    if (!this.noteEl) {
      this.noteEl = h('div', { class: 'board-note', role: 'alert' });
    }
    const note = this.noteEl;
    note.textContent = text;
    area.appendChild(note);
    note.hidden = false;
    const box = area.getBoundingClientRect();
    // Where the card lies on the board (not where a drag let it go: it snaps back).
    const at = anchor.classList.contains('card') && anchor.parentElement ? this.layoutRect(anchor) : anchor.getBoundingClientRect();
    const viewWidth = document.documentElement.clientWidth || window.innerWidth;
    const viewHeight = window.innerHeight;
    const width = Math.max(0, Math.min(box.width - 8, viewWidth - 8, 320));
    note.style.width = `${width}px`;
    const height = note.offsetHeight;
    // In the window's coordinates: under the card, else above it, else inside.
    let top = Math.min(at.bottom, box.bottom - 8) + 6;
    if (top + height > viewHeight - 4) top = at.top - height - 6;
    top = Math.max(4, Math.min(top, viewHeight - height - 4));
    let left = at.left + at.width / 2 - width / 2;
    left = Math.max(box.left + 4, Math.min(left, box.right - width - 4));
    left = Math.max(4, Math.min(left, viewWidth - width - 4));
    note.style.top = `${top - box.top}px`;
    note.style.left = `${left - box.left}px`;
    clearTimeout(this.noteTimer);
    this.noteTimer = setTimeout(() => { note.hidden = true; }, NOTE_MS);
  }

  // -- arrows: a move drawn on the board (a review's key move) -------------

  // Arrows from a move's cards to where they go, over this board as it is
  // drawn now: [{src, dst, count, kind}] (kind: a class, "played" or
  // "better"); [] takes them away. They follow the board when it is resized.
  showArrows(moves) {
    this.arrowMoves = moves && moves.length ? moves : null;
    this.drawArrows();
  }

  // A card's or a place's box where the layout puts it, in the window's
  // coordinates: a card still sliding into place is measured at its end.
  layoutRect(el) {
    if (!el.classList.contains('card')) return el.getBoundingClientRect();
    const place = el.parentElement.getBoundingClientRect();
    const left = place.left + el.offsetLeft;
    const top = place.top + el.offsetTop;
    return { left, top, right: left + el.offsetWidth, bottom: top + el.offsetHeight, width: el.offsetWidth, height: el.offsetHeight };
  }

  // The element a move's arrow starts from (the lowest card moved) and the
  // one it points at (the card it goes on, the cell, the foundation's slot).
  arrowEnds(move) {
    const board = this.board;
    const cards = R.movingCards(board, move.src, move.count || 1);
    const from = cards[0] && this.cards.get(cards[0]);
    const to = R.parsePlace(move.dst);
    let target = null;
    if (to && to.kind === 'col') {
      const col = board.columns[to.index];
      target = col.length ? this.cards.get(col[col.length - 1]) : this.places.columns[to.index];
    } else if (to && to.kind === 'cell') {
      target = this.places.cells[to.index];
    } else if (to && cards[0]) {
      target = this.places.foundationSlots[R.SUITS.indexOf(R.suitOf(cards[0]))];
    }
    return from && target ? { from, target } : null;
  }

  drawArrows() {
    if (this.arrowEl) this.arrowEl.remove();
    this.arrowEl = null;
    const moves = this.arrowMoves;
    const area = this.el.parentElement;
    if (!moves || !area || !this.places || !this.board) return;
    const ns = 'http://www.w3.org/2000/svg';
    const make = (tag, attrs) => {
      const el = document.createElementNS(ns, tag);
      for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
      return el;
    };
    const box = area.getBoundingClientRect();
    const svg = make('svg', { class: 'move-arrows', width: box.width, height: box.height, viewBox: `0 0 ${box.width} ${box.height}`, 'aria-hidden': 'true' });
    moves.forEach((move, i) => {
      const ends = this.arrowEnds(move);
      if (!ends) return;
      const a = this.layoutRect(ends.from);
      const b = this.layoutRect(ends.target);
      // From the middle of the part of the card in sight (a run covers the rest).
      const next = ends.from.nextElementSibling;
      const shown = next && next.classList.contains('card') ? Math.max(8, next.offsetTop - ends.from.offsetTop) : a.height;
      const x1 = a.left + a.width / 2 - box.left;
      const y1 = a.top + Math.min(shown, a.height) * 0.6 - box.top;
      const x2 = b.left + b.width / 2 - box.left;
      // Into the upper part of a place: a move from the same card starts lower.
      const y2 = b.top + Math.min(b.height * 0.35, b.width * 0.5) - box.top;
      // A gentle curve, bent one way for the first arrow and the other for the second.
      const dx = x2 - x1;
      const dy = y2 - y1;
      const length = Math.hypot(dx, dy) || 1;
      const bend = Math.min(60, length * 0.25) * (i % 2 ? -1 : 1);
      const cx = (x1 + x2) / 2 - (dy / length) * bend;
      const cy = (y1 + y2) / 2 + (dx / length) * bend;
      const head = Math.max(10, Math.min(18, a.width * 0.3));
      const ax = x2 - cx;
      const ay = y2 - cy;
      const al = Math.hypot(ax, ay) || 1;
      const ux = ax / al;
      const uy = ay / al;
      const bx = x2 - ux * head;
      const by = y2 - uy * head;
      const g = make('g', { class: `move-arrow ${move.kind || 'played'}`, 'data-src': move.src, 'data-dst': move.dst });
      g.append(
        make('path', { class: 'arrow-line', d: `M ${x1} ${y1} Q ${cx} ${cy} ${bx} ${by}` }),
        make('polygon', { class: 'arrow-head', points: `${x2},${y2} ${bx - uy * head * 0.55},${by + ux * head * 0.55} ${bx + uy * head * 0.55},${by - ux * head * 0.55}` }),
        make('circle', { class: 'arrow-start', cx: x1, cy: y1, r: 5 }),
        make('circle', { class: 'arrow-end', cx: x2, cy: y2, r: 2 }));
      svg.append(g);
    });
    area.append(svg);
    this.arrowEl = svg;
  }

  // "Not there": the card shakes and says why in a line.
  refuse(target, text) {
    const el = target && (this.cards.get(target) || this.placeElement(target));
    shake(el);
    play('no');
    this.note(target, text);
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
    // Covered cards show a strip of at least 24 px where the height allows
    // (a finger finds it), never under 15 px (the corner stays readable).
    const most = Math.max(cardHeight * 0.3, 24);
    const least = 15;
    places.columns.forEach((column, i) => {
      const n = this.board.columns[i].length;
      const offset = n > 1 ? Math.max(least, Math.min(most, (room - cardHeight) / (n - 1))) : most;
      const value = `${offset.toFixed(1)}px`;
      if (column.style.getPropertyValue('--offset') !== value) column.style.setProperty('--offset', value);
      const count = String(Math.max(n, 1));
      if (column.style.getPropertyValue('--count') !== count) column.style.setProperty('--count', count);
    });
    if (this.arrowMoves) this.drawArrows();
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
    // Under a finger the cards ride above it, so that they stay in sight.
    const lift = e.pointerType === 'touch' ? cardEl.getBoundingClientRect().height * LIFT : 0;
    this.press = { card, place, count: where.depth, movable, els, x: e.clientX, y: e.clientY, id: e.pointerId, dragging: false, target: null, lift };
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
    for (const el of press.els) el.style.transform = `translate(${dx}px, ${dy - press.lift}px)`;
    const target = this.dropTarget(e.clientX, e.clientY - press.lift);
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
    const target = this.dropTarget(e.clientX, e.clientY - press.lift);
    if (!target || target === press.place) {
      this.snapBack(press);
      return;
    }
    const why = R.whyIllegal(this.board, press.place, target, press.count);
    if (why) {
      this.snapBack(press);
      this.actions.illegal(why, press.card);
      return;
    }
    this.endDrag();
    // The cards fly to their new place from where they were let go.
    this.dropRects = new Map(press.els.map((el) => [el, el.getBoundingClientRect()]));
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
    clearTimeout(this.tapTimer);
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
    // No second tap came: say why this card went nowhere.
    this.tapTimer = setTimeout(() => {
      if (!this.board || !this.interactive || (this.lastClick && this.lastClick.card !== card)) return;
      const why = R.tapHint(this.board, card);
      if (why) this.refuse(card, why);
    }, DOUBLE_TAP_MS);
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
      this.actions.illegal(why, R.movingCards(board, sel.place, count)[0] || sel.place);
      return true;
    }
    this.actions.move(sel.place, place, count);
    return true;
  }
}
