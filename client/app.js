// The boulanger web client: routes by path, the home page, the daily
// challenge and practice; the race page lives in race.js.

import { h, clear, toast, hideToast, api, savedName, saveName, saveRaceCreds, isRecordPath, whoAmI, showAccountLink, playingAs } from './dom.js';
import { RaceView } from './race.js';
import { soundOn, setSound } from './feel.js';

const main = document.getElementById('main');
const COME_BACK_MS = 2 * 3600 * 1000;
let current = null; // the page object that owns `main` (has destroy())
let routed = 0; // counts pages shown: a page loaded late knows if it is still wanted

const ROUTES = [
  [/^\/$/, () => home()],
  [/^\/race\/([A-Za-z0-9_-]{1,64})\/?$/, (id) => racePage(id)],
  [/^\/race\/([A-Za-z0-9_-]{1,64})\/replay\/([^/]+)\/?$/, (id, who) => replayPage('race', id, who)],
  [/^\/daily\/([^/]+)\/replay\/([^/]+)\/?$/, (date, who) => replayPage('daily', decodeURIComponent(date), who)],
  [/^\/daily\/?$/, () => daily()],
  [/^\/daily\/([^/]+)\/?$/, (date) => daily(date)],
  [/^\/practice\/?$/, () => practice()],
  [/^\/rules\/?$/, () => rules()],
  [/^\/account\/?$/, () => account()],
  [/^\/desk\/?$/, () => desk()],
  [/^\/desk\/race\/([A-Za-z0-9_-]{1,64})\/replay\/([^/]+)\/?$/, (id, who) => replayPage('desk-race', id, who)],
  [/^\/desk\/daily\/([^/]+)\/replay\/([^/]+)\/?$/, (date, who) => replayPage('desk-daily', decodeURIComponent(date), who)],
  [/^\/@\/([^/]{1,80})\/?$/, (name) => profile(name)],
];

export function navigate(path, replace = false) {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  route();
}

function route() {
  if (current && current.destroy) current.destroy();
  current = null;
  routed += 1;
  hideToast();
  window.scrollTo(0, 0);
  for (const [pattern, show] of ROUTES) {
    const match = pattern.exec(location.pathname);
    if (match) {
      show(...match.slice(1));
      return;
    }
  }
  page('Not found', h('div', { class: 'panel' }, h('h1', {}, 'Nothing here'), h('p', {}, h('a', { href: '/', 'data-link': '' }, 'Go to the home page'))));
}

function page(title, ...content) {
  document.title = title ? `${title} · Boulanger` : "Boulanger · Baker's Game races";
  clear(main, ...content);
}

// Links inside the app change the page without reloading it.
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[href]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || a.target || url.pathname.startsWith('/api/') || url.pathname.startsWith('/static/')) return;
  e.preventDefault();
  if (url.pathname === location.pathname && url.search === location.search) return;
  const question = current && current.leaving && current.leaving();
  if (question && !window.confirm(question)) return;
  navigate(url.pathname + url.search);
});
window.addEventListener('popstate', route);

// -- home -----------------------------------------------------------------------

function cellsChoice(name, checked = 4) {
  return h('fieldset', { class: 'cells-choice' },
    h('legend', {}, 'Free cells'),
    [4, 2, 1].map((n) => h('label', {},
      h('input', { type: 'radio', name, value: n, checked: n === checked }),
      ` ${n} `, h('span', { class: 'small' }, n === 4 ? '(classic)' : n === 2 ? '(hard)' : '(very hard)'))));
}

function nameField(id) {
  const field = h('p', {},
    h('label', { for: id }, 'Your name '),
    h('input', { id, maxlength: 24, autocomplete: 'nickname', value: savedName(), placeholder: 'shown to the other players' }));
  whoAmI().then((me) => {
    if (me) clear(field, playingAs(me), h('input', { id, type: 'hidden', value: me.name, 'data-account': '' }));
  });
  return field;
}

function readName(form, id) {
  const input = form.querySelector(`#${id}`);
  const name = input.value.trim();
  if (input.dataset.account !== undefined) return name; // the account's, not to be remembered as typed
  if (!name) {
    input.focus();
    toast('Enter a name first (1 to 24 characters).', 'error');
    return null;
  }
  saveName(name);
  return name;
}

function raceBody(form) {
  const code = form.querySelector('[name=code]').value.trim();
  const cells = Number(form.querySelector('[name=cells]:checked').value);
  return code ? { code } : { cells };
}

// Open boards: spectators watch every board live (for streams and teaching).
function openBoardsChoice() {
  return h('p', { class: 'open-boards-choice' },
    h('label', {},
      h('input', { type: 'checkbox', name: 'open_boards' }),
      ' Open boards ', h('span', { class: 'small' }, '(spectators watch every board live; otherwise nobody sees a board until its player finishes)')));
}

async function createRace(body) {
  const race = await api('POST', '/api/races', body);
  saveRaceCreds(race.race_id, { host_key: race.host_key });
  return race;
}

// A place in the public queue's next race (see POST /api/quick).
export async function quickRace(cells) {
  const race = await api('POST', '/api/quick', { cells });
  saveRaceCreds(race.race_id, { quick: { cells, players: race.players, wait_s: race.wait_s } });
  navigate(race.url || `/race/${race.race_id}`);
}

// The race this browser was last playing, if it is still on: a way back.
async function lastRace() {
  let best = null;
  try {
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith('boulanger.race.')) continue;
      const creds = JSON.parse(localStorage.getItem(key)) || {};
      if (creds.token && creds.at && Date.now() - creds.at < COME_BACK_MS && (!best || creds.at > best.at)) {
        best = { id: key.slice('boulanger.race.'.length), at: creds.at };
      }
    }
  } catch {
    return null;
  }
  if (!best) return null;
  try {
    const race = await api('GET', `/api/races/${encodeURIComponent(best.id)}`);
    return race.state === 'finished' ? null : race;
  } catch {
    return null;
  }
}

function home() {
  const comeBack = h('div', { class: 'come-back', hidden: true });
  lastRace().then((race) => {
    if (!race || !comeBack.isConnected) return;
    comeBack.hidden = false;
    clear(comeBack, h('p', { class: 'notice' },
      race.practice ? 'Your practice game is still on. ' : race.daily ? 'Your daily game is still on. ' : 'Your race is still on. ',
      h('a', { href: `/race/${race.race_id}`, class: 'button primary', 'data-link': '' }, 'Back to it')));
  });
  const create = h('form', { class: 'panel', 'aria-labelledby': 'new-race' },
    h('h2', { id: 'new-race' }, 'New race'),
    h('p', { class: 'small' }, 'Send a link to your friends: everyone plays their own game of the same deal, and the first to put all 52 cards up wins.'),
    cellsChoice('cells'),
    h('p', {},
      h('label', { for: 'home-code' }, 'or a game code '),
      h('input', { id: 'home-code', name: 'code', placeholder: 'BK1-C4-…', autocomplete: 'off', spellcheck: 'false', size: 16 })),
    openBoardsChoice(),
    h('p', { class: 'row' },
      h('button', { type: 'submit', class: 'primary', name: 'create' }, 'Create race'),
      h('button', { type: 'button', name: 'practice' }, 'Practise alone')));
  const busy = (on) => { for (const b of create.querySelectorAll('button')) b.disabled = on; };
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!readName(document, 'home-name')) return;
    busy(true);
    try {
      const body = raceBody(create);
      if (create.querySelector('[name=open_boards]').checked) body.open_boards = true;
      const race = await createRace(body);
      navigate(`/race/${race.race_id}`);
    } catch (error) {
      toast(`Could not create the race: ${error.message}`, 'error', 6000);
      busy(false);
    }
  });
  create.querySelector('[name=practice]').addEventListener('click', () => {
    if (!readName(document, 'home-name')) return;
    const body = raceBody(create);
    navigate(`/practice?${new URLSearchParams(body)}`);
  });

  const joinInput = h('input', { id: 'join-link', placeholder: 'https://…/race/… or the race id', autocomplete: 'off', spellcheck: 'false' });
  const join = h('form', { class: 'panel' },
    h('h2', {}, 'Join a race'),
    h('p', {}, h('label', { for: 'join-link' }, 'Race link '), joinInput, ' ', h('button', { type: 'submit' }, 'Go')));
  join.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = joinInput.value.trim();
    const match = /(?:\/race\/)?([A-Za-z0-9_-]{1,64})\/?(?:[?#].*)?$/.exec(text);
    if (!match) {
      toast('Paste the link you were sent.', 'error');
      return;
    }
    navigate(`/race/${match[1]}`);
  });

  const quick = h('form', { class: 'panel quick', 'aria-labelledby': 'quick-race' },
    h('h2', { id: 'quick-race' }, 'Quick race'),
    h('p', { class: 'small' }, 'Race whoever is waiting now: a race starts with 8 players, or 20 seconds after the second one comes.'),
    cellsChoice('quick-cells'),
    h('p', {}, h('button', { type: 'submit', class: 'primary', name: 'quick' }, 'Quick race')));
  quick.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!readName(document, 'home-name')) return;
    const button = quick.querySelector('button[name=quick]');
    button.disabled = true;
    try {
      const cells = Number(quick.querySelector('[name=quick-cells]:checked').value);
      await quickRace(cells);
    } catch (error) {
      toast(`No quick race now: ${error.message}`, 'error', 6000);
      button.disabled = false;
    }
  });

  page(null,
    h('section', { class: 'intro' },
      h('h1', {}, "Baker's Game, against your friends"),
      h('p', {}, 'Build each suit down in its own suit, free the aces, and race the others to 52 cards on the foundations. ',
        h('a', { href: '/rules', 'data-link': '' }, 'New here? The rules in two minutes.'))),
    comeBack,
    h('div', { class: 'panel who' }, nameField('home-name')),
    h('div', { class: 'home-grid' },
      quick,
      create,
      join,
      h('div', { class: 'panel' },
        h('h2', {}, 'Daily challenge'),
        h('p', {}, 'One deal a day for everybody, with its own leaderboard.'),
        h('p', {}, h('a', { href: '/daily', class: 'button primary', 'data-link': '' }, "Play today's deal")))));
}

// -- rules (loaded when asked for) ------------------------------------------------

async function rules() {
  page('Rules', h('p', { class: 'loading' }, 'Loading the rules…'));
  const { rulesPage } = await import('./guide.js');
  if (location.pathname.startsWith('/rules')) page('Rules', rulesPage());
}

// -- daily challenge ----------------------------------------------------------------

// daily.js is loaded when the page is opened: a first visit does not pay for it.
async function daily(date) {
  page('Daily challenge', h('p', { class: 'loading' }, 'Loading the daily challenge…'));
  const at = routed;
  const { DailyPage } = await import('./daily.js');
  if (routed !== at) return; // gone elsewhere meanwhile
  let day = null;
  try {
    day = date ? decodeURIComponent(date) : null;
  } catch {
    day = date;
  }
  const view = new DailyPage(main, day, navigate);
  current = view;
  view.mount();
}

// -- accounts and profiles ------------------------------------------------------------

// account.js is loaded when one of its pages is opened: most visits need none.
async function account() {
  page('Account', h('p', { class: 'loading' }, 'Loading…'));
  const { accountPage } = await import('./account.js');
  if (location.pathname.startsWith('/account')) accountPage(main, navigate);
}

function profile(name) {
  let shown = name;
  try {
    shown = decodeURIComponent(name);
  } catch {
    shown = name;
  }
  page(shown, h('p', { class: 'loading' }, 'Loading the profile…'));
  import('./account.js').then(({ profilePage }) => {
    if (location.pathname.startsWith('/@/')) profilePage(main, shown);
  });
}

// -- the review desk (desk.js), for moderators -----------------------------------------

function desk() {
  page('Review desk', h('p', { class: 'loading' }, 'Loading…'));
  import('./desk.js').then(({ DeskPage }) => {
    if (!location.pathname.startsWith('/desk')) return;
    const view = new DeskPage(main);
    current = view;
    view.mount();
  });
}

// -- race -------------------------------------------------------------------------

function racePage(raceId) {
  page('Race');
  const params = new URLSearchParams(location.search);
  const view = new RaceView(main, raceId, { watch: params.has('watch'), navigate });
  current = view;
  view.mount();
}

// -- replays: up to four recorded games side by side (replay.js) ---------------------

// Loaded when first wanted: a first visit does not pay for it.
async function replayPage(kind, key, first) {
  page('Replay', h('p', { class: 'loading' }, 'Loading the replay…'));
  const path = location.pathname;
  const { ReplayPage, raceSource, dailySource, deskSource } = await import('./replay.js');
  if (location.pathname !== path) return; // gone elsewhere meanwhile
  const more = (new URLSearchParams(location.search).get('with') || '').split(',').filter(Boolean);
  const ids = [decodeURIComponent(first), ...more].filter((id, i, all) => all.indexOf(id) === i);
  const source = kind === 'race' ? raceSource(key) : kind === 'daily' ? dailySource(key) : deskSource(kind.slice(5), key);
  const view = new ReplayPage(main, source, ids, navigate);
  current = view;
  view.mount();
}

// -- practice: a race of one that starts by itself -----------------------------------

async function practice() {
  page('Practice', h('p', { class: 'loading' }, 'Dealing…'));
  const params = new URLSearchParams(location.search);
  const body = { practice: true };
  const ghost = isRecordPath(params.get('ghost')) ? { path: params.get('ghost'), name: (params.get('name') || 'Ghost').slice(0, 24) } : null;
  if (params.get('code')) body.code = params.get('code');
  else body.cells = Number(params.get('cells')) || 4;
  if (!savedName()) saveName('Player');
  try {
    // A ghost's game: the same deal as its record.
    if (ghost) body.code = (await api('GET', `${ghost.path}/replay`)).code;
    const race = await createRace(body);
    if (ghost) saveRaceCreds(race.race_id, { ghost });
    if (location.pathname.startsWith('/practice')) navigate(`/race/${race.race_id}`, true);
  } catch (error) {
    if (!location.pathname.startsWith('/practice')) return;
    page('Practice', h('div', { class: 'panel' },
      h('h1', {}, 'No practice game'),
      h('p', {}, `The server could not deal one: ${error.message}`),
      h('p', {}, h('a', { href: '/', class: 'button', 'data-link': '' }, 'Home'))));
  }
}

// Sound (and vibration on phones): off until turned on, then remembered.
const soundButton = document.getElementById('sound');
function showSound() {
  const on = soundOn();
  soundButton.setAttribute('aria-pressed', String(on));
  soundButton.replaceChildren('♪', h('span', { class: 'word' }, on ? ' Sound on' : ' Sound off'));
}
soundButton.addEventListener('click', () => {
  setSound(!soundOn());
  showSound();
});
showSound();
showAccountLink();

route();
