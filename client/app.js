// The boulanger web client: routes by path, the home page, the daily
// challenge and practice; the race page lives in race.js.

import { h, clear, toast, hideToast, api, savedName, saveName, saveRaceCreds, isRecordPath, whoAmI, showAccountLink, playingAs, onSignIn, notePlace } from './dom.js';
import { soundOn, setSound } from './feel.js';
import { t, tn, LANGUAGES, language, pickLanguage, useLanguage, keepLanguage, known } from './i18n.js';
import { quickFigures, dailyCard, tablePicture } from './home.js';

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
  notePlace(location.pathname + location.search);
  for (const [pattern, show] of ROUTES) {
    const match = pattern.exec(location.pathname);
    if (match) {
      show(...match.slice(1));
      return;
    }
  }
  page(t('title.not_found'), h('div', { class: 'panel' }, h('h1', {}, t('notfound.title')), h('p', {}, h('a', { href: '/', 'data-link': '' }, t('notfound.home')))));
}

function page(title, ...content) {
  document.title = title ? t('title.page', { title }) : t('title.home');
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

// The one free-cells choice of the home page: for a quick race, a new race and practice.
function cellsChoice(name, checked = 4) {
  return h('fieldset', { class: 'cells-choice' },
    h('legend', {}, t('cells.legend')),
    [4, 2, 1].map((n) => h('label', {},
      h('input', { type: 'radio', name, value: n, checked: n === checked }),
      ` ${n} `, h('span', { class: 'small' }, n === 4 ? t('cells.classic') : n === 2 ? t('cells.hard') : t('cells.very_hard')))));
}

// The name, asked once, above its field: the whole hint shows on a phone too.
function nameField(id) {
  const field = h('p', { class: 'name-field who' },
    h('label', { for: id }, t('name.label')),
    h('input', { id, maxlength: 24, autocomplete: 'nickname', value: savedName(), placeholder: t('name.placeholder') }));
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
    toast(t('name.missing'), 'error');
    return null;
  }
  saveName(name);
  return name;
}

function raceBody(form) {
  const code = form.querySelector('[name=code]').value.trim();
  const cells = Number(document.querySelector('[name=cells]:checked').value);
  return code ? { code } : { cells };
}

// Open boards: spectators watch every board live (for streams and teaching).
function openBoardsChoice() {
  return h('p', { class: 'open-boards-choice' },
    h('label', {},
      h('input', { type: 'checkbox', name: 'open_boards' }),
      ' ', t('home.open_boards'), ' ', h('span', { class: 'small' }, t('home.open_boards_about'))));
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
      race.practice ? t('home.back_practice') : race.daily ? t('home.back_daily') : t('home.back_race'), ' ',
      h('a', { href: `/race/${race.race_id}`, class: 'button primary', 'data-link': '' }, t('home.back_to_it'))));
  });
  const create = h('form', { class: 'panel', 'aria-labelledby': 'new-race' },
    h('h2', { id: 'new-race' }, t('home.new_race')),
    h('p', { class: 'small' }, t('home.new_race_about')),
    h('p', {},
      h('label', { for: 'home-code' }, t('home.code_label'), ' '),
      h('input', { id: 'home-code', name: 'code', placeholder: 'BK1-C4-…', autocomplete: 'off', spellcheck: 'false', size: 16 })),
    openBoardsChoice(),
    h('p', { class: 'row' },
      h('button', { type: 'submit', class: 'primary', name: 'create' }, t('home.create')),
      h('button', { type: 'button', name: 'practice' }, t('home.practise'))));
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
      toast(t('home.create_failed', { reason: error.message }), 'error', 6000);
      busy(false);
    }
  });
  create.querySelector('[name=practice]').addEventListener('click', () => {
    if (!readName(document, 'home-name')) return;
    const body = raceBody(create);
    navigate(`/practice?${new URLSearchParams(body)}`);
  });

  const joinInput = h('input', { id: 'join-link', placeholder: t('home.join_placeholder'), autocomplete: 'off', spellcheck: 'false' });
  const join = h('form', { class: 'panel join-home' },
    h('h2', {}, t('home.join')),
    h('p', {}, h('label', { for: 'join-link' }, t('home.join_label'), ' '), joinInput, ' ', h('button', { type: 'submit' }, t('home.go'))));
  join.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = joinInput.value.trim();
    const match = /(?:\/race\/)?([A-Za-z0-9_-]{1,64})\/?(?:[?#].*)?$/.exec(text);
    if (!match) {
      toast(t('home.join_missing'), 'error');
      return;
    }
    navigate(`/race/${match[1]}`);
  });

  // The way in: the name, the free cells, and one big button with the live figures.
  const quick = h('form', { class: 'panel quick play', 'aria-labelledby': 'quick-race' },
    h('h2', { id: 'quick-race', class: 'offscreen' }, t('home.quick')),
    nameField('home-name'),
    cellsChoice('cells'),
    h('button', { type: 'submit', class: 'primary big', name: 'quick' },
      h('span', { class: 'label' }, t('home.quick_button')), quickFigures()),
    h('p', { class: 'small' }, t('home.quick_about')));
  quick.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!readName(document, 'home-name')) return;
    const button = quick.querySelector('button[name=quick]');
    button.disabled = true;
    try {
      const cells = Number(quick.querySelector('[name=cells]:checked').value);
      await quickRace(cells);
    } catch (error) {
      toast(t('home.quick_failed', { reason: error.message }), 'error', 6000);
      button.disabled = false;
    }
  });

  // About to race: the race page's modules come now, while the player chooses.
  for (const form of [quick, create, join]) {
    form.addEventListener('focusin', warmRace, { once: true });
    form.addEventListener('pointerdown', warmRace, { once: true });
  }
  page(null,
    h('section', { class: 'intro hero' },
      h('div', {},
        h('h1', {}, t('home.title')),
        h('p', {}, t('home.lead'), ' ',
          h('a', { href: '/rules', 'data-link': '' }, t('home.rules_link')))),
      tablePicture()),
    comeBack,
    quick,
    h('div', { class: 'home-grid' },
      dailyCard(),
      create,
      join));
}

// -- rules (loaded when asked for) ------------------------------------------------

async function rules() {
  page(t('title.rules'), h('p', { class: 'loading' }, t('loading.rules')));
  const { rulesPage } = await import('./guide.js');
  const content = await rulesPage();
  if (location.pathname.startsWith('/rules')) page(t('title.rules'), content);
}

// -- daily challenge ----------------------------------------------------------------

// daily.js is loaded when the page is opened: a first visit does not pay for it.
async function daily(date) {
  page(t('title.daily'), h('p', { class: 'loading' }, t('loading.daily')));
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
  page(t('title.account'), h('p', { class: 'loading' }, t('loading.any')));
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
  page(shown, h('p', { class: 'loading' }, t('loading.profile')));
  import('./account.js').then(({ profilePage }) => {
    if (location.pathname.startsWith('/@/')) profilePage(main, shown);
  });
}

// -- the review desk (desk.js), for moderators -----------------------------------------

function desk() {
  page(t('desk.title'), h('p', { class: 'loading' }, t('desk.loading')));
  import('./desk.js').then(({ DeskPage }) => {
    if (!location.pathname.startsWith('/desk')) return;
    const view = new DeskPage(main);
    current = view;
    view.mount();
  });
}

// -- race -------------------------------------------------------------------------

// The race page's modules (race.js and what it imports) are loaded when a
// race is opened, not on the home page: a first visit does not pay for them.
// A page opened on a race asks for all of them at once (RACE_MODULES).
const RACE_MODULES = ['race.js', 'board.js', 'rules.js', 'net.js', 'track.js', 'moments.js', 'results.js', 'queue.js', 'review.js', 'share.js', 'start.js'];

export function warmRace() {
  for (const name of RACE_MODULES) {
    const href = new URL(`./${name}`, import.meta.url).href;
    if (!document.querySelector(`link[rel=modulepreload][href="${href}"]`)) document.head.append(h('link', { rel: 'modulepreload', href }));
  }
}

async function racePage(raceId) {
  page(t('title.race'), h('p', { class: 'loading' }, t('loading.race')));
  const at = routed;
  const { RaceView } = await import('./race.js');
  if (routed !== at) return; // gone elsewhere meanwhile
  const params = new URLSearchParams(location.search);
  const view = new RaceView(main, raceId, { watch: params.has('watch'), navigate });
  current = view;
  view.mount();
}

// -- replays: up to four recorded games side by side (replay.js) ---------------------

// Loaded when first wanted: a first visit does not pay for it.
async function replayPage(kind, key, first) {
  page(t('title.replay'), h('p', { class: 'loading' }, t('loading.replay')));
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
  page(t('title.practice'), h('p', { class: 'loading' }, t('loading.dealing')));
  const params = new URLSearchParams(location.search);
  const body = { practice: true };
  const ghost = isRecordPath(params.get('ghost')) ? { path: params.get('ghost'), name: (params.get('name') || t('ghost.default_name')).slice(0, 24) } : null;
  if (params.get('code')) body.code = params.get('code');
  else body.cells = Number(params.get('cells')) || 4;
  if (!savedName()) saveName(t('name.default'));
  try {
    // A ghost's game: the same deal as its record.
    if (ghost) body.code = (await api('GET', `${ghost.path}/replay`)).code;
    const race = await createRace(body);
    if (ghost) saveRaceCreds(race.race_id, { ghost });
    if (location.pathname.startsWith('/practice')) navigate(`/race/${race.race_id}`, true);
  } catch (error) {
    if (!location.pathname.startsWith('/practice')) return;
    page(t('title.practice'), h('div', { class: 'panel' },
      h('h1', {}, t('practice.failed_title')),
      h('p', {}, t('practice.failed', { reason: error.message })),
      h('p', {}, h('a', { href: '/', class: 'button', 'data-link': '' }, t('common.home')))));
  }
}

// Sound (and vibration on phones): on unless turned off (feel.js), remembered.
const soundButton = document.getElementById('sound');
function showSound() {
  const on = soundOn();
  soundButton.setAttribute('aria-pressed', String(on));
  soundButton.replaceChildren('♪', h('span', { class: 'word' }, ' ', on ? t('sound.on') : t('sound.off')));
}
soundButton.addEventListener('click', () => setSound(!soundOn()));
window.addEventListener('boulanger:sound', showSound); // a toggle elsewhere too
// The language picker, on every page: links that carry ?lang=xx (a page
// opened with one keeps it); a click here draws the page again in that
// language, and the choice is kept (in this browser, and on the account of a
// signed-in player).
const picker = document.getElementById('lang');
function showPicker() {
  const here = language();
  const name = (LANGUAGES.find(([code]) => code === here) || LANGUAGES[0])[1];
  picker.open = false;
  picker.replaceChildren(
    h('summary', { title: t('lang.label') }, here.toUpperCase(), h('span', { class: 'offscreen' }, ` ${t('lang.label')}: ${name}`)),
    h('ul', {}, LANGUAGES.map(([code, own]) => h('li', {},
      h('a', { href: `?lang=${code}`, lang: code, hreflang: code, 'data-lang': code, 'aria-current': code === here ? 'true' : null }, own)))));
}
picker.addEventListener('click', async (e) => {
  const link = e.target.closest && e.target.closest('a[data-lang]');
  if (!link) return;
  e.preventDefault();
  e.stopPropagation();
  keepLanguage(link.dataset.lang);
  await switchLanguage(link.dataset.lang);
  // A signed-in player's choice follows them to their other devices.
  if (await whoAmI()) api('POST', '/api/me/language', { language: link.dataset.lang }).catch(() => null);
});
document.addEventListener('click', (e) => {
  if (picker.open && !picker.contains(e.target)) picker.open = false;
});
picker.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || !picker.open) return;
  picker.open = false;
  picker.querySelector('summary').focus();
});

export async function switchLanguage(code) {
  if (code === language()) return;
  await useLanguage(code);
  showPicker();
  showSound();
  showAccountLink();
  route();
}

// The language chosen on the account (on any device) wins over this
// browser's, once signed in; a link's ?lang=xx still wins for its page.
async function followAccount(me) {
  if (!me || !known(me.language) || me.language === language()) return;
  if (new URLSearchParams(location.search).has('lang')) return;
  keepLanguage(me.language);
  await switchLanguage(me.language);
}
onSignIn(followAccount);

if (location.pathname.startsWith('/race/') || location.pathname.startsWith('/practice')) warmRace();
await useLanguage(pickLanguage());
showPicker();
showSound();
showAccountLink();
whoAmI().then(followAccount);

route();
