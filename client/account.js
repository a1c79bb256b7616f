// Accounts: sign up and in (passkey or password), the account page, player profiles.
// Everything is optional: races with friends need no account.

import { h, clear, clock, toast, api, playerKey, whoAmI, setMe } from './dom.js';
import { t, day } from './i18n.js';
import { reviewTag } from './review.js';

function signedIn(account, navigate) {
  setMe(account);
  toast(t('account.signed_in', { name: account.name }));
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
    h('p', {}, remove));
}

// -- /@/{name} ---------------------------------------------------------------------------

const PLACE = (r) => {
  if (r.review && r.review.status === 'disqualified') return t('verdict.disqualified_tag');
  if (r.place === null || (r.review && r.review.status === 'held')) return t('results.held_tag');
  return r.players > 1 ? t('profile.place', { place: r.place, count: r.players }) : r.won ? t('status.won') : t('profile.not_won');
};

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
  clear(root, h('div', { class: 'panel profile' },
    h('h1', {}, p.name),
    h('dl', { class: 'stats' },
      h('dt', {}, t('profile.races')), h('dd', {}, [t('profile.played', { count: s.races.played }), t('profile.first', { count: s.races.first }), t('profile.solved_rate', { count: s.races.won, rate: rate(s.races) })].join(' · ')),
      h('dt', {}, t('profile.dailies')), h('dd', {}, [t('profile.played', { count: s.dailies.played }), t('profile.solved', { count: s.dailies.won })].join(' · ')),
      h('dt', {}, t('profile.streak')), h('dd', { class: 'streak' }, t('profile.days', { count: p.streak })),
      h('dt', {}, t('profile.rating')), h('dd', { class: 'ratings' }, ratings.length
        ? ratings.map(([cells, r]) => t('profile.rating_of', { rating: r.rating, cells: t('cells.count', { count: Number(cells) }), races: t('profile.race_count', { count: r.races }) })).join(' · ')
        : t('profile.no_rating'))),
    h('h2', {}, t('profile.times')),
    h('table', { class: 'times' },
      h('thead', {}, h('tr', {}, h('th', {}, t('profile.cells')), h('th', {}, t('profile.played_column')), h('th', {}, t('profile.best')), h('th', {}, t('profile.median')))),
      h('tbody', {}, Object.entries(s.cells).map(([cells, c]) => h('tr', {},
        h('td', {}, cells), h('td', {}, String(c.played)),
        h('td', {}, c.best_ms === null ? '—' : clock(c.best_ms)), h('td', {}, c.median_ms === null ? '—' : clock(c.median_ms)))))),
    h('h2', {}, t('profile.days_played')),
    h('p', { class: 'calendar' }, p.calendar.length ? p.calendar.slice(0, 60).map((date) => h('a', { href: `/daily/${date}`, 'data-link': '', class: 'day', title: day(date) }, date.slice(5))) : t('profile.none_yet')),
    h('h2', {}, t('profile.last_races')),
    h('ul', { class: 'history' }, p.races.map((r) => h('li', {},
      h('a', { href: r.url, 'data-link': '' }, r.daily ? t(r.ranked ? 'profile.daily' : 'profile.daily_practice', { date: day(r.daily, 'medium') }) : t('profile.race', { cells: t('cells.count', { count: r.cells }) })),
      ` · ${PLACE(r)}`, r.time_ms !== null ? ` · ${clock(r.time_ms)}` : '',
      r.review && r.review.status !== 'held' ? [' ', reviewTag(r.review), ` ${r.review.reason}`] : '', ' · ',
      h('a', { href: r.record }, t('profile.record')))))));
}
