// Accounts: sign up and in (passkey or password), the account page, player profiles.
// Everything is optional: races with friends need no account.

import { h, clear, clock, clockTenths, toast, api, playerKey, whoAmI, setMe, placeBefore } from './dom.js';
import { t, day, language } from './i18n.js';
import { reviewTag } from './review.js';

// Signed up or in: back where the player was (the daily they wanted ranked,
// the race they were watching), not to the account's settings.
function signedIn(account, navigate) {
  setMe(account);
  toast(t('account.signed_in', { name: account.name }));
  navigate(placeBefore(), true);
}

const passkeysHere = () => typeof window.PublicKeyCredential === 'function'
  && typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function';

async function createPasskey(options) {
  const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(options);
  const credential = await navigator.credentials.create({ publicKey });
  return credential.toJSON();
}

async function getPasskey(options) {
  const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
  const credential = await navigator.credentials.get({ publicKey });
  return credential.toJSON();
}

function field(id, label, attrs) {
  return h('p', {}, h('label', { for: id }, label), ' ', h('input', { id, ...attrs }));
}

function failed(error) {
  if (error && error.name === 'NotAllowedError') toast(t('account.passkey_cancelled'), 'error');
  else toast(error.message || String(error), 'error');
}

// -- /account -------------------------------------------------------------------------

export async function accountPage(root, navigate) {
  const me = await whoAmI(true);
  if (me) return clear(root, accountPanel(me, navigate));
  clear(root, signUpPanel(navigate), signInPanel(navigate));
}

function signUpPanel(navigate) {
  const form = h('form', { class: 'panel account-form', id: 'sign-up' },
    h('h1', {}, t('account.make')),
    h('p', { class: 'small' }, t('account.make_about')),
    field('up-name', t('account.name'), { maxlength: 20, minlength: 3, autocomplete: 'username', required: true }),
    passkeysHere() ? h('p', {}, h('button', { type: 'button', class: 'primary', id: 'up-passkey' }, t('account.make_passkey'))) : null,
    field('up-password', t('account.password'), { type: 'password', minlength: 8, maxlength: 128, autocomplete: 'new-password' }),
    h('p', {}, h('button', { type: 'submit', id: 'up-submit' }, t('account.make_password'))));
  const name = () => form.querySelector('#up-name').value.trim();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const account = await api('POST', '/api/accounts', { name: name(), password: form.querySelector('#up-password').value, player_key: playerKey() });
      signedIn(account, navigate);
    } catch (error) {
      failed(error);
    }
  });
  const passkey = form.querySelector('#up-passkey');
  if (passkey) passkey.addEventListener('click', async () => {
    try {
      const begun = await api('POST', '/api/accounts/passkey/options', { name: name(), player_key: playerKey() });
      const credential = await createPasskey(begun.options);
      signedIn(await api('POST', '/api/accounts/passkey', { ceremony: begun.ceremony, credential }), navigate);
    } catch (error) {
      failed(error);
    }
  });
  return form;
}

function signInPanel(navigate) {
  const form = h('form', { class: 'panel account-form', id: 'sign-in' },
    h('h2', {}, t('account.sign_in')),
    passkeysHere() ? h('p', {}, h('button', { type: 'button', class: 'primary', id: 'in-passkey' }, t('account.sign_in_passkey'))) : null,
    field('in-name', t('account.name'), { autocomplete: 'username', required: true }),
    field('in-password', t('account.password'), { type: 'password', autocomplete: 'current-password', required: true }),
    h('p', {}, h('button', { type: 'submit', id: 'in-submit' }, t('account.sign_in'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const body = { name: form.querySelector('#in-name').value, password: form.querySelector('#in-password').value };
      signedIn(await api('POST', '/api/session', body), navigate);
    } catch (error) {
      failed(error);
    }
  });
  const passkey = form.querySelector('#in-passkey');
  if (passkey) passkey.addEventListener('click', async () => {
    try {
      const begun = await api('POST', '/api/session/passkey/options', {});
      const credential = await getPasskey(begun.options);
      signedIn(await api('POST', '/api/session/passkey', { ceremony: begun.ceremony, credential }), navigate);
    } catch (error) {
      failed(error);
    }
  });
  return form;
}

function accountPanel(me, navigate) {
  // What takes the account over needs proof in the request: the current password, or
  // (an account without one) an assertion by one of its passkeys.
  const current = me.password ? h('input', { type: 'password', id: 'pw-current', autocomplete: 'current-password', placeholder: t('account.current_placeholder'), 'aria-describedby': 'confirm-why' }) : null;
  async function proof() {
    if (current) {
      if (!current.value) {
        current.focus();
        throw new Error(t('account.confirm_missing'));
      }
      return { current: current.value };
    }
    const begun = await api('POST', '/api/session/passkey/options', {});
    return { passkey: { ceremony: begun.ceremony, credential: await getPasskey(begun.options) } };
  }
  const out = h('button', { type: 'button', id: 'sign-out' }, t('account.sign_out'));
  out.addEventListener('click', async () => {
    await api('DELETE', '/api/session').catch(() => null);
    setMe(null);
    navigate('/account', true);
  });
  const add = passkeysHere() ? h('button', { type: 'button', id: 'add-passkey' }, t('account.add_passkey')) : null;
  if (add) add.addEventListener('click', async () => {
    try {
      const begun = await api('POST', '/api/me/passkeys/options', await proof());
      const credential = await createPasskey(begun.options);
      await api('POST', '/api/me/passkeys', { ceremony: begun.ceremony, credential });
      toast(t('account.passkey_added'));
      navigate('/account', true);
    } catch (error) {
      failed(error);
    }
  });
  const password = h('form', { class: 'row', id: 'change-password' },
    h('input', { type: 'password', id: 'pw-new', minlength: 8, maxlength: 128, autocomplete: 'new-password', placeholder: t('account.new_placeholder'), 'aria-label': t('account.new_label') }),
    h('button', { type: 'submit' }, me.password ? t('account.change_password') : t('account.set_password')));
  password.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('POST', '/api/me/password', { password: password.querySelector('#pw-new').value, ...(await proof()) });
      toast(t('account.password_saved'));
      navigate('/account', true);
    } catch (error) {
      failed(error);
    }
  });
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-account' }, t('account.delete'));
  remove.addEventListener('click', async () => {
    if (!window.confirm(t('account.delete_confirm', { name: me.name }))) return;
    try {
      await api('DELETE', '/api/me', { name: me.name, ...(await proof()) });
    } catch (error) {
      failed(error);
      return;
    }
    setMe(null);
    navigate('/', true);
  });
  return h('div', { class: 'panel account' },
    h('h1', {}, me.name),
    h('p', {}, h('a', { href: me.url, 'data-link': '' }, t('account.profile_link'))),
    h('p', { class: 'small' }, t(me.password ? 'account.passkeys_password' : 'account.passkeys', { count: me.passkeys })),
    current
      ? h('p', { class: 'row' }, h('label', { for: 'pw-current' }, t('account.current_label')), ' ', current)
      : null,
    h('p', { class: 'small', id: 'confirm-why' }, t(current ? 'account.confirm_why' : 'account.confirm_passkey')),
    h('p', { class: 'row' }, add, out),
    password,
    // What cannot be undone waits behind a disclosure, closed.
    h('details', { class: 'danger-zone' },
      h('summary', {}, t('account.danger')),
      h('p', { class: 'small' }, t('account.danger_about')),
      h('p', {}, remove)));
}

// -- /@/{name} ---------------------------------------------------------------------------

const PLACE = (r) => {
  if (r.review && r.review.status === 'disqualified') return t('verdict.disqualified_tag');
  if (r.place === null || (r.review && r.review.status === 'held')) return t('results.held_tag');
  return r.players > 1 ? t('profile.place', { place: r.place, count: r.players }) : r.won ? t('status.won') : t('profile.not_won');
};

const DAY_MS = 86400000;
const WEEKS = 6;
const todayUTC = () => new Date().toISOString().slice(0, 10);
const shift = (date, days) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

// A ranked daily's state on the calendar: won (in the streak), won but held
// for review or disqualified (not in it), or played and not won.
function dayState(d) {
  if (!d.won) return 'played';
  if (d.counted) return 'won';
  return d.review && d.review.status === 'disqualified' ? 'disqualified' : 'held';
}
const STATE_KEYS = { won: 'profile.day_won', played: 'profile.day_played', held: 'profile.day_held', disqualified: 'profile.day_disqualified', none: 'profile.day_none' };

export async function profilePage(root, name) {
  clear(root, h('p', { class: 'loading' }, t('loading.profile')));
  let p;
  try {
    p = await api('GET', `/api/players/${encodeURIComponent(name)}`);
  } catch (error) {
    clear(root, h('div', { class: 'panel' }, h('h1', {}, t('profile.none')), h('p', {}, error.message)));
    return;
  }
  const s = p.stats;
  const rate = (x) => `${Math.round(x.win_rate * 100)}%`;
  const ratings = Object.entries(p.ratings);
  const dailies = p.dailies || [];
  const why = streakWhy(p.streak, dailies);
  const viewer = await whoAmI();
  clear(root, h('div', { class: 'panel profile' },
    h('h1', {}, p.name),
    viewer && viewer.name === p.name ? h('p', {}, h('a', { href: '/account', 'data-link': '', class: 'settings' }, t('profile.settings'))) : null,
    h('dl', { class: 'stats' },
      h('dt', {}, t('profile.races')), h('dd', {}, [t('profile.played', { count: s.races.played }), t('profile.first', { count: s.races.first }), t('profile.solved_rate', { count: s.races.won, rate: rate(s.races) })].join(' · ')),
      h('dt', {}, t('profile.dailies')), h('dd', {}, [t('profile.played', { count: s.dailies.played }), t('profile.solved', { count: s.dailies.won })].join(' · ')),
      h('dt', {}, t('profile.streak')), h('dd', { class: 'streak' }, t('profile.days', { count: p.streak })),
      h('dt', {}, t('profile.rating')), h('dd', { class: 'ratings' }, ratings.length
        ? ratings.map(([cells, r]) => t('profile.rating_of', { rating: r.rating, cells: t('cells.count', { count: Number(cells) }), races: t('profile.race_count', { count: r.races }) })).join(' · ')
        : t('profile.no_rating'))),
    why ? h('p', { class: `streak-why ${why.kind}` }, why.text) : null,
    h('h2', {}, t('profile.calendar')),
    streakCalendar(dailies, p.calendar || []),
    h('h2', {}, t('profile.chart')),
    timesChart(dailies),
    h('h2', {}, t('profile.rating_chart')),
    ratingChart(p.rating_history || {}),
    h('h2', {}, t('profile.times')),
    h('table', { class: 'times' },
      h('thead', {}, h('tr', {}, h('th', {}, t('profile.cells')), h('th', {}, t('profile.played_column')), h('th', {}, t('profile.best')), h('th', {}, t('profile.median')))),
      h('tbody', {}, Object.entries(s.cells).map(([cells, c]) => h('tr', {},
        h('td', {}, cells), h('td', {}, String(c.played)),
        h('td', {}, c.best_ms === null ? '—' : clock(c.best_ms)), h('td', {}, c.median_ms === null ? '—' : clock(c.median_ms)))))),
    h('h2', {}, t('profile.last_races')),
    p.races.length ? h('ul', { class: 'history' }, p.races.map(raceLine)) : h('p', { class: 'small' }, t('profile.none_yet'))));
}

// Why the streak is what it is, when a player would ask: a recent win held for
// review (or disqualified), or the day the streak ended.
function streakWhy(streak, dailies) {
  const recent = [todayUTC(), shift(todayUTC(), -1)];
  const held = dailies.find((d) => recent.includes(d.date) && d.won && !d.counted);
  if (held) {
    const state = dayState(held);
    return { kind: state, text: t(state === 'held' ? 'profile.streak_held' : 'profile.streak_disqualified', { date: day(held.date) }) };
  }
  if (streak > 0) return null;
  const last = dailies.find((d) => d.counted);
  if (!last) return null;
  return { kind: 'broken', text: t('profile.streak_broken', { date: day(shift(last.date, 1)) }) };
}

// The last weeks, Monday first, a square a day: won, held, played or not.
function streakCalendar(dailies, calendar) {
  const byDate = new Map(dailies.map((d) => [d.date, d]));
  const today = todayUTC();
  const weekday = (new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
  const first = shift(today, -weekday - 7 * (WEEKS - 1));
  const names = new Intl.DateTimeFormat(language(), { weekday: 'narrow', timeZone: 'UTC' });
  const head = [];
  for (let i = 0; i < 7; i += 1) head.push(h('span', { class: 'weekday', 'aria-hidden': 'true' }, names.format(new Date(Date.parse(`${first}T00:00:00Z`) + i * DAY_MS))));
  const cells = [];
  for (let i = 0; i < 7 * WEEKS; i += 1) {
    const date = shift(first, i);
    if (date > today) {
      cells.push(h('span', { class: 'day future', 'aria-hidden': 'true' }));
      continue;
    }
    const d = byDate.get(date);
    const state = d ? dayState(d) : calendar.includes(date) ? 'played' : 'none';
    const label = `${day(date)}: ${t(STATE_KEYS[state])}`;
    const number = String(Number(date.slice(8)));
    cells.push(state === 'none'
      ? h('span', { class: `day none${date === today ? ' today' : ''}`, title: label, 'data-date': date }, number)
      : h('a', { href: `/daily/${date}`, 'data-link': '', class: `day ${state}${date === today ? ' today' : ''}`, title: label, 'aria-label': label, 'data-date': date }, number));
  }
  return h('div', { class: 'streak-calendar' },
    h('div', { class: 'calendar-grid' }, head, cells),
    h('p', { class: 'calendar-legend small' }, ['won', 'held', 'played'].map((state) => h('span', { class: `key ${state}` }, t(STATE_KEYS[state])))));
}

// An SVG element (h() makes HTML ones).
function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs || {})) el.setAttribute(key, String(value));
  for (const child of children.flat()) if (child !== null && child !== undefined) el.append(child);
  return el;
}

// The daily wins' times, oldest to latest: a line, a dot a day (hollow: under
// review), the slowest time on top and the days at the ends.
function timesChart(dailies) {
  const wins = dailies.filter((d) => d.won && Number.isFinite(d.time_ms)).slice(0, 30).reverse();
  if (!wins.length) return h('p', { class: 'small times-chart empty' }, t('profile.chart_none'));
  const W = 320;
  const H = 120;
  const left = 40;
  const right = 10;
  const top = 10;
  const bottom = 22;
  const max = Math.max(...wins.map((d) => d.time_ms));
  const t0 = Date.parse(`${wins[0].date}T00:00:00Z`);
  const span = Math.max(DAY_MS, Date.parse(`${wins[wins.length - 1].date}T00:00:00Z`) - t0);
  const x = (d) => (wins.length === 1 ? (left + W - right) / 2 : left + ((Date.parse(`${d.date}T00:00:00Z`) - t0) / span) * (W - left - right));
  const y = (d) => top + (1 - d.time_ms / max) * (H - top - bottom);
  const points = wins.map((d) => `${x(d).toFixed(1)},${y(d).toFixed(1)}`).join(' ');
  const best = Math.min(...wins.map((d) => d.time_ms));
  const label = t('profile.chart_label', { count: wins.length, best: clockTenths(best), latest: clockTenths(wins[wins.length - 1].time_ms) });
  const monthDay = new Intl.DateTimeFormat(language(), { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const short = (date) => monthDay.format(new Date(`${date}T00:00:00Z`));
  return h('figure', { class: 'times-chart' },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label, preserveAspectRatio: 'xMidYMid meet' },
      svg('line', { x1: left, y1: H - bottom, x2: W - right, y2: H - bottom, class: 'axis' }),
      svg('line', { x1: left, y1: top, x2: left, y2: H - bottom, class: 'axis' }),
      svg('text', { x: left - 4, y: top + 4, 'text-anchor': 'end', class: 'tick' }, clock(max)),
      svg('text', { x: left - 4, y: H - bottom, 'text-anchor': 'end', class: 'tick' }, '0:00'),
      svg('text', { x: left, y: H - 6, 'text-anchor': 'start', class: 'tick' }, short(wins[0].date)),
      wins.length > 1 ? svg('text', { x: W - right, y: H - 6, 'text-anchor': 'end', class: 'tick' }, short(wins[wins.length - 1].date)) : null,
      wins.length > 1 ? svg('polyline', { points, class: 'line' }) : null,
      wins.map((d) => svg('circle', { cx: x(d).toFixed(1), cy: y(d).toFixed(1), r: 3.5, class: `dot ${d.counted ? 'won' : 'held'}` },
        svg('title', {}, `${day(d.date)}: ${clockTenths(d.time_ms)}`)))),
    h('figcaption', { class: 'small' }, label));
}

// Each cell count's rating after each rated race, oldest to latest: a line
// per cell count (a colour each, named under the chart when there are more
// than one), the highest and lowest ratings on the left, the first and last
// days at the ends.
function ratingChart(history) {
  const lines = Object.entries(history).filter(([, points]) => points.length).sort(([a], [b]) => Number(b) - Number(a));
  if (!lines.length) return h('p', { class: 'small rating-chart empty' }, t('profile.rating_chart_none'));
  const W = 320;
  const H = 120;
  const left = 40;
  const right = 10;
  const top = 10;
  const bottom = 22;
  const all = lines.flatMap(([, points]) => points);
  let low = Math.min(...all.map((q) => q.shown));
  let high = Math.max(...all.map((q) => q.shown));
  if (high === low) { low = Math.max(0, low - 20); high += 20; }
  const t0 = Math.min(...all.map((q) => q.at));
  const t1 = Math.max(...all.map((q) => q.at));
  const x = (q) => (t1 === t0 ? (left + W - right) / 2 : left + ((q.at - t0) / (t1 - t0)) * (W - left - right));
  const y = (q) => top + (1 - (q.shown - low) / (high - low)) * (H - top - bottom);
  const monthDay = new Intl.DateTimeFormat(language(), { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const short = (ms) => monthDay.format(new Date(ms));
  const cellsName = (cells) => t('cells.count', { count: Number(cells) });
  const label = lines.map(([cells, points]) => {
    const shown = points.map((q) => q.shown);
    return t('profile.rating_chart_label', {
      cells: cellsName(cells), rating: shown[shown.length - 1], changes: t('profile.rating_changes', { count: points.length }),
      low: Math.min(...shown), high: Math.max(...shown),
    });
  }).join('; ');
  return h('figure', { class: 'rating-chart' },
    svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': label, preserveAspectRatio: 'xMidYMid meet' },
      svg('line', { x1: left, y1: H - bottom, x2: W - right, y2: H - bottom, class: 'axis' }),
      svg('line', { x1: left, y1: top, x2: left, y2: H - bottom, class: 'axis' }),
      svg('text', { x: left - 4, y: top + 4, 'text-anchor': 'end', class: 'tick' }, String(high)),
      svg('text', { x: left - 4, y: H - bottom, 'text-anchor': 'end', class: 'tick' }, String(low)),
      svg('text', { x: left, y: H - 6, 'text-anchor': 'start', class: 'tick' }, short(t0)),
      t1 > t0 ? svg('text', { x: W - right, y: H - 6, 'text-anchor': 'end', class: 'tick' }, short(t1)) : null,
      lines.map(([cells, points]) => svg('g', { class: `cells-${cells}`, 'data-cells': cells },
        points.length > 1 ? svg('polyline', { points: points.map((q) => `${x(q).toFixed(1)},${y(q).toFixed(1)}`).join(' '), class: 'line' }) : null,
        points.map((q) => svg('circle', { cx: x(q).toFixed(1), cy: y(q).toFixed(1), r: 3.5, class: 'dot' },
          svg('title', {}, `${cellsName(cells)}, ${day(new Date(q.at).toISOString().slice(0, 10))}: ${q.shown}`)))))),
    lines.length > 1
      ? h('p', { class: 'rating-legend small', 'aria-hidden': 'true' }, lines.map(([cells]) => h('span', { class: `key cells-${cells}` }, cellsName(cells))))
      : null,
    h('figcaption', { class: 'small' }, label));
}

// A race of the list: its replay (or its page), where it ended, and in plain
// words why a result held for review does not count yet.
function raceLine(r) {
  const title = r.daily ? t(r.ranked ? 'profile.daily' : 'profile.daily_practice', { date: day(r.daily, 'medium') }) : t('profile.race', { cells: t('cells.count', { count: r.cells }) });
  const held = r.review && r.review.status === 'held';
  return h('li', {},
    h('a', { href: r.url, 'data-link': '', class: 'race-link' }, title),
    ` · ${PLACE(r)}`, r.time_ms !== null ? ` · ${clock(r.time_ms)}` : '',
    r.review && !held ? [' ', reviewTag(r.review), ` ${r.review.reason}`] : '',
    r.replay ? [' · ', h('a', { href: r.replay, 'data-link': '', class: 'replay-link' }, t('profile.replay'))] : '',
    held ? h('p', { class: 'held-why small' }, t('profile.held_why')) : null);
}
