// Learning the game: the rules page (/rules) in plain words with small
// pictures, and a first-game guide that teaches the essentials in under a
// minute and can be skipped. Loaded only when needed.

import { h, clear } from './dom.js';
import { t, tn } from './i18n.js';

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

// The first-game guide's steps: a title, a line or two, a picture (the
// words are the catalog's guide.<step>.*).
const STEPS = [
  {
    key: 'build',
    picture: () => picture(t('pic.build'), pile(['8H', '7H']), yes(), pile(['8D', '7H'], 'wrong'), no()),
  },
  {
    key: 'cells',
    picture: () => picture(t('pic.cell'), h('span', { class: 'mini-cell' }, mini('KS')), h('span', { class: 'mini-cell' }), h('span', { class: 'mini-cell' })),
  },
  {
    key: 'group',
    picture: () => picture(t('pic.group'), pile(['TC']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), pile(['9C', '8C', '7C'])),
  },
  {
    key: 'tap',
    picture: () => picture(t('pic.tap'), pile(['5D', 'AS']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'), h('span', { class: 'mini-foundation' }, mini('AS'))),
  },
  {
    key: 'score',
    picture: () => picture(t('pic.won'), h('span', { class: 'mini-foundation' }, mini('KS')), h('span', { class: 'mini-foundation' }, mini('KH')), h('span', { class: 'mini-foundation' }, mini('KD')), h('span', { class: 'mini-foundation' }, mini('KC'))),
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
      h('p', { class: 'small guide-count' }, t('guide.count', { step: step + 1, count: STEPS.length })),
      h('h2', { id: 'guide-title' }, t(`guide.${s.key}.title`)),
      h('div', { class: 'guide-body' }, s.picture(), h('p', {}, t(`guide.${s.key}.text`))),
      h('p', { class: 'row' },
        h('button', { type: 'button', class: 'primary guide-next', onclick: () => { if (last) close(); else { step += 1; show(); } } }, last ? t('guide.done') : t('guide.next')),
        last ? null : h('button', { type: 'button', class: 'guide-skip', onclick: close }, t('guide.skip')),
        h('a', { href: '/rules', 'data-link': '', class: 'small' }, t('guide.all_rules'))));
  };
  show();
  return panel;
}

// -- the rules page ------------------------------------------------------------
//
// The same sections in every language, each written from that language's
// rule document (the catalog's rules.*); the group-move table is worked out
// by the same formula as the game's.

function section(key, ...extra) {
  return [h('h2', {}, t(`rules.${key}.title`)), ...extra, h('p', {}, t(`rules.${key}.text`))];
}

// How many cards may move at once: rows are empty free cells; columns the
// empty columns, moving onto a card and into an empty column.
function groupTable() {
  // The game's rule (rules.js capacity), written out: a page of words needs no game code.
  const most = (cells, empty) => (cells + 1) * 2 ** empty;
  const rows = [0, 1, 2, 3, 4].map((cells) => [most(cells, 0), most(cells, 1), most(cells, 2), most(cells, 0), most(cells, 1)]);
  return h('table', { class: 'group-table' },
    h('caption', {}, t('rules.table.caption')),
    h('thead', {},
      h('tr', {},
        h('th', { scope: 'col', rowspan: 2 }, t('rules.table.cells')),
        h('th', { scope: 'colgroup', colspan: 3 }, t('rules.table.onto')),
        h('th', { scope: 'colgroup', colspan: 2 }, t('rules.table.into'))),
      h('tr', {}, ['0', '1', '2', '1', '2'].map((n) => h('th', { scope: 'col' }, n)))),
    h('tbody', {}, rows.map((row, cells) => h('tr', {}, h('th', { scope: 'row' }, String(cells)), row.map((n) => h('td', {}, String(n)))))));
}

export function rulesPage() {
  return h('article', { class: 'panel rules-page' },
    h('h1', {}, t('rules.title')),
    h('p', { class: 'lead' }, t('rules.lead')),
    section('table'),
    section('build', picture(t('pic.build'), pile(['8H', '7H']), yes(), pile(['8D', '7H'], 'wrong'), no())),
    section('cells', picture(t('pic.cell'), h('span', { class: 'mini-cell' }, mini('KS')), h('span', { class: 'mini-cell' }), h('span', { class: 'mini-cell' }))),
    section('foundations', picture(t('pic.foundation'), h('span', { class: 'mini-foundation' }, mini('3S')), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), mini('4S'))),
    section('group', picture(t('pic.group'), pile(['TC']), h('span', { class: 'arrow', 'aria-hidden': 'true' }, '←'), pile(['9C', '8C', '7C']))),
    h('p', {}, t('rules.group.formula')),
    groupTable(),
    h('p', {}, t('rules.group.example')),
    h('h2', {}, t('rules.play.title')),
    h('ul', {},
      h('li', {}, t('rules.play.tap')),
      h('li', {}, t('rules.play.double')),
      h('li', {}, t('rules.play.drag')),
      h('li', {}, t('rules.play.keys')),
      h('li', {}, t('rules.play.finish'))),
    section('undo'),
    section('score'),
    section('code'),
    h('p', {}, tn('rules.code.example', { code: h('code', {}, 'BK1-C4-AAAAA24') })),
    section('races'),
    section('stuck'),
    h('p', { class: 'row' },
      h('a', { href: '/practice', class: 'button primary', 'data-link': '' }, t('rules.practise')),
      h('a', { href: '/', class: 'button', 'data-link': '' }, t('common.home'))));
}
