// The daily challenge page: the day's deal, my result and streak, a ranked
// first attempt (then practice), and the day's leaderboard, live.

import { h, clear, clock, copyButton, toast, api, savedName, saveName, raceCreds, saveRaceCreds, playerKey, ghostLink, whoAmI, playingAs } from './dom.js';
import { setConnectionIndicator } from './race.js';
import { t, reviewNote } from './review.js';

const FIRST_DAY = '2026-01-01';

function shiftDay(date, days) {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

const RESULT_TEXT = { won: 'won', resigned: 'resigned', time_limit: 'time up' };

export class DailyPage {
  constructor(root, date, navigate) {
    this.root = root;
    this.date = date || null;
    this.navigate = navigate;
    this.day = null;
    this.me = null;
    this.board = h('div', { class: 'daily-board' }, h('p', { class: 'small' }, 'Loading the leaderboard…'));
    this.timer = 0;
    this.ws = null;
    this.retry = 0;
    this.destroyed = false;
  }

  destroy() {
    this.destroyed = true;
    clearInterval(this.timer);
    clearTimeout(this.retry);
    if (this.ws) this.ws.close(1000);
    setConnectionIndicator(null);
  }

  async mount() {
    clear(this.root, h('p', { class: 'loading' }, 'Loading the daily challenge…'));
    try {
      this.day = await api('GET', this.date ? `/api/daily/${encodeURIComponent(this.date)}` : '/api/daily');
    } catch (error) {
      if (!this.destroyed) this.unavailable(error);
      return;
    }
    if (this.destroyed) return;
    // Today's code stays secret until the day ends: a day with a code is over.
    this.today = this.day.code === null;
    try {
      this.me = await api('GET', `/api/daily/${this.day.date}/me`, undefined, { 'X-Player-Key': playerKey() });
    } catch {
      this.me = null; // the page works without it
    }
    this.account = await whoAmI();
    if (this.destroyed) return;
    this.render();
    this.loadBoard();
    this.live();
  }

  unavailable(error) {
    let text;
    if (error.status === 404 && !this.date) text = 'There is no daily challenge on this server yet. Try a race or a practice game meanwhile.';
    else if (error.status === 404) text = 'There is no daily challenge for that day.';
    else if (error.status === 400) text = `That is not a day: ${error.message}.`;
    else text = `The daily challenge cannot be loaded now: ${error.message}`;
    clear(this.root, h('div', { class: 'panel' },
      h('h1', {}, 'Daily challenge'),
      h('p', {}, text),
      h('p', { class: 'row' },
        this.date ? h('a', { href: '/daily', class: 'button primary', 'data-link': '' }, "Today's challenge") : null,
        h('a', { href: '/practice', class: 'button', 'data-link': '' }, 'Practise alone'),
        h('a', { href: '/', class: 'button', 'data-link': '' }, 'Home'))));
  }

  render() {
    const day = this.day;
    const me = this.me;
    // A guest's game is unranked unless this server ranks guests.
    this.canRank = !me || !!me.signed_in || !!me.guests_ranked;
    const ranked = this.today && this.canRank && !(me && (me.entry || me.attempt));
    // The ranked game under way was started in another browser: this one can
    // neither continue it nor start a practice game until it is over.
    this.elsewhere = Boolean(this.today && me && !me.entry && me.attempt && !ownAttempt(me.attempt.race_id));
    const account = this.account;
    const name = account
      ? h('input', { id: 'daily-name', type: 'hidden', value: account.name })
      : h('input', { id: 'daily-name', maxlength: 24, autocomplete: 'nickname', value: savedName(), placeholder: 'shown on the leaderboard' });
    const play = h('button', { type: 'submit', class: 'primary' }, ranked ? "Play today's deal" : this.today && !this.canRank ? "Play today's deal (unranked)" : 'Play it again (practice)');
    const form = h('form', { class: 'row daily-play', hidden: this.elsewhere }, account ? playingAs(account) : h('label', { for: 'daily-name' }, 'Your name'), name, play);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.play(name, play);
    });
    this.mineEl = h('div', { class: 'mine' });
    this.renderMine();
    const next = h('span', { class: 'small', 'data-next': '' });
    const prev = day.date > FIRST_DAY ? h('a', { href: `/daily/${shiftDay(day.date, -1)}`, 'data-link': '' }, '← previous day') : null;
    const later = this.today ? null : h('a', { href: '/daily', 'data-link': '' }, 'today →');
    clear(this.root, h('div', { class: 'panel daily' },
      h('h1', {}, `Daily challenge · ${day.date}`),
      day.code
        ? h('p', {}, 'Game code ', h('span', { class: 'code' }, day.code), day.par ? ` · par ${day.par}` : '', ' · 4 cells')
        : h('p', {}, "Today's deal is secret until the day ends: it is dealt when your game starts.", day.par ? ` Par ${day.par}` : '', ' · 4 cells.'),
      this.mineEl,
      form,
      this.today ? h('p', {}, next) : null,
      h('p', { class: 'row small' }, prev, later),
      this.ghostOffer(),
      h('h2', {}, 'Leaderboard'),
      this.board));
    clearInterval(this.timer);
    const tick = () => {
      if (Number.isFinite(day.next_at)) next.textContent = `Next deal in ${clock(day.next_at - Date.now())}.`;
    };
    tick();
    this.timer = setInterval(tick, 1000);
  }

  // A ghost to race: yesterday's winner on today's page, the day's winner on a
  // past day's (records are public once their day is over).
  ghostOffer() {
    const el = h('p', { class: 'row ghost-offer', hidden: true });
    const over = !this.today;
    const day = over ? this.day.date : shiftDay(this.day.date, -1);
    if (day < FIRST_DAY) return el;
    api('GET', `/api/daily/${day}/leaderboard?limit=1`).then((page) => {
      const top = page.entries && page.entries[0];
      if (!top || this.destroyed) return;
      const path = `/api/daily/${day}/records/${top.entry_id}`;
      const time = top.result === 'won' ? ` (${clock(top.time_ms)})` : '';
      clear(el,
        h('a', { href: ghostLink(path, top.name), class: 'button race-ghost', 'data-link': '' },
          over ? `Race this day's winner, ${top.name}${time}` : `Race yesterday's winner, ${top.name}${time}`),
        h('a', { href: `/daily/${day}/replay/${top.entry_id}`, 'data-link': '' }, 'Watch the replay'));
      el.hidden = false;
    }).catch(() => {});
    return el;
  }

  // My result of the day: its place moves as others finish.
  renderMine() {
    const me = this.me;
    const mine = [];
    if (me && me.entry) {
      const entry = me.entry;
      mine.push(h('p', { class: 'my-result' },
        `Your result: ${RESULT_TEXT[entry.result] || entry.result}`,
        entry.result === 'won' ? ` in ${clock(entry.time_ms)}` : ` with ${entry.foundation_cards}/52 cards`,
        dailyPlace(entry, me),
        me.streak > 1 ? ` ${me.streak} days in a row.` : ''));
      for (const line of reviewNote(entry.review)) mine.push(h('p', { class: `held small review-${entry.review.status}` }, line));
      if (me.share) {
        mine.push(h('div', { class: 'share' },
          h('label', { for: 'daily-share' }, 'Share (the result, not the deal)'),
          h('div', { class: 'row' }, h('textarea', { id: 'daily-share', readonly: true, rows: 3 }, me.share), copyButton(() => me.share, 'Copy'),
            typeof navigator.share === 'function' ? h('button', { type: 'button', class: 'share-native', onclick: () => navigator.share({ text: me.share }).catch(() => {}) }, 'Share…') : null)));
      }
    } else if (me && me.attempt && this.elsewhere) {
      mine.push(h('p', { class: 'my-result elsewhere' }, 'Your ranked game of the day is under way on another device. Finish it there; practice games of today\'s deal open here once it is over.'));
    } else if (me && me.attempt) {
      mine.push(h('p', { class: 'my-result' }, 'Your ranked game of the day is under way. ',
        h('a', { href: me.attempt.url, class: 'button primary', 'data-link': '' }, 'Continue it')));
    } else if (this.today && !this.canRank) {
      mine.push(h('p', { class: 'unranked' }, 'As a guest you play unranked. ',
        h('a', { href: '/account', 'data-link': '' }, 'Sign up or sign in'), ' to put your first game of the day on the leaderboard and keep your streak.'));
    } else if (this.today) {
      mine.push(h('p', { class: 'small' }, 'Your first game of the day counts for the leaderboard; later ones are practice.'));
    } else {
      mine.push(h('p', { class: 'small' }, 'A past day: games of it are practice and do not go on its leaderboard.'));
    }
    clear(this.mineEl, mine);
  }

  // Ask the server for my place again (once at a time: the live table can move fast).
  async refreshMe() {
    if (!this.me || !this.me.entry) return;
    if (this.asking) {
      this.askAgain = true;
      return;
    }
    this.asking = true;
    try {
      const me = await api('GET', `/api/daily/${this.day.date}/me`, undefined, { 'X-Player-Key': playerKey() });
      if (!this.destroyed && (me.rank !== this.me.rank || me.total !== this.me.total)) {
        this.me = me;
        this.renderMine();
      }
    } catch {
      // Kept as it was; the next table asks again.
    }
    this.asking = false;
    if (this.askAgain && !this.destroyed) {
      this.askAgain = false;
      this.refreshMe();
    }
  }

  async play(nameInput, button) {
    const name = nameInput.value.trim();
    if (!name) {
      nameInput.focus();
      toast('Enter a name first (1 to 24 characters).', 'error');
      return;
    }
    if (!this.account) saveName(name);
    button.disabled = true;
    try {
      const attempt = await api('POST', `/api/daily/${this.day.date}/attempts`, { player_key: playerKey(), name });
      saveRaceCreds(attempt.race_id, { host_key: attempt.host_key, autostart: true, daily: attempt.date, ranked: attempt.ranked });
      this.navigate(attempt.url || `/race/${attempt.race_id}`);
    } catch (error) {
      toast(`Could not start the daily challenge: ${error.message}`, 'error', 6000);
      button.disabled = false;
    }
  }

  async loadBoard() {
    try {
      const page = await api('GET', `/api/daily/${this.day.date}/leaderboard?limit=50&offset=0`);
      if (!this.destroyed) this.showBoard(page.entries || [], page.total);
    } catch (error) {
      if (!this.destroyed) clear(this.board, h('p', { class: 'small' }, `The leaderboard cannot be loaded: ${error.message}`));
    }
  }

  showBoard(entries, total) {
    if (!entries.length) {
      clear(this.board, h('p', { class: 'small' }, this.today ? 'No results yet today: be the first.' : 'No results for that day.'));
      return;
    }
    clear(this.board,
      h('table', { class: 'results-table' },
        h('thead', {}, h('tr', {}, ['#', 'Player', 'Result', 'Time', 'Cards', 'Score', 'Moves', ...(this.day.code ? ['Replay'] : [])].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, entries.map((e) => h('tr', { class: this.me && this.me.entry && this.me.entry.entry_id === e.entry_id ? 'me' : '' },
          h('td', { 'data-label': '#' }, String(e.rank)),
          h('td', { 'data-label': 'Player', class: 'who' }, e.name),
          h('td', { 'data-label': 'Result' }, RESULT_TEXT[e.result] || e.result),
          h('td', { 'data-label': 'Time' }, e.result === 'won' ? clock(e.time_ms) : '—'),
          h('td', { 'data-label': 'Cards' }, `${e.foundation_cards}/52`),
          h('td', { 'data-label': 'Score' }, String(e.score)),
          h('td', { 'data-label': 'Moves' }, String(e.actions)),
          // A past day's records are public: its games can be watched.
          !this.day.code ? null : h('td', { 'data-label': 'Replay' }, h('a', { href: `/daily/${this.day.date}/replay/${e.entry_id}`, 'data-link': '' }, 'Watch')))))),
      Number.isFinite(total) && total > entries.length ? h('p', { class: 'small' }, `${total} players in all.`) : null);
  }

  // The live leaderboard socket: each message replaces the table.
  live(attempt = 0) {
    if (this.destroyed) return;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/ws/daily/${this.day.date}`);
    this.ws = ws;
    setConnectionIndicator(attempt ? 'reconnecting' : 'connecting');
    let opened = false;
    ws.onopen = () => {
      opened = true;
      setConnectionIndicator('connected');
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      if (msg.type === 'ping') ws.send(JSON.stringify({ type: 'pong', t: msg.t }));
      else if (msg.type === 'daily_leaderboard') {
        this.showBoard(msg.entries || [], msg.total);
        if (this.me && this.me.entry && msg.total !== this.me.total) this.refreshMe();
      }
    };
    ws.onclose = (event) => {
      if (this.destroyed || ws !== this.ws) return;
      if (event.code === 4404) {
        setConnectionIndicator(null);
        return;
      }
      setConnectionIndicator(navigator.onLine === false ? 'offline' : 'reconnecting');
      const next = opened ? 1 : attempt + 1;
      const wait = Math.min(15000, 500 * 2 ** next);
      this.retry = setTimeout(() => this.live(next), wait / 2 + Math.random() * wait / 2);
    };
  }
}

// Where my entry of the day stands: its place, or its review.
function dailyPlace(entry, me) {
  const review = entry.review;
  if (review && review.status === 'disqualified') return t('daily_disqualified');
  if (review && review.status === 'confirmed' && me.rank) return t('daily_confirmed', { rank: me.rank, total: me.total });
  if (review || !me.rank) return t('daily_held');
  return ` — #${me.rank} of ${me.total}.`;
}

// Whether this browser started the race (it holds its keys), or another one did.
function ownAttempt(raceId) {
  const creds = raceCreds(raceId);
  return Boolean(creds.token || creds.host_key);
}
