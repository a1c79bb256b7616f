// How the game feels: motion (Web Animations), sound (synthesised with Web
// Audio) and vibration on phones. Sound is on unless the player turned it
// off (or asks for reduced motion: a quieter page, until they turn it on),
// and plays only after the player's first gesture (browsers refuse audio
// before). Every motion is skipped under prefers-reduced-motion.

const SOUND_KEY = 'boulanger.sound';
const motionQuery = typeof matchMedia === 'function' ? matchMedia('(prefers-reduced-motion: reduce)') : null;

export const MOVE_MS = 150;

export function reducedMotion() {
  return Boolean(motionQuery && motionQuery.matches);
}

// Slide elements from where they were (`first`: element -> DOMRect) to where
// they are now: the FLIP technique (first, last, invert, play).
export function slide(first, landed = new Set()) {
  if (reducedMotion()) return;
  for (const [el, from] of first) {
    if (!el.isConnected) continue;
    const to = el.getBoundingClientRect();
    const dx = from.left - to.left;
    const dy = from.top - to.top;
    if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
    const frames = [{ transform: `translate(${dx}px, ${dy}px)` }, { transform: 'none' }];
    el.animate(frames, { duration: MOVE_MS, easing: 'cubic-bezier(.2,.7,.3,1)' });
    if (landed.has(el)) {
      // The landing: a short pop as it arrives (the slide and the pop take 250 ms).
      el.animate([{ scale: 1 }, { scale: 1.1, offset: 0.4 }, { scale: 1 }], { duration: 130, delay: MOVE_MS - 30, easing: 'ease-out' });
    }
  }
}

// A short sideways shake: "not there".
export function shake(el) {
  if (!el || reducedMotion()) return;
  el.animate([
    { translate: '0' }, { translate: '-6px' }, { translate: '5px' }, { translate: '-3px' }, { translate: '0' },
  ], { duration: 260, easing: 'ease-in-out' });
}

// The win: the foundation cards leap out and bounce down the screen, a few
// at a time, as in the solitaire games of old. Nothing under reduced motion.
export function cascade(sources) {
  if (reducedMotion() || !sources.length) return;
  const layer = document.createElement('div');
  layer.className = 'cascade';
  layer.setAttribute('aria-hidden', 'true');
  document.body.appendChild(layer);
  const height = window.innerHeight;
  let last = 0;
  sources.forEach((src, i) => {
    const from = src.getBoundingClientRect();
    for (let k = 0; k < 4; k++) {
      const card = src.cloneNode(true);
      card.removeAttribute('role');
      card.removeAttribute('aria-label');
      card.className = `${src.className} flying`;
      card.style.left = `${from.left}px`;
      card.style.top = `${from.top}px`;
      card.style.width = `${from.width}px`;
      card.style.height = `${from.height}px`;
      card.style.setProperty('--cw', `${from.width}px`);
      card.style.setProperty('--corner', `${Math.max(13, from.width * 0.3)}px`);
      layer.appendChild(card);
      const dir = (i + k) % 2 ? 1 : -1;
      const vx = dir * (80 + ((i * 37 + k * 53) % 160));
      const drop = height - from.top;
      const frames = [];
      for (let t = 0; t <= 1.0001; t += 0.1) {
        const bounce = Math.abs(Math.cos(t * Math.PI * 1.5)) * (1 - t);
        frames.push({ transform: `translate(${vx * t * 3}px, ${drop * (1 - bounce) - from.height * bounce}px) rotate(${dir * t * 200}deg)` });
      }
      const delay = (i * 4 + k) * 110;
      last = Math.max(last, delay + 1500);
      card.animate(frames, { duration: 1500, delay, easing: 'linear', fill: 'both' });
    }
  });
  setTimeout(() => layer.remove(), last + 50);
}

// -- sound and vibration ---------------------------------------------------------

let audio = null;
let chosen = null; // the choice made on this page, when it could not be kept
let touched = false; // whether the player has pressed or typed on this page

// Browsers keep sound (and buzzes) for pages the player has touched: what
// sounds by itself (the start's beeps) waits for a first press or key.
for (const type of ['pointerdown', 'keydown']) {
  addEventListener(type, (e) => { if (e.isTrusted) touched = true; }, { capture: true, passive: true });
}

export const touchedYet = () => touched;

export function soundOn() {
  let kept = chosen;
  try {
    kept = localStorage.getItem(SOUND_KEY) || chosen;
  } catch {
    // No storage: this page's choice, or the default.
  }
  return kept ? kept === 'on' : !reducedMotion();
}

// Turn sound on or off, remembered; every toggle on the page hears of it
// (the event "boulanger:sound").
export function setSound(on) {
  chosen = on ? 'on' : 'off';
  try {
    localStorage.setItem(SOUND_KEY, chosen);
  } catch {
    // Not remembered: it still applies to this page.
  }
  window.dispatchEvent(new CustomEvent('boulanger:sound', { detail: on }));
  if (on) play('place');
}

// The player's first gesture lets the page sound (and wakes an audio
// context made too early).
let woken = false;
function wake() {
  woken = true;
  if (audio && audio.state === 'suspended') audio.resume().catch(() => {});
}
for (const type of ['pointerdown', 'keydown', 'touchend']) window.addEventListener(type, wake, { capture: true, once: true });

function mayPlay() {
  return woken || Boolean(navigator.userActivation && navigator.userActivation.hasBeenActive);
}

// How many times each sound was played on this page (for tests and the curious).
const played = {};
window.boulangerSounds = played;

const SOUNDS = {
  place: [[520, 0, 0.05]],
  up: [[660, 0, 0.06], [880, 0.05, 0.08]],
  no: [[180, 0, 0.12]],
  win: [[523, 0, 0.12], [659, 0.12, 0.12], [784, 0.24, 0.12], [1047, 0.36, 0.3]],
  event: [[740, 0, 0.08]],
  pass: [[660, 0, 0.07], [990, 0.07, 0.12]],
  passed: [[587, 0, 0.08], [440, 0.08, 0.14]],
  finish: [[784, 0, 0.09], [1047, 0.09, 0.09], [1319, 0.18, 0.2]],
  count: [[587, 0, 0.14]], // the start's 3, 2, 1
  go: [[1175, 0, 0.32]], // and its Go, an octave higher
};
const BUZZ = { no: 40, win: [60, 60, 120], up: 8, passed: 20, finish: [30, 40, 30], count: 30, go: 120 };

// A short synthesised sound (and a buzz on phones), when the player wants them.
export function play(name) {
  if (!soundOn() || !mayPlay()) return;
  played[name] = (played[name] || 0) + 1;
  if (navigator.vibrate && BUZZ[name]) {
    try {
      navigator.vibrate(BUZZ[name]);
    } catch {
      // Vibration refused (no user gesture yet): sound only.
    }
  }
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  try {
    audio = audio || new Context();
    const now = audio.currentTime;
    for (const [freq, at, length] of SOUNDS[name] || []) {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.type = name === 'no' ? 'square' : 'triangle';
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + at);
      gain.gain.exponentialRampToValueAtTime(0.12, now + at + 0.01);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + at + length);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + at);
      osc.stop(now + at + length + 0.02);
    }
  } catch {
    // No audio device: silence.
  }
}
