// Learning the game: the rules page (/rules) in plain words with small
// pictures, and a first-game guide that teaches the essentials in under a
// minute and can be skipped. Loaded only when needed.

import { h, clear } from './dom.js';

const GUIDE_KEY = 'boulanger.guide';
const SUITS = { S: '♠', H: '♥', D: '♦', C: '♣' };

// A small card for a picture: "7H" -> 7♥ in hearts red.
function mini(card, extra = '') {
  const rank = card[0] === 'T' ? '10' : card[0];
  return h('span', { class: `mini-card suit-${card[1]} ${extra}`.trim() }, `${rank}${SUITS[card[1]]}`);
}

// A column in a picture: cards from bottom to top, fanned down.
function pile(cards, extra = '') {
  return h('span', { class: `mini-pile ${extra}`.trim() }, cards.map((c) => mini(c)));
}

function picture(label, ...parts) {
  return h('figure', { class: 'picture' }, h('div', { class: 'scene', role: 'img', 'aria-label': label }, parts), h('figcaption', {}, label));
}

const yes = () => h('span', { class: 'verdict yes', 'aria-hidden': 'true' }, '✓');
const no = () => h('span', { class: 'verdict no', 'aria-hidden': 'true' }, '✗');

// The first-game guide's steps: a title, a line or two, a picture.
const STEPS = [
  {
    title: 'Build down in the same suit',
    text: 'A card goes on the card one higher of its own suit: 7♥ on 8♥, never on 8♦ or a black 8.',
    picture: () => picture('7♥ goes on 8♥, not on 8♦', pile(['8H', '7H']), yes(), pile(['8D', '7H'], 'wrong'), no()),
  },
  {
    title: 'Free cells hold one card each',
    text: 'Park any card in an empty free cell to get at the one under it. Cells never build.',
    picture: () => picture('A free cell holds one card', h('span', { class: 'mini-cell' }, mini('KS')), h('span', { class: 'mini-cell' }), h('span', { class: 'mini-cell' })),
  },
  {
    title: 'Move a run at once',
    text: 'A run of one suit (9♣ 8♣ 7♣) moves together, as many cards as (free cells + 1), doubled for each empty column.',
    picture: () => picture('9♣ 8♣ 7♣ move onto 10♣', pile(['TC']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), pile(['9C', '8C', '7C'])),
  },
  {
    title: 'Tap, double tap, drag',
    text: 'Tap a card to send it to its foundation. Double-tap to move it where it fits best. Or drag it.',
    picture: () => picture('A tap sends A♠ to its foundation', pile(['5D', 'AS']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'), h('span', { class: 'mini-foundation' }, mini('AS'))),
  },
  {
    title: 'Score, par and winning',
    text: '+10 for each card on a foundation, +5 for a card from a cell to a column. Par is how many moves the solver needed. In a race, the fastest to 52 cards wins; then the most cards.',
    picture: () => picture('All four foundations full: a win', h('span', { class: 'mini-foundation' }, mini('KS')), h('span', { class: 'mini-foundation' }, mini('KH')), h('span', { class: 'mini-foundation' }, mini('KD')), h('span', { class: 'mini-foundation' }, mini('KC'))),
  },
];

export function guideDone() {
  try {
    return localStorage.getItem(GUIDE_KEY) === 'done';
  } catch {
    return true; // no storage: never nag
  }
}

function setGuideDone() {
  try {
    localStorage.setItem(GUIDE_KEY, 'done');
  } catch {
    // Not remembered: shown again next time.
  }
}

// The first-game guide: a panel beside the board (it covers nothing), one
// step at a time, skippable; `onClose` runs when it goes.
export function firstGameGuide(onClose) {
  let step = 0;
  const panel = h('section', { class: 'panel guide', 'aria-labelledby': 'guide-title', 'aria-live': 'polite' });
  const close = () => {
    setGuideDone();
    panel.remove();
    if (onClose) onClose();
  };
  const show = () => {
    const s = STEPS[step];
    const last = step === STEPS.length - 1;
    clear(panel,
      h('p', { class: 'small guide-count' }, `First game · ${step + 1} of ${STEPS.length}`),
      h('h2', { id: 'guide-title' }, s.title),
      h('div', { class: 'guide-body' }, s.picture(), h('p', {}, s.text)),
      h('p', { class: 'row' },
        h('button', { type: 'button', class: 'primary guide-next', onclick: () => { if (last) close(); else { step += 1; show(); } } }, last ? 'Got it' : 'Next'),
        last ? null : h('button', { type: 'button', class: 'guide-skip', onclick: close }, 'Skip'),
        h('a', { href: '/rules', 'data-link': '', class: 'small' }, 'All the rules')));
  };
  show();
  return panel;
}

// -- the rules page ------------------------------------------------------------

export function rulesPage() {
  return h('article', { class: 'panel rules-page' },
    h('h1', {}, "How to play Baker's Game"),
    h('p', { class: 'lead' }, "Baker's Game is FreeCell's older, stricter sibling. Every card is dealt face up; you win when all 52 are on the four foundations, ace to king, one pile per suit."),

    h('h2', {}, 'The table'),
    h('p', {}, 'Eight columns of cards; above them the free cells (4, or 2 or 1 in the harder games) on the left, and the four foundations on the right. Only the last card of a column, the one not covered, can move.'),

    h('h2', {}, 'Build down in the same suit'),
    picture('7♥ goes on 8♥, not on 8♦', pile(['8H', '7H']), yes(), pile(['8D', '7H'], 'wrong'), no()),
    h('p', {}, 'A card goes on the card one rank higher of the same suit: 7♥ on 8♥ only. This is what makes it harder than FreeCell, where colours alternate. Any card may go into an empty column.'),

    h('h2', {}, 'Free cells'),
    picture('A free cell holds one card', h('span', { class: 'mini-cell' }, mini('KS')), h('span', { class: 'mini-cell' }), h('span', { class: 'mini-cell' })),
    h('p', {}, 'A free cell holds any one card. Use them to dig out the card you need; they fill up fast, so plan before you park.'),

    h('h2', {}, 'Foundations'),
    picture('A♠, 2♠, 3♠ go up in order', h('span', { class: 'mini-foundation' }, mini('3S')), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), mini('4S')),
    h('p', {}, 'Each suit goes up on its own foundation from the ace to the king. A card on a foundation stays there (only an undo takes it back). Nothing goes up by itself: you move every card.'),

    h('h2', {}, 'Runs move together, within limits'),
    picture('9♣ 8♣ 7♣ move onto 10♣', pile(['TC']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), pile(['9C', '8C', '7C'])),
    h('p', {}, 'A run of one suit, like 9♣ 8♣ 7♣, can move as a group. It is a shortcut for moving its cards one by one through the free space, so its size is limited: (empty free cells + 1), doubled for each empty column. With 4 empty cells and one empty column you may move 10 cards onto a card, but only 5 into the empty column itself.'),

    h('h2', {}, 'Tap, double tap, drag, keys'),
    h('ul', {},
      h('li', {}, 'Tap a card: it goes to its foundation if it can.'),
      h('li', {}, 'Double-tap a card: it goes where it fits best — its foundation, else the longest column that takes it, else an empty column, else a free cell.'),
      h('li', {}, 'Drag a card or a run to any place that takes it.'),
      h('li', {}, 'Keys: 1–8 pick a column, a–d a cell, f the foundations; pick a source, then a destination. u undoes.'),
      h('li', {}, 'Finish: once every card left can go up in order, a Finish button sends them all.')),

    h('h2', {}, 'Score and par'),
    h('p', {}, '+10 for every card put on a foundation, +5 for a card moved from a free cell to a column, nothing for other moves; an undo takes its points back. Par is the number of moves the solver needed for the deal: fewer is finer play.'),

    h('h2', {}, 'Races and the daily challenge'),
    h('p', {}, 'In a race everyone plays their own game of the same deal. The first to put all 52 cards up wins; then come the other winners by time, then everyone by cards on the foundations. The daily challenge is one deal a day for everybody: your first game of the day counts.'),

    h('h2', {}, 'Stuck?'),
    h('p', {}, 'Not every deal can be won, but every deal the server picks for a race has been solved. When no move is left, undo (the last 100 moves) or resign: your cards on the foundations still count.'),

    h('p', { class: 'row' },
      h('a', { href: '/practice', class: 'button primary', 'data-link': '' }, 'Practise a game'),
      h('a', { href: '/', class: 'button', 'data-link': '' }, 'Home')));
}
