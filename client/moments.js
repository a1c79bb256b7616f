// The moments of a race, where the eye already is: an overtake ("You passed
// Chloé", "Chloé passed you") shows over the track, and a rival's finish
// flashes the board's edge, each with a sound and said to screen readers.
// Under prefers-reduced-motion nothing flashes: the edge is marked, still.

import { say } from './dom.js';
import { t } from './i18n.js';
import { play, reducedMotion } from './feel.js';

const SHOWN_MS = 2600;
const FLASH_MS = 1600;
const STILL_MS = 4000;

// What was announced, in order (for tests and the curious).
const told = [];
window.boulangerMoments = told;

// Who is ahead of whom changes: told once per overtake. Being level is no
// overtake either way, so a rival who puts a card up and takes it back
// while level with me is not announced twice a second; a pass is told when
// I go from behind a rival to ahead of them (or they of me).
export function overtakes(page) {
  const on = page.role === 'player' && page.confirmed && !page.solo() && page.running() && !page.done();
  if (!on) return;
  const sides = page.sides || (page.sides = new Map()); // player_id -> 1 (I lead) or -1
  const mine = page.myCards();
  const lines = [];
  for (const rival of page.players.values()) {
    if (rival.player_id === page.me) continue;
    const side = Math.sign(mine - rival.foundation_cards);
    if (!side) continue;
    const was = sides.get(rival.player_id);
    sides.set(rival.player_id, side);
    if (was === undefined || was === side) continue;
    const kind = side > 0 ? 'passed' : 'passed_by';
    told.push({ kind, name: rival.name });
    lines.push({ kind, text: t(side > 0 ? 'moment.you_passed' : 'moment.passed_you', { name: rival.name }) });
  }
  if (!lines.length) return;
  const text = lines.map((line) => line.text).join(' · ');
  say(text);
  show(page, text, lines[lines.length - 1].kind);
  play(lines.some((line) => line.kind === 'passed_by') ? 'passed' : 'pass');
}

// A moment over the track for a short while.
function show(page, text, kind) {
  const el = page.root.querySelector('.me-bar .moment');
  if (!el) return;
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  restart(el);
  clearTimeout(el._timer);
  el._timer = setTimeout(() => { el.hidden = true; }, SHOWN_MS);
}

// A rival finished: the board's edge flashes (or is marked, still), with a sound.
export function rivalFinished(page, standing) {
  told.push({ kind: 'finished', name: standing.name });
  play('finish');
  const area = page.root.querySelector('.board-area');
  if (!area) return;
  const still = reducedMotion();
  restart(area);
  area.dataset.edge = still ? 'still' : 'flash';
  clearTimeout(area._edgeTimer);
  area._edgeTimer = setTimeout(() => { delete area.dataset.edge; }, still ? STILL_MS : FLASH_MS);
}

// A CSS animation plays again when its element is drawn afresh.
function restart(el) {
  el.style.animation = 'none';
  void el.offsetWidth;
  el.style.removeProperty('animation');
}
