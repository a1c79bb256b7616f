// Baker's Game move rules, mirroring server/boulanger/engine (board.py check,
// game.py tap and double tap) so the client can preview a drag and snap back
// an illegal drop at once. The server stays the referee: it checks again.
//
// A board has the wire shape: {columns: [[card, ...] x8] (bottom to top),
// cells: [card|null, ...], foundations: {S, H, D, C: top rank}}.
// Cards are "7H", "TS"; places are "col1".."col8", "cell1".."cellN", "foundation".

import { t, decimal } from './i18n.js';

export const SUITS = ['S', 'H', 'D', 'C'];
export const SUIT_SYMBOLS = { S: '♠', H: '♥', D: '♦', C: '♣' };
const RANKS = 'A23456789TJQK';
export const FOUNDATION_POINTS = 10;
export const CELL_TO_COLUMN_POINTS = 5;

export const rankOf = (card) => RANKS.indexOf(card[0]) + 1;
export const suitOf = (card) => card[1];
export const cardOf = (rank, suit) => RANKS[rank - 1] + suit;
// What a player reads: "10" rather than "T".
export const rankLabel = (card) => (card[0] === 'T' ? '10' : card[0]);
// A card as a player of the language says it, for screen readers: "ace of
// spades", "hjerter 7", "siedem kier", "семь червей".
export const cardName = (card) => t('card.name', { rank: t(`card.rank.${card[0]}`), suit: t(`card.suit.${suitOf(card)}`) });
// A suit's name on its own ("hearts"), as on a foundation.
export const suitName = (suit) => t(`suit.${suit}`);

// Same suit and one rank lower: `card` may lie on `below`.
export const goesOn = (card, below) =>
  suitOf(card) === suitOf(below) && rankOf(card) + 1 === rankOf(below);

export function parsePlace(name) {
  if (name === 'foundation') return { kind: 'foundation', index: 0 };
  const match = /^(col|cell)([1-8])$/.exec(name || '');
  if (!match) return null;
  return { kind: match[1], index: Number(match[2]) - 1 };
}

export const placeLabel = (name) => {
  const place = parsePlace(name);
  if (!place) return name;
  if (place.kind === 'foundation') return t('place.foundation');
  return t(place.kind === 'col' ? 'place.column' : 'place.cell', { n: place.index + 1 });
};

// Where a move goes, as said after a card: "to column 3", "to the foundation"
// (in languages whose nouns change after "to", the catalog says it whole).
export const targetLabel = (name) => {
  const place = parsePlace(name);
  if (!place) return name;
  if (place.kind === 'foundation') return t('target.foundation');
  return t(place.kind === 'col' ? 'target.column' : 'target.cell', { n: place.index + 1 });
};

export function copyBoard(board) {
  return {
    columns: board.columns.map((col) => col.slice()),
    cells: board.cells.slice(),
    foundations: { ...board.foundations },
  };
}

export const foundationCards = (board) =>
  SUITS.reduce((sum, suit) => sum + (board.foundations[suit] || 0), 0);

const freeCells = (board) => board.cells.filter((card) => card === null).length;
const emptyColumns = (board) => board.columns.filter((col) => col.length === 0).length;

// The largest group move allowed now: (free cells + 1) * 2 ** empty columns,
// not counting the target when it is an empty column.
export function capacity(board, toEmptyColumn = false) {
  const empty = Math.max(emptyColumns(board) - (toEmptyColumn ? 1 : 0), 0);
  return (freeCells(board) + 1) * 2 ** empty;
}

// Length of the same-suit descending run on top of a column.
export function movableRun(col) {
  if (!col.length) return 0;
  let run = 1;
  for (let i = col.length - 1; i > 0 && goesOn(col[i], col[i - 1]); i--) run += 1;
  return run;
}

// Why a move is illegal (the engine's words), or null when it is legal.
export function whyIllegal(board, src, dst, count = 1) {
  const from = parsePlace(src);
  const to = parsePlace(dst);
  if (!from || !to) return `${!from ? src : dst} is not a place`;
  if (to.kind === 'cell' && to.index >= board.cells.length) return `${dst} is not a place`;
  let card;
  if (from.kind === 'col') {
    const col = board.columns[from.index];
    if (count > col.length) return `${src} has ${col.length} cards, cannot move ${count}`;
    card = col[col.length - count];
    for (let i = col.length - count; i < col.length - 1; i++) {
      if (!goesOn(col[i + 1], col[i])) return `the top ${count} cards of ${src} are not a same-suit run`;
    }
  } else if (from.kind === 'cell') {
    card = board.cells[from.index];
    if (card === null || card === undefined) return `${src} is empty`;
    if (count !== 1) return `a cell holds one card, cannot move ${count}`;
  } else {
    return 'cards on a foundation are final';
  }
  if (src === dst) return `${src} is both source and destination`;
  if (to.kind === 'foundation') {
    if (count !== 1) return 'cards go to the foundation one at a time';
    const top = board.foundations[suitOf(card)] || 0;
    if (top !== rankOf(card) - 1) {
      const wanted = top === 13 ? 'nothing more' : cardOf(top + 1, suitOf(card));
      return `${card} cannot go to the foundation: it takes ${wanted} next`;
    }
  } else if (to.kind === 'cell') {
    if (count !== 1) return `a cell holds one card, cannot move ${count}`;
    const held = board.cells[to.index];
    if (held !== null) return `${dst} already holds ${held}`;
  } else {
    const target = board.columns[to.index];
    let empty = emptyColumns(board);
    if (target.length) {
      const top = target[target.length - 1];
      if (!goesOn(card, top)) return `${card} does not go on ${top}: same suit, one rank higher required`;
    } else {
      empty -= 1; // the target cannot be a waypoint to itself
    }
    if (count > 1) {
      const cap = (freeCells(board) + 1) * 2 ** empty;
      if (count > cap) return `group of ${count} cards exceeds capacity ${cap}`;
    }
  }
  return null;
}

export const isLegal = (board, src, dst, count = 1) => whyIllegal(board, src, dst, count) === null;

// The cards a move carries, lowest-covered first.
export function movingCards(board, src, count = 1) {
  const from = parsePlace(src);
  if (from.kind === 'cell') return [board.cells[from.index]];
  const col = board.columns[from.index];
  return col.slice(col.length - count);
}

// A new board with the move made (no check: call whyIllegal first).
export function applyMove(board, src, dst, count = 1) {
  const next = copyBoard(board);
  const from = parsePlace(src);
  const to = parsePlace(dst);
  let moving;
  if (from.kind === 'col') {
    moving = next.columns[from.index].splice(next.columns[from.index].length - count, count);
  } else {
    moving = [next.cells[from.index]];
    next.cells[from.index] = null;
  }
  put(next, moving, to);
  return next;
}

// Undo support: the reverse of a move whose lowest card was `card`.
export function unapplyMove(board, move, card) {
  const next = copyBoard(board);
  const to = parsePlace(move.src);
  if (move.dst === 'foundation') {
    next.foundations[suitOf(card)] -= 1;
    put(next, [card], to);
    return next;
  }
  return applyMove(next, move.dst, move.src, move.count);
}

function put(board, moving, to) {
  if (to.kind === 'col') board.columns[to.index].push(...moving);
  else if (to.kind === 'cell') board.cells[to.index] = moving[0];
  else board.foundations[suitOf(moving[0])] += 1;
}

export function movePoints(src, dst) {
  if (dst === 'foundation') return FOUNDATION_POINTS;
  if (src.startsWith('cell') && dst.startsWith('col')) return CELL_TO_COLUMN_POINTS;
  return 0;
}

// Where a card is: its place and how many cards lie on it and above it (itself included).
export function locate(board, card) {
  const cell = board.cells.indexOf(card);
  if (cell >= 0) return { place: `cell${cell + 1}`, depth: 1 };
  for (let i = 0; i < board.columns.length; i++) {
    const at = board.columns[i].indexOf(card);
    if (at >= 0) return { place: `col${i + 1}`, depth: board.columns[i].length - at };
  }
  return null;
}

// A single tap: the card goes to its foundation when that is legal.
export function tapMove(board, card) {
  const where = locate(board, card);
  if (!where || where.depth !== 1) return null;
  return isLegal(board, where.place, 'foundation') ? { src: where.place, dst: 'foundation', count: 1 } : null;
}

// A double tap: its foundation, the longest column that accepts it, the
// leftmost empty column, the leftmost free cell (ties: leftmost).
export function doubleTapMove(board, card) {
  const where = locate(board, card);
  if (!where) return null;
  const { place: src, depth: count } = where;
  if (count === 1 && isLegal(board, src, 'foundation')) return { src, dst: 'foundation', count: 1 };
  let best = -1;
  board.columns.forEach((col, i) => {
    const name = `col${i + 1}`;
    const longer = best < 0 || col.length > board.columns[best].length;
    if (col.length && name !== src && longer && isLegal(board, src, name, count)) best = i;
  });
  if (best < 0) {
    best = board.columns.findIndex((col, i) => !col.length && isLegal(board, src, `col${i + 1}`, count));
  }
  if (best >= 0) return { src, dst: `col${best + 1}`, count };
  if (count === 1 && src.startsWith('col')) {
    const free = board.cells.indexOf(null);
    if (free >= 0) return { src, dst: `cell${free + 1}`, count: 1 };
  }
  return null;
}

// How many cards a keyboard move carries when the player did not say:
// onto a card, the part of the run that fits; into an empty column, the
// longest run the capacity allows; anywhere else, one.
export function autoCount(board, src, dst) {
  const from = parsePlace(src);
  const to = parsePlace(dst);
  if (!from || !to || from.kind !== 'col' || to.kind !== 'col') return 1;
  const col = board.columns[from.index];
  const run = movableRun(col);
  const target = board.columns[to.index];
  if (target.length) {
    const top = target[target.length - 1];
    for (let k = 1; k <= run; k++) if (goesOn(col[col.length - k], top)) return k;
    return 1;
  }
  return Math.max(1, Math.min(run, capacity(board, true)));
}

// -- words for people --------------------------------------------------------

// A card as people write it: "2♦", "10♣".
export const cardText = (card) => `${rankLabel(card)}${SUIT_SYMBOLS[suitOf(card)]}`;

const CARD_CODE = /\b([A2-9TJQK])([SHDC])\b/g;
const PLACE_CODE = /\b(col|cell)([1-8])\b/g;

// An engine reason ("col3>col5: 7H does not go on 8D: same suit, one rank
// higher required") in plain words with card names ("7♥ does not go on 8♦:
// only on 8♥"). The engine's words stay the reference (whyIllegal matches
// them); this only rewrites them for the eye.
export function plainReason(reason) {
  if (!reason) return t('reason.refused');
  let text = String(reason).replace(/^(?:col|cell)\d>(?:col\d|cell\d|foundation): /, '');
  let match = /^([A2-9TJQK][SHDC]) does not go on ([A2-9TJQK][SHDC])/.exec(text);
  if (match) {
    const [, card, top] = match;
    const home = rankOf(card) < 13 ? cardText(cardOf(rankOf(card) + 1, suitOf(card))) : null;
    return home ? t('reason.not_on', { card: cardText(card), top: cardText(top), home }) : t('reason.king', { card: cardText(card), top: cardText(top) });
  }
  match = /^group of (\d+) cards exceeds capacity (\d+)/.exec(text);
  if (match) return t('reason.capacity', { count: Number(match[2]), asked: Number(match[1]) });
  match = /^([A2-9TJQK][SHDC]) cannot go to the foundation(?:: it takes (\S+) next| now)?/.exec(text);
  if (match) {
    return match[2] && match[2] !== 'nothing'
      ? t('reason.not_up_first', { card: cardText(match[1]), next: cardText(match[2]) })
      : t('reason.not_up', { card: cardText(match[1]) });
  }
  match = /^the top (\d+) cards of (\w+) are not a same-suit run/.exec(text);
  if (match) return t('reason.not_run', { count: Number(match[1]) });
  if (text === 'cards on a foundation are final') return t('reason.final');
  match = /^(col\d|cell\d) already holds ([A2-9TJQK][SHDC])/.exec(text);
  if (match) return capital(t('reason.holds', { place: placeLabel(match[1]), card: cardText(match[2]) }));
  match = /^(col\d|cell\d) is empty/.exec(text);
  if (match) return capital(t('reason.empty', { place: placeLabel(match[1]) }));
  if (/^a cell holds one card/.test(text)) return t('reason.cell_one');
  if (/^cards go to the foundation one at a time/.test(text)) return t('reason.one_at_a_time');
  match = /^(col\d) has (\d+) cards, cannot move (\d+)/.exec(text);
  if (match) return capital(t('reason.too_few', { place: placeLabel(match[1]), count: Number(match[2]), asked: Number(match[3]) }));
  if (/is both source and destination/.test(text)) return t('reason.same_place');
  // Anything else the engine says: its words with the cards and places named.
  text = text.replace(CARD_CODE, (_, r, s) => cardText(r + s)).replace(PLACE_CODE, (_, k, n) => placeLabel(`${k}${n}`));
  return capital(text);
}

function capital(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// A line of a game record or of the solver's review, as the server writes
// it in the canonical notation ("12.4s 3♣ col2 → foundation", "undo 3♣
// foundation → col2"), in the player's words and the board's own labels.
const LINE = /^(?:(\d+(?:\.\d+)?)s )?(undo )?(\S+) (col[1-8]|cell[1-8]|foundation) → (col[1-8]|cell[1-8]|foundation)$/;

export function moveText(line) {
  const match = LINE.exec(line || '');
  if (!match) return line || '';
  const [, seconds, undo, cards, from, to] = match;
  const text = t(undo ? 'line.undo' : 'line.move', { cards, from: lineLabel(from), to: lineLabel(to) });
  return seconds ? t('line.at', { time: decimal(Number(seconds), 1), move: text }) : text;
}

// A place in a line as the board labels it: columns 1-8, free cells a-d.
function lineLabel(name) {
  const place = parsePlace(name);
  if (place.kind === 'foundation') return t('line.foundation');
  if (place.kind === 'cell') return t('line.cell', { key: CELL_KEYS[place.index] });
  return t('place.column', { n: place.index + 1 });
}

// The board's own label of a free cell: its key, a-d.
export const CELL_KEYS = 'abcdefgh';

// A move in words, on the board it is made on, in the board's labels:
// "move 7♠ from column 3 to the free cell b" (a run: "move 9♥–7♥ from ...").
export function moveWords(board, move) {
  const cards = movingCards(board, move.src, move.count || 1).filter(Boolean).map(cardText);
  const what = cards.length > 1 ? `${cards[0]}–${cards[cards.length - 1]}` : cards[0] || '';
  const where = (name, side) => {
    const place = parsePlace(name);
    if (!place) return name;
    if (place.kind === 'foundation') return t(`move.${side}_foundation`);
    if (place.kind === 'cell') return t(`move.${side}_cell`, { key: CELL_KEYS[place.index] });
    return t(`move.${side}_column`, { n: place.index + 1 });
  };
  return t('move.words', { cards: what, from: where(move.src, 'from'), to: where(move.dst, 'to') });
}

// Why a tap on `card` sends it nowhere, in a line (null when it can go up).
export function tapHint(board, card) {
  const where = locate(board, card);
  if (!where) return null;
  if (where.depth > 1) {
    const col = board.columns[parsePlace(where.place).index];
    return where.depth <= movableRun(col)
      ? t('tap.run', { count: where.depth })
      : t('tap.covered', { card: cardText(card) });
  }
  if (isLegal(board, where.place, 'foundation')) return null;
  const top = board.foundations[suitOf(card)] || 0;
  return t('tap.not_yet', { card: cardText(card), next: cardText(cardOf(top + 1, suitOf(card))) });
}

// The moves that finish the game when every card left can go to the
// foundations in order with no other move: each card left is on top of a
// column or in a cell when its turn comes. Null otherwise.
export function finishMoves(board) {
  let b = copyBoard(board);
  const moves = [];
  for (;;) {
    if (foundationCards(b) === 52) return moves.length ? moves : null;
    let found = null;
    b.cells.forEach((card, i) => {
      if (!found && card && isLegal(b, `cell${i + 1}`, 'foundation')) found = `cell${i + 1}`;
    });
    b.columns.forEach((col, i) => {
      if (!found && col.length && isLegal(b, `col${i + 1}`, 'foundation')) found = `col${i + 1}`;
    });
    if (!found) return null;
    const move = { src: found, dst: 'foundation', count: 1 };
    moves.push({ ...move, card: movingCards(b, found)[0] });
    b = applyMove(b, found, 'foundation');
  }
}
