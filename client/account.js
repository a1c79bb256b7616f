// Accounts: sign up and in (passkey or password), the account page, player profiles.
// Everything is optional: races with friends need no account.

import { h, clear, clock, toast, api, playerKey, whoAmI, setMe } from './dom.js';
import { t, reviewTag } from './review.js';

function signedIn(account, navigate) {
  setMe(account);
  toast(`Signed in as ${account.name}.`);
  navigate('/account', true);
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
  if (error && error.name === 'NotAllowedError') toast('The passkey request was cancelled.', 'error');
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
    h('h1', {}, 'Make an account'),
    h('p', { class: 'small' }, 'An account keeps your daily streak, history and rating on every device, and ranks your daily game. Races with friends need none.'),
    field('up-name', 'Name', { maxlength: 20, minlength: 3, autocomplete: 'username', required: true }),
    passkeysHere() ? h('p', {}, h('button', { type: 'button', class: 'primary', id: 'up-passkey' }, 'Make it with a passkey')) : null,
    field('up-password', 'Password', { type: 'password', minlength: 8, maxlength: 128, autocomplete: 'new-password' }),
    h('p', {}, h('button', { type: 'submit', id: 'up-submit' }, 'Make it with this password')));
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
    h('h2', {}, 'Sign in'),
    passkeysHere() ? h('p', {}, h('button', { type: 'button', class: 'primary', id: 'in-passkey' }, 'Sign in with a passkey')) : null,
    field('in-name', 'Name', { autocomplete: 'username', required: true }),
    field('in-password', 'Password', { type: 'password', autocomplete: 'current-password', required: true }),
    h('p', {}, h('button', { type: 'submit', id: 'in-submit' }, 'Sign in')));
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
  const out = h('button', { type: 'button', id: 'sign-out' }, 'Sign out');
  out.addEventListener('click', async () => {
    await api('DELETE', '/api/session').catch(() => null);
    setMe(null);
    navigate('/account', true);
  });
  const add = passkeysHere() ? h('button', { type: 'button', id: 'add-passkey' }, 'Add a passkey') : null;
  if (add) add.addEventListener('click', async () => {
    try {
      const begun = await api('POST', '/api/me/passkeys/options', {});
      const credential = await createPasskey(begun.options);
      await api('POST', '/api/me/passkeys', { ceremony: begun.ceremony, credential });
      toast('Passkey added.');
      navigate('/account', true);
    } catch (error) {
      failed(error);
    }
  });
  const password = h('form', { class: 'row', id: 'change-password' },
    me.password ? h('input', { type: 'password', id: 'pw-current', autocomplete: 'current-password', placeholder: 'current password', 'aria-label': 'Current password' }) : null,
    h('input', { type: 'password', id: 'pw-new', minlength: 8, maxlength: 128, autocomplete: 'new-password', placeholder: 'new password', 'aria-label': 'New password' }),
    h('button', { type: 'submit' }, me.password ? 'Change password' : 'Set a password'));
  password.addEventListener('submit', async (e) => {
    e.preventDefault();
    const current = password.querySelector('#pw-current');
    try {
      await api('POST', '/api/me/password', { password: password.querySelector('#pw-new').value, ...(current ? { current: current.value } : {}) });
      toast('Password saved.');
      navigate('/account', true);
    } catch (error) {
      failed(error);
    }
  });
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-account' }, 'Delete the account');
  remove.addEventListener('click', async () => {
    if (!window.confirm(`Delete ${me.name}? Your history, streak and ratings go; past race results stay, as "deleted player".`)) return;
    await api('DELETE', '/api/me', { name: me.name }).catch(failed);
    setMe(null);
    navigate('/', true);
  });
  return h('div', { class: 'panel account' },
    h('h1', {}, me.name),
    h('p', {}, h('a', { href: me.url, 'data-link': '' }, 'Your profile: history, streak and ratings')),
    h('p', { class: 'small' }, `${me.passkeys} passkey${me.passkeys === 1 ? '' : 's'}`, me.password ? ' and a password' : ''),
    h('p', { class: 'row' }, add, out),
    password,
    h('p', {}, remove));
}

// -- /@/{name} ---------------------------------------------------------------------------

const PLACE = (r) => {
  if (r.review && r.review.status === 'disqualified') return t('place_disqualified');
  if (r.place === null || (r.review && r.review.status === 'held')) return t('place_held');
  return r.players > 1 ? `#${r.place} of ${r.players}` : r.won ? 'won' : 'not won';
};

export async function profilePage(root, name) {
  clear(root, h('p', { class: 'loading' }, 'Loading the profile…'));
  let p;
  try {
    p = await api('GET', `/api/players/${encodeURIComponent(name)}`);
  } catch (error) {
    clear(root, h('div', { class: 'panel' }, h('h1', {}, 'No such player'), h('p', {}, error.message)));
    return;
  }
  const s = p.stats;
  const rate = (x) => `${Math.round(x.win_rate * 100)}%`;
  const ratings = Object.entries(p.ratings);
  clear(root, h('div', { class: 'panel profile' },
    h('h1', {}, p.name),
    h('dl', { class: 'stats' },
      h('dt', {}, 'Races'), h('dd', {}, `${s.races.played} played · ${s.races.first} won · ${s.races.won} solved (${rate(s.races)})`),
      h('dt', {}, 'Dailies'), h('dd', {}, `${s.dailies.played} played · ${s.dailies.won} solved`),
      h('dt', {}, 'Daily streak'), h('dd', { class: 'streak' }, `${p.streak} day${p.streak === 1 ? '' : 's'}`),
      h('dt', {}, 'Rating'), h('dd', { class: 'ratings' }, ratings.length
        ? ratings.map(([cells, r]) => `${r.rating} (${cells} cells, ${r.races} race${r.races === 1 ? '' : 's'})`).join(' · ')
        : 'none yet: race at least one other signed-in player')),
    h('h2', {}, 'Best and median times'),
    h('table', { class: 'times' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Cells'), h('th', {}, 'Played'), h('th', {}, 'Best'), h('th', {}, 'Median'))),
      h('tbody', {}, Object.entries(s.cells).map(([cells, c]) => h('tr', {},
        h('td', {}, cells), h('td', {}, String(c.played)),
        h('td', {}, c.best_ms === null ? '—' : clock(c.best_ms)), h('td', {}, c.median_ms === null ? '—' : clock(c.median_ms)))))),
    h('h2', {}, 'Days played'),
    h('p', { class: 'calendar' }, p.calendar.length ? p.calendar.slice(0, 60).map((day) => h('a', { href: `/daily/${day}`, 'data-link': '', class: 'day' }, day.slice(5))) : 'none yet'),
    h('h2', {}, 'Last races'),
    h('ul', { class: 'history' }, p.races.map((r) => h('li', {},
      h('a', { href: r.url, 'data-link': '' }, r.daily ? `Daily ${r.daily}${r.ranked ? '' : ' (practice)'}` : `Race, ${r.cells} cells`),
      ` · ${PLACE(r)}`, r.time_ms !== null ? ` · ${clock(r.time_ms)}` : '',
      r.review && r.review.status !== 'held' ? [' ', reviewTag(r.review), ` ${r.review.reason}`] : '', ' · ',
      h('a', { href: r.record }, 'record'))))));
}
